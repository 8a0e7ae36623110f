// SPDX-License-Identifier: GPL-2.0
/* Ranges of a fixed array handed out from a sorted free list. */
#include "lib/extents.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int extents_init(struct extents *x, uint32_t size)
{
	memset(x, 0, sizeof(*x));
	x->size = size;
	if (!size)
		return 0;
	x->free = malloc(sizeof(*x->free));
	if (!x->free)
		return -ENOMEM;
	x->free[0] = (struct extent){ 0, size };
	x->n = x->cap = 1;
	return 0;
}

void extents_free(struct extents *x)
{
	free(x->free);
	memset(x, 0, sizeof(*x));
}

int extents_get(struct extents *x, uint32_t len, uint32_t *start)
{
	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < x->n; i++) {
		struct extent *e = &x->free[i];

		if (e->len < len)
			continue;
		*start = e->start;
		e->start += len;
		e->len -= len;
		if (!e->len) {
			memmove(e, e + 1, (x->n - i - 1) * sizeof(*e));
			x->n--;
		}
		x->used += len;
		return 0;
	}
	return -ENOSPC;
}

int extents_grow(struct extents *x, uint32_t size)
{
	uint32_t old = x->size, added = size - old;
	int err;

	if (size <= old)
		return -EINVAL;
	/* the new entries as handed out, then given back: one merge */
	x->size = size;
	x->used += added;
	err = extents_put(x, old, added);
	if (err) {
		x->size = old;
		x->used -= added;
	}
	return err;
}

int extents_put(struct extents *x, uint32_t start, uint32_t len)
{
	uint64_t end = (uint64_t)start + len;
	size_t i = 0, lo = 0, hi = x->n;
	struct extent *prev, *next;

	if (!len || end > x->size)
		return -EINVAL;
	/* i: the first free range that starts after start */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (x->free[mid].start <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	prev = i ? &x->free[i - 1] : NULL;
	next = i < x->n ? &x->free[i] : NULL;
	if ((prev && (uint64_t)prev->start + prev->len > start) || (next && next->start < end))
		return -EINVAL;
	x->used -= len;
	if (prev && prev->start + prev->len == start) {
		prev->len += len;
		if (next && next->start == end) {
			prev->len += next->len;
			memmove(next, next + 1, (x->n - i - 1) * sizeof(*next));
			x->n--;
		}
		return 0;
	}
	if (next && next->start == end) {
		next->start = start;
		next->len += len;
		return 0;
	}
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 16;
		struct extent *v = realloc(x->free, cap * sizeof(*v));

		if (!v) {
			x->used += len;
			return -ENOMEM;
		}
		x->free = v;
		x->cap = cap;
	}
	memmove(&x->free[i + 1], &x->free[i], (x->n - i) * sizeof(*x->free));
	x->free[i] = (struct extent){ start, len };
	x->n++;
	return 0;
}

uint32_t extents_largest(const struct extents *x)
{
	uint32_t best = 0;

	for (size_t i = 0; i < x->n; i++)
		if (x->free[i].len > best)
			best = x->free[i].len;
	return best;
}
