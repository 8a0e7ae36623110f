// SPDX-License-Identifier: GPL-2.0
/* The kernel side's counters and call aggregates, into the model. */
#include "decode/kernel_counters.h"

#include <string.h>
#include <unistd.h>

static const char *const counter_names[COLLECTOR_CNT_MAX] = {
	[COLLECTOR_CNT_RB_FULL_SAMPLE] = "ring buffer full (samples)",
	[COLLECTOR_CNT_RB_FULL_TASK] = "ring buffer full (fork/exec/exit)",
	[COLLECTOR_CNT_RB_FULL_SWITCH] = "ring buffer full (switches)",
	[COLLECTOR_CNT_KSTACK_FAIL] = "kernel stack walk failed",
	[COLLECTOR_CNT_AGG_FULL] = "aggregation map full",
	[COLLECTOR_CNT_TARGETS_FULL] = "children not followed",
};

void decode_sampler_counters(struct model *m, const uint64_t c[COLLECTOR_CNT_MAX])
{
	for (int i = 0; i < COLLECTOR_CNT_MAX; i++)
		if (counter_names[i])
			model_count_lost(m, counter_names[i], c[i]);
	model_count_stat(m, "ring_wakeups", c[COLLECTOR_CNT_WAKEUPS]);
}

uint64_t decode_kernel_samples(struct model *m, uint64_t by_ip, uint64_t not_counted)
{
	model_count_stat(m, "kernel_samples", by_ip + not_counted);
	return by_ip + not_counted;
}

void decode_trace_attach(struct model *m, size_t skipped, double attach_seconds,
			 double probe_overhead_ns)
{
	if (probe_overhead_ns >= 0)
		model_count_stat(m, "probe_overhead_ns", (uint64_t)(probe_overhead_ns + 0.5));
	if (skipped)
		model_count_stat(m, "traced_functions_skipped", skipped);
	model_count_stat(m, "attach_us", (uint64_t)(attach_seconds * 1e6));
}

static const char *const trace_lost_names[COLLECTOR_TCNT_MAX] = {
	[COLLECTOR_TCNT_RB_FULL_ENTRY] = "ring buffer full (traced entries)",
	[COLLECTOR_TCNT_RB_FULL_EXIT] = "ring buffer full (traced exits)",
	[COLLECTOR_TCNT_DEPTH_OVERFLOW] = "traced calls nested too deep",
	[COLLECTOR_TCNT_STATS_FULL] = "per-function map full",
	[COLLECTOR_TCNT_SHADOW_FULL] = "per-thread call stack map full",
	[COLLECTOR_TCNT_CLAIM_FULL] = "per-thread call aggregates not merged (claim map full)",
};

static const char *const trace_stat_names[COLLECTOR_TCNT_MAX] = {
	[COLLECTOR_TCNT_EXIT_NO_ENTRY] = "traced_exits_without_entry",
	[COLLECTOR_TCNT_FRAMES_DROPPED] = "traced_entries_without_exit",
	[COLLECTOR_TCNT_WAKEUPS] = "trace_ring_wakeups",
	[COLLECTOR_TCNT_SLOT_TAKEN] = "traced_calls_past_thread_slots",
};

void decode_trace_counters(struct model *m, const uint64_t c[COLLECTOR_TCNT_MAX])
{
	for (int k = 0; k < COLLECTOR_TCNT_MAX; k++) {
		if (trace_lost_names[k])
			model_count_lost(m, trace_lost_names[k], c[k]);
		else if (trace_stat_names[k])
			model_count_stat(m, trace_stat_names[k], c[k]);
	}
}

/* model thread of (tgid, tid): the newest thread entry with that tid */
static uint32_t find_thread(const struct model *m, uint32_t tgid, uint32_t tid)
{
	for (size_t i = m->threads.len; i-- > 0;) {
		const struct model_thread *th = &m->threads.items[i];

		if ((uint32_t)th->tid == tid &&
		    (uint32_t)m->processes.items[th->process].pid == tgid)
			return i;
	}
	return MODEL_NONE;
}

void decode_func_stats(void *ctx, const struct collector_func_key *key,
		       const struct collector_func_stats *fs)
{
	struct model *m = ctx;
	struct model_func_stats *ms;
	uint32_t thread;

	if (key->tgid == (uint32_t)getpid() || key->func >= m->traced.len)
		return; /* the calibration's calls */
	thread = find_thread(m, key->tgid, key->tid);
	if (thread == MODEL_NONE) {
		model_count_stat(m, "traced_stats_unknown_thread", 1);
		return;
	}
	ms = model_add_func_stats(m);
	ms->func = key->func;
	ms->thread = thread;
	ms->process = m->threads.items[thread].process;
	ms->calls = fs->calls;
	ms->total_ns = fs->total_ns;
	ms->self_ns = fs->self_ns;
	memcpy(ms->hist, fs->hist, sizeof(ms->hist));
}
