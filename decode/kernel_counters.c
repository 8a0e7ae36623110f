// SPDX-License-Identifier: GPL-2.0
/* The kernel side's counters and call aggregates, into the model. */
#include "decode/kernel_counters.h"

#include <stddef.h>
#include <string.h>
#include <unistd.h>

/*
 * Constants that bpf/collector.h and model/model.h each define, checked
 * here for all of decode/ (which sees both): records are copied into the
 * model field by field, histograms and names whole.
 */
#define MEMBER_SIZE(type, member) sizeof(((type *)0)->member)
_Static_assert(COLLECTOR_HIST_BUCKETS == MODEL_HIST_BUCKETS,
	       "bpf/collector.h and model/model.h disagree on the histogram buckets");
_Static_assert(MEMBER_SIZE(struct collector_func_stats, hist) ==
	       MEMBER_SIZE(struct model_func_stats, hist),
	       "decode_func_stats copies the histogram whole");
_Static_assert(COLLECTOR_MAX_ARGS == MODEL_MAX_ARGS,
	       "bpf/collector.h and model/model.h disagree on the traced arguments");
_Static_assert(COLLECTOR_COMM_LEN == MEMBER_SIZE(struct model_process, comm) &&
	       COLLECTOR_COMM_LEN == MEMBER_SIZE(struct model_thread, comm),
	       "bpf/collector.h and model/model.h disagree on the comm length");
_Static_assert(COLLECTOR_TRACE_EXIT_SIZE == offsetof(struct collector_trace_event, args),
	       "an exit record is a trace record without its arguments");

/* The sampler's counters that are lost events, in the order of enum
 * collector_counter (the order they are listed in). */
static const struct {
	enum collector_counter counter;
	enum model_lost cause;
} sampler_lost[] = {
	{ COLLECTOR_CNT_RB_FULL_SAMPLE, MODEL_LOST_RB_FULL_SAMPLES },
	{ COLLECTOR_CNT_RB_FULL_TASK, MODEL_LOST_RB_FULL_TASKS },
	{ COLLECTOR_CNT_RB_FULL_SWITCH, MODEL_LOST_RB_FULL_SWITCHES },
	{ COLLECTOR_CNT_KSTACK_FAIL, MODEL_LOST_KERNEL_STACK_FAILED },
	{ COLLECTOR_CNT_AGG_FULL, MODEL_LOST_AGGREGATION_FULL },
	{ COLLECTOR_CNT_TARGETS_FULL, MODEL_LOST_CHILDREN_NOT_FOLLOWED },
	{ COLLECTOR_CNT_SKIPPED_BUSY, MODEL_LOST_SAMPLER_BUSY },
	{ COLLECTOR_CNT_AGG_STACKS_FULL, MODEL_LOST_AGG_STACKS_FULL },
	{ COLLECTOR_CNT_AGG_KEYS_FULL, MODEL_LOST_AGG_KEYS_FULL },
};

void decode_sampler_counters(struct model *m, const struct runtimes *rs,
			     const uint64_t c[COLLECTOR_CNT_MAX])
{
	for (size_t i = 0; i < sizeof(sampler_lost) / sizeof(sampler_lost[0]); i++)
		model_lost_add(m, sampler_lost[i].cause, c[sampler_lost[i].counter]);
	model_stat_add(m, MODEL_STAT_RING_WAKEUPS, c[COLLECTOR_CNT_WAKEUPS]);
	if (c[COLLECTOR_CNT_RUNTIME_UNLOADED])
		model_stat_add(m, MODEL_STAT_RUNTIME_WALK_UNLOADED, c[COLLECTOR_CNT_RUNTIME_UNLOADED]);
	if (c[COLLECTOR_CNT_OFFCPU_SHORT])
		model_stat_add(m, MODEL_STAT_OFFCPU_SHORT_SWITCHES, c[COLLECTOR_CNT_OFFCPU_SHORT]);
	if (c[COLLECTOR_CNT_OFFCPU_NO_STATE])
		model_stat_add(m, MODEL_STAT_OFFCPU_NO_STATE, c[COLLECTOR_CNT_OFFCPU_NO_STATE]);
	model_stat_add(m, MODEL_STAT_OFFCPU_WINDOW_BLOCKED, c[COLLECTOR_CNT_WINDOW_BLOCKED]);
	model_stat_add(m, MODEL_STAT_OFFCPU_WINDOW_NO_USER, c[COLLECTOR_CNT_WINDOW_NO_USER]);
	model_stat_add(m, MODEL_STAT_OFFCPU_WINDOW_WOKE, c[COLLECTOR_CNT_WINDOW_WOKE]);
	model_stat_add(m, MODEL_STAT_OFFCPU_WINDOW_CUT, c[COLLECTOR_CNT_WINDOW_CUT]);
	runtimes_counters(rs, m, c);
	if (strcmp(m->run.call_graph, "cfi") != 0)
		return;
	model_stat_add(m, MODEL_STAT_CFI_FP_FRAMES, c[COLLECTOR_CNT_CFI_FP_FRAMES]);
	model_stat_add(m, MODEL_STAT_CFI_SAMPLES_BEFORE_TABLES, c[COLLECTOR_CNT_CFI_NO_TABLES]);
	model_stat_add(m, MODEL_STAT_CFI_STOPPED_OUTSIDE, c[COLLECTOR_CNT_CFI_OUTSIDE]);
	model_stat_add(m, MODEL_STAT_CFI_COMPLETE, c[COLLECTOR_CNT_CFI_COMPLETE]);
	model_stat_add(m, MODEL_STAT_CFI_MAPPINGS_LEARNED, c[COLLECTOR_CNT_CFI_LEARNED]);
}

