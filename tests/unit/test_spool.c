// SPDX-License-Identifier: GPL-2.0
/*
 * lib/safedir.c and transport/spool.c.  safedir: a symlink, a directory
 * writable by its group, one of another user, a relative path refused; a
 * missing last component made 0755, a missing one above it not.  The
 * spool: entries come back in the order put, across a reopen, and the
 * sequence continues after the highest one there; the cap drops the
 * oldest and counts them, a body over the cap alone is refused; an
 * earlier run's temporary is removed at open and a stranger's file left
 * alone; entries that do not read back as written (a symlink, the wrong
 * size, not gzip when named .gz) are removed and counted, not returned;
 * a symlinked spool directory is refused, and so is a second opener.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/safedir.h"
#include "transport/spool.h"

static char top[64];

static int setup(void **state)
{
	(void)state;
	snprintf(top, sizeof(top), "/tmp/test_spool.XXXXXX");
	return mkdtemp(top) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", top, name);
}

static bool exists(const char *dir, const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_safedir(void **state)
{
	char path[128], target[128], why[256];
	struct stat st;
	int fd;

	(void)state;
	/* the last component made, 0755 */
	path_of(path, sizeof(path), "made");
	fd = safedir_open(path, why, sizeof(why));
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755);
	close(fd);
	/* two missing: ENOENT, nothing made */
	path_of(path, sizeof(path), "no/such");
	assert_int_equal(safedir_open(path, why, sizeof(why)), -1);
	assert_int_equal(errno, ENOENT);
	assert_false(exists(top, "no"));
	/* a symlink, last or above */
	path_of(target, sizeof(target), "made");
	path_of(path, sizeof(path), "link");
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(safedir_open(path, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "symlink"));
	path_of(path, sizeof(path), "link/below");
	assert_int_equal(safedir_open(path, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "link: a symlink"));
	/* writable by its group: refused last, and above when not sticky */
	path_of(path, sizeof(path), "made");
	assert_int_equal(chmod(path, 0775), 0);
	assert_int_equal(safedir_open(path, why, sizeof(why)), -1);
	assert_int_equal(errno, EPERM);
	assert_non_null(strstr(why, "made: writable by group or others"));
	path_of(path, sizeof(path), "made/sub");
	assert_int_equal(safedir_open(path, why, sizeof(why)), -1);
	assert_false(exists(top, "made/sub"));
	/* sticky above the last is allowed (/tmp itself is), not last */
	path_of(path, sizeof(path), "made");
	assert_int_equal(chmod(path, 01777), 0);
	path_of(path, sizeof(path), "made/sub");
	fd = safedir_open(path, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
	path_of(path, sizeof(path), "made");
	assert_int_equal(safedir_open(path, why, sizeof(why)), -1);
	assert_int_equal(chmod(path, 0755), 0);
	/* another user's (the test runs as root, or cannot chown) */
	if (chown(path, 12345, 12345) == 0) {
		assert_int_equal(safedir_open(path, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "owned by another user"));
	}
	/* a file, and a relative path */
	write_file(top, "file", "x");
	path_of(path, sizeof(path), "file");
	assert_int_equal(safedir_open(path, why, sizeof(why)), -1);
	assert_int_equal(safedir_open("relative/dir", why, sizeof(why)), -1);
	assert_int_equal(errno, EINVAL);
}

static struct spool *open_spool(const char *dir, uint64_t max)
{
	char err[512] = "";
	struct spool *s = spool_open(dir, max, err, sizeof(err));

	if (!s)
		fail_msg("spool_open(%s): %s", dir, err);
	return s;
}

/* The oldest entry is seq, holding text. */
static void expect_oldest(struct spool *s, uint64_t seq, const char *text, bool gzipped)
{
	struct spool_entry e;

	assert_int_equal(spool_oldest(s, &e), 0);
	assert_int_equal(e.seq, seq);
	assert_int_equal(e.len, strlen(text));
	assert_memory_equal(e.body, text, e.len);
	assert_int_equal(e.gzipped, gzipped);
	spool_entry_free(&e);
}

