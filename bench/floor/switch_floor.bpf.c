// SPDX-License-Identifier: GPL-2.0
/* The off-CPU floor: an empty tp_btf/sched_switch program.  What any BPF
 * off-CPU profiler pays on every context switch of the machine before it
 * does anything (the tracepoint, the BPF dispatch). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sched_switch")
int BPF_PROG(floor_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return 0;
}
