// SPDX-License-Identifier: GPL-2.0
/*
 * Inlined calls for the symbolizer unit tests, built with -O2 -g:
 * symtest_outer inlines symtest_mid, which inlines symtest_leaf.  The
 * asm label symtest_mark_leaf sits inside the innermost inlined body;
 * "MARK:name" comments are found by the test.
 */
volatile int symtest_sink;

static inline __attribute__((always_inline)) void symtest_leaf(int x) /* DECL:leaf */
{
	__asm__ volatile(".globl symtest_mark_leaf\nsymtest_mark_leaf:"); symtest_sink += x; /* MARK:leaf */
}

static inline __attribute__((always_inline)) void symtest_mid(int x) /* DECL:mid */
{
	symtest_sink ^= 1;
	symtest_leaf(x * 3); /* MARK:call_leaf */
	symtest_sink ^= 2;
}

__attribute__((noinline)) void symtest_outer(int x) /* DECL:outer */
{
	symtest_sink = 0;
	symtest_mid(x + 1); /* MARK:call_mid */
	symtest_sink = 5;
}

int main(int argc, char **argv)
{
	(void)argv;
	symtest_outer(argc);
	return symtest_sink;
}
