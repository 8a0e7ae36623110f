/* SPDX-License-Identifier: GPL-2.0 */
/* What the two floor loaders share: wait for a signal, report BPF stats. */
#ifndef BENCH_FLOOR_COMMON_H
#define BENCH_FLOOR_COMMON_H

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t floor_stop;

static void floor_on_signal(int sig)
{
	(void)sig;
	floor_stop = 1;
}

/* Prints "ready" once attached (the bench waits for it), then sleeps until
 * SIGINT or SIGTERM. */
static void floor_wait(void)
{
	struct sigaction sa = { .sa_handler = floor_on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!floor_stop)
		pause();
}

/* run_cnt and run_time_ns of a program (bpf_stats_enabled must be 1 for
 * them to move). */
static void floor_report(const char *name, const struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) != 0) {
		perror("bpf_obj_get_info_by_fd");
		return;
	}
	printf("%s run_cnt=%llu run_time_ns=%llu\n", name, (unsigned long long)info.run_cnt,
	       (unsigned long long)info.run_time_ns);
}

#endif /* BENCH_FLOOR_COMMON_H */
