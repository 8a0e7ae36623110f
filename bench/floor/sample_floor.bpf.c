// SPDX-License-Identifier: GPL-2.0
/* The sampling floor: an empty perf_event program.  What any BPF sampler
 * pays before it does anything (the perf event, its interrupt, the BPF
 * dispatch). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("perf_event")
int floor_sample(void *ctx)
{
	return 0;
}
