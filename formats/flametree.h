/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The samples as one calling-context tree keyed by frame names (a sum
 * aggregated in the kernel, off-cpu's, counting its µs), for the
 * folded stacks and the flame graph: the root stands for every sample, its
 * children are the process names (comm: processes of one name merge, as
 * stackcollapse-perf merges them), and below each the frames root first
 * (formats/frames.h), siblings of one name merged.  Each node counts the
 * samples whose stack passes through it (total) and ends at it (self);
 * a sample without a stack ends at its process's node.  Children are
 * sorted by name, so the output does not depend on the order samples
 * came in.
 */
#ifndef COLLECTOR_FORMATS_FLAMETREE_H
#define COLLECTOR_FORMATS_FLAMETREE_H

#include <stdint.h>

#include "formats/frames.h"
#include "model/model.h"

#define FLAMETREE_ROOT 0

struct flame_node {
	uint32_t name;          /* frame_table name id (the root: none) */
	uint32_t parent;        /* MODEL_NONE for the root */
	uint32_t first_child;   /* MODEL_NONE when a leaf; children by name */
	uint32_t next_sibling;  /* MODEL_NONE for the last */
	uint32_t depth;         /* 0 for the root, 1 for a process name */
	uint64_t self;          /* samples that end here */
	uint64_t total;         /* samples that pass through here */
};

struct flametree {
	struct frame_table frames;
	MODEL_VEC(struct flame_node) nodes;
	uint32_t max_depth;
};

/* Builds the tree of every sample of m.  Returns 0 or -ENOMEM. */
int flametree_build(struct flametree *t, const struct model *m);
void flametree_free(struct flametree *t);

static inline const struct frame_name *flametree_name(const struct flametree *t,
						      const struct flame_node *n)
{
	return &t->frames.names.items[n->name];
}

#endif /* COLLECTOR_FORMATS_FLAMETREE_H */
