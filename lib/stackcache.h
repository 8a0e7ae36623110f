/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Raw call stacks (arrays of addresses, as the kernel walks them) interned
 * by content: (domain, addresses) -> a 32-bit value, such as the resolved
 * stack it stands for.  Only a 128-bit fingerprint of the addresses is kept,
 * not the addresses themselves: the chance that two different stacks share
 * one is about n^2 / 2^129 for n distinct stacks (below 10^-26 at 10^6).
 */
#ifndef COLLECTOR_STACKCACHE_H
#define COLLECTOR_STACKCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/hashtab.h"

struct stackcache_key {
	uint64_t h1, h2;
	uint32_t domain;
};

/* 24 bytes: the key's fields and the value, without the key's padding */
struct stackcache_entry {
	uint64_t h1, h2;
	uint32_t domain;
	uint32_t val;
};

static inline uint64_t stackcache_key_hash(const struct stackcache_key *k)
{
	return k->h1 ^ k->domain;
}

static inline uint64_t stackcache_entry_hash(const struct stackcache_entry *e)
{
	return e->h1 ^ e->domain;
}

static inline bool stackcache_match(const struct stackcache_entry *e,
				    const struct stackcache_key *k)
{
	return e->h1 == k->h1 && e->h2 == k->h2 && e->domain == k->domain;
}

HASHTAB_DEFINE(stackcache, struct stackcache_entry, struct stackcache_key, stackcache_entry_hash,
	       stackcache_key_hash, stackcache_match)

/* The key of n addresses in a domain (a process, or the kernel). */
struct stackcache_key stackcache_key(uint32_t domain, const uint64_t *ips, uint32_t n);
/* The value stored under key, or UINT32_MAX. */
static inline uint32_t stackcache_get(const struct stackcache *c, const struct stackcache_key *key)
{
	const struct stackcache_entry *e = stackcache_find(c, key);

	return e ? e->val : UINT32_MAX;
}

/* Stores key -> val (val < UINT32_MAX).  Returns 0, -EINVAL or -ENOMEM. */
static inline int stackcache_put(struct stackcache *c, const struct stackcache_key *key,
				 uint32_t val)
{
	struct stackcache_entry *e;
	bool fresh;

	if (val == UINT32_MAX)
		return -EINVAL;
	e = stackcache_upsert(c, key, &fresh);
	if (!e)
		return -ENOMEM;
	e->h1 = key->h1;
	e->h2 = key->h2;
	e->domain = key->domain;
	e->val = val;
	return 0;
}

#endif /* COLLECTOR_STACKCACHE_H */
