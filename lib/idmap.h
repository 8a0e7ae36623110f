/* SPDX-License-Identifier: GPL-2.0 */
/* A hash map from 64-bit keys to 32-bit ids (open addressing). */
#ifndef COLLECTOR_IDMAP_H
#define COLLECTOR_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap {
	uint64_t *keys;
	uint32_t *vals;
	uint8_t *used;
	size_t cap, len;
};

/* The id stored under key, or UINT32_MAX. */
uint32_t idmap_get(const struct idmap *m, uint64_t key);
/* Stores (or replaces) key -> val.  Returns 0 or -ENOMEM. */
int idmap_put(struct idmap *m, uint64_t key, uint32_t val);
void idmap_free(struct idmap *m);

#endif /* COLLECTOR_IDMAP_H */
