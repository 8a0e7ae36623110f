// SPDX-License-Identifier: GPL-2.0
/* Checking the targets and preparing for them. */
#include "cli/targets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/path.h"
#include "lib/proc.h"
#include "lib/procmaps.h"
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

/* Reads the symbols and line tables of an image now rather than on its
 * first sample, inside the targets' time. */
static void warm_image(struct symbolizer *sym, struct model *m, const char *path)
{
	struct stat st;
	uint32_t img;

	if (stat(path, &st) != 0)
		return;
	img = symbolizer_image(sym, path, NULL, st.st_dev, st.st_ino);
	symbolizer_location(sym, img, m->images.items[img].text_start);
}

/* The C library the collector itself maps: the command will map it too. */
static void warm_own_libc(struct symbolizer *sym, struct model *m)
{
	struct procmaps maps;

	if (procmaps_read(getpid(), &maps) != 0)
		return;
	for (size_t i = 0; i < maps.n; i++) {
		if (procmap_is_file(&maps.entries[i]) && strstr(maps.entries[i].path, "/libc.so")) {
			warm_image(sym, m, maps.entries[i].path);
			break;
		}
	}
	procmaps_free(&maps);
}

void targets_warm_symbols(struct symbolizer *sym, struct model *m, char *const *command)
{
	char *exe;

	symbolizer_kernel_image(sym);
	for (size_t p = 0; p < m->processes.len; p++) {
		const struct model_process *proc = &m->processes.items[p];

		for (size_t i = 0; i < proc->maps.len; i++) {
			uint32_t img = proc->maps.items[i].image;

			symbolizer_location(sym, img, m->images.items[img].text_start);
			proc = &m->processes.items[p];
		}
	}
	if (!command)
		return;
	exe = path_find_command(command[0]);
	if (exe) {
		/* the name the process will map it under: /usr/bin/python3 is a
		 * link to python3.11, and the image keeps its first name */
		char *real = realpath(exe, NULL);

		warm_image(sym, m, real ? real : exe);
		free(real);
	}
	free(exe);
	warm_own_libc(sym, m);
}
