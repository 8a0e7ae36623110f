/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The summary's table of a runtime's functions, the one way for every
 * runtime: the functions of the runtime's image ("[python]", "[java]") by
 * self samples (those whose innermost frame of the runtime, its innermost
 * inlined function first, is the function, whatever native code runs under
 * it) and total samples (those with the function anywhere in the stack),
 * counted over the sampling events' samples.
 */
#ifndef COLLECTOR_RUNTIMES_RUNTIME_REPORT_H
#define COLLECTOR_RUNTIMES_RUNTIME_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "lib/idmap.h"
#include "model/model.h"

/* Per function (key: its id, or 1 << 32 | the location of a frame not
 * named). */
struct runtime_entry {
	uint64_t key;
	uint64_t self;
	uint64_t total;
};

struct runtime_counts {
	MODEL_VEC(struct runtime_entry) entries;
	struct idmap index;
	uint64_t with_frames;     /* samples with any frame of the image */
	uint64_t samples;         /* samples of the sampling events */
};

/* Counts the functions of the runtime image named image.  0, or -1 when
 * out of memory. */
int runtime_counts_of(const struct model *m, const char *image, struct runtime_counts *c);
void runtime_counts_free(struct runtime_counts *c);

/* The table: heading (its line), column (the functions' column's title,
 * width wide), the top functions by self samples. */
void runtime_counts_print(FILE *out, const struct model *m, struct runtime_counts *c,
			  const char *image, const char *heading, const char *column, int width);

#endif /* COLLECTOR_RUNTIMES_RUNTIME_REPORT_H */
