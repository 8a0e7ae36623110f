/* SPDX-License-Identifier: GPL-2.0 */
/* Starting the profiled command: fork, hold until probes are attached, exec. */
#ifndef COLLECTOR_LAUNCH_H
#define COLLECTOR_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "loader/privileges.h"

struct launch {
	pid_t pid;
	int go_fd;         /* write a byte to let the child exec */
	int err_fd;        /* the child writes errno here if exec fails */
};

/* Finds argv0 the way execvp will; 0, or -ENOENT/-EACCES with a message. */
int launch_check_command(const char *argv0);

/* Forks a child that becomes `user` (unless NULL) and waits.  Returns 0 or
 * a negative errno. */
int launch_prepare(struct launch *l, char *const argv[], const struct invoking_user *user);

/* Lets the child exec.  Returns 0, or the exec's negative errno (the child
 * has then exited). */
int launch_start(struct launch *l);

/* Kills and reaps a child that was never started. */
void launch_abort(struct launch *l);

#endif /* COLLECTOR_LAUNCH_H */