/* a fake gzip body: the magic and enough bytes to pass the checks */
static const char gz_body[] = "\x1f\x8b\x08 twenty bytes or more";

static void test_order_across_reopen(void **state)
{
	char dir[128];
	struct spool *s;
	struct spool_entry e;

	(void)state;
	path_of(dir, sizeof(dir), "order");
	s = open_spool(dir, 0);
	assert_int_equal(spool_oldest(s, &e), -ENOENT);
	assert_int_equal(spool_put(s, "first", 5, false), 0);
	assert_int_equal(spool_put(s, gz_body, strlen(gz_body), true), 0);
	assert_int_equal(spool_put(s, "third", 5, false), 0);
	assert_int_equal(spool_count(s), 3);
	assert_int_equal(spool_bytes(s), 10 + strlen(gz_body));
	assert_true(exists(dir, "00000000000000000001.otlp"));
	assert_true(exists(dir, "00000000000000000002.otlp.gz"));
	spool_close(s);

	s = open_spool(dir, 0);
	assert_int_equal(spool_count(s), 3);
	expect_oldest(s, 1, "first", false);
	/* reading does not remove */
	expect_oldest(s, 1, "first", false);
	assert_int_equal(spool_remove(s, 1), 0);
	assert_int_equal(spool_remove(s, 1), -ENOENT);
	assert_false(exists(dir, "00000000000000000001.otlp"));
	expect_oldest(s, 2, gz_body, true);
	assert_int_equal(spool_put(s, "fourth", 6, false), 0);
	spool_close(s);

	/* the sequence continues after the highest, across a reopen */
	s = open_spool(dir, 0);
	expect_oldest(s, 2, gz_body, true);
	assert_int_equal(spool_remove(s, 2), 0);
	expect_oldest(s, 3, "third", false);
	assert_int_equal(spool_remove(s, 3), 0);
	expect_oldest(s, 4, "fourth", false);
	assert_int_equal(spool_remove(s, 4), 0);
	assert_int_equal(spool_count(s), 0);
	assert_int_equal(spool_bytes(s), 0);
	assert_int_equal(spool_dropped(s), 0);
	spool_close(s);
}

static void test_sequence_continues(void **state)
{
	char dir[128];
	struct spool *s;

	(void)state;
	path_of(dir, sizeof(dir), "seq");
	s = open_spool(dir, 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(spool_put(s, "x", 1, false), 0);
	assert_int_equal(spool_remove(s, 1), 0);
	assert_int_equal(spool_remove(s, 2), 0);
	spool_close(s);
	s = open_spool(dir, 0);
	assert_int_equal(spool_put(s, "y", 1, false), 0);
	assert_true(exists(dir, "00000000000000000004.otlp"));
	expect_oldest(s, 3, "x", false);
	spool_close(s);
}

static void test_cap(void **state)
{
	char dir[128], big[101];
	struct spool *s;

	(void)state;
	path_of(dir, sizeof(dir), "cap");
	s = open_spool(dir, 100);
	memset(big, 'b', sizeof(big));
	assert_int_equal(spool_put(s, big, 40, false), 0);
	assert_int_equal(spool_put(s, big, 40, false), 0);
	/* the third does not fit: the oldest goes */
	assert_int_equal(spool_put(s, "0123456789012345678901234567890123456789", 40, false), 0);
	assert_int_equal(spool_count(s), 2);
	assert_int_equal(spool_bytes(s), 80);
	assert_int_equal(spool_dropped(s), 1);
	assert_false(exists(dir, "00000000000000000001.otlp"));
	/* exactly the cap fits, after dropping both */
	assert_int_equal(spool_put(s, big, 100, false), 0);
	assert_int_equal(spool_count(s), 1);
	assert_int_equal(spool_dropped(s), 3);
	/* larger than the cap alone: refused, counted, nothing removed */
	assert_int_equal(spool_put(s, big, 101, false), -EFBIG);
	assert_int_equal(spool_count(s), 1);
	assert_int_equal(spool_dropped(s), 4);
	assert_true(exists(dir, "00000000000000000004.otlp"));
	spool_close(s);
}

static void test_leftovers(void **state)
{
	char dir[128];
	struct spool *s;

	(void)state;
	path_of(dir, sizeof(dir), "left");
	s = open_spool(dir, 0);
	assert_int_equal(spool_put(s, "kept", 4, false), 0);
	spool_close(s);
	/* a temporary a crash left, and a file that is not the spool's */
	write_file(dir, ".tmp.00000000000000000002", "partial");
	write_file(dir, "README", "mine");
	s = open_spool(dir, 0);
	assert_false(exists(dir, ".tmp.00000000000000000002"));
	assert_true(exists(dir, "README"));
	assert_int_equal(spool_count(s), 1);
	expect_oldest(s, 1, "kept", false);
	/* entries are 0600: a profile is nobody else's business */
	{
		char path[256];
		struct stat st;

		snprintf(path, sizeof(path), "%s/00000000000000000001.otlp", dir);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mode & 0777, 0600);
	}
	spool_close(s);
}

