/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of folded stacks, the text Brendan Gregg's stackcollapse scripts
 * write and flamegraph.pl reads: one line per stack, its frames root first
 * separated by ';', then one space and the sample count in decimal.
 *
 *   split;main;chain_a;hot_function 725
 *
 * A frame may hold spaces (C++ signatures): the count is what follows the
 * last space.  The reader rejects, with the byte offset: an empty line or
 * frame, a line without a count, a count that is not a decimal number or
 * does not fit 63 bits, a NUL byte, counts whose sum overflows, and a file
 * that does not end with a newline.  It accepts \r\n line ends and counts
 * of 0 (flamegraph.pl does), and it keeps every line in file order.
 */
#ifndef COLLECTOR_FOLDED_READER_H
#define COLLECTOR_FOLDED_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/infile.h"

struct folded_line {
	const char *stack;      /* frames ';'-separated, NUL-terminated, in text */
	uint32_t n_frames;
	uint64_t count;
	size_t offset;          /* byte offset of the line in the file */
};

struct folded_profile {
	char *text;             /* a copy of the input, cut into the stacks */
	struct folded_line *lines;
	size_t n_lines;
	uint64_t total;         /* sum of the counts */
	uint32_t max_frames;
};

/* Parses data[0..n).  Returns 0, -ENOMEM, or -EINVAL with err filled. */
int folded_parse(const char *data, size_t n, struct folded_profile *p, struct format_error *err);
int folded_read_file(const char *path, struct folded_profile *p, struct format_error *err);
void folded_profile_free(struct folded_profile *p);
/* The profile as text: totals, the samples of each root frame, the lines. */
void folded_print(const struct folded_profile *p, FILE *out);
/* Whether data[0..n) starts with a well-formed folded line of at least two
 * frames (the first line of a file, for `collector dump` to recognize it). */
bool folded_first_line_ok(const char *data, size_t n);

#endif /* COLLECTOR_FOLDED_READER_H */
