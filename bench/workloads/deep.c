// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-bound bench workload with a deep call chain: main -> run -> level_0
 * -> ... -> level_N -> spin, every frame a real call with a frame pointer
 * (built with -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
 * -fno-shrink-wrap -fno-optimize-sibling-calls, and noipa so that gcc makes
 * no constprop clones): `push %rbp; mov %rsp,%rbp` starts every function,
 * so every profiler walks the same 43 frames per sample.
 *
 *   deep [ITERATIONS [DEPTH]]
 *
 * DEPTH (40 by default) is the chain's levels: 0 leaves main -> run ->
 * level -> spin, the small loop short runs weigh a start against.
 *
 * Waits for one byte on stdin before it starts (the bench attaches the
 * profiler first).  Halfway through it prints a line starting with "half"
 * (the bench measures the profiler's steady state over the second half),
 * and at the end the whole loop's wall and CPU time:
 *   wall_ns=N cpu_ns=N iterations=N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define DEPTH 40

static volatile uint64_t sink;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Storing through a call makes spin non-leaf: gcc gives leaf functions no
 * frame even with -mno-omit-leaf-frame-pointer, and a frame-pointer walk
 * from a frameless leaf skips its caller. */
__attribute__((noipa)) static void store(uint64_t x)
{
	sink = x;
}

__attribute__((noipa)) static uint64_t spin(uint64_t n, uint64_t seed)
{
	uint64_t x = seed;

	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	store(x);
	return x;
}

/* A recursive chain of DEPTH frames; the depth argument keeps every level
 * a real call (no tail call: work happens after the call returns). */
__attribute__((noipa)) static uint64_t level(int depth, uint64_t n, uint64_t seed)
{
	uint64_t r;

	if (depth == 0)
		return spin(n, seed);
	r = level(depth - 1, n, seed + (uint64_t)depth);
	sink += r;
	return r ^ (uint64_t)depth;
}

__attribute__((noipa)) static uint64_t run(uint64_t iterations, int depth)
{
	uint64_t acc = 0;

	/* many short descents: the sampled frames spread over the chain */
	for (uint64_t i = 0; i < iterations / 4096; i++)
		acc += level(depth, 4096, i + 1);
	return acc;
}

int main(int argc, char **argv)
{
	uint64_t iterations = argc > 1 ? strtoull(argv[1], NULL, 10) : 400000000ull;
	int depth = argc > 2 ? atoi(argv[2]) : DEPTH;
	uint64_t w0, c0, w1, c1;
	char go;

	if (read(0, &go, 1) < 0)
		return 1;
	w0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	sink += run(iterations / 2, depth);
	printf("half\n");
	fflush(stdout);
	sink += run(iterations / 2, depth);
	w1 = now_ns(CLOCK_MONOTONIC);
	c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	printf("wall_ns=%llu cpu_ns=%llu iterations=%llu\n", (unsigned long long)(w1 - w0),
	       (unsigned long long)(c1 - c0), (unsigned long long)iterations);
	return 0;
}
