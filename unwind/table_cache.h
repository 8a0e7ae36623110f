/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: unwind tables kept on disk, so that an image's table
 * is built once (per build of it) and read back by every later run, before
 * the first sample of a process that maps it.
 *
 * One file per image, named by its key: the build-id ("b" and its hex),
 * else device, inode, mtime and size ("f..."), and ".d" when its CFI came
 * partly from a separate debug file.  The file holds a header (magic,
 * format version, the sizes of its own structures, the whole file's size,
 * the key, a zlib crc32 of everything after the header), a record per
 * executable segment and the segments' rows and page indexes, laid out as
 * the BPF program's maps take them.  Every field is checked when read
 * (table_cache_parse): a file that does not validate is reported in one
 * line and rebuilt, never used.
 *
 * The directory: COLLECTOR_CACHE_DIR, else /var/cache/collector; made
 * 0755 when missing (its parent must exist).  Every component of its path
 * is opened without following symlinks and must belong to root or the
 * collector's effective user and be writable by no one else (a sticky
 * directory such as /tmp excepted, above the last); otherwise the cache
 * is refused with a message and the tables are built as without it.  So
 * nothing is ever written where the invoking user (sudo's SUDO_UID) can
 * write.  A file is opened with O_NOFOLLOW relative to the directory and
 * must be a regular file of the collector's user, writable by no one
 * else; written under a temporary name and renamed into place.
 */
#ifndef COLLECTOR_TABLE_CACHE_H
#define COLLECTOR_TABLE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/collector.h"

#define TABLE_CACHE_DIR_ENV "COLLECTOR_CACHE_DIR"
#define TABLE_CACHE_DEFAULT_DIR "/var/cache/collector"

/* Bump when a table built for the same image may differ (a change of the
 * CFI reduction, of the row format): the older files are then rebuilt. */
/* 2: rows compacted over the padding between functions; 3: pages of 256
 * bytes, not 4 KiB; 4: the entry point without CFI is the outermost frame */
#define TABLE_CACHE_VERSION 4

#define TABLE_CACHE_MAX_SEGS 4
#define TABLE_CACHE_KEY_MAX 160

/* One executable segment's table; n_rows 0: it has none (frame-pointer
 * steps there).  rows and pages point into the file read (or, when
 * written, at the caller's). */
struct table_cache_seg {
	uint64_t offset, filesz;  /* the segment in the file */
	uint64_t vmo;             /* p_vaddr - p_offset */
	uint64_t base;            /* link-time address of the table's pc 0 */
	uint32_t n_rows, n_pages;
	const struct collector_unwind_row *rows;
	const uint32_t *pages;    /* n_pages + 1 entries */
};

/* The file layout (little-endian, this machine's). */
#define TABLE_CACHE_MAGIC "CLCFITB\n"
struct table_cache_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;     /* sizeof(struct table_cache_header) */
	uint32_t seg_size;        /* sizeof(struct table_cache_seg_record) */
	uint32_t row_size;        /* sizeof(struct collector_unwind_row) */
	uint32_t n_segs;
	uint32_t crc;             /* crc32 of the bytes after the header */
	uint64_t file_size;
	char key[TABLE_CACHE_KEY_MAX]; /* NUL-terminated */
};
struct table_cache_seg_record {
	uint64_t offset, filesz, vmo, base;
	uint64_t rows_at, pages_at; /* byte offsets in the file */
	uint32_t n_rows, n_pages;
};

struct table_cache;

/* The cache in COLLECTOR_CACHE_DIR or the default; NULL with a message on
 * stderr when it is refused (see above), or without memory. */
struct table_cache *table_cache_open(void);
/* The same in directory dir (absolute). */
struct table_cache *table_cache_open_dir(const char *dir);
void table_cache_close(struct table_cache *c);

/* The key of an image file into out (TABLE_CACHE_KEY_MAX bytes). */
void table_cache_key(char *out, const uint8_t *build_id, size_t build_id_len, uint64_t dev,
		     uint64_t inode, int64_t mtime, uint64_t size, int with_debug_file);

/* A file read back: segs point into its mapping until released. */
struct table_cache_entry {
	void *map;
	size_t size;
	uint32_t n_segs;
	struct table_cache_seg segs[TABLE_CACHE_MAX_SEGS];
};

/* Reads the tables of key.  0; -ENOENT when there are none; -EINVAL when
 * the file was refused or does not validate (one line on stderr saying
 * why; the caller builds the tables and writes them over it); -ESTALE
 * when it is of another format version (replaced without a word). */
int table_cache_read(struct table_cache *c, const char *key, struct table_cache_entry *e);
void table_cache_release(struct table_cache_entry *e);

/* Writes the tables of key (segs[0..n)), atomically.  0 or a negative
 * errno (the tables are still used; the next run builds them again). */
int table_cache_write(struct table_cache *c, const char *key, const struct table_cache_seg *segs,
		      uint32_t n);

/* The check of a file's contents data[0..size) for key: 0 with e's segs
 * pointing into data, -ESTALE (another version), or -EINVAL with the
 * reason in why.  What table_cache_read does after opening the file. */
int table_cache_parse(const void *data, size_t size, const char *key,
		      struct table_cache_entry *e, char *why, size_t why_size);

#endif /* COLLECTOR_TABLE_CACHE_H */
