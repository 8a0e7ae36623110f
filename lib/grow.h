/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Room for one more element at the end of a realloc'ed array: the one
 * growth rule of the arrays that keep their own length and capacity and
 * report running out of memory (the model's vectors abort instead:
 * model_vec_grow()).
 */
#ifndef COLLECTOR_GROW_H
#define COLLECTOR_GROW_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

/* *items holds n of *cap elements of size bytes: when full, its capacity
 * doubles (first when it had none).  0, or -ENOMEM (*items unchanged). */
static inline int array_grow(void **items, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t c;
	void *p;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : first;
	p = realloc(*items, c * size);
	if (!p)
		return -ENOMEM;
	*items = p;
	*cap = c;
	return 0;
}

#endif /* COLLECTOR_GROW_H */
