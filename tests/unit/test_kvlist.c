// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of lib/kvlist.c (the OpenTelemetry variables' key=value lists)
 * and of what lib/proc.c reads of a process for a backend: the variables of
 * its environment (a child started with a known one) and its container.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/kvlist.h"
#include "lib/proc.h"

static void test_parse(void **state)
{
	struct kv *l;
	size_t n;
	char err[200];

	(void)state;
	assert_int_equal(kvlist_parse(" a = 1 ,b=x%2Cy%3d,, c=", &l, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(l[0].key, "a");
	assert_string_equal(l[0].value, "1");
	assert_string_equal(l[1].key, "b");
	assert_string_equal(l[1].value, "x,y=");
	assert_string_equal(l[2].key, "c");
	assert_string_equal(l[2].value, "");
	assert_string_equal(kvlist_get(l, n, "b"), "x,y=");
	assert_null(kvlist_get(l, n, "d"));
	kvlist_free(l, n);
	/* a value may hold '=' */
	assert_int_equal(kvlist_parse("authorization=Bearer a=b", &l, &n, err, sizeof(err)), 0);
	assert_string_equal(l[0].value, "Bearer a=b");
	kvlist_free(l, n);
	assert_int_equal(kvlist_parse(NULL, &l, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(kvlist_parse("", &l, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
}

/* Malformed: -EINVAL, the entry named, the value never quoted. */
static void test_malformed(void **state)
{
	static const char *const bad[] = { "token", "a=1,=secret", "k=sec%zzret", "k=secret%4",
					   " =secret" };
	struct kv *l;
	size_t n;
	char err[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(kvlist_parse(bad[i], &l, &n, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "entry "));
		if (strstr(err, "secret") || strstr(err, "sec%"))
			fail_msg("'%s': the message quotes the value: %s", bad[i], err);
		assert_null(l);
		assert_int_equal(n, 0);
	}
}

static void test_environ_of_child(void **state)
{
	static const char *const names[] = { "OTEL_SERVICE_NAME", "COLLECTOR_T_ABSENT",
					     "OTEL_SERVICE" };
	char *values[3];
	int pipefd[2];
	pid_t pid;
	char c;

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *const env[] = { "A=1", "OTEL_SERVICE_NAME=check-out=1", "OTEL_SERVICE=no", NULL };
		char fd[16];

		snprintf(fd, sizeof(fd), "%d", pipefd[0]);
		close(pipefd[1]);
		/* waits for its pipe to close: its environment is the exec's */
		execle("/bin/sh", "sh", "-c", "read x <&$0", fd, (char *)NULL, env);
		_exit(127);
	}
	close(pipefd[0]);
	/* the exec done: its /proc/PID/exe is sh (or dash) */
	for (int i = 0; i < 500; i++) {
		char exe[256];

		if (proc_exe(pid, exe, sizeof(exe)) > 0 && strstr(exe, "sh"))
			break;
		usleep(10000);
	}
	assert_int_equal(proc_environ(pid, names, values, 3), 0);
	assert_string_equal(values[0], "check-out=1");
	assert_null(values[1]);
	assert_string_equal(values[2], "no");
	free(values[0]);
	free(values[2]);
	c = 0;
	assert_int_equal(write(pipefd[1], &c, 1), 1);
	close(pipefd[1]);
	waitpid(pid, NULL, 0);
	assert_int_equal(proc_environ(pid, names, values, 3), -ENOENT);
	assert_null(values[0]);
}

static void test_container_id(void **state)
{
	static const char id[] = "4b3c2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b";
	char buf[80], text[512];

	(void)state;
	snprintf(text, sizeof(text), "0::/system.slice/docker-%s.scope\n", id);
	assert_int_equal(proc_container_id_in(text, buf, sizeof(buf)), 64);
	assert_string_equal(buf, id);
	snprintf(text, sizeof(text),
		 "12:pids:/kubepods/burstable/pod1234/%s\n0::/kubepods/besteffort/podab/"
		 "cri-containerd-%s.scope\n", "0123", id);
	assert_int_equal(proc_container_id_in(text, buf, sizeof(buf)), 64);
	assert_string_equal(buf, id);
	snprintf(text, sizeof(text), "0::/machine.slice/libpod-%s.scope/container\n", id);
	assert_int_equal(proc_container_id_in(text, buf, sizeof(buf)), 64);
	assert_string_equal(buf, id);
	/* no container: a user's session, and 65 hex digits are not an id */
	assert_int_equal(proc_container_id_in("0::/user.slice/user-0.slice/session-3.scope\n", buf,
					      sizeof(buf)), 0);
	snprintf(text, sizeof(text), "0::/x/%sa\n", id);
	assert_int_equal(proc_container_id_in(text, buf, sizeof(buf)), 0);
	assert_int_equal(proc_container_id_in(text, buf, 10), -EINVAL);
	/* this process, outside any container here */
	assert_true(proc_container_id(getpid(), buf, sizeof(buf)) >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_environ_of_child),
		cmocka_unit_test(test_container_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
