// SPDX-License-Identifier: GPL-2.0
/*
 * A call chain 16 deep, built with -O2 -fomit-frame-pointer: main -> d1 ->
 * d2 -> ... -> d16, which spins.  Without frame pointers the kernel's walk
 * stops at the leaf; CFI unwinding must find every caller.
 * Usage: deep [SECONDS of CPU time, default 1]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))
/* an empty asm after the call keeps it a call, not a tail jump */
#define CALL(f) do { f(); __asm__ volatile("" ::: "memory"); } while (0)

static volatile unsigned long sink;

NOINLINE void d16(void)
{
	unsigned long x = sink;

	for (int i = 0; i < 200000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

NOINLINE void d15(void) { CALL(d16); }
NOINLINE void d14(void) { CALL(d15); }
NOINLINE void d13(void) { CALL(d14); }
NOINLINE void d12(void) { CALL(d13); }
NOINLINE void d11(void) { CALL(d12); }
NOINLINE void d10(void) { CALL(d11); }
NOINLINE void d9(void) { CALL(d10); }
NOINLINE void d8(void) { CALL(d9); }
NOINLINE void d7(void) { CALL(d8); }
NOINLINE void d6(void) { CALL(d7); }
NOINLINE void d5(void) { CALL(d6); }
NOINLINE void d4(void) { CALL(d5); }
NOINLINE void d3(void) { CALL(d4); }
NOINLINE void d2(void) { CALL(d3); }
NOINLINE void d1(void) { CALL(d2); }

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec ts;

	do {
		CALL(d1);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < seconds);
	printf("deep: done (%lu)\n", sink & 1);
	return 0;
}