void decode_cfi_tables(struct model *m, const struct decode_cfi_figures *f)
{
	model_stat_add(m, MODEL_STAT_CFI_TABLE_IMAGES, f->images);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_ROWS, f->rows);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_INDEX_ENTRIES, f->index_entries);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_BUILD_US, f->build_ns / 1000);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_MAP_BYTES, f->map_bytes);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_LOADER_BYTES, f->loader_bytes);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_EVICTED_IMAGES, f->images_evicted);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_EVICTED_ROWS, f->rows_evicted);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_NO_SPACE, f->images_no_space);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_DEBUG_FILES, f->debug_files);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_BUILT, f->built);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_CACHE_HITS, f->cache_hits);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_CACHE_REFUSED, f->cache_refused);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_SERVED_EXEC, f->served_exec);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_SERVED_FIRST, f->served_first);
	model_stat_add(m, MODEL_STAT_CFI_TABLE_OPEN_FAILED, f->open_failed);
	model_stat_add(m, MODEL_STAT_MAPS_READ, f->maps_read);
	model_stat_add(m, MODEL_STAT_MAPS_REUSED, f->maps_reused);
	model_stat_add(m, MODEL_STAT_MAPS_FOLLOWED, f->maps_followed);
	model_stat_add(m, MODEL_STAT_MMAP_RECORDS, f->mmap_records);
	model_stat_add(m, MODEL_STAT_MMAP_RECORDS_LOST, f->mmap_records_lost);
}

uint64_t decode_kernel_samples(struct model *m, uint64_t by_ip, uint64_t not_counted)
{
	model_stat_add(m, MODEL_STAT_KERNEL_SAMPLES, by_ip + not_counted);
	return by_ip + not_counted;
}

void decode_trace_attach(struct model *m, size_t skipped, double attach_seconds,
			 double probe_overhead_ns)
{
	if (probe_overhead_ns >= 0)
		model_stat_add(m, MODEL_STAT_PROBE_OVERHEAD_NS, (uint64_t)(probe_overhead_ns + 0.5));
	if (skipped)
		model_stat_add(m, MODEL_STAT_TRACED_FUNCTIONS_SKIPPED, skipped);
	model_stat_add(m, MODEL_STAT_ATTACH_US, (uint64_t)(attach_seconds * 1e6));
}

/* The tracer's counters, in the order of enum collector_trace_counter: each
 * a lost-event cause or a statistic (ENTRIES and EXITS are unused). */
static const struct {
	enum collector_trace_counter counter;
	bool lost;
	int id;               /* enum model_lost when lost, else enum model_stat */
} trace_counters[] = {
	{ COLLECTOR_TCNT_RB_FULL_ENTRY, true, MODEL_LOST_RB_FULL_TRACE_ENTRIES },
	{ COLLECTOR_TCNT_RB_FULL_EXIT, true, MODEL_LOST_RB_FULL_TRACE_EXITS },
	{ COLLECTOR_TCNT_EXIT_NO_ENTRY, false, MODEL_STAT_TRACED_EXITS_WITHOUT_ENTRY },
	{ COLLECTOR_TCNT_FRAMES_DROPPED, false, MODEL_STAT_TRACED_ENTRIES_WITHOUT_EXIT },
	{ COLLECTOR_TCNT_DEPTH_OVERFLOW, true, MODEL_LOST_TRACE_TOO_DEEP },
	{ COLLECTOR_TCNT_STATS_FULL, true, MODEL_LOST_TRACE_STATS_FULL },
	{ COLLECTOR_TCNT_SHADOW_FULL, true, MODEL_LOST_TRACE_SHADOW_FULL },
	{ COLLECTOR_TCNT_WAKEUPS, false, MODEL_STAT_TRACE_RING_WAKEUPS },
	{ COLLECTOR_TCNT_SLOT_TAKEN, false, MODEL_STAT_TRACED_CALLS_PAST_THREAD_SLOTS },
	{ COLLECTOR_TCNT_CLAIM_FULL, true, MODEL_LOST_TRACE_CLAIM_FULL },
};

void decode_trace_counters(struct model *m, const uint64_t c[COLLECTOR_TCNT_MAX])
{
	for (size_t i = 0; i < sizeof(trace_counters) / sizeof(trace_counters[0]); i++) {
		uint64_t v = c[trace_counters[i].counter];

		if (trace_counters[i].lost)
			model_lost_add(m, (enum model_lost)trace_counters[i].id, v);
		else
			model_stat_add(m, (enum model_stat)trace_counters[i].id, v);
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
		model_stat_add(m, MODEL_STAT_TRACED_STATS_UNKNOWN_THREAD, 1);
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
