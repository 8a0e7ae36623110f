// SPDX-License-Identifier: GPL-2.0
/*
 * lib/mmap_records.c against the kernel: a child that execs and exits is
 * found in the store after it was reaped (its executable and libc, from
 * the records alone: /proc has nothing left of it), and a library this
 * process dlopens is in its reading without /proc being read again.  The
 * records need perf_event_open for every process (root, as the unit tests
 * run here); without it the test says so and skips.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/mmap_records.h"

/* Whether a mapping's path in maps ends in suffix. */
static bool has_path(const struct procmaps *maps, const char *suffix)
{
	size_t n = strlen(suffix);

	for (size_t i = 0; i < maps->n; i++) {
		size_t len = strlen(maps->entries[i].path);

		if (len >= n && strcmp(maps->entries[i].path + len - n, suffix) == 0)
			return true;
	}
	return false;
}

static bool has_path_part(const struct procmaps *maps, const char *part)
{
	for (size_t i = 0; i < maps->n; i++)
		if (strstr(maps->entries[i].path, part))
			return true;
	return false;
}

/* The records of every CPU, feeding s; the test skipped when not root. */
static struct mmap_records *open_or_skip(struct maps_store *s)
{
	struct mmap_records *mr = NULL;
	int err;

	assert_non_null(s);
	err = mmap_records_open(s, &mr);
	if (err == -EACCES || err == -EPERM) {
		maps_store_free(s);
		skip();
	}
	assert_int_equal(err, 0);
	return mr;
}

static void test_child_gone(void **state)
{
	struct maps_store *s = maps_store_new();
	struct mmap_records *mr;
	struct mmap_records_counts c;
	uint64_t read, reused, followed;
	struct procmaps out;
	int status;
	pid_t child;

	(void)state;
	mr = open_or_skip(s);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(maps_store_read(s, child, MAPS_STORE_FRESH, &out, NULL), 0);
	assert_true(has_path(&out, "/true"));
	assert_true(has_path_part(&out, "/libc.so"));
	assert_true(has_path(&out, "[vdso]"));
	for (size_t i = 0; i < out.n; i++)
		assert_true(out.entries[i].exec && out.entries[i].start < out.entries[i].end);
	procmaps_free(&out);
	maps_store_counts(s, &read, &reused, &followed);
	assert_int_equal(read, 0);
	assert_int_equal(followed, 1);
	mmap_records_counts(mr, &c);
	assert_true(c.execs >= 1 && c.forks >= 1 && c.mmaps >= 3);
	assert_int_equal(c.lost, 0);
	mmap_records_close(mr);
	maps_store_free(s);
}

/* Two children of a followed process, read in one drain: the one that
 * execs has its new image's mappings (its fork copied nothing), the one
 * that does not has its parent's. */
static void test_fork_then_exec(void **state)
{
	struct maps_store *s = maps_store_new();
	struct mmap_records *mr;
	struct mmap_records_counts c;
	struct procmaps out;
	pid_t execs, stays;
	int status;

	(void)state;
	mr = open_or_skip(s);
	/* this process followed from here on */
	assert_int_equal(maps_store_read(s, getpid(), MAPS_STORE_FRESH, &out, NULL), 0);
	assert_true(has_path_part(&out, "test_mmap_records"));
	procmaps_free(&out);
	execs = fork();
	assert_true(execs >= 0);
	if (execs == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	stays = fork();
	assert_true(stays >= 0);
	if (stays == 0)
		_exit(0);
	assert_int_equal(waitpid(execs, &status, 0), execs);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(waitpid(stays, &status, 0), stays);
	assert_int_equal(maps_store_read(s, execs, MAPS_STORE_FRESH, &out, NULL), 0);
	assert_true(has_path(&out, "/true"));
	assert_false(has_path_part(&out, "test_mmap_records"));
	procmaps_free(&out);
	assert_int_equal(maps_store_read(s, stays, MAPS_STORE_FRESH, &out, NULL), 0);
	assert_true(has_path_part(&out, "test_mmap_records"));
	procmaps_free(&out);
	mmap_records_counts(mr, &c);
	assert_true(c.forks >= 2);
	assert_true(c.forks_exec >= 1);
	assert_true(c.forks_exec < c.forks);
	assert_int_equal(c.lost, 0);
	mmap_records_close(mr);
	maps_store_free(s);
}

static void test_dlopen_followed(void **state)
{
	struct maps_store *s = maps_store_new();
	struct mmap_records *mr;
	uint64_t read, reused, followed;
	struct procmaps out;
	void *lib;

	(void)state;
	mr = open_or_skip(s);
	assert_int_equal(maps_store_read(s, getpid(), MAPS_STORE_FRESH, &out, NULL), 0);
	assert_false(has_path_part(&out, "/libanl.so"));
	procmaps_free(&out);
	/* glibc's small library of getaddrinfo_a, which nothing here links */
	lib = dlopen("libanl.so.1", RTLD_NOW);
	assert_non_null(lib);
	assert_int_equal(maps_store_read(s, getpid(), MAPS_STORE_FRESH, &out, NULL), 0);
	assert_true(has_path_part(&out, "/libanl.so"));
	procmaps_free(&out);
	maps_store_counts(s, &read, &reused, &followed);
	assert_int_equal(read, 1);
	assert_int_equal(followed, 1);
	dlclose(lib);
	mmap_records_close(mr);
	maps_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_child_gone),
		cmocka_unit_test(test_fork_then_exec),
		cmocka_unit_test(test_dlopen_followed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
