// SPDX-License-Identifier: GPL-2.0
/*
 * A thread blocked since before a run of collector -p (--off-cpu over a
 * whole window): wait_for_input() reads a pipe nobody writes to (its write
 * end is open in this process alone, so the read never returns).  The file
 * argv[1] is created just before the read.  A read that returned says so
 * and exits 1.  Built at test time: -g -O0 with frame pointers.
 */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) ssize_t wait_for_input(int fd)
{
	char c;

	return read(fd, &c, 1);
}

int main(int argc, char **argv)
{
	int fds[2];
	FILE *f;
	ssize_t n;

	if (argc != 2 || pipe(fds)) {
		fprintf(stderr, "usage: pipe_block READY_FILE\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
		perror(argv[1]);
		return 2;
	}
	n = wait_for_input(fds[0]);
	fprintf(stderr, "pipe_block: read returned %zd\n", n);
	return 1;
}
