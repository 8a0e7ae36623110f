/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one way to hash for the hash tables (lib/hashtab.h): hash_mix64()
 * mixes one word; hash_word() folds a word into a running hash and
 * hash_finish() mixes the result (hash_pair() does both for two words);
 * hash_bytes() and hash_string() hash memory and strings a word at a time.  Every result is well mixed in all its
 * bits, as the tables need (slot from the low bits, control byte from the
 * high ones).  In-memory only: the values are not stable across hosts.
 */
#ifndef COLLECTOR_HASHMIX_H
#define COLLECTOR_HASHMIX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* Folds word v into running hash h: order matters ((a, b) and (b, a)
 * differ).  Cheap (a multiply, a rotate, a multiply); not mixed enough to
 * use as is: end with hash_finish(). */
static inline uint64_t hash_word(uint64_t h, uint64_t v)
{
	h ^= v * 0x87c37b91114253d5ULL;
	h = (h << 31) | (h >> 33);
	return h * 0x4cf5ad432745937fULL;
}

/* The hash of what was folded into h. */
static inline uint64_t hash_finish(uint64_t h)
{
	return hash_mix64(h);
}

/* Two words (order matters): the keys of most tables. */
static inline uint64_t hash_pair(uint64_t a, uint64_t b)
{
	return hash_finish(hash_word(hash_word(0, a), b));
}

/* n bytes at p, folded into seed: 8 bytes a step (the tail zero-padded),
 * the length folded in too, so that trailing zero bytes count. */
static inline uint64_t hash_bytes(uint64_t seed, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = hash_word(seed, n), w;

	for (; n >= 8; b += 8, n -= 8) {
		memcpy(&w, b, 8);
		h = hash_word(h, w);
	}
	if (n) {
		w = 0;
		memcpy(&w, b, n);
		h = hash_word(h, w);
	}
	return hash_finish(h);
}

/* A NUL-terminated string. */
static inline uint64_t hash_string(const char *s)
{
	return hash_bytes(0, s, strlen(s));
}

#endif /* COLLECTOR_HASHMIX_H */
