// SPDX-License-Identifier: GPL-2.0
/*
 * lib/userfs.h as root: a scope has the user's rights (refused where he
 * may not write, his files where he may), only in the thread that entered
 * it, and nothing of it is left once left.  Skipped when not root.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/userfs.h"

#define USER 65534

static char top[64];

/* Creates top/name: 0 or a negative errno. */
static int create(const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", top, name);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static uid_t owner(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", top, name);
	assert_int_equal(stat(path, &st), 0);
	return st.st_uid;
}

static int setup(void **state)
{
	static const gid_t groups[] = { USER };
	struct user_fs_ids ids = { .uid = USER, .gid = USER, .groups = groups, .n_groups = 1 };
	char path[128];

	(void)state;
	if (geteuid() != 0)
		return 0;
	strcpy(top, "/tmp/test_userfs.XXXXXX");
	assert_non_null(mkdtemp(top));
	assert_int_equal(chmod(top, 0755), 0);
	snprintf(path, sizeof(path), "%s/mine", top);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(chown(path, USER, USER), 0);
	return user_fs_setup(&ids);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (top[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", top);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

static void test_scope_has_the_users_rights(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(user_fs_enter(), 0);
	assert_int_equal(create("roots"), -EACCES);  /* root's directory, 0755 */
	assert_int_equal(create("mine/file"), 0);
	assert_int_equal(user_fs_enter(), 0);         /* nested */
	user_fs_leave();
	assert_int_equal(create("mine/after-nested"), 0);
	assert_int_equal(owner("mine/after-nested"), USER);
	user_fs_leave();
	assert_int_equal(owner("mine/file"), USER);
	/* left: root again, everywhere */
	assert_int_equal(create("roots"), 0);
	assert_int_equal(owner("roots"), 0);
	assert_int_equal(setfsuid(-1), 0);
}

static pthread_barrier_t entered, created;

static void *other_thread(void *arg)
{
	int *err = arg;

	pthread_barrier_wait(&entered);
	*err = create("from-other-thread");
	pthread_barrier_wait(&created);
	return NULL;
}

static void test_scope_is_per_thread(void **state)
{
	pthread_t t;
	int err = 1;

	(void)state;
	if (geteuid() != 0)
		skip();
	pthread_barrier_init(&entered, NULL, 2);
	pthread_barrier_init(&created, NULL, 2);
	assert_int_equal(pthread_create(&t, NULL, other_thread, &err), 0);
	assert_int_equal(user_fs_enter(), 0);
	pthread_barrier_wait(&entered);  /* the other thread creates while we are in */
	pthread_barrier_wait(&created);
	user_fs_leave();
	pthread_join(t, NULL);
	assert_int_equal(err, 0);
	assert_int_equal(owner("from-other-thread"), 0);
	pthread_barrier_destroy(&entered);
	pthread_barrier_destroy(&created);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scope_has_the_users_rights),
		cmocka_unit_test(test_scope_is_per_thread),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
