// SPDX-License-Identifier: GPL-2.0
/*
 * On and off the CPU, for --off-cpu: three times, work() burns 1 s of the
 * thread's CPU time and wait_here() sleeps 1 s in nanosleep, made from
 * wait_here itself (no libc frame without a frame pointer above it).  The
 * thread's lifetime in ns (main's start to its end) goes to the file
 * argv[1], when given.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void work(void)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + 1000000000ULL;

	/* the clock read rarely: a thread CPU clock is a system call, and the
	 * time in libc (no frame pointer) would hide work() from the stacks */
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000000; i++)
			sink += i;
}

__attribute__((noinline)) void wait_here(void)
{
	struct timespec ts = { 1, 0 };
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
		     : "rcx", "r11", "memory");
	(void)ret;
}

int main(int argc, char **argv)
{
	uint64_t start = clock_ns(CLOCK_MONOTONIC);
	FILE *f;

	for (int i = 0; i < 3; i++) {
		work();
		wait_here();
	}
	if (argc > 1 && (f = fopen(argv[1], "w"))) {
		fprintf(f, "%llu\n", (unsigned long long)(clock_ns(CLOCK_MONOTONIC) - start));
		fclose(f);
	}
	return 0;
}
