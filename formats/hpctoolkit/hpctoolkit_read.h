/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HPCToolkit reader: what its parts share.  hpctoolkit_reader.c holds the
 * checked accessors (every structure inside its section, every array's
 * count bounded by the bytes it needs, every string terminated inside its
 * section) and the files' entry points; hpctoolkit_read_meta.c reads
 * meta.db, hpctoolkit_read_data.c profile.db, cct.db and trace.db.
 *
 * A check that fails prints "NAME: offset N: reason" once on the reader's
 * errf, marks the reader failed and returns false; the parse_* functions
 * return 0, or -EINVAL once anything failed.
 */
#ifndef COLLECTOR_HPCTOOLKIT_READ_H
#define COLLECTOR_HPCTOOLKIT_READ_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/hpctoolkit/hpctoolkit_reader.h"
#include "formats/hpctoolkit/hpctoolkit_internal.h"
#include "lib/bytes.h"

/* One file's bytes, as read. */
struct rd {
	const char *name;
	const uint8_t *p;
	uint64_t n;
	FILE *errf;
	bool failed;
};

/* A section (or the file, or an array): [off, off + size). */
struct sec {
	uint64_t off, size;
};

/* Loads; the caller has checked off + size <= r->n. */
static inline uint8_t u8(const struct rd *r, uint64_t off)
{
	return r->p[off];
}

static inline uint16_t u16(const struct rd *r, uint64_t off)
{
	return le16_get(r->p + off);
}

static inline uint32_t u32(const struct rd *r, uint64_t off)
{
	return le32_get(r->p + off);
}

static inline uint64_t u64(const struct rd *r, uint64_t off)
{
	return le64_get(r->p + off);
}

static inline double f64(const struct rd *r, uint64_t off)
{
	double v;

	memcpy(&v, r->p + off, 8);
	return v;
}

static inline int hkr_finish(const struct rd *r)
{
	return r->failed ? -EINVAL : 0;
}

__attribute__((format(printf, 3, 4)))
bool hkr_fail(struct rd *r, uint64_t off, const char *fmt, ...);
/* A structure of `len` bytes at `off`, inside `s`, aligned to `align`. */
bool hkr_need(struct rd *r, uint64_t off, uint64_t len, const struct sec *s, uint64_t align,
	      const char *what);
/* An array of n elements of `size` bytes: checks n against the room. */
bool hkr_need_array(struct rd *r, uint64_t off, uint64_t n, uint64_t size, const struct sec *s,
		    uint64_t align, const char *what);
/* A NUL-terminated string wholly inside s, copied; NULL after a failure. */
char *hkr_str_at(struct rd *r, uint64_t off, const struct sec *s, const char *what);
/* n zeroed elements (at least one); NULL after a failure. */
void *hkr_alloc_array(struct rd *r, uint64_t n, size_t size);
/* Common header: magic, format, version, n sections (8-aligned, except
 * those in the `unaligned` bit mask); footer. */
bool hkr_read_header(struct rd *r, const char *format, const char *footer, int n_sec,
		     struct sec *secs, unsigned unaligned);

int hkr_parse_meta(struct rd *r, struct hkr_db *db);
int hkr_parse_profile(struct rd *r, struct hkr_db *db);
int hkr_parse_cct(struct rd *r, struct hkr_db *db);
int hkr_parse_trace(struct rd *r, struct hkr_db *db);

#endif /* COLLECTOR_HPCTOOLKIT_READ_H */
