// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel records -> model: the tracker's life cycle and the dispatch of
 * records (symbols/ and the parts listed in decode/tracker_internal.h do
 * the rest).
 */
#include "decode/tracker_internal.h"

#include <errno.h>
#include <stdlib.h>

/* A record of the launched command later than this after it was let go
 * ends the wait for its exec record (see tracker_handle_record). */
#define EXEC_GRACE_NS 1000000000ULL

static void handle_switch(struct tracker *t, const struct collector_switch_event *e)
{
	uint32_t thread = trk_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	struct model_thread *th = &t->m->threads.items[thread];
	struct model_switch *s;

	if (th->end_ns) {
		/* the dying thread's last switch-out */
		model_stat_add(t->m, MODEL_STAT_SWITCHES_AFTER_EXIT, 1);
		return;
	}
	s = model_add_switch(t->m);

	s->ktime_ns = e->hdr.ktime_ns;
	s->time_ns = trk_epoch_of(t, e->hdr.ktime_ns);
	s->cputime_ns = e->cputime_ns;
	s->user_pc = e->user_ip;
	s->process = th->process;
	s->thread = thread;
	s->cpu = e->hdr.cpu;
	s->off = e->off;
	if (e->cputime_ns > th->cputime_ns)
		th->cputime_ns = e->cputime_ns;
}

static void handle_trace(struct tracker *t, const struct collector_trace_event *e, size_t size)
{
	uint32_t thread;
	struct model_trace_event *me;
	uint8_t n_args = e->kind == COLLECTOR_TRACE_ENTRY ? e->n_args : 0;

	/* (Python functions are traced functions from the run's end on:
	 * their ids may be past traced.len until then) */
	if (e->func >= t->m->traced.len + COLLECTOR_PY_MAX_FUNCS) {
		/* the probe-cost calibration on the collector itself */
		model_stat_add(t->m, MODEL_STAT_TRACE_RECORDS_CALIBRATION, 1);
		return;
	}
	if (n_args > COLLECTOR_MAX_ARGS ||
	    size < COLLECTOR_TRACE_EXIT_SIZE + n_args * sizeof(uint64_t)) {
		model_stat_add(t->m, MODEL_STAT_MALFORMED_RECORDS, 1);
		return;
	}
	thread = trk_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	me = model_add_trace_event(t->m, n_args ? (const uint64_t *)e->args : NULL, n_args);
	me->ktime_ns = e->hdr.ktime_ns;
	me->time_ns = trk_epoch_of(t, e->hdr.ktime_ns);
	me->thread = thread;
	me->process = t->m->threads.items[thread].process;
	me->func = e->func;
	me->cpu = e->hdr.cpu;
	me->kind = e->kind == COLLECTOR_TRACE_ENTRY ? MODEL_TRACE_ENTRY : MODEL_TRACE_EXIT;
}

int tracker_handle_record(struct tracker *t, const void *data, size_t size)
{
	const struct collector_event_header *h = data;

	if (size < sizeof(*h)) {
		model_stat_add(t->m, MODEL_STAT_MALFORMED_RECORDS, 1);
		return 0;
	}
	if (t->ignored_tgid && (pid_t)h->tgid == t->ignored_tgid) {
		model_stat_add(t->m, MODEL_STAT_RECORDS_OF_COLLECTOR, 1);
		return 0;
	}
	if (t->awaiting_exec && (pid_t)h->tgid == t->awaiting_exec) {
		/* Until the exec, it is the profiler's own copy waiting.  An exec
		 * takes far less than EXEC_GRACE_NS once the child is let go: a
		 * record later than that ends the wait, should the exec record
		 * have been lost in a full ring. */
		if (h->kind != COLLECTOR_EV_EXEC &&
		    (!t->exec_allowed_ktime ||
		     h->ktime_ns < t->exec_allowed_ktime + EXEC_GRACE_NS)) {
			model_stat_add(t->m, MODEL_STAT_RECORDS_BEFORE_EXEC, 1);
			return 0;
		}
		t->awaiting_exec = 0;
	}
	switch (h->kind) {
	case COLLECTOR_EV_SAMPLE:
		if (size >= sizeof(struct collector_sample_event)) {
			const struct collector_sample_event *e = data;

			if (((size_t)e->n_kernel + e->n_user) * sizeof(uint64_t) <=
			    size - sizeof(*e)) {
				trk_handle_sample(t, e);
				return 0;
			}
		}
		break;
	case COLLECTOR_EV_AGG_SAMPLE:
		if (size >= sizeof(struct collector_agg_sample_event)) {
			const struct collector_agg_sample_event *ae = data;

			if (((size_t)ae->sample.n_kernel + ae->sample.n_user) * sizeof(uint64_t) <=
			    size - sizeof(*ae)) {
				trk_handle_agg_sample(t, ae);
				return 0;
			}
		}
		break;
	case COLLECTOR_EV_FORK:
	case COLLECTOR_EV_EXEC:
	case COLLECTOR_EV_EXIT:
	case COLLECTOR_EV_COMM:
		if (size >= sizeof(struct collector_task_event)) {
			if (h->kind == COLLECTOR_EV_FORK)
				trk_handle_fork(t, data);
			else if (h->kind == COLLECTOR_EV_EXEC)
				trk_handle_exec(t, data, size);
			else if (h->kind == COLLECTOR_EV_COMM)
				trk_handle_comm(t, data);
			else
				trk_handle_exit(t, data);
			return 0;
		}
		break;
	case COLLECTOR_EV_SAMPLE_STACK:
	case COLLECTOR_EV_OFFCPU_STACK:
		if (size >= sizeof(struct collector_stack_sample_event)) {
			const struct collector_stack_sample_event *se = data;

			if ((size_t)se->sample.n_kernel * sizeof(uint64_t) + se->stack_len <=
			    size - sizeof(*se)) {
				if (h->kind == COLLECTOR_EV_SAMPLE_STACK)
					trk_handle_stack_sample(t, se);
				else
					trk_handle_offcpu_stack(t, se);
				return 0;
			}
		}
		break;
	case COLLECTOR_EV_OFFCPU_DONE:
		if (size >= sizeof(struct collector_offcpu_done_event)) {
			trk_handle_offcpu_done(t, data);
			return 0;
		}
		break;
	case COLLECTOR_EV_TRACE:
		if (size >= COLLECTOR_TRACE_EXIT_SIZE) {
			handle_trace(t, data, size);
			return 0;
		}
		break;
	case COLLECTOR_EV_RUNTIME_FRAMES:
		if (size >= sizeof(struct collector_runtime_frames_event)) {
			trk_handle_runtime_frames(t, data);
			return 0;
		}
		break;
	case COLLECTOR_EV_SWITCH:
		if (size >= sizeof(struct collector_switch_event)) {
			handle_switch(t, data);
			return 0;
		}
		break;
	}
	model_stat_add(t->m, MODEL_STAT_MALFORMED_RECORDS, 1);
	return 0;
}

