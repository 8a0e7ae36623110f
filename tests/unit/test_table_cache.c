// SPDX-License-Identifier: GPL-2.0
/*
 * unwind/table_cache.c, the unwind tables kept on disk: tables written and
 * read back the same; then a valid file corrupted one header field, one
 * segment record field, one row and one page index at a time (the
 * checksum made right again, so that the field's own check is the one
 * that must refuse it), and truncated at every length up to its header
 * and at a few beyond: each refused with a reason, never parsed.  Then
 * what is refused before reading: a symlink, a file of another user, one
 * writable by others, a FIFO; and directories that may not hold the cache
 * (another user's, world-writable, a symlink, a relative path).
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
#include <zlib.h>
#include <cmocka.h>

#include "unwind/table_cache.h"

#define KEY "b0123456789abcdef"
#define N_ROWS 40
#define N_PAGES 5

static struct collector_unwind_row rows[N_ROWS];
static uint32_t pages[N_PAGES + 1];
static char dir[64];

static void make_tables(struct table_cache_seg segs[2])
{
	for (uint32_t i = 0; i < N_ROWS; i++)
		rows[i] = (struct collector_unwind_row){ .pc = i * 500, .cfa_off = 8 + i,
							 .kind = 1 + i % 5 };
	for (uint32_t p = 0; p <= N_PAGES; p++)
		pages[p] = p * 4096 / 500 < N_ROWS ? p * 4096 / 500 : N_ROWS - 1;
	segs[0] = (struct table_cache_seg){ .offset = 0x1000, .filesz = 0x5000, .vmo = 0,
					    .base = 0x1000, .n_rows = N_ROWS, .n_pages = N_PAGES,
					    .rows = rows, .pages = pages };
	/* a segment without a table */
	segs[1] = (struct table_cache_seg){ .offset = 0x9000, .filesz = 0x100, .vmo = 0x1000 };
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_table_cache.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* The bytes of a valid file, written by table_cache_write. */
static uint8_t *valid_file(size_t *size)
{
	struct table_cache_seg segs[2];
	struct table_cache *c = table_cache_open_dir(dir);
	char path[128];
	uint8_t *buf;
	FILE *f;

	assert_non_null(c);
	make_tables(segs);
	assert_int_equal(table_cache_write(c, KEY, segs, 2), 0);
	table_cache_close(c);
	snprintf(path, sizeof(path), "%s/%s", dir, KEY);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*size = ftell(f);
	rewind(f);
	buf = malloc(*size);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *size, f), *size);
	fclose(f);
	return buf;
}

static void fix_crc(uint8_t *buf, size_t size)
{
	struct table_cache_header *h = (void *)buf;

	h->crc = crc32_z(0, buf + sizeof(*h), size - sizeof(*h));
}

/* buf (size bytes) must be refused, with a reason naming `what`. */
static void expect_refused(const uint8_t *buf, size_t size, const char *what)
{
	struct table_cache_entry e;
	char why[160] = "";

	assert_int_equal(table_cache_parse(buf, size, KEY, &e, why, sizeof(why)), -EINVAL);
	if (!strstr(why, what))
		fail_msg("refused for '%s', expected '%s'", why, what);
	assert_int_equal(e.n_segs, 0);
}

static void test_round_trip(void **state)
{
	struct table_cache_seg segs[2];
	struct table_cache *c = table_cache_open_dir(dir);
	struct table_cache_entry e;
	struct stat st;

	(void)state;
	assert_non_null(c);
	assert_int_equal(table_cache_read(c, KEY, &e), -ENOENT);
	make_tables(segs);
	assert_int_equal(table_cache_write(c, KEY, segs, 2), 0);
	assert_int_equal(table_cache_read(c, KEY, &e), 0);
	assert_int_equal(e.n_segs, 2);
	for (int s = 0; s < 2; s++) {
		assert_int_equal(e.segs[s].offset, segs[s].offset);
		assert_int_equal(e.segs[s].filesz, segs[s].filesz);
		assert_int_equal(e.segs[s].vmo, segs[s].vmo);
		assert_int_equal(e.segs[s].base, segs[s].base);
		assert_int_equal(e.segs[s].n_rows, segs[s].n_rows);
		assert_int_equal(e.segs[s].n_pages, segs[s].n_pages);
	}
	assert_memory_equal(e.segs[0].rows, rows, sizeof(rows));
	assert_memory_equal(e.segs[0].pages, pages, sizeof(pages));
	assert_null(e.segs[1].rows);
	table_cache_release(&e);
	/* another image's key reads nothing */
	assert_int_equal(table_cache_read(c, "b0123", &e), -ENOENT);
	/* no temporary file left; the file is 0644, not writable by others */
	char path[128];

	snprintf(path, sizeof(path), "test -z \"$(ls -A '%s' | grep tmp)\"", dir);
	assert_int_equal(system(path), 0);

	snprintf(path, sizeof(path), "%s/%s", dir, KEY);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	table_cache_close(c);
}

