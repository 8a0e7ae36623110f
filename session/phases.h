/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a run's start and end go, step by step (-v): each step's wall
 * time and the collector's own CPU time in it (CLOCK_PROCESS_CPUTIME_ID,
 * which counts every thread of the collector: the unwind service's too),
 * printed at the end.  A short run's cost is mostly its start and end
 * (issue 37: a 1 s -p run's CPU against bpftrace's on the same target).
 */
#ifndef COLLECTOR_CLI_PHASES_H
#define COLLECTOR_CLI_PHASES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define PHASES_MAX 16

struct phases {
	bool on;
	uint64_t wall, cpu;     /* at the last mark */
	int n;
	struct {
		const char *name;
		uint64_t wall_ns, cpu_ns;
	} step[PHASES_MAX];
};

/* The collector's own CPU time so far, every thread's (ns). */
uint64_t phases_cpu_ns(void);
/* Starts the clock (nothing is timed when on is false). */
void phases_start(struct phases *ph, bool on);
/* The step just done, named (a string that outlives ph), timed since the
 * last mark. */
void phases_mark(struct phases *ph, const char *name);
/* One line per step and the totals, on out. */
void phases_print(const struct phases *ph, FILE *out);

#endif /* COLLECTOR_CLI_PHASES_H */
