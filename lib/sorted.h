/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Binary search over an array of structs sorted by a 64-bit field (symbol
 * tables by address, compile units by their low address): the one search
 * the lookups "which entry contains this address" start from.
 */
#ifndef COLLECTOR_SORTED_H
#define COLLECTOR_SORTED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The index of the first of base[0..n) (elements of `size` bytes, sorted by
 * the uint64_t at offset `off`) whose field is above key; n when none is.
 * The element before it, if any, is the last one at or below key. */
static inline size_t sorted_upper_bound(const void *base, size_t n, size_t size, size_t off,
					uint64_t key)
{
	const char *b = base;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;

		memcpy(&v, b + mid * size + off, sizeof(v));
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The same on an array of structs, by the name of its field. */
#define SORTED_UPPER_BOUND(array, n, field, key)                                   \
	sorted_upper_bound((array), (n), sizeof(*(array)),                         \
			   offsetof(__typeof__(*(array)), field), (key))

#endif /* COLLECTOR_SORTED_H */
