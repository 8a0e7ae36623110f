/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process as an engine part below decode/ is told of it (the unwinder,
 * each language runtime): its pid and the part's own word in decode/'s one
 * record of the process (the tracker's: one for a process's exec, a new
 * one at its next, kept after its exit for the stacks decoded later).  The
 * part keeps what it has of the process there, an index of its own plus
 * one, instead of a table of its own keyed by pid: found without a lookup,
 * told apart from a later process that takes the same pid, and dropped
 * with the record.
 */
#ifndef COLLECTOR_LIB_PROC_REF_H
#define COLLECTOR_LIB_PROC_REF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_ref {
	pid_t pid;
	uint32_t *slot;           /* 0 until the part sets it; never NULL */
};

/* A part's entries of processes, addressed by the words it keeps in the
 * records: an array of `size`-byte entries, entry word - 1, and the words
 * of dropped entries, reused first. */
struct proc_entries {
	void *items;
	size_t n, cap;
	uint32_t *free;
	size_t n_free, cap_free;
};

/* The entry of word (0: none), or NULL. */
static inline void *proc_entry(const struct proc_entries *e, size_t size, uint32_t word)
{
	return word && word <= e->n ? (char *)e->items + (word - 1) * size : NULL;
}

/* A new entry for ref, zeroed, its word set in ref's slot: a dropped one's,
 * else one more.  NULL without memory (the slot left as it was). */
void *proc_entry_new(struct proc_entries *e, size_t size, const struct proc_ref *ref);
/* Entry word (what it held freed by the caller) zeroed, to be reused. */
void proc_entry_drop(struct proc_entries *e, size_t size, uint32_t word);
/* Frees the arrays (what the entries hold freed by the caller). */
void proc_entries_free(struct proc_entries *e);

#endif /* COLLECTOR_LIB_PROC_REF_H */
