/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of collector's flame graph pages: finds the page's data (the
 * <script type="application/json" id="flamegraph-data"> element), parses
 * it with json-c and checks the tree it holds (flamegraph.c describes the
 * layout):
 *   - version 1; names an array of strings, kinds an array of as many
 *     integers from 0 to 255: formats/frames.h's kind bits (0 to 31),
 *     and from bit FLAMEGRAPH_RUNTIME_SHIFT up, only with the runtime bit
 *     (16), 1 + an index of runtimes, an array of at most
 *     FLAMEGRAPH_MAX_RUNTIMES strings the data has when a kind needs it;
 *   - nodes a whole number of [name, total, children] triples that make one
 *     tree: the root first with name -1, every other name an index of
 *     names, totals >= 0 and each at least the sum of its children's, the
 *     children counts adding up to exactly the nodes that follow;
 *   - the root's total equal to "samples";
 *   - the page ends with "</html>\n", as written: nothing was cut off.
 * An error gives the byte offset in the page (of the data element, for
 * errors in the tree) and the reason.
 */
#ifndef COLLECTOR_FLAMEGRAPH_READER_H
#define COLLECTOR_FLAMEGRAPH_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/infile.h"

/* In the page's first line, for `collector dump` to know it. */
#define FLAMEGRAPH_MARK "collector flame graph"
#define FLAMEGRAPH_DATA_ID "flamegraph-data"
/* A runtime's frame: which runtime, 1 + its index in "runtimes", from
 * this bit of its kind up (3 bits). */
#define FLAMEGRAPH_RUNTIME_SHIFT 5
#define FLAMEGRAPH_MAX_RUNTIMES 7

struct flamegraph_node {
	int64_t name;             /* index of names, -1 for the root */
	uint64_t total, self;
	uint32_t depth;
};

struct flamegraph_page {
	void *root;               /* the json-c tree of the data */
	const char *title, *subtitle;
	uint64_t samples;
	size_t n_names;
	const char **names;
	uint8_t *kinds;
	size_t n_runtimes;
	const char *runtimes[FLAMEGRAPH_MAX_RUNTIMES];  /* "java", "python" */
	size_t n_nodes;
	struct flamegraph_node *nodes;  /* depth first, as in the page */
	uint32_t max_depth;
};

/* Parses a page data[0..n).  Returns 0, -ENOMEM, or -EINVAL with err filled. */
int flamegraph_parse(const char *data, size_t n, struct flamegraph_page *p,
		     struct format_error *err);
int flamegraph_read_file(const char *path, struct flamegraph_page *p,
			 struct format_error *err);
void flamegraph_page_free(struct flamegraph_page *p);
/* The header, then one line per node: depth, total, self, name. */
void flamegraph_print(const struct flamegraph_page *p, FILE *out);

#endif /* COLLECTOR_FLAMEGRAPH_READER_H */