static void test_unreadable(void **state)
{
	char dir[128], path[256], target[256];
	struct spool *s;

	(void)state;
	path_of(dir, sizeof(dir), "bad");
	s = open_spool(dir, 0);
	spool_close(s);
	/* named .gz, not gzip; a symlink; then a good one */
	write_file(dir, "00000000000000000001.otlp.gz", "not gzip at all, no, not at all");
	snprintf(target, sizeof(target), "%s/elsewhere", top);
	write_file(top, "elsewhere", "secret");
	snprintf(path, sizeof(path), "%s/00000000000000000002.otlp", dir);
	assert_int_equal(symlink(target, path), 0);
	write_file(dir, "00000000000000000003.otlp", "good");
	write_file(dir, "00000000000000000004.otlp", "cut short");
	s = open_spool(dir, 0);
	assert_int_equal(spool_count(s), 4);
	expect_oldest(s, 3, "good", false);
	assert_int_equal(spool_dropped(s), 2);
	assert_false(exists(dir, "00000000000000000001.otlp.gz"));
	assert_false(exists(dir, "00000000000000000002.otlp"));
	assert_true(exists(top, "elsewhere"));
	assert_int_equal(spool_remove(s, 3), 0);
	/* a file that changed size after it was seen */
	snprintf(path, sizeof(path), "%s/00000000000000000004.otlp", dir);
	assert_int_equal(truncate(path, 3), 0);
	{
		struct spool_entry e;

		assert_int_equal(spool_oldest(s, &e), -ENOENT);
	}
	assert_int_equal(spool_dropped(s), 3);
	assert_int_equal(spool_count(s), 0);
	/* the next sequence still follows the highest seen */
	assert_int_equal(spool_put(s, "next", 4, false), 0);
	assert_true(exists(dir, "00000000000000000005.otlp"));
	spool_close(s);
}

static void test_dirs_refused(void **state)
{
	char dir[128], link[128], err[512];
	struct spool *s;

	(void)state;
	path_of(dir, sizeof(dir), "real");
	s = open_spool(dir, 0);
	/* a second collector on the same spool */
	assert_null(spool_open(dir, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "in use by another collector"));
	spool_close(s);
	/* the spool through a symlink */
	path_of(link, sizeof(link), "spool-link");
	assert_int_equal(symlink(dir, link), 0);
	assert_null(spool_open(link, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "symlink"));
	/* writable by others */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_null(spool_open(dir, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "writable by group or others"));
	/* a missing parent is made (the default's /var/spool/collector), not
	 * two levels */
	path_of(dir, sizeof(dir), "parent/spool");
	s = open_spool(dir, 0);
	spool_close(s);
	path_of(dir, sizeof(dir), "a/b/c");
	assert_null(spool_open(dir, 0, err, sizeof(err)));
	assert_false(exists(top, "a"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safedir),
		cmocka_unit_test(test_order_across_reopen),
		cmocka_unit_test(test_sequence_continues),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_leftovers),
		cmocka_unit_test(test_unreadable),
		cmocka_unit_test(test_dirs_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
