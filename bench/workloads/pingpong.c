// SPDX-License-Identifier: GPL-2.0
/*
 * Context switches as fast as two threads can make them: a byte bounced
 * between two threads through two pipes, ROUNDS times (each round blocks
 * both threads in read once).  Waits for a byte on stdin, then prints
 * "wall_ns=N cpu_ns=N rounds=N switches=N" (switches: the process's
 * voluntary and involuntary context switches during the rounds).
 *
 *   pingpong [ROUNDS]     (default 200000)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static uint64_t rounds;

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

static void *echo(void *arg)
{
	char c;

	(void)arg;
	for (uint64_t i = 0; i < rounds; i++)
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t w0, c0, s0;
	pthread_t t;
	char go, c = 'x';

	rounds = argc > 1 ? strtoull(argv[1], NULL, 10) : 200000ull;
	if (pipe(ping) || pipe(pong) || pthread_create(&t, NULL, echo, NULL))
		return 1;
	if (read(0, &go, 1) < 0)
		return 1;
	w0 = now_ns(CLOCK_MONOTONIC);
	c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
	s0 = switches();
	for (uint64_t i = 0; i < rounds; i++)
		if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
			return 1;
	pthread_join(t, NULL);
	printf("wall_ns=%llu cpu_ns=%llu rounds=%llu switches=%llu\n",
	       (unsigned long long)(now_ns(CLOCK_MONOTONIC) - w0),
	       (unsigned long long)(now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0),
	       (unsigned long long)rounds, (unsigned long long)(switches() - s0));
	fflush(stdout);
	/* wait for the bench to close stdin, as the other workloads do */
	while (read(0, &go, 1) > 0)
		;
	return 0;
}
