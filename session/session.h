/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One profiling run (the session layer): check what can be checked before
 * BPF is loaded (privileges, policy, targets, the output directory), load
 * and attach, start or find the targets, drain until told to stop, cut the
 * intervals, then drain what is left, read the kernel's counters and sums,
 * write every file and push what is pushed.  What the run shows is the
 * front end's (cli/): the status line while it lasts, and once it is over
 * the summary (or `collector stacks`'s listing), through struct run_front.
 *
 * The layer sits between the engine (loader, decode, formats, transport,
 * runtimes) and cli/, which keeps the options' parsing, the status line,
 * the summary's printing and `collector dump`.
 */
#ifndef COLLECTOR_SESSION_SESSION_H
#define COLLECTOR_SESSION_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "formats/format.h"
#include "model/model.h"
#include "runtimes/runtime.h"
#include "session/options.h"

struct push;

/* What the run measured beside the model, for the summary. */
struct summary_figures {
	double duration_s;
	uint64_t kernel_samples;   /* samples the BPF program counted */
	uint64_t target_cpu_ns;    /* CPU time the targets used, 0 if unknown */
	int cpus;                  /* CPUs sampled */
	unsigned int intervals;    /* --interval: sets of files written, 0 otherwise */
	uint64_t interval_samples; /* --interval: samples decoded over the run
				    * (not off-cpu's sums) */
	uint64_t sampler_runs;     /* the sampling program's runs, 0 if unknown */
	bool aggregated;           /* the samples were summed by stack in the kernel */
	const struct runtimes *runtimes; /* the run's runtimes, for their summary */
	uint64_t window_start_ns;  /* --interval: the last interval's start (epoch
				    * ns), which the samples are of; else 0 */
};

/* The front end's part.  Every hook may be NULL. */
struct run_front {
	void *ctx;
	/* sampling has started (CLOCK_MONOTONIC ns) */
	void (*started)(void *ctx, uint64_t start_ktime_ns);
	/* after each drain: the samples so far, the records the ring could
	 * not take, the traced events */
	void (*progress)(void *ctx, uint64_t samples, uint64_t lost, uint64_t traced);
	/* the run stops: no progress after this */
	void (*stopping)(void *ctx);
	/* the run is over, its files written (none for `collector stacks`,
	 * whose listing and -f files are the report's) and its push done:
	 * what it says; returns 0, or an exit code */
	int (*report)(void *ctx, struct model *m, const struct summary_figures *f,
		      struct push *push, const struct export_options *eo);
};

/* Runs the whole collection and returns the process exit code. */
int run_session(const struct collector_options *opts, const struct run_front *front);

#endif /* COLLECTOR_SESSION_SESSION_H */
