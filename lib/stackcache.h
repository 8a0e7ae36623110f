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

struct stackcache_key {
	uint64_t h1, h2;
	uint32_t domain;
};

struct stackcache_slot {
	uint64_t h1, h2;
	uint32_t domain;
	uint32_t val;        /* UINT32_MAX: empty */
};

struct stackcache {
	struct stackcache_slot *slots;
	size_t cap, len;
};

/* The key of n addresses in a domain (a process, or the kernel). */
struct stackcache_key stackcache_key(uint32_t domain, const uint64_t *ips, uint32_t n);
/* The value stored under key, or UINT32_MAX. */
uint32_t stackcache_get(const struct stackcache *c, const struct stackcache_key *key);
/* Stores key -> val (val < UINT32_MAX).  Returns 0 or -ENOMEM. */
int stackcache_put(struct stackcache *c, const struct stackcache_key *key, uint32_t val);
void stackcache_free(struct stackcache *c);

#endif /* COLLECTOR_STACKCACHE_H */
