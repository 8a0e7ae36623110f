// SPDX-License-Identifier: GPL-2.0
/*
 * Forks a child that execs another program (argv[1] with its arguments),
 * and spins a little itself meanwhile: the profiler must follow the child
 * across fork and exec.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void parent_spin(void)
{
	for (unsigned long i = 0; i < 200000000UL; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	if (argc < 2) {
		fprintf(stderr, "usage: forkexec PROGRAM [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid == 0) {
		execv(argv[1], argv + 1);
		perror("execv");
		_exit(127);
	}
	parent_spin();
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
