// SPDX-License-Identifier: GPL-2.0
/*
 * --off-cpu with cfi: the time out of threads switched out before their
 * image's table (bpf/offcpu.bpf.h).  Their stacks come at the switch-out
 * as a copy to unwind here (COLLECTOR_EV_OFFCPU_STACK), unwound at once,
 * while the process lives and its maps are read, and kept by thread; the
 * time comes at the switch-in (COLLECTOR_EV_OFFCPU_DONE) and makes one
 * off-CPU sum of them, as the kernel's sums are made.  A thread found
 * blocked when the run started comes the same way (bpf/offcpu_window.bpf.h),
 * its Python frames between its kernel frames and its copy; and the time
 * of a copy's thread still out at an interval's cut comes in pieces
 * (`more`), the stacks kept for the rest.
 */
#include "decode/tracker_internal.h"

#include <stdlib.h>
#include <string.h>

static struct offcpu_pending *pending_of(struct tracker *t, pid_t tid)
{
	for (size_t i = 0; i < t->offcpu_pending.len; i++)
		if (t->offcpu_pending.items[i].tid == tid)
			return &t->offcpu_pending.items[i];
	return NULL;
}

void trk_handle_offcpu_stack(struct tracker *t, const struct collector_stack_sample_event *se)
{
	const struct collector_sample_event *e = &se->sample;
	uint32_t thread = trk_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	uint32_t process = t->m->threads.items[thread].process;
	uint64_t ips[COLLECTOR_MAX_STACK_DEPTH];
	struct collector_agg_sample_event *sum;
	struct offcpu_pending *p;
	uint32_t nk = e->n_kernel, np = e->n_user; /* Python frames, before the copy */
	const uint64_t *py = (const uint64_t *)(se + 1) + nk;
	bool complete;
	int n = trk_unwind_copy(t, process, se, ips, &complete);

	if (np > COLLECTOR_MAX_STACK_DEPTH - (uint32_t)n)
		np = COLLECTOR_MAX_STACK_DEPTH - (uint32_t)n;
	/* named now, while the process surely lives */
	trk_runtimes_notice(t, process, py, np);
	sum = malloc(sizeof(*sum) + (nk + (uint32_t)n + np) * sizeof(uint64_t));
	if (!sum) {
		model_stat_add(t->m, MODEL_STAT_OFFCPU_STACKS_DROPPED, 1);
		return;
	}
	sum->sample = *e;
	sum->sample.hdr.kind = COLLECTOR_EV_AGG_SAMPLE;
	sum->sample.n_user = (uint16_t)(n + np);
	sum->sample.user_end = complete ? COLLECTOR_END_COMPLETE : COLLECTOR_END_TRUNCATED;
	sum->count = 1;
	memcpy(sum + 1, se + 1, nk * sizeof(uint64_t));
	memcpy((uint64_t *)(sum + 1) + nk, ips, (size_t)n * sizeof(uint64_t));
	memcpy((uint64_t *)(sum + 1) + nk + n, py, np * sizeof(uint64_t));
	/* an older one of the thread's lost its time (a full ring) */
	p = pending_of(t, e->hdr.tid);
	if (p) {
		free(p->sum);
		model_stat_add(t->m, MODEL_STAT_OFFCPU_STACKS_DROPPED, 1);
	} else {
		p = MODEL_VEC_PUSH(t->offcpu_pending);
		p->tid = e->hdr.tid;
	}
	p->seq = se->seq;
	p->sum = sum;
	model_stat_add(t->m, MODEL_STAT_OFFCPU_STACKS_UNWOUND, 1);
}

/* The sum of a thread's stacks for the time d says. */
static void done_sum(struct tracker *t, struct collector_agg_sample_event *sum,
		     const struct collector_offcpu_done_event *d)
{
	sum->sample.hdr.ktime_ns = d->hdr.ktime_ns;
	sum->sample.hdr.cpu = d->hdr.cpu;
	sum->sample.period = d->out_ns;
	trk_handle_agg_sample(t, sum);
}

void trk_handle_offcpu_done(struct tracker *t, const struct collector_offcpu_done_event *d)
{
	struct offcpu_pending *p = pending_of(t, d->hdr.tid);
	struct collector_agg_sample_event *sum;
	uint32_t seq;

	if (!p) {
		model_stat_add(t->m, MODEL_STAT_OFFCPU_STACKS_DROPPED, 1);
		return;
	}
	sum = p->sum;
	seq = p->seq;
	if (d->more) {
		/* up to a cut: the thread is still out, its stacks kept; a
		 * piece of an earlier block (read after the thread was back
		 * and out again) is lost, the stacks kept are the new one's */
		if (seq != d->seq)
			model_stat_add(t->m, MODEL_STAT_OFFCPU_STACKS_DROPPED, 1);
		else if (d->out_ns)
			done_sum(t, sum, d);
		return;
	}
	*p = t->offcpu_pending.items[--t->offcpu_pending.len];
	if (seq != d->seq) {
		/* the stacks of this time and the time of those kept were
		 * lost (a full ring): two intervals without either */
		model_stat_add(t->m, MODEL_STAT_OFFCPU_STACKS_DROPPED, 2);
		free(sum);
		return;
	}
	if (d->out_ns)
		done_sum(t, sum, d);
	free(sum);
}

void trk_offcpu_free(struct tracker *t)
{
	for (size_t i = 0; i < t->offcpu_pending.len; i++)
		free(t->offcpu_pending.items[i].sum);
	free(t->offcpu_pending.items);
	t->offcpu_pending.items = NULL;
	t->offcpu_pending.len = 0;
}
