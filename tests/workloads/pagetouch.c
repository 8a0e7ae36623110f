// SPDX-License-Identifier: GPL-2.0
/*
 * Events of known counts, for -e: touch_pages() writes one byte to each of
 * N new anonymous pages (N page faults, no huge pages), switch_often()
 * sleeps K times for 100 us (K context switches), spin() burns MS ms of
 * the thread's CPU time.
 *   pagetouch N K MS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

__attribute__((noinline)) void touch_pages(char *p, long n, long page)
{
	for (long i = 0; i < n; i++)
		p[i * page] = 1;
}

__attribute__((noinline)) void switch_often(long k)
{
	struct timespec ts = { 0, 100000 };

	for (long i = 0; i < k; i++)
		nanosleep(&ts, NULL);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void spin(long ms)
{
	uint64_t end = thread_cpu_ns() + (uint64_t)ms * 1000000ULL;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000, k = argc > 2 ? atol(argv[2]) : 0;
	long ms = argc > 3 ? atol(argv[3]) : 0, page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return 1;
	madvise(p, n * page, MADV_NOHUGEPAGE);
	touch_pages(p, n, page);
	switch_often(k);
	spin(ms);
	return 0;
}
