// SPDX-License-Identifier: GPL-2.0
/* Checking the targets and preparing for them. */
#include "session/targets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/path.h"
#include "lib/proc.h"
#include "loader/launch.h"
#include "symbols/framepointers.h"

/* A process we may profile: alive, not a zombie, not a kernel thread. */
static int check_pid(pid_t pid)
{
	struct proc_stat st;
	int err = proc_stat(pid, &st);

	if (err == -ESRCH || err == -ENOENT) {
		fprintf(stderr, "collector: no process with PID %d\n", pid);
		return err;
	}
	if (err) {
		fprintf(stderr, "collector: cannot read the state of PID %d\n", pid);
		return err;
	}
	if (st.state == 'Z' || st.state == 'X') {
		fprintf(stderr, "collector: PID %d is a zombie (it has exited); "
			"profile a running process\n", pid);
		return -ESRCH;
	}
	if (st.flags & PROC_PF_KTHREAD) {
		fprintf(stderr, "collector: PID %d is a kernel thread; use -a to sample "
			"the kernel\n", pid);
		return -EINVAL;
	}
	return 0;
}

int targets_check(const struct collector_options *opts)
{
	for (int i = 0; i < opts->n_pids; i++)
		if (check_pid(opts->pids[i]) != 0)
			return EXIT_NO_TARGET;
	if (opts->command && launch_check_command(opts->command[0]) != 0)
		return EXIT_NO_TARGET;
	return 0;
}

bool targets_want_dwarf(const struct collector_options *opts)
{
	char path[64];
	char *exe;

	if (opts->call_graph == CALL_GRAPH_CFI)
		return false;
	if (opts->call_graph != CALL_GRAPH_AUTO)
		return opts->call_graph == CALL_GRAPH_DWARF;
	if (opts->all_cpus)
		return false;
	if (opts->command) {
		exe = path_find_command(opts->command[0]);
		if (exe) {
			int fp = elf_uses_frame_pointers(exe);

			free(exe);
			return fp == 0;
		}
		return false;
	}
	for (int i = 0; i < opts->n_pids; i++) {
		snprintf(path, sizeof(path), "/proc/%d/exe", opts->pids[i]);
		if (elf_uses_frame_pointers(path) == 0)
			return true;
	}
	return false;
}

char *targets_command_line(const struct collector_options *opts)
{
	size_t n = 1;
	char *s;

	if (!opts->command)
		return NULL;
	for (int i = 0; opts->command[i]; i++)
		n += strlen(opts->command[i]) + 1;
	s = calloc(1, n);
	if (!s)
		return NULL;
	for (int i = 0; opts->command[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, opts->command[i]);
	}
	return s;
}
