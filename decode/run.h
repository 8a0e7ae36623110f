/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's own facts into the model: the machine, the clocks, what was
 * asked for, the sampling window, the profiler's own cost, and the RAPL
 * energy readings taken during the run.
 */
#ifndef COLLECTOR_RUN_H
#define COLLECTOR_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/kvlist.h"
#include "lib/perf_events.h"
#include "lib/powercap.h"
#include "model/model.h"

struct run_setup {
	const char *command_line;   /* the profiled command, or NULL */
	bool system_wide;
	unsigned int freq_hz;       /* -F */
	const struct perf_event_request *events; /* -e, by event index */
	int n_events;               /* 0: cpu-clock at freq_hz */
	bool off_cpu;               /* --off-cpu: event off-cpu after them */
	uint64_t off_cpu_min_ns;    /* --off-cpu-min */
	unsigned int trace_nargs;   /* --args */
	const char *call_graph;     /* "fp", "dwarf" */
	/* what the collector was told of itself (OTEL_RESOURCE_ATTRIBUTES) */
	const struct kv *attributes;
	size_t n_attributes;
};

/* CLOCK_MONOTONIC, as the kernel's ktime, and CLOCK_REALTIME, in ns. */
uint64_t run_clock_ns(bool monotonic);

/* The machine (host name and id, CPUs, clock rate), the offset from
 * kernel time to the Unix epoch, what was asked for (the events among it,
 * model_add_event() in order) and the run's attributes. */
void decode_run_setup(struct model *m, const struct run_setup *s);
/* The call graph chosen once the targets are known. */
void decode_run_call_graph(struct model *m, const char *call_graph);
/* The sampling window opens now (kernel time). */
void decode_window_start(struct model *m);
/* The sampling window closes now. */
void decode_window_end(struct model *m);
/* Sample records lost by event index, as the kernel counted them. */
void decode_events_lost(struct model *m, const uint64_t *lost, uint32_t n);
/* What the profiler itself cost: its CPU time, and the BPF programs'. */
void decode_run_costs(struct model *m, uint64_t collector_cpu_ns, uint64_t bpf_run_ns);
/* A reading of the RAPL energy counters, at most every 100 ms unless
 * forced: the sampler format turns them into watts per period. */
void decode_energy(struct model *m, struct powercap *pc, bool force);

#endif /* COLLECTOR_RUN_H */
