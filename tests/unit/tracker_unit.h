/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tracker's unit tests share (test_tracker.c,
 * test_python_splice.c, test_runtime_seam.c): a tracker over a fresh
 * model, the clock the records they make carry, and a sample record of
 * the test's own thread.
 */
#ifndef COLLECTOR_TEST_TRACKER_UNIT_H
#define COLLECTOR_TEST_TRACKER_UNIT_H

#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bpf/collector.h"
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

/* Frees what tracker_unit_new() made. */
static inline void tracker_unit_free(struct tracker *t, struct symbolizer *sym, struct model *m)
{
	tracker_free(t);
	symbolizer_free(sym);
	model_free(m);
}

/* A cpu-clock sample of the test's own thread, of period ns, whose user
 * frames are user[0..n_user) (the PC, then return addresses, a runtime's
 * frames where its walk puts them), handed to t: the test fails on an
 * error. */
static inline void tracker_unit_sample(struct tracker *t, const uint64_t *user, uint16_t n_user,
				       uint64_t period)
{
	uint64_t buf[(sizeof(struct collector_sample_event) + 8 * COLLECTOR_MAX_STACK_DEPTH) / 8];
	struct collector_sample_event *e = (struct collector_sample_event *)buf;

	memset(buf, 0, sizeof(buf));
	e->hdr.kind = COLLECTOR_EV_SAMPLE;
	e->hdr.ktime_ns = ktime_now();
	e->hdr.tgid = (uint32_t)getpid();
	e->hdr.tid = (uint32_t)gettid();
	e->ip = user[0];
	e->user_ip = user[0];
	e->period = period;
	e->cputime_ns = 1000;
	e->n_user = n_user;
	memcpy(e + 1, user, n_user * sizeof(uint64_t));
	assert_int_equal(tracker_handle_record(t, buf, sizeof(*e) + n_user * 8), 0);
}

#endif /* COLLECTOR_TEST_TRACKER_UNIT_H */
