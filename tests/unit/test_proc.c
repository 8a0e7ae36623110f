// SPDX-License-Identifier: GPL-2.0
/* Unit tests of lib/proc.c: /proc/PID/stat's fields, and which files
 * predate a process (a perf map of an earlier process of the same pid). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/proc.h"

static void test_stat_self(void **state)
{
	struct proc_stat st;
	struct timespec boot;

	(void)state;
	assert_int_equal(proc_stat(getpid(), &st), 0);
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.ppid, getppid());
	/* started after boot, and not after now */
	assert_int_equal(clock_gettime(CLOCK_BOOTTIME, &boot), 0);
	assert_true(st.starttime > 0);
	assert_true(st.starttime <= (unsigned long long)(boot.tv_sec + 1) * sysconf(_SC_CLK_TCK));
	assert_int_equal(proc_stat(0x7ffffff0, &st), -ESRCH);
}

/* A file whose mtime is now + offset seconds, its stat in *st (the file
 * itself removed again). */
static void file_at(char *path, long offset, struct stat *st)
{
	struct timespec t[2];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &t[0]), 0);
	t[0].tv_sec += offset;
	t[1] = t[0];
	assert_int_equal(futimens(fd, t), 0);
	assert_int_equal(fstat(fd, st), 0);
	close(fd);
	unlink(path);
}

static void test_file_predates(void **state)
{
	char old_path[] = "/tmp/proc-old-XXXXXX", now_path[] = "/tmp/proc-now-XXXXXX";
	char future_path[] = "/tmp/proc-future-XXXXXX";
	struct stat old, now, future;
	pid_t child;
	int status;

	(void)state;
	file_at(old_path, -3600, &old);
	file_at(now_path, 0, &now);
	file_at(future_path, 3600, &future);
	/* this test started less than an hour ago, and before now */
	assert_true(proc_file_predates(getpid(), &old));
	assert_false(proc_file_predates(getpid(), &now));
	assert_false(proc_file_predates(getpid(), &future));
	/* a process started after the file was written: what a reused pid
	 * meets in /tmp/perf-PID.map */
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_true(proc_file_predates(child, &old));
	assert_false(proc_file_predates(child, &future));
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	/* a process that is not there: not known to be newer */
	assert_false(proc_file_predates(child, &old));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_self),
		cmocka_unit_test(test_file_predates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
