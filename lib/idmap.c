// SPDX-License-Identifier: GPL-2.0
/* A hash map from 64-bit keys to 32-bit ids. */
#include "lib/idmap.h"
#include "lib/hashmix.h"

#include <errno.h>
#include <stdlib.h>

static size_t slot_of(uint64_t key, size_t cap)
{
	return hash_mix64(key) & (cap - 1);
}

uint32_t idmap_get(const struct idmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return UINT32_MAX;
	for (i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return UINT32_MAX;
}

static void put_raw(struct idmap *m, uint64_t key, uint32_t val)
{
	size_t i;

	for (i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
	}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->len++;
}

int idmap_put(struct idmap *m, uint64_t key, uint32_t val)
{
	if ((m->len + 1) * 4 > m->cap * 3) {
		struct idmap old = *m;
		size_t ncap = old.cap ? old.cap * 2 : 64;

		m->keys = malloc(ncap * sizeof(*m->keys));
		m->vals = malloc(ncap * sizeof(*m->vals));
		m->used = calloc(ncap, 1);
		if (!m->keys || !m->vals || !m->used) {
			free(m->keys);
			free(m->vals);
			free(m->used);
			*m = old;
			return -ENOMEM;
		}
		m->cap = ncap;
		m->len = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.used[i])
				put_raw(m, old.keys[i], old.vals[i]);
		idmap_free(&old);
	}
	put_raw(m, key, val);
	return 0;
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	m->keys = NULL;
	m->vals = NULL;
	m->used = NULL;
	m->cap = m->len = 0;
}
