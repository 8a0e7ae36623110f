// SPDX-License-Identifier: GPL-2.0
/* --call-graph cfi: unwind tables kept on disk (see table_cache.h). */
#include "unwind/table_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/fdio.h"
#include "lib/safedir.h"

_Static_assert(sizeof(struct table_cache_header) % 8 == 0, "header keeps rows aligned");
_Static_assert(sizeof(struct table_cache_seg_record) % 8 == 0, "records keep rows aligned");

struct table_cache {
	int dir_fd;
	char *dir;
	unsigned int n_temp;      /* temporary names made */
};

struct table_cache *table_cache_open_dir(const char *dir)
{
	struct table_cache *c;
	char why[256] = "";
	int fd;

	if (dir[0] != '/') {
		fprintf(stderr, "collector: %s=%s is not an absolute path: unwind tables not "
			"cached\n", TABLE_CACHE_DIR_ENV, dir);
		return NULL;
	}
	fd = safedir_open(dir, why, sizeof(why));
	if (fd < 0) {
		fprintf(stderr, "collector: unwind table cache %s refused (%s): tables not cached; "
			"%s=DIR moves it to a directory only root can write\n", dir, why,
			TABLE_CACHE_DIR_ENV);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->dir = strdup(dir))) {
		free(c);
		close(fd);
		return NULL;
	}
	c->dir_fd = fd;
	return c;
}

struct table_cache *table_cache_open(void)
{
	const char *dir = getenv(TABLE_CACHE_DIR_ENV);

	return table_cache_open_dir(dir && dir[0] ? dir : TABLE_CACHE_DEFAULT_DIR);
}

void table_cache_close(struct table_cache *c)
{
	if (!c)
		return;
	close(c->dir_fd);
	free(c->dir);
	free(c);
}

void table_cache_key(char *out, const uint8_t *build_id, size_t build_id_len, uint64_t dev,
		     uint64_t inode, int64_t mtime, uint64_t size, int with_debug_file)
{
	size_t n = 0;

	if (build_id_len && build_id_len <= 64) {
		out[n++] = 'b';
		for (size_t i = 0; i < build_id_len; i++)
			n += snprintf(out + n, TABLE_CACHE_KEY_MAX - n, "%02x", build_id[i]);
	} else {
		n = snprintf(out, TABLE_CACHE_KEY_MAX, "f%llx-%llx-%llx-%llx",
			     (unsigned long long)dev, (unsigned long long)inode,
			     (unsigned long long)mtime, (unsigned long long)size);
	}
	if (with_debug_file)
		snprintf(out + n, TABLE_CACHE_KEY_MAX - n, ".d");
}

