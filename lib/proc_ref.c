// SPDX-License-Identifier: GPL-2.0
/* A part's entries of processes, by the words in the records (lib/proc_ref.h). */
#include "lib/proc_ref.h"

#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"

void *proc_entry_new(struct proc_entries *e, size_t size, const struct proc_ref *ref)
{
	uint32_t word;
	void *p;

	if (e->n_free) {
		word = e->free[--e->n_free];
	} else {
		if (array_grow(&e->items, &e->cap, e->n, size, 16))
			return NULL;
		word = (uint32_t)++e->n;
	}
	p = proc_entry(e, size, word);
	memset(p, 0, size);
	*ref->slot = word;
	return p;
}

void proc_entry_drop(struct proc_entries *e, size_t size, uint32_t word)
{
	void *p = proc_entry(e, size, word);

	if (!p)
		return;
	memset(p, 0, size);
	/* without memory the entry is not reused: it stays, zeroed */
	if (!array_grow((void **)&e->free, &e->cap_free, e->n_free, sizeof(*e->free), 16))
		e->free[e->n_free++] = word;
}

void proc_entries_free(struct proc_entries *e)
{
	free(e->items);
	free(e->free);
	memset(e, 0, sizeof(*e));
}
