/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Space in an array (that may grow at its end) handed out as ranges of consecutive entries: a
 * free list of ranges sorted by start, first fit, a range given back
 * merged with its free neighbours.  Used entries never move (the unwind
 * tables: a BPF program reads them while the loader allocates, see
 * loader/unwind_tables.h).  Every operation is O(free ranges).
 */
#ifndef COLLECTOR_EXTENTS_H
#define COLLECTOR_EXTENTS_H

#include <stdint.h>
#include <stddef.h>

struct extent {
	uint32_t start, len;
};

struct extents {
	struct extent *free;  /* sorted by start, none adjacent, none empty */
	size_t n, cap;
	uint32_t size;        /* entries in the array */
	uint32_t used;        /* entries handed out */
};

/* All of [0, size) free.  0 or -ENOMEM. */
int extents_init(struct extents *x, uint32_t size);
void extents_free(struct extents *x);

/* The start of a free range of len entries (len > 0), first fit; 0,
 * -ENOSPC when no free range is that long, or -EINVAL. */
int extents_get(struct extents *x, uint32_t len, uint32_t *start);

/* Gives back [start, start + len), which was handed out.  0, -EINVAL
 * when it overlaps a free range or lies outside the array (nothing
 * changed), or -ENOMEM. */
int extents_put(struct extents *x, uint32_t start, uint32_t len);

/* Makes the array size entries long (more than now): the new entries are
 * free, merged with a free range at the old end.  0, -EINVAL, -ENOMEM. */
int extents_grow(struct extents *x, uint32_t size);
/* The longest free range. */
uint32_t extents_largest(const struct extents *x);

#endif /* COLLECTOR_EXTENTS_H */
