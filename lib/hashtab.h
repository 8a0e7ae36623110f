/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one hash table: open addressing with linear probing over a power-of-
 * two array of entries stored inline, typed by a macro that generates
 * static inline functions, so that hashing and matching inline into the
 * hot paths (a function pointer per probe would not).
 *
 *   HASHTAB_DEFINE(name, entry_t, key_t, entry_hash, key_hash, match)
 *
 * defines struct name and name_find(), name_find_hashed(), name_upsert(),
 * name_insert_hashed(), name_reserve(), name_prefetch(), name_clear(),
 * name_free().  Several
 * function sets may share one table type (one struct model_index, looked up
 * by file, by function...): HASHTAB_STRUCT(name, entry_t) declares the type,
 * and HASHTAB_FUNCS(prefix, struct name, entry_t, key_t, ...) the functions,
 * where
 *
 *   uint64_t entry_hash(const entry_t *e)    the hash of a stored entry
 *   uint64_t key_hash(const key_t *k)        the hash of a key looked up
 *   bool match(const entry_t *e, const key_t *k)
 *
 * and equal keys must hash alike.  A key type may carry context (a pointer
 * to the arrays an id indexes), and an entry may keep its full hash where
 * recomputing it needs that context.
 *
 * A control byte per slot holds 0 (empty) or 0x80 | 7 bits of the hash, so
 * that a probe reads match() only when those bits agree.  Hashes should be
 * well mixed (hash_mix64()): the slot is taken from the low bits, the
 * control bits from the high ones (lib/hashmix.h has the one mixer and
 * the helpers that hash words, bytes and strings with it).  The table grows
 * at 3/4 full.  Entries are never removed one by one (name_clear() empties
 * the table); a value may be replaced in place.
 *
 * Iterate with HASHTAB_FOR_EACH(table, entry pointer).
 *
 * Hot paths whose tables are far larger than the cache can hide the misses:
 * name_prefetch(t, h) starts loading the control byte and the entry where
 * hash h is looked for first, some work before the lookup (the table must
 * not grow in between for the prefetch to be of use: reserve first).
 */
#ifndef COLLECTOR_HASHTAB_H
#define COLLECTOR_HASHTAB_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hashmix.h"

#define HASHTAB_MIN_CAP 16

static inline uint8_t hashtab_ctrl(uint64_t h)
{
	return 0x80 | (uint8_t)(h >> 57);
}

#define HASHTAB_FOR_EACH(t, e)                                                     \
	for (size_t _ht_i = 0; _ht_i < (t)->cap; _ht_i++)                          \
		if ((t)->ctrl[_ht_i] && ((e) = &(t)->entries[_ht_i], 1))

#define HASHTAB_STRUCT(name, entry_t)                                              \
	struct name {                                                              \
		entry_t *entries;                                                  \
		uint8_t *ctrl;                                                     \
		size_t cap, len;                                                   \
	}

#define HASHTAB_DEFINE(name, entry_t, key_t, entry_hash, key_hash, match)          \
	HASHTAB_STRUCT(name, entry_t);                                             \
	HASHTAB_FUNCS(name, struct name, entry_t, key_t, entry_hash, key_hash, match)

