// SPDX-License-Identifier: GPL-2.0
/*
 * Two worker threads with a known split of CPU time: work_a spins for
 * SECONDS of CPU time, work_b for three times as long; the main thread
 * only waits for them.  Usage: threads [SECONDS, default 0.4]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 0.4;

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin_until(double limit)
{
	unsigned long x = sink;

	while (thread_cpu() < limit)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink += x;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void *work_a(void *arg)
{
	(void)arg;
	spin_until(seconds);
	return NULL;
}

__attribute__((noinline)) void *work_b(void *arg)
{
	(void)arg;
	spin_until(3 * seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		seconds = atof(argv[1]);
	pthread_create(&a, NULL, work_a, NULL);
	pthread_create(&b, NULL, work_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("threads: done (%lu)\n", sink & 1);
	return 0;
}
