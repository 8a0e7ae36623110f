// SPDX-License-Identifier: GPL-2.0
/* Frame-pointer detection on the workloads the Makefile builds both ways. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "symbols/framepointers.h"

static void test_built_with_frame_pointers(void **state)
{
	(void)state;
	assert_int_equal(elf_uses_frame_pointers("build/workloads/split"), 1);
	/* gcc puts a constant load before the push in most of its functions */
	assert_int_equal(elf_uses_frame_pointers("build/workloads/bigframes"), 1);
}

static void test_built_without_frame_pointers(void **state)
{
	(void)state;
	assert_int_equal(elf_uses_frame_pointers("build/workloads/split-nofp"), 0);
}

static void test_not_an_elf_file(void **state)
{
	(void)state;
	assert_true(elf_uses_frame_pointers("Makefile") < 0);
	assert_int_equal(elf_uses_frame_pointers("/nonexistent"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built_with_frame_pointers),
		cmocka_unit_test(test_built_without_frame_pointers),
		cmocka_unit_test(test_not_an_elf_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
