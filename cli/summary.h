/* SPDX-License-Identifier: GPL-2.0 */
/* The end-of-run summary: figures, lost events, top functions. */
#ifndef COLLECTOR_SUMMARY_H
#define COLLECTOR_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "session/session.h"

/* Per-function sample counts, sorted by self (or total) count. */
struct summary_entry {
	uint64_t key;          /* function id, or 1 << 32 | location id */
	uint64_t self;
	uint64_t total;
};

#define SUMMARY_ALL_EVENTS UINT32_MAX

/* Counts self and total samples (weighted: their weights) per function over
 * the samples of one event (or SUMMARY_ALL_EVENTS); returns the number of
 * entries in *out (caller frees) or a negative errno. */
long summary_function_counts(const struct model *m, uint32_t event, bool weighted,
			     struct summary_entry **out);
/* Name of an entry: the function, or "[unknown] image+0xoffset". */
void summary_entry_name(const struct model *m, uint64_t key, char *buf, size_t size);

void summary_print(FILE *out, const struct model *m, const struct summary_figures *f);
/* The wall view (cli/summary_wall.c): on-CPU and off-CPU time beside the
 * threads' time from from_ns (epoch; the run's start when earlier) to the
 * run's end, and the threads whose times do not add up, with why. */
void summary_print_wall(FILE *out, const struct model *m, uint64_t from_ns);

#endif /* COLLECTOR_SUMMARY_H */
