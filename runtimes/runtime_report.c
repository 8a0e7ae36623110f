// SPDX-License-Identifier: GPL-2.0
/* The summary's table of a runtime's functions (runtime_report.h). */
#include "runtimes/runtime_report.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Functions listed, at most. */
#define TOP_FUNCTIONS 20
/* Functions of a stack looked at for their totals. */
#define MAX_SEEN 256

static bool in_image(const struct model *m, uint32_t loc, const char *image)
{
	const struct model_image *img = &m->images.items[m->locations.items[loc].image];

	return img->kind == MODEL_IMAGE_RUNTIME && img->path && !strcmp(img->path, image);
}

static struct runtime_entry *entry_of(struct runtime_counts *c, uint64_t key)
{
	uint32_t e = idmap_get(&c->index, key);

	if (e == UINT32_MAX) {
		struct runtime_entry *ne = MODEL_VEC_PUSH(c->entries);

		ne->key = key;
		e = (uint32_t)(c->entries.len - 1);
		idmap_put(&c->index, key, e);
	}
	return &c->entries.items[e];
}

/* key counted in the stack's total once */
static void add_total(struct runtime_counts *c, uint64_t key, uint64_t n, uint64_t *seen,
		      size_t *n_seen)
{
	for (size_t k = 0; k < *n_seen; k++)
		if (seen[k] == key)
			return;
	entry_of(c, key)->total += n;
	if (*n_seen < MAX_SEEN)
		seen[(*n_seen)++] = key;
}

/* One stack's frames of the image, n samples: each location's functions,
 * its innermost inlined one first. */
static void count_stack(struct runtime_counts *c, const struct model *m,
			const struct model_stack *s, uint64_t n, const char *image)
{
	const uint32_t *frames = model_stack_frames(m, s);
	uint64_t seen[MAX_SEEN];
	size_t n_seen = 0;
	bool inner = true;

	for (uint32_t f = 0; f < s->n_frames; f++) {
		const struct model_location *l = &m->locations.items[frames[f]];
		uint64_t key = l->function != MODEL_NONE ? l->function : (1ULL << 32 | frames[f]);

		if (!in_image(m, frames[f], image))
			continue;
		for (uint32_t k = l->n_inlines; k > 0; k--) {
			uint64_t ik = m->inlines.items[l->inlines + k - 1].function;

			if (inner) {
				entry_of(c, ik)->self += n;
				inner = false;
			}
			add_total(c, ik, n, seen, &n_seen);
		}
		if (inner) {
			entry_of(c, key)->self += n;
			inner = false;
		}
		add_total(c, key, n, seen, &n_seen);
	}
	if (!inner)
		c->with_frames += n;
}

int runtime_counts_of(const struct model *m, const char *image, struct runtime_counts *c)
{
	uint64_t *per_stack = calloc(m->stacks.len ? m->stacks.len : 1, sizeof(*per_stack));

	memset(c, 0, sizeof(*c));
	if (!per_stack)
		return -1;
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *sm = &m->samples.items[i];

		if (model_event_samples(model_event(m, sm->event))) {
			per_stack[sm->stack]++;
			c->samples++;
		}
	}
	for (size_t i = 0; i < m->stacks.len; i++)
		if (per_stack[i])
			count_stack(c, m, &m->stacks.items[i], per_stack[i], image);
	free(per_stack);
	return 0;
}

void runtime_counts_free(struct runtime_counts *c)
{
	free(c->entries.items);
	idmap_free(&c->index);
	memset(c, 0, sizeof(*c));
}

static int by_self(const void *a, const void *b)
{
	const struct runtime_entry *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

void runtime_counts_print(FILE *out, const struct model *m, struct runtime_counts *c,
			  const char *image, const char *heading, const char *column, int width)
{
	char name[256];

	if (!c->entries.len || !c->samples)
		return;
	qsort(c->entries.items, c->entries.len, sizeof(*c->entries.items), by_self);
	fprintf(out, "\n%s\n", heading);
	fprintf(out, "  %6s %10s %7s  %-*s %s\n", "self%", "samples", "total%", width, column,
		"file:line");
	for (size_t i = 0; i < c->entries.len && i < TOP_FUNCTIONS; i++) {
		const struct runtime_entry *e = &c->entries.items[i];
		const struct model_function *fn = e->key >> 32 ? NULL : &m->functions.items[e->key];
		const char *file = fn && fn->file != MODEL_NONE ? m->files.items[fn->file].path : "?";

		/* a frame not named: "[unknown]" and its key */
		if (fn)
			snprintf(name, sizeof(name), "%s", fn->name);
		else
			snprintf(name, sizeof(name), "[unknown] %s+0x%llx", image,
				 (unsigned long long)m->locations.items[(uint32_t)e->key].addr);
		fprintf(out, "  %5.1f%% %10llu %6.1f%%  %-*s %s:%u\n", 100.0 * e->self / c->samples,
			(unsigned long long)e->self, 100.0 * e->total / c->samples, width, name, file,
			fn ? fn->line : 0);
	}
}
