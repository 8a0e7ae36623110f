/* SPDX-License-Identifier: GPL-2.0 */
/* A hash map from 64-bit keys to 32-bit ids (lib/hashtab.h). */
#ifndef COLLECTOR_IDMAP_H
#define COLLECTOR_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/hashtab.h"

/* packed: 12 bytes a slot instead of 16 (x86-64 reads unaligned words at
 * full speed), which a table of a million keys feels in page faults */
struct __attribute__((packed)) idmap_entry {
	uint64_t key;
	uint32_t val;
};

static inline uint64_t idmap_entry_hash(const struct idmap_entry *e)
{
	return hash_mix64(e->key);
}

static inline uint64_t idmap_key_hash(const uint64_t *k)
{
	return hash_mix64(*k);
}

static inline bool idmap_match(const struct idmap_entry *e, const uint64_t *k)
{
	return e->key == *k;
}

HASHTAB_DEFINE(idmap, struct idmap_entry, uint64_t, idmap_entry_hash, idmap_key_hash, idmap_match)

/* The id stored under key, or UINT32_MAX. */
static inline uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
	const struct idmap_entry *e = idmap_find(m, &key);

	return e ? e->val : UINT32_MAX;
}

/* Stores (or replaces) key -> val.  Returns 0 or -ENOMEM. */
static inline int idmap_put(struct idmap *m, uint64_t key, uint32_t val)
{
	bool fresh;
	struct idmap_entry *e = idmap_upsert(m, &key, &fresh);

	if (!e)
		return -ENOMEM;
	e->key = key;
	e->val = val;
	return 0;
}

#endif /* COLLECTOR_IDMAP_H */
