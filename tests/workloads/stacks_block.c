// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads waiting, for `collector stacks` (test_stacks.sh): a reader
 * thread blocked in read() on a pipe nobody writes to (its write end is
 * open in this process alone), in wait_for_input(), and the main thread in
 * pthread_join() on it.  The file argv[1] is written (whole, by a rename)
 * once the reader has said its thread id: "main PID" and "reader TID".
 * A read that returned says so and exits 1.  Built at test time: -g -O0
 * with frame pointers.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fds[2];
static pid_t reader_tid;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t said = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) ssize_t wait_for_input(int fd)
{
	char c;

	return read(fd, &c, 1); /* the reader waits here */
}

static void *reader(void *arg)
{
	ssize_t n;

	(void)arg;
	pthread_mutex_lock(&mu);
	reader_tid = gettid();
	pthread_cond_signal(&said);
	pthread_mutex_unlock(&mu);
	n = wait_for_input(fds[0]);
	fprintf(stderr, "stacks_block: read returned %zd\n", n);
	exit(1);
}

int main(int argc, char **argv)
{
	char tmp[4096];
	pthread_t t;
	FILE *f;

	if (argc != 2 || pipe(fds) || snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]) >= (int)sizeof(tmp)) {
		fprintf(stderr, "usage: stacks_block READY_FILE\n");
		return 2;
	}
	if (pthread_create(&t, NULL, reader, NULL)) {
		fprintf(stderr, "stacks_block: pthread_create failed\n");
		return 2;
	}
	pthread_mutex_lock(&mu);
	while (!reader_tid)
		pthread_cond_wait(&said, &mu);
	pthread_mutex_unlock(&mu);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "main %d\nreader %d\n", (int)getpid(), (int)reader_tid) < 0 || fclose(f) ||
	    rename(tmp, argv[1])) {
		perror(argv[1]);
		return 2;
	}
	pthread_join(t, NULL); /* main waits here */
	fprintf(stderr, "stacks_block: the reader ended\n");
	return 1;
}
