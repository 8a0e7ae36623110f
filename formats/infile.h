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
#include <stdint.h>

/* A reader's verdict on bad input: the byte offset (FORMAT_NO_OFFSET for
 * an error of the whole file, or of a JSON path) and the reason. */
struct format_error {
	size_t offset;
	char reason[200];
};

#define FORMAT_NO_OFFSET SIZE_MAX

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

/* Inflates a gzip (or zlib) stream data[0..n) into a new buffer *out of
 * *out_len bytes (to free).  A stream that ends early, has bytes after its
 * end or inflates past max bytes is -EINVAL with err filled. */
int format_inflate(const unsigned char *data, size_t n, size_t max, unsigned char **out,
		   size_t *out_len, struct format_error *err);

/* Maps a whole regular file read-only: 0, -EINVAL when it is not a regular
 * file, or a negative errno.  *data is NULL for an empty file.  Undo with
 * format_unmap_file(). */
int format_map_file(const char *path, const unsigned char **data, size_t *n);
void format_unmap_file(const unsigned char *data, size_t n);

/* Prints on stderr why path could not be read ("PATH: offset N: reason",
 * or the errno's text when rc is not -EINVAL); returns rc. */
int format_report(const char *path, int rc, const struct format_error *err);

/* The body of a format's dump hook: read_file(path, &obj, &err), then
 * print(&obj, out) unless check, then release(&obj). */
#define FORMAT_DUMP(type, read_file, print, release, path, out, check)           \
	do {                                                                      \
		type obj_;                                                        \
		struct format_error err_;                                         \
		int rc_ = read_file(path, &obj_, &err_);                          \
		if (rc_)                                                          \
			return format_report(path, rc_, &err_);                   \
		if (!(check))                                                     \
			print(&obj_, out);                                        \
		release(&obj_);                                                   \
		return 0;                                                         \
	} while (0)

#endif /* COLLECTOR_INFILE_H */
