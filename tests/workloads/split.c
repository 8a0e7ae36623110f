// SPDX-License-Identifier: GPL-2.0
/*
 * A CPU-bound workload with a known split: hot_function does three times
 * the work of cold_function, each reached through a nested call chain
 *   main -> run -> chain_a -> chain_b -> chain_c -> hot_function  (~75%)
 *   main -> run -> cold_path -> cold_function                     (~25%)
 * Usage: split [SECONDS of CPU time, default 2] [THREADS, default 1]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;

/* Storing through a call makes hot_function and cold_function non-leaf:
 * gcc gives leaf functions no frame even with -mno-omit-leaf-frame-pointer,
 * and a frame-pointer walk from a frameless leaf skips its caller. */
NOINLINE void keep(unsigned long x)
{
	sink += x;
}

/* The loop is written out in each function so that the samples land in
 * hot_function and cold_function themselves. */
#define SPIN(n)                                                                \
	do {                                                                   \
		unsigned long x = sink;                                        \
		for (unsigned long i = 0; i < (n); i++)                        \
			x = x * 6364136223846793005UL + 1442695040888963407UL; \
		keep(x);                                                       \
		__asm__ volatile("" ::: "memory"); /* no tail call */          \
	} while (0)

/*
 * Each round of run()'s loop has its own length, 0.5 to 1.5 times the mean
 * (cold_function spins round_len times, hot_function three times that):
 * rounds of one length, about half the sampling period at 999 Hz, keep one
 * phase against it, so that the samples fall in runs of a hundred in one
 * function and then the other, and a run's split strays far from 3:1.
 */
static __thread unsigned long round_len = 100000;

NOINLINE void hot_function(void)
{
	SPIN(3 * round_len);
}

NOINLINE void cold_function(void)
{
	SPIN(round_len);
}

NOINLINE void chain_c(void)
{
	hot_function();
	__asm__ volatile("" ::: "memory"); /* keep the call a call, not a jump */
}

NOINLINE void chain_b(void)
{
	chain_c();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void chain_a(void)
{
	chain_b();
	__asm__ volatile("" ::: "memory");
}

NOINLINE void cold_path(void)
{
	cold_function();
	__asm__ volatile("" ::: "memory");
}

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double seconds = 2.0;

NOINLINE void *run(void *arg)
{
	unsigned long r = (unsigned long)arg;

	while (thread_cpu_seconds() < seconds) {
		r = r * 6364136223846793005UL + 1442695040888963407UL;
		round_len = 50000 + (r >> 33) % 100001;
		chain_a();
		cold_path();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1;
	pthread_t tid[64];

	if (argc > 1)
		seconds = atof(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (threads < 1 || threads > 64)
		threads = 1;
	for (int i = 1; i < threads; i++)
		pthread_create(&tid[i], NULL, run, (void *)(unsigned long)i);
	run(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("split: done (%lu)\n", sink & 1);
	return 0;
}
