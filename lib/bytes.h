/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Little-endian integers in byte buffers, at any alignment: what the binary
 * formats (DCPI, sampler, XRay, HPCToolkit, kallsyms' ELF notes) read and
 * write.  On a little-endian host (x86-64) each is one unaligned load or
 * store; elsewhere the bytes are swapped.
 */
#ifndef COLLECTOR_BYTES_H
#define COLLECTOR_BYTES_H

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

#endif /* COLLECTOR_BYTES_H */
