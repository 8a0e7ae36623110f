// SPDX-License-Identifier: GPL-2.0
/*
 * Known call counts for the tracing tests: traced_f is called 1000 times,
 * and calls traced_g 100 times each (100000 in all).  With an argument N,
 * runs N rounds of that instead of 1; with a second argument T, T threads
 * run the rounds each (and exit before the process does).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

NOINLINE void keep(unsigned long x)
{
	sink += x;
}

/* Not a leaf, so that it has a frame and starts with push %rbp: uprobes
 * emulate that instruction, while most others must be single-stepped at
 * ten times the cost. */
NOINLINE unsigned long traced_g(unsigned long a, unsigned long b)
{
	keep(a ^ b);
	__asm__ volatile("" ::: "memory");
	return sink;
}

NOINLINE void traced_f(unsigned long round)
{
	for (unsigned long i = 0; i < 100; i++)
		traced_g(round, i);
	__asm__ volatile("" ::: "memory");
}

static long rounds = 1;

static void *run_rounds(void *arg)
{
	(void)arg;
	for (long r = 0; r < rounds; r++)
		for (unsigned long i = 0; i < 1000; i++)
			traced_f(i);
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 2 ? atol(argv[2]) : 0;
	pthread_t tids[16];

	if (argc > 1)
		rounds = atol(argv[1]);
	if (threads < 0 || threads > 16) {
		fprintf(stderr, "calls: at most 16 threads\n");
		return 2;
	}
	if (!threads)
		run_rounds(NULL);
	for (long t = 0; t < threads; t++)
		if (pthread_create(&tids[t], NULL, run_rounds, NULL) != 0)
			return 1;
	for (long t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	printf("calls: done (%lu)\n", sink & 1);
	return 0;
}
