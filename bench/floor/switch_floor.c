// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU floor loader: attaches the empty tp_btf/sched_switch program of
 * switch_floor.bpf.c.
 *
 *   switch-floor
 *
 * Prints "ready" once attached; on SIGINT/SIGTERM prints the program's
 * run count (every context switch of the machine) and run time.
 */
#include "floor_common.h"
#include "switch_floor.skel.h"

int main(void)
{
	struct switch_floor_bpf *skel = switch_floor_bpf__open_and_load();
	int err = 1;

	if (!skel) {
		fprintf(stderr, "switch-floor: cannot load the BPF program\n");
		return 1;
	}
	if (switch_floor_bpf__attach(skel)) {
		fprintf(stderr, "switch-floor: cannot attach tp_btf/sched_switch\n");
		goto cleanup;
	}
	floor_wait();
	floor_report("floor_switch", skel->progs.floor_switch);
	err = 0;
cleanup:
	switch_floor_bpf__destroy(skel);
	return err;
}
