/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The value columns of the sampled profiles (pprof's sample types, OTLP's
 * one Profile per type), named in one place so that a pprof file and an
 * OTLP request of one run say the same:
 *   samples/count                 every event's samples;
 *   one per event                 "cpu" for the default cpu-clock (as pprof's
 *                                 own CPU profiles), else the event's name;
 *                                 nanoseconds for clocks, else count;
 *   wall/nanoseconds              with --off-cpu and an on-CPU clock: their
 *                                 sum, the wall-clock view (model_has_wall()).
 * A group of samples (one stack, one thread) fills its values column by
 * column with sample_types_add().
 */
#ifndef COLLECTOR_SAMPLE_TYPES_H
#define COLLECTOR_SAMPLE_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

#define SAMPLE_TYPES_MAX (1 + MODEL_MAX_EVENTS + 1)

struct sample_types {
	size_t n;                   /* columns */
	size_t n_events;            /* events with a column: 1 + e is event e's */
	int wall;                   /* the column of wall time, or -1 */
	const char *type[SAMPLE_TYPES_MAX];
	const char *unit[SAMPLE_TYPES_MAX];
};

void sample_types_of(const struct model *m, struct sample_types *t);

/* Adds sample s of the model to values[0..t->n): one to the count, its
 * weight (the run's period for a cpu sample without one) to its event's
 * column and, for a wall event, to the wall column. */
void sample_types_add(const struct model *m, const struct sample_types *t,
		      const struct model_sample *s, int64_t *values);

/* What one sample of an event stands for, nominally: its period, or for a
 * clock sampled at a frequency 1 s / frequency; 0 when unknown. */
uint64_t sample_types_period(const struct model_event *e);

#endif /* COLLECTOR_SAMPLE_TYPES_H */
