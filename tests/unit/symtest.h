/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the symbolizer's unit tests share (test_symbolize*.c): the ELF files
 * mk/symtest.mk builds into build/symtest/ from tests/symtest/, and
 * independent readers of the expected values: the files' own symbol tables
 * (tests/unit/elf_oracle.h, or readelf), and "MARK:"/"DECL:" comments in
 * the sources.  Nothing is copied from the symbolizer's own output.
 */
#ifndef COLLECTOR_TEST_SYMTEST_H
#define COLLECTOR_TEST_SYMTEST_H

#include <dlfcn.h>
#include <errno.h>
#include <gelf.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "symbols/kallsyms.h"
#include "model/model.h"
#include "lib/procmaps.h"
#include "symbols/symbolize.h"

#include "elf_oracle.h"

#define SYMTEST "build/symtest"
#define DEBUG_ROOT SYMTEST "/debug"
#define PROG_SRC "tests/symtest/prog.c"
#define LIB_SRC "tests/symtest/lib.c"
#define INLINE_SRC "tests/symtest/inline.c"

/* The 1-based line of src holding the comment tag "KIND:name". */
static inline uint32_t marker_line(const char *src, const char *tag)
{
	char line[512], want[128];
	uint32_t n = 0, found = 0;
	FILE *f = fopen(src, "r");

	if (!f)
		fail_msg("%s: %s", src, strerror(errno));
	snprintf(want, sizeof(want), "/* %s */", tag);
	while (fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, want)) {
			if (found)
				fail_msg("%s: %s twice", src, tag);
			found = n;
		}
	}
	fclose(f);
	if (!found)
		fail_msg("%s: no %s", src, tag);
	return found;
}

/* Runs cmd and returns the rest of the first output line that contains
 * `key`, after it. */
static inline void tool_value(const char *cmd, const char *key, char *out, size_t size)
{
	char line[1024];
	FILE *p = popen(cmd, "r");

	out[0] = '\0';
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *k = strstr(line, key);

		if (k && !out[0]) {
			const char *v = k + strlen(key);
			size_t n = strcspn(v, "\n");

			if (n >= size)
				n = size - 1;
			memcpy(out, v, n);
			out[n] = '\0';
		}
	}
	pclose(p);
}

static inline bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return a && b && !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static inline const struct model_function *loc_function(const struct model *m, uint32_t loc)
{
	uint32_t f = m->locations.items[loc].function;

	return f == MODEL_NONE ? NULL : &m->functions.items[f];
}

static inline const char *file_path(const struct model *m, uint32_t file)
{
	return file == MODEL_NONE ? NULL : m->files.items[file].path;
}

#endif /* COLLECTOR_TEST_SYMTEST_H */
