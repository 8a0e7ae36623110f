/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loader's knobs: overrides of how the kernel side is built and run,
 * for the tests and benchmarks that compare one way with another (a full
 * map on purpose, the kernel's own frame-pointer walker, the path of
 * kernels without batch map operations or the multi-uprobe link).  Each is
 * an environment variable, read once, by bpf_knobs_from_env(), into the
 * configuration (struct bpf_session_config's and struct uprobes_config's
 * `knobs`): the one place that names them.  Zero values leave the default.
 */
#ifndef COLLECTOR_LOADER_KNOBS_H
#define COLLECTOR_LOADER_KNOBS_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_knobs {
	double sampler_share;       /* COLLECTOR_SAMPLER_SHARE: % of a CPU (0: the
				     * kernel's perf_cpu_time_max_percent) */
	bool verifier_stats;        /* COLLECTOR_VERIFIER_STATS: each program's */
	bool unwind_no_learn;       /* COLLECTOR_UNWIND_NO_LEARN: no mapping found
				     * in the kernel's VMAs (bpf/unwind_learn.bpf.h) */
	bool kernel_fp_walk;        /* COLLECTOR_KERNEL_FP_WALK: bpf_get_stack()
				     * walks user stacks */
	uint32_t agg_keys;          /* COLLECTOR_AGG_KEYS: entries of a slot's sums */
	uint32_t agg_stacks;        /* COLLECTOR_AGG_STACKS: ... of its stacks */
	bool count_by_ip;           /* COLLECTOR_COUNT_BY_IP: every sample counted
				     * by instruction too */
	bool agg_no_batch;          /* COLLECTOR_AGG_NO_BATCH: sums read key by key */
	uint32_t unwind_rows;       /* COLLECTOR_UNWIND_ROWS: rows the tables may
				     * grow to (16 to 2^26) */
	uint32_t trace_slots;       /* COLLECTOR_TRACE_SLOTS: functions a thread
				     * keeps (a power of two, at most
				     * COLLECTOR_TRACE_SLOTS) */
	bool single_uprobes;        /* COLLECTOR_SINGLE_UPROBES: one link a probe */
};

/* Reads the knobs from the environment; a malformed value is said on
 * stderr and left at its default. */
void bpf_knobs_from_env(struct bpf_knobs *k);

#endif /* COLLECTOR_LOADER_KNOBS_H */
