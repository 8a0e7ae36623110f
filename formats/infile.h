/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the readers share: one error type (where the input is malformed and
 * why), and the input file itself, read whole into memory (pipes too) or
 * mapped (regular files only).  Readers take the whole file so that every
 * offset they compute is checked against its real size.
 */
#ifndef COLLECTOR_INFILE_H
#define COLLECTOR_INFILE_H

#include <stdarg.h>
#include <stddef.h>

/* A reader's verdict on bad input: the byte offset and the reason. */
struct format_error {
	size_t offset;
	char reason[160];
};

/* Fills err (when not NULL) and returns -EINVAL. */
int format_fail(struct format_error *err, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int format_vfail(struct format_error *err, size_t offset, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* Reads a whole file into a malloc'd buffer: 0 or a negative errno. */
int read_whole_file(const char *path, unsigned char **buf, size_t *len);
/* The same, with "cannot read: <why>" at offset 0 in err on failure. */
int format_read_file(const char *path, unsigned char **buf, size_t *len,
		     struct format_error *err);

/* Clears err, reads path whole with format_read_file() and hands it to
 * parse(); returns what that returns, or the read's negative errno. */
int format_parse_file(const char *path, struct format_error *err,
		      int (*parse)(const unsigned char *data, size_t n, void *ctx,
				   struct format_error *err),
		      void *ctx);

/* Maps a whole regular file read-only: 0, -EINVAL when it is not a regular
 * file, or a negative errno.  *data is NULL for an empty file.  Undo with
 * format_unmap_file(). */
int format_map_file(const char *path, const unsigned char **data, size_t *n);
void format_unmap_file(const unsigned char *data, size_t n);

#endif /* COLLECTOR_INFILE_H */