static int invalid(char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Segment record r of a file of size bytes, whose data start at data_at. */
static int parse_seg(const uint8_t *data, size_t size, uint64_t data_at,
		     const struct table_cache_seg_record *r, struct table_cache_seg *s,
		     char *why, size_t why_size)
{
	const struct collector_unwind_row *rows;
	const uint32_t *pages;

	*s = (struct table_cache_seg){ r->offset, r->filesz, r->vmo, r->base, r->n_rows,
				       r->n_pages, NULL, NULL };
	if (!r->n_rows)
		return r->n_pages ? invalid(why, why_size, "pages without rows") : 0;
	if (!r->n_pages)
		return invalid(why, why_size, "rows without pages");
	if (r->rows_at < data_at || r->rows_at % 8 || r->rows_at > size ||
	    (size - r->rows_at) / sizeof(*rows) < r->n_rows)
		return invalid(why, why_size, "rows out of the file");
	if (r->pages_at < data_at || r->pages_at % 4 || r->pages_at > size ||
	    (size - r->pages_at) / sizeof(*pages) < (uint64_t)r->n_pages + 1)
		return invalid(why, why_size, "page index out of the file");
	rows = (const void *)(data + r->rows_at);
	pages = (const void *)(data + r->pages_at);
	for (uint32_t i = 0; i < r->n_rows; i++) {
		if (rows[i].kind > COLLECTOR_ROW_END)
			return invalid(why, why_size, "row %u of an unknown kind", i);
		if (i && rows[i].pc < rows[i - 1].pc)
			return invalid(why, why_size, "row %u out of order", i);
	}
	/* what the BPF program relies on: each page's rows inside the table */
	for (uint32_t p = 0; p <= r->n_pages; p++) {
		if (pages[p] >= r->n_rows)
			return invalid(why, why_size, "page %u points past the rows", p);
		if (p && pages[p] < pages[p - 1])
			return invalid(why, why_size, "page %u out of order", p);
	}
	s->rows = rows;
	s->pages = pages;
	return 0;
}

int table_cache_parse(const void *data, size_t size, const char *key,
		      struct table_cache_entry *e, char *why, size_t why_size)
{
	const struct table_cache_header *h = data;
	const struct table_cache_seg_record *recs;
	uint64_t data_at;

	e->n_segs = 0;
	if (size < sizeof(*h))
		return invalid(why, why_size, "shorter than its header (%zu bytes)", size);
	if (memcmp(h->magic, TABLE_CACHE_MAGIC, sizeof(h->magic)) != 0)
		return invalid(why, why_size, "not a table file (bad magic)");
	if (h->version != TABLE_CACHE_VERSION)
		return -ESTALE;
	if (h->header_size != sizeof(*h) || h->seg_size != sizeof(*recs) ||
	    h->row_size != sizeof(struct collector_unwind_row))
		return invalid(why, why_size, "header sizes %u/%u/%u, expected %zu/%zu/%zu",
			       h->header_size, h->seg_size, h->row_size, sizeof(*h),
			       sizeof(*recs), sizeof(struct collector_unwind_row));
	if (h->file_size != size)
		return invalid(why, why_size, "%zu bytes, its header says %llu", size,
			       (unsigned long long)h->file_size);
	if (!memchr(h->key, 0, sizeof(h->key)) || strcmp(h->key, key) != 0)
		return invalid(why, why_size, "the tables of another image");
	if (h->n_segs > TABLE_CACHE_MAX_SEGS)
		return invalid(why, why_size, "%u segments", h->n_segs);
	data_at = sizeof(*h) + (uint64_t)h->n_segs * sizeof(*recs);
	if (data_at > size)
		return invalid(why, why_size, "segment records out of the file");
	if (crc32_z(0, (const uint8_t *)data + sizeof(*h), size - sizeof(*h)) != h->crc)
		return invalid(why, why_size, "checksum mismatch");
	recs = (const void *)((const uint8_t *)data + sizeof(*h));
	for (uint32_t i = 0; i < h->n_segs; i++) {
		int err = parse_seg(data, size, data_at, &recs[i], &e->segs[i], why, why_size);

		if (err)
			return err;
	}
	e->n_segs = h->n_segs;
	return 0;
}

/* A file that may be read: a regular file of ours, writable by no one
 * else.  NULL, or why not. */
static const char *unsafe_file(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return "not a regular file";
	if (st->st_uid != geteuid())
		return "owned by another user";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

static void refused(const struct table_cache *c, const char *key, const char *why)
{
	fprintf(stderr, "collector: unwind table cache %s/%s refused (%s): rebuilt\n", c->dir, key,
		why);
}

int table_cache_read(struct table_cache *c, const char *key, struct table_cache_entry *e)
{
	char why[160];
	const char *bad = NULL;
	struct stat st;
	int fd, err;

	memset(e, 0, sizeof(*e));
	/* O_NONBLOCK: a FIFO planted there does not hang the thread */
	fd = openat(c->dir_fd, key, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		refused(c, key, errno == ELOOP ? "a symlink" : strerror(errno));
		return -EINVAL;
	}
	if (fstat(fd, &st) != 0 || (bad = unsafe_file(&st))) {
		refused(c, key, bad ? bad : strerror(errno));
		close(fd);
		return -EINVAL;
	}
	e->size = st.st_size;
	e->map = e->size ? mmap(NULL, e->size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	if (e->map == MAP_FAILED) {
		e->map = NULL;
		refused(c, key, e->size ? strerror(errno) : "empty");
		return -EINVAL;
	}
	err = table_cache_parse(e->map, e->size, key, e, why, sizeof(why));
	if (err) {
		if (err == -EINVAL)
			refused(c, key, why);
		table_cache_release(e);
	}
	return err;
}

void table_cache_release(struct table_cache_entry *e)
{
	if (e->map)
		munmap(e->map, e->size);
	e->map = NULL;
	e->n_segs = 0;
}

static int write_all(int fd, const void *buf, size_t n, uLong *crc)
{
	if (crc)
		*crc = crc32_z(*crc, buf, n);
	return fd_write_all(fd, buf, n);
}

/* The file's body (records, rows, pages) into fd after room for the
 * header; its crc and size into h. */
static int write_body(int fd, const struct table_cache_seg *segs, uint32_t n,
		      struct table_cache_header *h)
{
	struct table_cache_seg_record recs[TABLE_CACHE_MAX_SEGS] = { 0 };
	uint64_t at = sizeof(*h) + n * sizeof(*recs);
	static const uint8_t zeros[8];
	uLong crc = crc32_z(0, NULL, 0);
	int err;

	for (uint32_t i = 0; i < n; i++) {
		const struct table_cache_seg *s = &segs[i];
		bool table = s->n_rows && s->n_pages;

		recs[i] = (struct table_cache_seg_record){ .offset = s->offset, .filesz = s->filesz,
							   .vmo = s->vmo, .base = s->base };
		if (!table)
			continue;
		recs[i].n_rows = s->n_rows;
		recs[i].n_pages = s->n_pages;
		recs[i].rows_at = at;
		at += (uint64_t)s->n_rows * sizeof(*s->rows);
		recs[i].pages_at = at;
		at += ((uint64_t)s->n_pages + 1) * sizeof(*s->pages);
		at = (at + 7) & ~7ull;
	}
	if (lseek(fd, sizeof(*h), SEEK_SET) < 0)
		return -errno;
	err = write_all(fd, recs, n * sizeof(*recs), &crc);
	for (uint32_t i = 0; !err && i < n; i++) {
		size_t pages_bytes = ((size_t)recs[i].n_pages + 1) * sizeof(uint32_t);

		if (!recs[i].n_rows)
			continue;
		err = write_all(fd, segs[i].rows, recs[i].n_rows * sizeof(*segs[i].rows), &crc);
		if (!err)
			err = write_all(fd, segs[i].pages, pages_bytes, &crc);
		if (!err && pages_bytes % 8)
			err = write_all(fd, zeros, 8 - pages_bytes % 8, &crc);
	}
	h->crc = crc;
	h->file_size = at;
	return err;
}

int table_cache_write(struct table_cache *c, const char *key, const struct table_cache_seg *segs,
		      uint32_t n)
{
	struct table_cache_header h = { .version = TABLE_CACHE_VERSION };
	char tmp[64];
	int fd, err;

	if (n > TABLE_CACHE_MAX_SEGS || strlen(key) >= sizeof(h.key))
		return -EINVAL;
	memcpy(h.magic, TABLE_CACHE_MAGIC, sizeof(h.magic));
	h.header_size = sizeof(h);
	h.seg_size = sizeof(struct table_cache_seg_record);
	h.row_size = sizeof(struct collector_unwind_row);
	h.n_segs = n;
	snprintf(h.key, sizeof(h.key), "%s", key);
	/* a name of this process's, in the same directory: renamed into place */
	snprintf(tmp, sizeof(tmp), ".tmp.%d.%u", (int)getpid(), c->n_temp++);
	fd = openat(c->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write_body(fd, segs, n, &h);
	if (!err && lseek(fd, 0, SEEK_SET) < 0)
		err = -errno;
	if (!err)
		err = write_all(fd, &h, sizeof(h), NULL);
	if (close(fd) != 0 && !err)
		err = -errno;
	if (!err && renameat(c->dir_fd, tmp, c->dir_fd, key) != 0)
		err = -errno;
	if (err)
		unlinkat(c->dir_fd, tmp, 0);
	return err;
}
