// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing bench workload: calls bench_traced() as fast as it can.
 * bench_traced is non-leaf and built with frame pointers, so its first
 * instruction is `push %rbp`, which uprobes emulate (no single-step).
 *
 *   hot [CALLS]
 *
 * Waits for one byte on stdin before it starts (the bench attaches the
 * probes first), then prints on stdout:
 *   wall_ns=N cpu_ns=N calls=N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* not instrumented by -pg (the uftrace variant): only bench_traced is */
__attribute__((noinline, no_instrument_function)) void bench_leaf(uint64_t x)
{
	sink += x;
}

__attribute__((noinline)) void bench_traced(uint64_t x)
{
	bench_leaf(x * 3);
	sink ^= x;
}

int main(int argc, char **argv)
{
	uint64_t calls = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000ull;
	uint64_t w0, c0, w1, c1;
	char go;

	if (read(0, &go, 1) < 0)
		return 1;
	w0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	for (uint64_t i = 0; i < calls; i++)
		bench_traced(i);
	w1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	printf("wall_ns=%llu cpu_ns=%llu calls=%llu\n", (unsigned long long)(w1 - w0),
	       (unsigned long long)(c1 - c0), (unsigned long long)calls);
	return 0;
}
