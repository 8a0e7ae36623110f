// SPDX-License-Identifier: GPL-2.0
/*
 * A PIE executable whose hot code is in a shared library (libhot.so):
 * about 80% of the time in lib_hot_function, 20% in main_cold_function.
 * Usage: pie_lib [SECONDS of CPU time, default 1.5]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void lib_hot_function(unsigned long n);

static volatile unsigned long sink;

__attribute__((noinline)) void main_cold_function(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink += x;
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.5;
	unsigned long r = 0, len;
	struct timespec ts;

	do {
		/* each round has its own length (0.5 to 1.5 times the mean): rounds
		 * of one length keep one phase against the sampling period, and
		 * the samples fall in long runs in one function, then the other */
		r = r * 6364136223846793005UL + 1442695040888963407UL;
		len = 50000 + (r >> 33) % 100001;
		lib_hot_function(4 * len);
		main_cold_function(len);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < seconds);
	printf("pie_lib: done\n");
	return 0;
}
