// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling floor loader: one cpu-clock perf event per online CPU in
 * frequency mode (the way collector opens them), each running the empty
 * program of sample_floor.bpf.c.
 *
 *   sample-floor HZ
 *
 * Prints "ready" once attached; on SIGINT/SIGTERM prints the program's
 * run count (samples, on every CPU) and run time.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

#include "floor_common.h"
#include "sample_floor.skel.h"

int main(int argc, char **argv)
{
	struct sample_floor_bpf *skel = NULL;
	struct bpf_link **links = NULL;
	int ncpus = libbpf_num_possible_cpus(), err = 1, n = 0;
	unsigned long hz = argc > 1 ? strtoul(argv[1], NULL, 10) : 999;

	if (hz == 0 || ncpus <= 0) {
		fprintf(stderr, "usage: sample-floor HZ\n");
		return 2;
	}
	skel = sample_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "sample-floor: cannot load the BPF program\n");
		return 1;
	}
	links = calloc((size_t)ncpus, sizeof(*links));
	if (!links)
		goto cleanup;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(attr),
			.freq = 1,
			.sample_freq = hz,
		};
		int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* offline CPU */
			perror("sample-floor: perf_event_open");
			goto cleanup;
		}
		links[n] = bpf_program__attach_perf_event(skel->progs.floor_sample, fd);
		if (!links[n]) {
			perror("sample-floor: attach");
			close(fd);
			goto cleanup;
		}
		n++;
	}
	floor_wait();
	floor_report("floor_sample", skel->progs.floor_sample);
	err = 0;
cleanup:
	for (int i = 0; links && i < n; i++)
		bpf_link__destroy(links[i]); /* closes the perf event too */
	free(links);
	sample_floor_bpf__destroy(skel);
	return err;
}