#define HASHTAB_FUNCS(name, table_t, entry_t, key_t, entry_hash, key_hash, match)  \
	/* The entry of key k (whose hash is h), or NULL. */                       \
	static inline __attribute__((unused)) entry_t *                            \
	name##_find_hashed(const table_t *t, uint64_t h, const key_t *k)       \
	{                                                                          \
		size_t mask, i;                                                    \
		uint8_t c = hashtab_ctrl(h);                                       \
                                                                                   \
		if (!t->cap)                                                       \
			return NULL;                                               \
		mask = t->cap - 1;                                                 \
		for (i = h & mask; t->ctrl[i]; i = (i + 1) & mask)                 \
			if (t->ctrl[i] == c && match(&t->entries[i], k))           \
				return &t->entries[i];                             \
		return NULL;                                                       \
	}                                                                          \
                                                                                   \
	static inline __attribute__((unused)) entry_t *                            \
	name##_find(const table_t *t, const key_t *k)                          \
	{                                                                          \
		return name##_find_hashed(t, key_hash(k), k);                      \
	}                                                                          \
                                                                                   \
	/* A free slot for hash h in a table with room. */                         \
	static inline size_t name##_slot_(const table_t *t, uint64_t h)        \
	{                                                                          \
		size_t mask = t->cap - 1, i;                                       \
                                                                                   \
		for (i = h & mask; t->ctrl[i]; i = (i + 1) & mask)                 \
			;                                                          \
		return i;                                                          \
	}                                                                          \
                                                                                   \
	/* Starts loading the first slot hash h probes (nothing happens to the \
	 * table). */                                                              \
	static inline __attribute__((unused)) void                                 \
	name##_prefetch(const table_t *t, uint64_t h)                          \
	{                                                                          \
		size_t i;                                                          \
                                                                                   \
		if (!t->cap)                                                       \
			return;                                                    \
		i = h & (t->cap - 1);                                              \
		__builtin_prefetch(&t->ctrl[i]);                                   \
		__builtin_prefetch(&t->entries[i]);                                \
	}                                                                          \
                                                                                   \
	/* Room for n entries without growing: 0 or -ENOMEM (the table is      \
	 * then unchanged). */                                                     \
	static inline __attribute__((unused)) int                                  \
	name##_reserve(table_t *t, size_t n)                                   \
	{                                                                          \
		size_t ncap = t->cap ? t->cap : HASHTAB_MIN_CAP;                   \
		table_t old = *t;                                              \
                                                                                   \
		while (n * 4 > ncap * 3)                                           \
			ncap *= 2;                                                 \
		if (ncap == t->cap)                                                \
			return 0;                                                  \
		t->entries = malloc(ncap * sizeof(entry_t));                       \
		t->ctrl = calloc(ncap, 1);                                         \
		if (!t->entries || !t->ctrl) {                                     \
			free(t->entries);                                          \
			free(t->ctrl);                                             \
			*t = old;                                                  \
			return -ENOMEM;                                            \
		}                                                                  \
		t->cap = ncap;                                                     \
		for (size_t j = 0; j < old.cap; j++) {                             \
			uint64_t h;                                                \
			size_t i;                                                  \
                                                                                   \
			if (!old.ctrl[j])                                          \
				continue;                                          \
			h = entry_hash(&old.entries[j]);                           \
			i = name##_slot_(t, h);                                    \
			t->ctrl[i] = old.ctrl[j];                                  \
			t->entries[i] = old.entries[j];                            \
		}                                                                  \
		free(old.entries);                                                 \
		free(old.ctrl);                                                    \
		return 0;                                                          \
	}                                                                          \
                                                                                   \
	/* A new zeroed entry for hash h, whose key the caller knows is not in \
	 * the table and stores in it at once; NULL on ENOMEM. */                  \
	static inline __attribute__((unused)) entry_t *                            \
	name##_insert_hashed(table_t *t, uint64_t h)                           \
	{                                                                          \
		size_t i;                                                          \
                                                                                   \
		if ((t->len + 1) * 4 > t->cap * 3 && name##_reserve(t, t->len + 1)) \
			return NULL;                                               \
		i = name##_slot_(t, h);                                            \
		t->ctrl[i] = hashtab_ctrl(h);                                      \
		t->len++;                                                          \
		memset(&t->entries[i], 0, sizeof(entry_t));                        \
		return &t->entries[i];                                             \
	}                                                                          \
                                                                                   \
	/* The entry of k; a new zeroed one, whose key the caller then stores, \
	 * when absent (*fresh says which).  NULL on ENOMEM.  One probe: with  \
	 * no removals, the first empty slot is where k would be. */              \
	static inline __attribute__((unused)) entry_t *                            \
	name##_upsert(table_t *t, const key_t *k, bool *fresh)                     \
	{                                                                          \
		uint64_t h = key_hash(k);                                          \
		uint8_t c = hashtab_ctrl(h);                                       \
		size_t mask, i;                                                    \
                                                                                   \
		*fresh = false;                                                    \
		if ((t->len + 1) * 4 > t->cap * 3 && name##_reserve(t, t->len + 1)) \
			return NULL;                                               \
		mask = t->cap - 1;                                                 \
		for (i = h & mask; t->ctrl[i]; i = (i + 1) & mask)                 \
			if (t->ctrl[i] == c && match(&t->entries[i], k))           \
				return &t->entries[i];                             \
		*fresh = true;                                                     \
		t->ctrl[i] = c;                                                    \
		t->len++;                                                          \
		memset(&t->entries[i], 0, sizeof(entry_t));                        \
		return &t->entries[i];                                             \
	}                                                                          \
                                                                                   \
	static inline __attribute__((unused)) void name##_free(table_t *t)     \
	{                                                                          \
		free(t->entries);                                                  \
		free(t->ctrl);                                                     \
		memset(t, 0, sizeof(*t));                                          \
	}                                                                          \
                                                                                   \
	/* Empties the table and keeps its memory (a cache that starts over    \
	 * rather than grow past a bound). */                                      \
	static inline __attribute__((unused)) void name##_clear(table_t *t)    \
	{                                                                          \
		if (t->cap)                                                        \
			memset(t->ctrl, 0, t->cap);                                \
		t->len = 0;                                                        \
	}

#endif /* COLLECTOR_HASHTAB_H */
