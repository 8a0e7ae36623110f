// SPDX-License-Identifier: GPL-2.0
/*
 * Tracing floor loader: the empty programs of uprobe_floor.bpf.c on entry
 * and return of one function, in every process (as collector attaches).
 *
 *   uprobe-floor BINARY FUNCTION
 *
 * Prints "ready" once attached; on SIGINT/SIGTERM prints each program's run
 * count (calls) and run time.
 */
#include <stdlib.h>

#include "floor_common.h"
#include "uprobe_floor.skel.h"

int main(int argc, char **argv)
{
	struct uprobe_floor_bpf *skel;
	struct bpf_link *entry = NULL, *ret = NULL;
	int err = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: uprobe-floor BINARY FUNCTION\n");
		return 2;
	}
	skel = uprobe_floor_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "uprobe-floor: cannot load the BPF programs\n");
		return 1;
	}
	{
		LIBBPF_OPTS(bpf_uprobe_opts, eopts, .func_name = argv[2]);
		LIBBPF_OPTS(bpf_uprobe_opts, ropts, .func_name = argv[2], .retprobe = true);

		entry = bpf_program__attach_uprobe_opts(skel->progs.floor_entry, -1, argv[1], 0,
							&eopts);
		ret = bpf_program__attach_uprobe_opts(skel->progs.floor_exit, -1, argv[1], 0,
						      &ropts);
	}
	if (!entry || !ret) {
		fprintf(stderr, "uprobe-floor: cannot attach to %s:%s\n", argv[1], argv[2]);
		goto cleanup;
	}
	floor_wait();
	floor_report("floor_entry", skel->progs.floor_entry);
	floor_report("floor_exit", skel->progs.floor_exit);
	err = 0;
cleanup:
	bpf_link__destroy(entry);
	bpf_link__destroy(ret);
	uprobe_floor_bpf__destroy(skel);
	return err;
}