void tracker_finish(struct tracker *t)
{
	if (t->unwinder) {
		struct unwinder_stats us;

		unwinder_get_stats(t->unwinder, &us);
		model_stat_add(t->m, MODEL_STAT_UNWIND_NS_TOTAL, t->unwind_ns);
		model_stat_add(t->m, MODEL_STAT_UNWOUND_SAMPLES, t->unwinds);
		model_stat_add(t->m, MODEL_STAT_STACK_RECORD_BYTES, t->stack_record_bytes);
		model_stat_add(t->m, MODEL_STAT_UNWOUND_COMPLETE, us.complete);
		model_stat_add(t->m, MODEL_STAT_UNWINDER_DWFL_BUILDS, us.dwfl_builds);
		model_stat_add(t->m, MODEL_STAT_UNWINDER_IMAGES_FAILED, us.images_failed);
		model_stat_add(t->m, MODEL_STAT_UNWINDER_CACHED_WALKS, us.cached);
		model_stat_add(t->m, MODEL_STAT_UNWINDER_RULES, us.rules);
	}
	/* threads first seen in the last drain */
	tracker_end_window(t);
	/* JIT code of the processes still running, or sampled after exit */
	trk_jit_resolve(t, -1);
}

int tracker_enable_unwinding(struct tracker *t)
{
	t->unwinder = unwinder_new();
	if (!t->unwinder)
		return -ENOMEM;
	trk_runtimes_hook_unwinder(t);
	return 0;
}

int tracker_enable_fallback_unwinding(struct tracker *t)
{
	t->unwind_lazy = true;
	return tracker_enable_unwinding(t);
}

void tracker_ignore_process(struct tracker *t, pid_t pid)
{
	t->ignored_tgid = pid;
}

void tracker_expect_exec(struct tracker *t, pid_t pid)
{
	t->awaiting_exec = pid;
}

void tracker_exec_allowed(struct tracker *t, uint64_t ktime)
{
	t->exec_allowed_ktime = ktime;
	t->last_task_ktime = ktime;
}

uint64_t tracker_last_task_ktime(const struct tracker *t)
{
	return t->last_task_ktime;
}

uint64_t tracker_sample_count(const struct tracker *t)
{
	return t->samples;
}

size_t tracker_live_processes(const struct tracker *t)
{
	return t->live;
}

struct tracker *tracker_new(struct model *m, struct symbolizer *sym)
{
	struct tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->m = m;
	t->sym = sym;
	t->unknown_image = MODEL_NONE;
	t->empty_part = UINT32_MAX;
	for (size_t i = 0; i < sizeof(t->runtime_image) / sizeof(t->runtime_image[0]); i++)
		t->runtime_image[i] = MODEL_NONE;
	return t;
}

void tracker_free(struct tracker *t)
{
	if (!t)
		return;
	idmap_free(&t->pid_to_process);
	idmap_free(&t->tid_to_thread);
	stackcache_free(&t->part_cache);
	idmap_free(&t->stack_cache);
	free(t->parts.items);
	free(t->pool.items);
	for (size_t i = 0; i < t->procs.len; i++)
		trk_free_proc_state(&t->procs.items[i]);
	free(t->procs.items);
	free(t->threads.items);
	free(t->early_maps.items);
	trk_offcpu_free(t);
	trk_jit_free(t);
	free(t->runtime_pending.items);
	unwinder_free(t->unwinder);
	free(t);
}
