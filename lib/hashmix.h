/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one 64-bit mixer the hash tables share, hash_mix2() for keys of
 * several words (chain it: hash_mix2(hash_mix2(a, b), c)), and hash_bytes()
 * for strings.
 */
#ifndef COLLECTOR_HASHMIX_H
#define COLLECTOR_HASHMIX_H

#include <stddef.h>
#include <stdint.h>

/* splitmix64's finalizer: every input bit moves every output bit, which
 * pids, addresses and small ids (far from random) need before masking. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Two words into one hash: a enters multiplied by an odd constant, so that
 * (a, b) and (b, a) differ and small words do not cancel, then the mixer. */
static inline uint64_t hash_mix2(uint64_t a, uint64_t b)
{
	return hash_mix64(a * 0x9e3779b97f4a7c15ULL + b);
}

/* Bytes (a name) into one hash: FNV-1a over the bytes, then the mixer, since
 * FNV's low bits, which place a key, move little for short strings. */
static inline uint64_t hash_bytes(const void *data, size_t n)
{
	const unsigned char *s = data;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 1099511628211ULL;
	}
	return hash_mix64(h);
}

#endif /* COLLECTOR_HASHMIX_H */