static void test_header_fields(void **state)
{
	size_t size;
	uint8_t *buf = valid_file(&size), *bad = malloc(size);
	struct table_cache_header *h = (void *)bad;
	struct table_cache_entry e;
	char why[160];

	(void)state;
	assert_int_equal(table_cache_parse(buf, size, KEY, &e, why, sizeof(why)), 0);
	/* read for another image */
	assert_int_equal(table_cache_parse(buf, size, "b0124", &e, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "another image"));
#define CORRUPT(stmt, what)                                                            \
	do {                                                                           \
		memcpy(bad, buf, size);                                                \
		stmt;                                                                  \
		fix_crc(bad, size);                                                    \
		expect_refused(bad, size, what);                                       \
	} while (0)
	CORRUPT(h->magic[3] ^= 1, "magic");
	CORRUPT(h->header_size++, "header sizes");
	CORRUPT(h->seg_size--, "header sizes");
	CORRUPT(h->row_size = 16, "header sizes");
	CORRUPT(h->file_size++, "its header says");
	CORRUPT(h->file_size = 0, "its header says");
	CORRUPT(h->n_segs = TABLE_CACHE_MAX_SEGS + 1, "segments");
	CORRUPT(h->n_segs = UINT32_MAX, "segments");
	CORRUPT(memset(h->key, 'x', sizeof(h->key)), "another image");
	CORRUPT(h->key[1] = 'f', "another image");
	/* a body changed under a right header: the checksum */
	memcpy(bad, buf, size);
	bad[size - 9] ^= 0x40;
	expect_refused(bad, size, "checksum");
	memcpy(bad, buf, size);
	h->crc ^= 1;
	expect_refused(bad, size, "checksum");
	/* another format version: stale, replaced without a word */
	memcpy(bad, buf, size);
	h->version++;
	fix_crc(bad, size);
	assert_int_equal(table_cache_parse(bad, size, KEY, &e, why, sizeof(why)), -ESTALE);
	free(bad);
	free(buf);
}

static void test_segment_fields(void **state)
{
	size_t size;
	uint8_t *buf = valid_file(&size), *bad = malloc(size);
	struct table_cache_seg_record *r =
		(void *)(bad + sizeof(struct table_cache_header));
	struct collector_unwind_row *row;
	uint32_t *page;

	(void)state;
	CORRUPT(r[0].rows_at = size, "rows out of the file");
	CORRUPT(r[0].rows_at = size - 8, "rows out of the file");
	CORRUPT(r[0].rows_at = UINT64_MAX - 7, "rows out of the file");
	CORRUPT(r[0].rows_at = 8, "rows out of the file"); /* over the header */
	CORRUPT(r[0].rows_at += 4, "rows out of the file"); /* misaligned */
	CORRUPT(r[0].n_rows = UINT32_MAX, "rows out of the file");
	CORRUPT(r[0].n_rows += (size / 8), "rows out of the file");
	CORRUPT(r[0].pages_at = size, "page index out of the file");
	CORRUPT(r[0].pages_at = UINT64_MAX - 3, "page index out of the file");
	CORRUPT(r[0].pages_at = 4, "page index out of the file");
	CORRUPT(r[0].pages_at += 2, "page index out of the file");
	CORRUPT(r[0].n_pages = UINT32_MAX, "page index out of the file");
	CORRUPT(r[0].n_pages = 0, "rows without pages");
	CORRUPT(r[1].n_pages = 1, "pages without rows");
	/* the rows and the page index themselves */
	CORRUPT((row = (void *)(bad + r[0].rows_at), row[7].kind = 6), "row 7 of an unknown kind");
	CORRUPT((row = (void *)(bad + r[0].rows_at), row[9].pc = 1), "row 9 out of order");
	CORRUPT((page = (void *)(bad + r[0].pages_at), page[2] = N_ROWS), "page 2 points past");
	CORRUPT((page = (void *)(bad + r[0].pages_at), page[N_PAGES] = UINT32_MAX),
		"points past the rows");
	CORRUPT((page = (void *)(bad + r[0].pages_at), page[3] = 0), "page 3 out of order");
	free(bad);
	free(buf);
}

