// SPDX-License-Identifier: GPL-2.0
/* The tracing floor: empty uprobe and uretprobe programs.  What any BPF
 * tracer pays per call before it does anything (the breakpoint trap, the
 * return trampoline, the BPF dispatch); calls are counted by bpf_stats. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int floor_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int floor_exit(void *ctx)
{
	return 0;
}
