/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Little-endian integers in byte buffers, at any alignment: what the binary
 * formats (DCPI, sampler, XRay, HPCToolkit, kallsyms' ELF notes) read and
 * write.  On a little-endian host (x86-64) each is one unaligned load or
 * store; elsewhere the bytes are swapped.  And DWARF's LEB128 numbers
 * (uleb128_get, sleb128_get: false past end).
 */
#ifndef COLLECTOR_BYTES_H
#define COLLECTOR_BYTES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BYTES_LE16(x) (x)
#define BYTES_LE32(x) (x)
#define BYTES_LE64(x) (x)
#else
#define BYTES_LE16(x) __builtin_bswap16(x)
#define BYTES_LE32(x) __builtin_bswap32(x)
#define BYTES_LE64(x) __builtin_bswap64(x)
#endif

static inline uint16_t le16_get(const void *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return BYTES_LE16(v);
}

static inline uint32_t le32_get(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return BYTES_LE32(v);
}

static inline uint64_t le64_get(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return BYTES_LE64(v);
}

static inline void le16_put(void *p, uint16_t v)
{
	v = BYTES_LE16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void le32_put(void *p, uint32_t v)
{
	v = BYTES_LE32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void le64_put(void *p, uint64_t v)
{
	v = BYTES_LE64(v);
	memcpy(p, &v, sizeof(v));
}

/* The LEB128 number at *p (advanced past it); false when it runs past end. */
static inline bool uleb128_get(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned int shift = 0; *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

static inline bool sleb128_get(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = (int64_t)r;
	return true;
}

#endif /* COLLECTOR_BYTES_H */
