/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Files for the formats' unit tests: a fresh temporary directory, removing
 * it, a whole file in memory, a path joined, a shell command's output.
 * Each fails the running test (cmocka) rather than return an error.
 * Include after <cmocka.h>.
 */
#ifndef COLLECTOR_UNIT_FILES_H
#define COLLECTOR_UNIT_FILES_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* A new directory /tmp/collector-<what>-XXXXXX (malloc'd path). */
static inline char *unit_tmpdir(const char *what)
{
	char tmpl[128], *d;

	snprintf(tmpl, sizeof(tmpl), "/tmp/collector-%s-XXXXXX", what);
	d = mkdtemp(tmpl);
	assert_non_null(d);
	d = strdup(d);
	assert_non_null(d);
	return d;
}

/* Removes dir and everything in it. */
static inline void unit_rm_rf(const char *dir)
{
	char *cmd;

	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* a/b, malloc'd. */
static inline char *unit_path_join(const char *a, const char *b)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", a, b) > 0);
	return p;
}

/* The whole file, malloc'd with a NUL after its n bytes. */
static inline unsigned char *unit_slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long sz;

	if (!f)
		fail_msg("cannot open %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	sz = ftell(f);
	assert_true(sz >= 0);
	rewind(f);
	buf = malloc((size_t)sz + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	buf[sz] = '\0';
	fclose(f);
	*n = (size_t)sz;
	return buf;
}

static inline bool unit_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Runs a shell command; returns its exit status, and its stdout in *out
 * (malloc'd) when out is not NULL. */
static inline int unit_run(const char *cmd, char **out)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	FILE *p = popen(cmd, "r");
	size_t got;
	int st;

	assert_non_null(buf);
	assert_non_null(p);
	while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += got;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	st = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#endif /* COLLECTOR_UNIT_FILES_H */
