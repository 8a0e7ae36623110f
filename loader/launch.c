// SPDX-License-Identifier: GPL-2.0
/* Starting the profiled command. */
#include "loader/launch.h"
#include "lib/path.h"
#include "lib/userfs.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int launch_check_command(const char *argv0)
{
	char *found;
	int err;

	if (!*argv0) {
		fprintf(stderr, "collector: the command after -- is empty\n");
		return -ENOENT;
	}
	/* a path: say why it cannot run; a name: whether PATH has it; both
	 * with the rights of the user it will run as (lib/userfs.h) */
	if ((err = user_fs_enter()) != 0)
		return err;
	if (strchr(argv0, '/'))
		err = path_check_executable(argv0);
	else if ((found = path_find_command(argv0)) != NULL)
		err = 0, free(found);
	else
		err = -ENOENT;
	user_fs_leave();
	if (err)
		fprintf(stderr, "collector: cannot run '%s': %s%s\n", argv0, strerror(-err),
			strchr(argv0, '/') ? "" : " (searched PATH)");
	return err;
}

int launch_prepare(struct launch *l, char *const argv[], const struct invoking_user *user)
{
	int go[2], errp[2];
	char c;
	int err;

	l->pid = -1;
	l->go_fd = l->err_fd = -1;
	if (pipe2(go, O_CLOEXEC) != 0)
		return -errno;
	if (pipe2(errp, O_CLOEXEC) != 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	l->pid = fork();
	if (l->pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return err;
	}
	if (l->pid == 0) {
		close(go[1]);
		close(errp[0]);
		/* the profiler's signal handling is not the command's */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (user && (err = invoking_user_become(user)) != 0)
			goto fail;
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the profiler gave up */
		execvp(argv[0], argv);
		err = -errno;
fail:
		if (write(errp[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	l->go_fd = go[1];
	l->err_fd = errp[0];
	return 0;
}

int launch_start(struct launch *l)
{
	char c = 1;
	int err = 0;
	ssize_t n;

	ssize_t w;

	do
		w = write(l->go_fd, &c, 1);
	while (w < 0 && errno == EINTR);
	if (w != 1)
		err = -errno;
	close(l->go_fd);
	l->go_fd = -1;
	/* EOF (exec closed the CLOEXEC pipe) means the exec succeeded. */
	do
		n = read(l->err_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(err) && err < 0) {
		waitpid(l->pid, NULL, 0);
		return err;
	}
	return 0;
}

void launch_abort(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	if (l->pid > 0) {
		kill(l->pid, SIGKILL);
		waitpid(l->pid, NULL, 0);
	}
	l->pid = -1;
	l->go_fd = l->err_fd = -1;
}
