// SPDX-License-Identifier: GPL-2.0
/*
 * Test program for the symbolizer unit tests: built as PIE, non-PIE and
 * stripped variants by mk/symtest.mk and read, never run, by
 * tests/unit/test_symbolize*.c.  Lines that the test checks carry a
 * "MARK:name" comment; it finds them by searching this file, so keep each
 * marker unique.  The asm labels symtest_mark_* give the test the address
 * of a marked line.
 */
#ifndef SYMTEST_VARIANT
#define SYMTEST_VARIANT "plain"
#endif

/* Makes each variant's bytes, and so its build-id, differ. */
const char symtest_variant[] = SYMTEST_VARIANT;
const int symtest_table[64] = { 1, 2, 3 };
volatile int symtest_sink;

__attribute__((noinline)) int symtest_alpha(int x) /* DECL:alpha */
{
	__asm__ volatile(".globl symtest_mark_alpha\nsymtest_mark_alpha:"); symtest_sink += x; /* MARK:alpha */
	return symtest_sink;
}

/* Aliases at symtest_alpha's address: lookups must prefer the global. */
int symtest_alpha_weak(int x) __attribute__((weak, alias("symtest_alpha")));
static int symtest_alpha_local(int x) __attribute__((used, alias("symtest_alpha")));

__attribute__((noinline)) int symtest_beta(int x) /* DECL:beta */
{
	int y = symtest_alpha(x + 1);

	__asm__ volatile(".globl symtest_mark_beta\nsymtest_mark_beta:"); symtest_sink -= y; /* MARK:beta */
	return y * 2;
}

/*
 * symtest_sized: 2 bytes (nop; ret) with an ELF size, then 14 bytes that
 * belong to no function.  symtest_nosize: a function with st_size 0.
 */
__asm__(".text\n"
	".globl symtest_sized\n"
	".type symtest_sized, @function\n"
	"symtest_sized:\n"
	"	nop\n"
	"	ret\n"
	".size symtest_sized, . - symtest_sized\n"
	".globl symtest_gap\n"
	"symtest_gap:\n"
	"	.fill 14, 1, 0xcc\n"
	".globl symtest_nosize\n"
	".type symtest_nosize, @function\n"
	"symtest_nosize:\n"
	"	nop\n"
	"	nop\n"
	"	nop\n"
	"	ret\n"
	".globl symtest_after_nosize\n"
	".type symtest_after_nosize, @function\n"
	"symtest_after_nosize:\n"
	"	ret\n"
	".size symtest_after_nosize, 1\n");

void symtest_sized(void);
void symtest_nosize(void);
void symtest_after_nosize(void);

int main(int argc, char **argv)
{
	(void)argv;
	symtest_sized();
	symtest_nosize();
	symtest_after_nosize();
	return symtest_beta(argc) + symtest_table[argc & 63] + symtest_variant[0];
}
