// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit writer: the names of identifier kinds, scopes and entry points,
 * the growable byte buffer the files' sections are built in (little-endian
 * fields set through lib/bytes.h), and the common file header.
 */
#include "formats/hpctoolkit/hpctoolkit_internal.h"
#include "lib/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[HK_N_KINDS] = {
	"SUMMARY", "NODE", "RANK", "THREAD", "GPUDEVICE", "GPUCONTEXT", "GPUSTREAM", "CORE",
};
static const char *const scope_names[HK_N_SCOPES] = {
	"point", "function", "lex_aware", "execution",
};
static const char *const entry_names[HK_N_ENTRIES] = {
	"unknown entry", "main thread", "application thread",
};

const char *hk_kind_name(unsigned kind)
{
	return kind < HK_N_KINDS ? kind_names[kind] : NULL;
}

const char *hk_scope_name(unsigned scope)
{
	return scope < HK_N_SCOPES ? scope_names[scope] : NULL;
}

const char *hk_entry_name(unsigned entry)
{
	return entry < HK_N_ENTRIES ? entry_names[entry] : NULL;
}

/* ---- byte buffer -------------------------------------------------------- */

void hk_buf_free(struct hk_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static bool buf_reserve(struct hk_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return false;
	if (b->len + n <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	/* no zeroing here: every append writes its bytes, and zeroing the
	 * spare capacity would make all of it resident */
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

size_t hk_buf_put(struct hk_buf *b, const void *data, size_t n)
{
	size_t off = b->len;

	if (!buf_reserve(b, n))
		return 0;
	if (data)
		memcpy(b->p + off, data, n);
	else
		memset(b->p + off, 0, n);
	b->len += n;
	return off;
}

size_t hk_buf_zero(struct hk_buf *b, size_t n)
{
	return hk_buf_put(b, NULL, n);
}

void hk_buf_align(struct hk_buf *b, size_t a)
{
	size_t pad = (a - b->len % a) % a;

	hk_buf_zero(b, pad);
}

size_t hk_buf_str(struct hk_buf *b, const char *s)
{
	return hk_buf_put(b, s, strlen(s) + 1);
}

void hk_buf_set(struct hk_buf *b, size_t off, const void *data, size_t n)
{
	if (!b->err && off + n <= b->len)
		memcpy(b->p + off, data, n);
}

void hk_buf_set_u8(struct hk_buf *b, size_t off, uint8_t v)
{
	hk_buf_set(b, off, &v, 1);
}

void hk_buf_set_u16(struct hk_buf *b, size_t off, uint16_t v)
{
	uint8_t le[2];

	le16_put(le, v);
	hk_buf_set(b, off, le, 2);
}

void hk_buf_set_u32(struct hk_buf *b, size_t off, uint32_t v)
{
	uint8_t le[4];

	le32_put(le, v);
	hk_buf_set(b, off, le, 4);
}

void hk_buf_set_u64(struct hk_buf *b, size_t off, uint64_t v)
{
	uint8_t le[8];

	le64_put(le, v);
	hk_buf_set(b, off, le, 8);
}

void hk_buf_set_f64(struct hk_buf *b, size_t off, double v)
{
	hk_buf_set(b, off, &v, 8);
}

void hk_file_header(uint8_t *hdr, const char *format)
{
	memcpy(hdr, HK_MAGIC, 10);
	memcpy(hdr + 10, format, 4);
	hdr[14] = HK_MAJOR;
	hdr[15] = HK_MINOR;
}

size_t hk_buf_start_file(struct hk_buf *b, const char *format, size_t header_len, uint32_t n,
			 uint8_t entry_size)
{
	size_t sec, entries;

	hk_buf_zero(b, header_len);
	if (!b->err)
		hk_file_header(b->p, format);
	sec = hk_buf_zero(b, 0x10);
	entries = hk_buf_zero(b, (size_t)entry_size * n);
	hk_buf_set_u64(b, 0x10, b->len - sec);
	hk_buf_set_u64(b, 0x18, sec);
	hk_buf_set_u64(b, sec, entries);
	hk_buf_set_u32(b, sec + 8, n);
	hk_buf_set_u8(b, sec + 0x0c, entry_size);
	return entries;
}
