// SPDX-License-Identifier: GPL-2.0
/* The sampling session's configuration, from the options. */
#include "session/session_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "session/targets.h"
#include "formats/registry.h"
#include "loader/knobs.h"
#include "runtimes/runtime.h"

/*
 * The ring holds what streams between two drains (100 to 500 ms; the
 * program wakes the loop when a quarter is used).  With the samples summed
 * in the kernel, no switches and no --trace, only the task records (a few
 * hundred processes a second on a build machine, about 100 KB/s) and
 * unwind requests: 2 MiB.  With cfi besides, the samples before their
 * image's table stream as stack copies of up to 32 KiB: at most one per
 * sample, so the samples of the longest wait between drains (500 ms) at
 * the events' rates on every CPU, kept under 16 MiB.  The ring's pages are
 * resident once written and mapped twice (its data follows itself, for
 * records that wrap): a 16 MiB ring was 32 MiB of a long -a -F 99 run's 156
 * MiB of RSS, where half a second of its copies is 3.2 MiB (2 CPUs).  An
 * event sampled every N occurrences has no known rate (64 copies fill 2
 * MiB: a page-touching program's first 3 000 page faults lost 2 200), and
 * anything else streams each record: 16 MiB.
 */
static unsigned int ring_bytes_for(const struct bpf_session_config *cfg,
				   const struct collector_options *opts)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t rate = 0, bytes;
	unsigned int ring = 2u << 20;

	if (!cfg->aggregate_samples || cfg->trace_switches || cfg->off_cpu || opts->n_trace_specs)
		return 16u << 20;
	if (!cfg->cfi)
		return ring;
	for (int i = 0; i < cfg->n_events; i++) {
		if (!cfg->events[i].use_freq)
			return 16u << 20;
		rate += cfg->events[i].freq;
	}
	bytes = rate * (uint64_t)(cpus > 0 ? cpus : 1) * 32768 / 2;
	while (ring < bytes && ring < (16u << 20))
		ring <<= 1;
	return ring;
}

void session_config_of(const struct collector_options *opts, struct bpf_session_config *cfg)
{
	*cfg = (struct bpf_session_config){
		.system_wide = opts->all_cpus,
		/* 100 000 switches a second in a system-wide run are 10 MB a
		 * second of records: only when a format reads them */
		.trace_switches = !opts->no_switches && formats_use_switches(opts->formats),
		.events = opts->events,
		.n_events = opts->n_events,
		.off_cpu = opts->off_cpu,
		.off_cpu_min_ns = opts->off_cpu_min_ns,
		.off_cpu_event = opts->n_events,
		.ring_bytes = opts->ring_bytes,
		.dwarf = targets_want_dwarf(opts),
		.cfi = opts->call_graph == CALL_GRAPH_CFI,
		/* rows grown 2 MiB at a time up to 64 MiB, as the images met
		 * need (a build's cc1, libLLVM and libclang-cpp: 2.5 M rows,
		 * 20 MiB, which the fixed 16 MiB of before could not hold: 70%
		 * of a build loop's stacks truncated while clang ran); each
		 * image's page index is in the same space, after its rows
		 * (cc1: 81 000 entries for 430 000 rows) */
		.cfi_rows = 1u << 23,
		.stack_bytes = opts->stack_size,
		.verbose = opts->verbose,
	};

	/* what the tests override (COLLECTOR_CFI_TABLE_ROWS and the others:
	 * loader/knobs.h), read once */
	bpf_knobs_from_env(&cfg->knobs);
	if (cfg->knobs.unwind_rows)
		cfg->cfi_rows = cfg->knobs.unwind_rows;
	/* the kernel sums the samples by stack when nothing needs each one:
	 * no format wants them in time order, no dwarf unwinding of each in
	 * user space, no --trace (its calls interleave with the samples) */
	cfg->aggregate_samples = !opts->no_aggregate && !cfg->dwarf && !opts->n_trace_specs &&
				 !formats_need_time_order(opts->formats);

	if (!cfg->ring_bytes)
		cfg->ring_bytes = ring_bytes_for(cfg, opts);
	/* every runtime's walks (of samples, of switch-outs with --off-cpu),
	 * loaded when its first process is met */
	cfg->walk_kinds = runtimes_walks_needed(runtime_registry, NULL, 0, true);
	/* the JVM's walk goes on from where the cfi walk met its code
	 * (bpf/sample_runtimes.bpf.h): with fp or dwarf stacks its frames
	 * were cut at the first Java frame and its JIT code left unnamed, the
	 * JVM not asked for a perf map either; unwalked, it is asked */
	if (opts->no_jvm_walk || !cfg->cfi)
		cfg->walk_kinds &= ~runtimes_kind_named(runtime_registry, "jvm");
	/* bench/python.sh's baseline, and the tests that compare native
	 * stacks: the same run with CPython's frames not walked */
	if (getenv("COLLECTOR_NO_PYTHON_WALK"))
		cfg->walk_kinds &= ~runtimes_kind_named(runtime_registry, "python");
	/* -p's targets read once (their maps) for what they run now */
	cfg->ahead_walk_kinds =
		cfg->walk_kinds & runtimes_walks_needed(runtime_registry, opts->pids,
							(size_t)opts->n_pids, false);
}
