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
 * byte by byte would cost more than the rest of a sample's handling.
 */
struct stackcache_key stackcache_key(uint32_t domain, const uint64_t *ips, uint32_t n)
{
	uint64_t h1 = 0x9e3779b97f4a7c15ULL ^ ((uint64_t)domain << 32 | n);
	uint64_t h2 = 0xc2b2ae3d27d4eb4fULL + ((uint64_t)n << 32 | domain);
	struct stackcache_key k;

	for (uint32_t i = 0; i < n; i++) {
		h1 = rotl64(h1 ^ (ips[i] * 0x87c37b91114253d5ULL), 31) * 0x4cf5ad432745937fULL;
		h2 = rotl64(h2 + ips[i], 27) * 0x9fb21c651e98df25ULL + 0x52dce729;
	}
	k.h1 = hash_mix64(h1);
	k.h2 = hash_mix64(h2 ^ (h2 >> 17));
	k.domain = domain;
	return k;
}

static size_t find_slot(const struct stackcache_slot *slots, size_t cap,
			const struct stackcache_key *k)
{
	size_t i = (k->h1 ^ k->domain) & (cap - 1);

	while (slots[i].val != UINT32_MAX &&
	       (slots[i].h1 != k->h1 || slots[i].h2 != k->h2 || slots[i].domain != k->domain))
		i = (i + 1) & (cap - 1);
	return i;
}

uint32_t stackcache_get(const struct stackcache *c, const struct stackcache_key *key)
{
	if (!c->cap)
		return UINT32_MAX;
	return c->slots[find_slot(c->slots, c->cap, key)].val;
}

static int grow(struct stackcache *c)
{
	size_t ncap = c->cap ? c->cap * 2 : 256;
	struct stackcache_slot *ns = malloc(ncap * sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < ncap; i++)
		ns[i].val = UINT32_MAX;
	for (size_t i = 0; i < c->cap; i++) {
		const struct stackcache_slot *s = &c->slots[i];
		struct stackcache_key k = { s->h1, s->h2, s->domain };

		if (s->val != UINT32_MAX)
			ns[find_slot(ns, ncap, &k)] = *s;
	}
	free(c->slots);
	c->slots = ns;
	c->cap = ncap;
	return 0;
}

int stackcache_put(struct stackcache *c, const struct stackcache_key *key, uint32_t val)
{
	struct stackcache_slot *s;

	if (val == UINT32_MAX)
		return -EINVAL;
	if ((c->len + 1) * 4 > c->cap * 3 && grow(c) != 0)
		return -ENOMEM;
	s = &c->slots[find_slot(c->slots, c->cap, key)];
	if (s->val == UINT32_MAX)
		c->len++;
	s->h1 = key->h1;
	s->h2 = key->h2;
	s->domain = key->domain;
	s->val = val;
	return 0;
}

void stackcache_free(struct stackcache *c)
{
	free(c->slots);
	c->slots = NULL;
	c->cap = c->len = 0;
}
