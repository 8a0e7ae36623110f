/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the readers of the pprof, folded, flame graph and speedscope files
 * share: their error (the byte offset, when there is one, and the reason),
 * reading a whole file into a parser, and `collector dump`'s hook (read,
 * report "PATH: offset N: reason" on stderr, print unless checking, free).
 */
#ifndef COLLECTOR_FORMATS_READERR_H
#define COLLECTOR_FORMATS_READERR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "formats/format.h"

#define READER_NO_OFFSET SIZE_MAX  /* an error of the whole file, or of a JSON path */

struct reader_error {
	size_t offset;
	char reason[200];
};

/* Fills err; returns -EINVAL. */
int reader_fail(struct reader_error *err, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prints why path could not be read (rc: -EINVAL with err, or -errno);
 * returns rc. */
int reader_report(const char *path, int rc, const struct reader_error *err);

/* The whole file path, parsed by parse(data, len, obj, err): its result. */
#define READER_READ_FILE(parse, path, obj, err)                                   \
	({                                                                        \
		unsigned char *buf_;                                              \
		size_t len_;                                                      \
		int rc_ = read_whole_file(path, &buf_, &len_);                    \
		if (!rc_) {                                                       \
			rc_ = parse((void *)buf_, len_, obj, err);                \
			free(buf_);                                               \
		}                                                                 \
		rc_;                                                              \
	})

/* The body of a format's dump hook: read_file(path, &obj, &err), then
 * print(&obj, out) unless check, then release(&obj). */
#define READER_DUMP(type, read_file, print, release, path, out, check)           \
	do {                                                                      \
		type obj_;                                                        \
		struct reader_error err_;                                         \
		int rc_ = read_file(path, &obj_, &err_);                          \
		if (rc_)                                                          \
			return reader_report(path, rc_, &err_);                   \
		if (!(check))                                                     \
			print(&obj_, out);                                        \
		release(&obj_);                                                   \
		return 0;                                                         \
	} while (0)

#endif /* COLLECTOR_FORMATS_READERR_H */
