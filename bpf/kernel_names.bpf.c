// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel addresses named by the kernel itself, a batch at a time: the
 * loader writes addresses into `addrs`, runs the program once
 * (BPF_PROG_TEST_RUN: a syscall program runs in the caller's context, on
 * demand) and reads each one's "%pS" text in `names`: "vfs_read+0x2f/0x1a0"
 * or "nf_hook_slow+0x41/0xb0 [nf_tables]", the bare address when nothing
 * contains it.  The kernel's own kallsyms search (compressed names, a
 * binary search) costs a microsecond an address; reading /proc/kallsyms
 * whole to name a handful of them cost 50 ms (loader/kernel_names.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "kernel_names.h"

__u64 addrs[COLLECTOR_KNAMES_BATCH] = {};
__u32 n_addrs = 0;
char names[COLLECTOR_KNAMES_BATCH][COLLECTOR_KNAMES_LEN] = {};
/* the kernel text's bounds, for the [kernel.kallsyms] image */
__u64 stext = 0, etext = 0;

SEC("syscall")
int kernel_names(void *ctx)
{
	for (__u32 i = 0; i < COLLECTOR_KNAMES_BATCH; i++) {
		__u64 a;

		if (i >= n_addrs)
			break;
		a = addrs[i];
		bpf_snprintf(names[i], COLLECTOR_KNAMES_LEN, "%pS", &a, sizeof(a));
	}
	if (!stext) {
		bpf_kallsyms_lookup_name("_stext", sizeof("_stext"), 0, &stext);
		bpf_kallsyms_lookup_name("_etext", sizeof("_etext"), 0, &etext);
	}
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
