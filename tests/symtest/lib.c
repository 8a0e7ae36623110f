// SPDX-License-Identifier: GPL-2.0
/*
 * Shared library for the symbolizer unit tests (dlopen'ed by
 * tests/unit/test_symbolize.c to check load biases on a live mapping).
 * Linked at a non-zero base address so that file offsets and link-time
 * addresses differ.  "MARK:name" comments are found by the test.
 */
volatile int symtest_lib_sink;

int symtest_lib_func(int x) /* DECL:lib_func */
{
	__asm__ volatile(".globl symtest_mark_lib\nsymtest_mark_lib:"); symtest_lib_sink += x; /* MARK:lib */
	return symtest_lib_sink;
}

static __attribute__((noinline)) int symtest_lib_static(int x)
{
	return x * 7 + symtest_lib_sink;
}

int symtest_lib_other(int x)
{
	return symtest_lib_static(x) + 1;
}

/* Exported only as "symtest_lib_versioned@@SYMTEST_1" (lib.map makes the
 * _impl name local): the symbolizer shows it without the version. */
__attribute__((noinline)) int symtest_lib_versioned_impl(int x)
{
	return x + 3;
}
__asm__(".symver symtest_lib_versioned_impl, symtest_lib_versioned@@SYMTEST_1");
