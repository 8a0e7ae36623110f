// SPDX-License-Identifier: GPL-2.0
/*
 * symbols/debug_copies.c: a debug file of compressed DWARF sections
 * (build/symtest/stripped-gz.debug, made as Debian's -dbgsym are, by
 * objcopy --compress-debug-sections) is copied once decompressed into the
 * cache's debug folder, named by its build-id: the copy has no compressed
 * section and the same build-id and DWARF (every compile unit's lines the
 * same); a second open uses it; a copy spoilt is made again; past the
 * size the copies may take, the least recently used go.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <elfutils/libdw.h>

#include "symbols/debug_copies.h"
#include "unit_files.h"

#define DEBUG_FILE "build/symtest/stripped-gz.debug"

/* Every compile unit's line count and first line, in one string. */
static void dwarf_lines_of(const struct elf_file *f, char *out, size_t size)
{
	Dwarf *dw = dwarf_begin_elf(f->elf, DWARF_C_READ, NULL);
	Dwarf_Off off = 0, next;
	size_t hsize, at = 0;

	assert_non_null(dw);
	out[0] = 0;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n = 0;
		int line = 0;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0 && n)
			dwarf_lineno(dwarf_onesrcline(lines, n - 1), &line);
		at += (size_t)snprintf(out + at, size - at, "%zu:%d;", n, line);
		off = next;
	}
	dwarf_end(dw);
}

static char *copy_path(const char *dir, const struct elf_file *f)
{
	char hex[2 * ELFINFO_MAX_BUILD_ID + 1], *p;

	elf_file_build_id_hex(f, hex, sizeof(hex));
	assert_true(asprintf(&p, "%s/debug/%s.debug", dir, hex) > 0);
	return p;
}

static void test_copy_made_and_used(void **state)
{
	struct elf_file f, copy, again;
	char *dir = unit_tmpdir("copies"), *path, want[4096], got[4096];
	struct stat st1, st2;

	(void)state;
	assert_int_equal(elf_file_open(&f, DEBUG_FILE), 0);
	assert_true(debug_copy_needed(&f));
	assert_int_equal(debug_copy_open(dir, &f, &copy), 0);
	assert_false(debug_copy_needed(&copy));
	assert_int_equal(copy.build_id_len, f.build_id_len);
	assert_memory_equal(copy.build_id, f.build_id, f.build_id_len);
	dwarf_lines_of(&f, want, sizeof(want));
	dwarf_lines_of(&copy, got, sizeof(got));
	assert_string_equal(got, want);
	assert_non_null(strstr(want, ":")); /* lines there are */
	path = copy_path(dir, &f);
	assert_int_equal(stat(path, &st1), 0);
	/* the second time: the same file, not made again */
	assert_int_equal(debug_copy_open(dir, &f, &again), 0);
	assert_int_equal(stat(path, &st2), 0);
	assert_int_equal(st1.st_ino, st2.st_ino);
	elf_file_close(&again);
	elf_file_close(&copy);
	/* spoilt: made again */
	{
		int fd = open(path, O_WRONLY | O_TRUNC);

		assert_true(fd >= 0);
		assert_int_equal(write(fd, "junk", 4), 4);
		close(fd);
	}
	assert_int_equal(debug_copy_open(dir, &f, &copy), 0);
	assert_false(debug_copy_needed(&copy));
	dwarf_lines_of(&copy, got, sizeof(got));
	assert_string_equal(got, want);
	elf_file_close(&copy);
	elf_file_close(&f);
	free(path);
	unit_rm_rf(dir);
	free(dir);
}

/* Two copies of 600 MiB each (sparse): the older goes when a new one is
 * made, the newer stays (1 GiB in all at most). */
static void test_oldest_evicted(void **state)
{
	char *dir = unit_tmpdir("copies"), *older, *newer, *sub;
	struct timespec t[2] = { { 1000, 0 }, { 1000, 0 } };
	struct elf_file f, copy;
	struct stat st;
	int fd;

	(void)state;
	assert_true(asprintf(&sub, "%s/debug", dir) > 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_true(asprintf(&older, "%s/aaaa.debug", sub) > 0);
	assert_true(asprintf(&newer, "%s/bbbb.debug", sub) > 0);
	fd = open(older, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0 && ftruncate(fd, 600LL << 20) == 0);
	assert_int_equal(futimens(fd, t), 0);
	close(fd);
	t[0].tv_sec = t[1].tv_sec = 2000;
	fd = open(newer, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0 && ftruncate(fd, 600LL << 20) == 0);
	assert_int_equal(futimens(fd, t), 0);
	close(fd);
	assert_int_equal(elf_file_open(&f, DEBUG_FILE), 0);
	assert_int_equal(debug_copy_open(dir, &f, &copy), 0);
	assert_int_not_equal(stat(older, &st), 0);
	assert_int_equal(stat(newer, &st), 0);
	elf_file_close(&copy);
	elf_file_close(&f);
	free(older);
	free(newer);
	free(sub);
	unit_rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_made_and_used),
		cmocka_unit_test(test_oldest_evicted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
