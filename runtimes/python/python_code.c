// SPDX-License-Identifier: GPL-2.0
/* Code objects read from a live process (runtimes/python/python_code.h). */
#include "runtimes/python/python_code.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static uint64_t word_at(const uint8_t *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* Appends code point c to out as UTF-8 (room for 4 bytes is checked). */
static size_t put_utf8(char *out, size_t at, size_t size, uint32_t c)
{
	if (c < 0x80 && at + 1 < size) {
		out[at++] = (char)c;
	} else if (c < 0x800 && at + 2 < size) {
		out[at++] = (char)(0xc0 | c >> 6);
		out[at++] = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000 && at + 3 < size) {
		out[at++] = (char)(0xe0 | c >> 12);
		out[at++] = (char)(0x80 | (c >> 6 & 0x3f));
		out[at++] = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x110000 && at + 4 < size) {
		out[at++] = (char)(0xf0 | c >> 18);
		out[at++] = (char)(0x80 | (c >> 12 & 0x3f));
		out[at++] = (char)(0x80 | (c >> 6 & 0x3f));
		out[at++] = (char)(0x80 | (c & 0x3f));
	}
	return at;
}

/* A str object as UTF-8: compact strings only (what code objects hold). */
static int read_str(pid_t pid, const struct python_layout *l, uint64_t addr, char **out)
{
	uint8_t head[128], raw[PYTHON_MAX_STRING * 4];
	char text[PYTHON_MAX_STRING * 4 + 1];
	uint32_t state, kind;
	uint64_t len;
	size_t at = 0;
	bool ascii;
	int err;

	if (!addr)
		return -EINVAL;
	err = proc_mem_read(pid, addr, head, l->str_compact_data);
	if (err)
		return err;
	memcpy(&state, head + l->str_state, sizeof(state));
	len = word_at(head, l->str_length);
	kind = state >> 2 & 7;
	ascii = state >> 6 & 1;
	if (!(state >> 5 & 1) || (kind != 1 && kind != 2 && kind != 4))
		return -EINVAL; /* not compact, or not a str at all */
	if (len > PYTHON_MAX_STRING)
		len = PYTHON_MAX_STRING;
	err = proc_mem_read(pid, addr + (ascii ? l->str_ascii_data : l->str_compact_data), raw,
			  len * kind);
	if (err)
		return err;
	for (uint64_t i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? raw[i]
			     : kind == 2 ? (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8
					 : (uint32_t)raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 |
						   (uint32_t)raw[4 * i + 2] << 16 |
						   (uint32_t)raw[4 * i + 3] << 24;
		if (ascii && c >= 0x80)
			return -EINVAL;
		at = put_utf8(text, at, sizeof(text), c);
	}
	text[at] = 0;
	*out = strdup(text);
	return *out ? 0 : -ENOMEM;
}

static int read_bytes(pid_t pid, const struct python_layout *l, uint64_t addr, uint8_t **out,
		      size_t *len)
{
	uint64_t size;
	int err;

	if (!addr)
		return -EINVAL;
	err = proc_mem_read(pid, addr + l->bytes_size, &size, sizeof(size));
	if (err)
		return err;
	if (size > PYTHON_MAX_LINETABLE)
		size = PYTHON_MAX_LINETABLE;
	*out = malloc(size ? size : 1);
	if (!*out)
		return -ENOMEM;
	err = proc_mem_read(pid, addr + l->bytes_data, *out, size);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*len = size;
	return 0;
}

/* The head of code object addr (up to its first code unit) into buf, and
 * what says which code object it is into identity. */
static int read_head(pid_t pid, const struct python_layout *l, uint64_t addr, uint8_t *buf,
		     size_t size, uint64_t identity[4])
{
	size_t need = l->walk.code_units;
	int32_t first_line;
	int err;

	if (need > size || !addr)
		return -EINVAL;
	err = proc_mem_read(pid, addr, buf, need);
	if (err)
		return err;
	memcpy(&first_line, buf + l->co_firstlineno, sizeof(first_line));
	identity[0] = word_at(buf, l->co_qualname);
	identity[1] = word_at(buf, l->co_filename);
	identity[2] = word_at(buf, l->co_linetable);
	identity[3] = (uint32_t)first_line;
	return 0;
}

int python_code_same(pid_t pid, const struct python_layout *l, uint64_t addr,
		     const struct python_code *c)
{
	uint8_t buf[512];
	uint64_t identity[4];
	int err = read_head(pid, l, addr, buf, sizeof(buf), identity);

	if (err)
		return err;
	return memcmp(identity, c->identity, sizeof(identity)) == 0;
}

int python_code_read(pid_t pid, const struct python_layout *l, uint64_t addr,
		     struct python_code *out)
{
	uint8_t buf[512];
	int32_t first_line;
	int err;

	memset(out, 0, sizeof(*out));
	err = read_head(pid, l, addr, buf, sizeof(buf), out->identity);
	if (err)
		return err;
	memcpy(&first_line, buf + l->co_firstlineno, sizeof(first_line));
	out->first_line = first_line > 0 ? (uint32_t)first_line : 0;
	err = read_str(pid, l, word_at(buf, l->co_qualname), &out->qualname);
	if (!err)
		err = read_str(pid, l, word_at(buf, l->co_filename), &out->filename);
	if (!err)
		err = read_bytes(pid, l, word_at(buf, l->co_linetable), &out->linetable,
				 &out->linetable_len);
	if (err)
		python_code_free(out);
	return err;
}

void python_code_free(struct python_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

/* The location table's variable-length integers: 6 bits a byte, low bits
 * first, 0x40 set while more follow. */
static uint32_t varint(const uint8_t *t, size_t len, size_t *i)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 28)
			return v;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return v;
}

static int32_t svarint(const uint8_t *t, size_t len, size_t *i)
{
	uint32_t v = varint(t, len, i);

	return v & 1 ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

/*
 * CPython's location table (Objects/locations.md, 3.11 on): entries of
 * 1 to 8 code units, each a first byte 1CCCCLLL (C the code, L the units
 * - 1) and what the code says follows: 15 no location; 14 the long form
 * (line delta, end line delta, column + 1, end column + 1); 13 a line
 * delta and no columns; 10-12 a line delta of code - 10 and two bytes of
 * columns; 0-9 the same line and one byte of columns.
 */
uint32_t python_code_line(const uint8_t *t, size_t len, uint32_t first_line, uint32_t units)
{
	int64_t line = first_line;
	uint32_t addr = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t b = t[i++];
		uint32_t code = b >> 3 & 15, n = (b & 7) + 1;
		bool none = false;

		if (!(b & 0x80))
			return 0; /* not the start of an entry: a table we misread */
		if (code == 15) {
			none = true;
		} else if (code == 14) {
			line += svarint(t, len, &i);
			varint(t, len, &i);
			varint(t, len, &i);
			varint(t, len, &i);
		} else if (code == 13) {
			line += svarint(t, len, &i);
		} else if (code >= 10) {
			line += code - 10;
			i += 2;
		} else {
			i += 1;
		}
		if (units < addr + n)
			return none || line <= 0 ? 0 : (uint32_t)line;
		addr += n;
	}
	return 0;
}
