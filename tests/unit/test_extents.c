// SPDX-License-Identifier: GPL-2.0
/*
 * lib/extents.c, the allocator of the unwind tables' space: small cases
 * (first fit, merging with either neighbour and both, a range given back
 * twice), growing, then thousands of random allocations and releases checked
 * against a map of the array entry by entry: no entry handed out twice,
 * -ENOSPC exactly when no free run is long enough, the longest free range
 * the map's, and everything given back is one free range again.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "lib/extents.h"

static void test_small(void **state)
{
	struct extents x;
	uint32_t a, b, c, d;

	(void)state;
	assert_int_equal(extents_init(&x, 100), 0);
	assert_int_equal(extents_get(&x, 0, &a), -EINVAL);
	assert_int_equal(extents_get(&x, 30, &a), 0);
	assert_int_equal(extents_get(&x, 30, &b), 0);
	assert_int_equal(extents_get(&x, 30, &c), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 30);
	assert_int_equal(c, 60);
	assert_int_equal(extents_get(&x, 11, &d), -ENOSPC);
	assert_int_equal(x.used, 90);
	/* a hole between two used ranges, then first fit into it */
	assert_int_equal(extents_put(&x, b, 30), 0);
	assert_int_equal(extents_put(&x, b, 30), -EINVAL); /* twice */
	assert_int_equal(extents_put(&x, 95, 10), -EINVAL); /* past the end */
	assert_int_equal(extents_largest(&x), 30);
	assert_int_equal(extents_get(&x, 20, &d), 0);
	assert_int_equal(d, 30);
	assert_int_equal(extents_put(&x, d, 20), 0);
	/* merged with the next free range, then with both neighbours */
	assert_int_equal(extents_put(&x, c, 30), 0);
	assert_int_equal(x.n, 1);
	assert_int_equal(extents_largest(&x), 70);
	assert_int_equal(extents_put(&x, a, 30), 0);
	assert_int_equal(x.n, 1);
	assert_int_equal(x.free[0].start, 0);
	assert_int_equal(x.free[0].len, 100);
	assert_int_equal(x.used, 0);
	extents_free(&x);
}

/* Growing: the new entries merge with a free range at the old end, or
 * start one after a used one; no shrinking. */
static void test_grow(void **state)
{
	struct extents x;
	uint32_t a, b;

	(void)state;
	assert_int_equal(extents_init(&x, 100), 0);
	assert_int_equal(extents_get(&x, 60, &a), 0);
	assert_int_equal(extents_get(&x, 50, &b), -ENOSPC);
	assert_int_equal(extents_grow(&x, 100), -EINVAL);
	assert_int_equal(extents_grow(&x, 50), -EINVAL);
	assert_int_equal(extents_grow(&x, 120), 0);
	assert_int_equal(x.n, 1); /* [60, 100) and [100, 120) are one */
	assert_int_equal(x.used, 60);
	assert_int_equal(extents_get(&x, 50, &b), 0);
	assert_int_equal(b, 60);
	assert_int_equal(extents_largest(&x), 10);
	/* the end used: the new range stands alone */
	assert_int_equal(extents_get(&x, 10, &b), 0);
	assert_int_equal(extents_largest(&x), 0);
	assert_int_equal(extents_grow(&x, 200), 0);
	assert_int_equal(extents_largest(&x), 80);
	assert_int_equal(extents_get(&x, 80, &b), 0);
	assert_int_equal(b, 120);
	assert_int_equal(x.used, 200);
	extents_free(&x);
}

#define SIZE 4096
#define SLOTS 64

/* The longest run of free entries in the map. */
static uint32_t longest_free(const uint8_t *map)
{
	uint32_t best = 0, run = 0;

	for (uint32_t i = 0; i < SIZE; i++) {
		run = map[i] ? 0 : run + 1;
		if (run > best)
			best = run;
	}
	return best;
}

static void test_random(void **state)
{
	struct { uint32_t start, len; } slot[SLOTS] = { { 0, 0 } };
	static uint8_t map[SIZE];
	struct extents x;
	unsigned int seed = 14;

	(void)state;
	memset(map, 0, sizeof(map));
	assert_int_equal(extents_init(&x, SIZE), 0);
	for (int step = 0; step < 20000; step++) {
		int k = rand_r(&seed) % SLOTS;

		if (slot[k].len) {
			for (uint32_t i = 0; i < slot[k].len; i++)
				map[slot[k].start + i] = 0;
			assert_int_equal(extents_put(&x, slot[k].start, slot[k].len), 0);
			slot[k].len = 0;
		} else {
			/* mostly small, now and then most of the array */
			uint32_t len = rand_r(&seed) % 8 ? 1 + rand_r(&seed) % 200
							 : 1 + rand_r(&seed) % SIZE;
			uint32_t start;
			int err = extents_get(&x, len, &start);

			if (len > longest_free(map)) {
				assert_int_equal(err, -ENOSPC);
				continue;
			}
			assert_int_equal(err, 0);
			assert_true(start + len <= SIZE);
			for (uint32_t i = 0; i < len; i++) {
				assert_int_equal(map[start + i], 0);
				map[start + i] = 1;
			}
			slot[k].start = start;
			slot[k].len = len;
		}
		assert_int_equal(extents_largest(&x), longest_free(map));
		/* the free list sorted, apart, not empty */
		for (size_t i = 0; i < x.n; i++) {
			assert_true(x.free[i].len > 0);
			if (i)
				assert_true(x.free[i - 1].start + x.free[i - 1].len < x.free[i].start);
		}
	}
	for (int k = 0; k < SLOTS; k++)
		if (slot[k].len)
			assert_int_equal(extents_put(&x, slot[k].start, slot[k].len), 0);
	assert_int_equal(x.n, 1);
	assert_int_equal(x.free[0].len, SIZE);
	assert_int_equal(x.used, 0);
	extents_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
