// SPDX-License-Identifier: GPL-2.0
/* Raw call stacks interned by a 128-bit fingerprint of their content. */
#include "lib/stackcache.h"
#include "lib/hashmix.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t rotl64(uint64_t x, int r)
{
	return (x << r) | (x >> (64 - r));
}

/*
 * Two hashes that differ in every step (multipliers, rotations, how each
 * word enters), word by word: a stack is 8-byte addresses, and hashing them
 * byte by byte would cost more than the rest of a sample's handling.  The
 * first is lib/hashmix.h's hash_word; the second is its own, so that the
 * two are independent.
 */
struct stackcache_key stackcache_key(uint32_t domain, const uint64_t *ips, uint32_t n)
{
	uint64_t h1 = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)domain << 32 | n);
	uint64_t h2 = 0xc2b2ae3d27d4eb4fULL + ((uint64_t)n << 32 | domain);
	struct stackcache_key k;

	for (uint32_t i = 0; i < n; i++) {
		h1 = hash_word(h1, ips[i]);
		h2 = rotl64(h2 + ips[i], 27) * 0x9fb21c651e98df25ULL + 0x52dce729;
	}
	k.h1 = hash_finish(h1);
	k.h2 = hash_mix64(h2 ^ (h2 >> 17));
	k.domain = domain;
	return k;
}
