/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Continuous runs (`--interval SEC`), as fleet agents make them: every SEC
 * seconds the samples of the interval just ended are written as a complete
 * set of files into OUTDIR/<UTC start of the interval's slot>/ (for example
 * 20261123T141500Z/), then dropped from the model, so that memory does not
 * grow with the run.  An interval is cut when the ring has just been
 * drained: each sample goes to exactly one interval, the one in which it
 * was read, and the intervals' samples add up to the run's.
 *
 * What the model interned (processes, images, functions, stacks) stays
 * from one interval to the next; each interval's files carry its own
 * window (pprof's time_nanos and duration_nanos, the other formats' start
 * and end).  Lost-event counters are the run's so far.
 */
#ifndef COLLECTOR_CONTINUOUS_H
#define COLLECTOR_CONTINUOUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/format.h"
#include "model/model.h"

struct continuous {
	uint64_t interval_ns;     /* 0: not a continuous run */
	uint64_t start_ktime_ns;  /* the current interval's start */
	uint64_t end_ktime_ns;    /* when it is due to end: the run's start plus a
				   * whole number of intervals, so that a late cut
				   * does not shift the ones after it */
	unsigned int written;     /* intervals written */
	uint64_t samples;         /* samples in the intervals written */
	uint64_t sums;            /* and records that are no samples (off-cpu's
				   * sums: model_sum_records()) */
	int first_err;            /* the first write's error, 0 if none */
	struct push *push;        /* --otlp: each interval pushed too, or NULL */
};

/* The first interval starts at start_ktime_ns (CLOCK_MONOTONIC). */
void continuous_start(struct continuous *c, double interval_s, uint64_t start_ktime_ns);
/* Whether the current interval has ended at now_ktime_ns. */
bool continuous_due(const struct continuous *c, uint64_t now_ktime_ns);
/* How long to sleep: max_ms, or less when the interval ends sooner. */
int continuous_wait_ms(const struct continuous *c, uint64_t now_ktime_ns, int max_ms);
struct push;

/*
 * Writes the interval [start, end_ktime_ns) with the formats in mask (none:
 * no directory either) and pushes it with c->push (events sealed and
 * sorted first) under eo->dir/<UTC start>/, says so on
 * stderr unless eo->quiet, and starts the next interval at end_ktime_ns.
 * Unless last, the interval's events are then dropped and spilling
 * resumes in spill_dir (see model_drop_events()); the last interval's
 * stay for the summary.  Returns 0 or the first negative errno.
 */
int continuous_write(struct continuous *c, struct model *m, unsigned int mask,
		     const struct export_options *eo, uint64_t end_ktime_ns,
		     const char *spill_dir, bool last);

#endif /* COLLECTOR_CONTINUOUS_H */
