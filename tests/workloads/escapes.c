// SPDX-License-Identifier: GPL-2.0
/*
 * Calls that do not return the usual way, for the tracing tests: each of
 * the 1000 rounds (or N, the argument) makes
 *  - one call of traced_escape, which longjmps out: its exit never comes;
 *  - one call of traced_tail, which tail-calls traced_leaf (a jmp, not a
 *    call: both return at once, to traced_tail's caller);
 *  - one call of traced_leaf from here.
 * So traced_tail is called once per round and traced_leaf twice, and
 * traced_escape returns never.  The escapes must not cost the other
 * functions their calls, however many rounds there are.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static jmp_buf escape_to;

NOINLINE void keep(unsigned long x)
{
	sink += x;
}

NOINLINE void traced_leaf(unsigned long x)
{
	keep(x);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void traced_escape(unsigned long x)
{
	keep(x);
	longjmp(escape_to, 1);
}

/* -O2 makes the last call a jump (-foptimize-sibling-calls); the
 * integration test checks the disassembly for it. */
NOINLINE void traced_tail(unsigned long x)
{
	keep(x);
	traced_leaf(x + 1);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 1000;

	/* volatile: setjmp returns twice into this loop */
	for (volatile long r = 0; r < rounds; r++) {
		if (!setjmp(escape_to))
			traced_escape(r);
		traced_tail(r);
		traced_leaf(r);
	}
	printf("escapes: done (%lu)\n", sink & 1);
	return 0;
}
