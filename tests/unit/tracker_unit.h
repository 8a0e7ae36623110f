/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tracker's unit tests share (test_tracker.c,
 * test_python_splice.c): a tracker over a fresh model, and the clock the
 * records they make carry.
 */
#ifndef COLLECTOR_TEST_TRACKER_UNIT_H
#define COLLECTOR_TEST_TRACKER_UNIT_H

#include <stdint.h>
#include <time.h>

#include "decode/tracker.h"
#include "model/model.h"
#include "symbols/symbolize.h"

/* CLOCK_MONOTONIC in ns, as bpf_ktime_get_ns() gives it. */
static inline uint64_t ktime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Initialises m and makes a symbolizer (*sym) and a tracker of it: the
 * tracker, or NULL when either could not be made. */
static inline struct tracker *tracker_unit_new(struct model *m, struct symbolizer **sym)
{
	model_init(m);
	*sym = symbolizer_new(m);
	return *sym ? tracker_new(m, *sym) : NULL;
}

#endif /* COLLECTOR_TEST_TRACKER_UNIT_H */