static void test_truncated(void **state)
{
	size_t size;
	uint8_t *buf = valid_file(&size);

	(void)state;
	for (size_t n = 0; n < sizeof(struct table_cache_header); n++)
		expect_refused(buf, n, "shorter than its header");
	for (size_t n = sizeof(struct table_cache_header); n < size; n += 8)
		expect_refused(buf, n, "its header says");
	free(buf);
}

static void write_file(const char *name, const char *text, mode_t mode)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	chmod(path, mode);
}

/* What table_cache_read refuses before reading a byte. */
static void test_files_refused(void **state)
{
	struct table_cache *c = table_cache_open_dir(dir);
	struct table_cache_entry e;
	size_t size;
	uint8_t *buf = valid_file(&size);
	char path[128], target[128];

	(void)state;
	assert_non_null(c);
	/* a symlink to a valid file */
	snprintf(target, sizeof(target), "%s/%s", dir, KEY);
	snprintf(path, sizeof(path), "%s/blink", dir);
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(table_cache_read(c, "blink", &e), -EINVAL);
	/* a valid file writable by others */
	assert_int_equal(chmod(target, 0666), 0);
	assert_int_equal(table_cache_read(c, KEY, &e), -EINVAL);
	assert_int_equal(chmod(target, 0644), 0);
	assert_int_equal(table_cache_read(c, KEY, &e), 0);
	table_cache_release(&e);
	/* a valid file of another user */
	if (geteuid() == 0) {
		assert_int_equal(chown(target, 65534, 65534), 0);
		assert_int_equal(table_cache_read(c, KEY, &e), -EINVAL);
		/* written over (renamed into place): ours again */
		struct table_cache_seg segs[2];

		make_tables(segs);
		assert_int_equal(table_cache_write(c, KEY, segs, 2), 0);
		assert_int_equal(table_cache_read(c, KEY, &e), 0);
		table_cache_release(&e);
	}
	/* a FIFO does not block */
	snprintf(path, sizeof(path), "%s/bfifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(table_cache_read(c, "bfifo", &e), -EINVAL);
	/* an empty file, and a directory */
	write_file("bempty", "", 0644);
	assert_int_equal(table_cache_read(c, "bempty", &e), -EINVAL);
	snprintf(path, sizeof(path), "%s/bdir", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(table_cache_read(c, "bdir", &e), -EINVAL);
	table_cache_close(c);
	free(buf);
}

static void test_dirs_refused(void **state)
{
	char path[128], link[128];
	struct table_cache *c;
	struct stat st;

	(void)state;
	assert_null(table_cache_open_dir("relative/dir"));
	/* a missing last component is made, 0755 */
	snprintf(path, sizeof(path), "%s/made", dir);
	c = table_cache_open_dir(path);
	assert_non_null(c);
	table_cache_close(c);
	assert_int_equal(stat(path, &st), 0);
	mode_t mask = umask(0);

	umask(mask);
	assert_int_equal(st.st_mode & 0777, 0755 & ~mask);
	/* but not its parents */
	snprintf(path, sizeof(path), "%s/no/such", dir);
	assert_null(table_cache_open_dir(path));
	/* world-writable, even sticky (the last component) */
	snprintf(path, sizeof(path), "%s/made", dir);
	assert_int_equal(chmod(path, 01777), 0);
	assert_null(table_cache_open_dir(path));
	assert_int_equal(chmod(path, 0775), 0);
	assert_null(table_cache_open_dir(path));
	assert_int_equal(chmod(path, 0755), 0);
	/* a symlink to a good directory */
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_null(table_cache_open_dir(link));
	/* below a directory others may write (not sticky) */
	snprintf(link, sizeof(link), "%s/made/sub", dir);
	assert_int_equal(mkdir(link, 0755), 0);
	assert_int_equal(chmod(path, 0777), 0);
	assert_null(table_cache_open_dir(link));
	assert_int_equal(chmod(path, 0755), 0);
	c = table_cache_open_dir(link);
	assert_non_null(c);
	table_cache_close(c);
	/* another user's */
	if (geteuid() == 0) {
		assert_int_equal(chown(link, 65534, 65534), 0);
		assert_null(table_cache_open_dir(link));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_header_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segment_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirs_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
