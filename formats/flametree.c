// SPDX-License-Identifier: GPL-2.0
/* The samples' calling-context tree by frame names (flametree.h). */
#include "formats/flametree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"

/* Samples per (process name, model stack): a stack is expanded and walked
 * down the tree once, not once per sample. */
struct stack_count {
	uint32_t pname;
	uint32_t stack;
	uint64_t count;
};

struct stack_counts {
	struct stack_count *items; /* a MODEL_VEC */
	size_t len, cap;
};

/* What a sample counts for in the tree: 1, or for an aggregated event
 * (--off-cpu) its weight in µs (at least 1). */
static uint64_t sample_units(const struct model *m, const struct model_sample *s)
{
	uint64_t us;

	if (!model_event(m, s->event)->aggregated)
		return 1;
	us = s->weight / 1000;
	return us ? us : 1;
}

static int count_stacks(struct flametree *t, const struct model *m, struct stack_counts *counts)
{
	uint32_t *pname = malloc((m->processes.len + 1) * sizeof(*pname));
	struct idmap index = { 0 };
	long unknown;
	int err = 0;

	unknown = frame_table_name(&t->frames, "[unknown process]", FRAME_PROCESS);
	if (!pname || unknown < 0) {
		free(pname);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->processes.len; i++) {
		const char *comm = m->processes.items[i].comm;
		long id = frame_table_name(&t->frames, *comm ? comm : "[unknown process]",
					   FRAME_PROCESS);

		if (id < 0) {
			err = (int)id;
			goto out;
		}
		pname[i] = (uint32_t)id;
	}
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		uint32_t p = s->process < m->processes.len ? pname[s->process] : (uint32_t)unknown;
		uint32_t stack = s->stack < m->stacks.len ? s->stack : MODEL_NONE;
		bool fresh;
		long id = frames_group_id(&index, (uint64_t)p << 32 | stack, (uint32_t)counts->len,
					  &fresh);

		if (id < 0) {
			err = (int)id;
			goto out;
		}
		if (fresh) {
			struct stack_count *c = MODEL_VEC_PUSH(*counts);

			c->pname = p;
			c->stack = stack;
		}
		/* a sum made in the kernel (off-cpu) counts what it holds, in
		 * µs as off-CPU flame graphs do, not as one sample */
		counts->items[id].count += sample_units(m, s);
	}
out:
	idmap_free(&index);
	free(pname);
	return err;
}

static long child_of(struct flametree *t, struct idmap *children, uint32_t parent, uint32_t name)
{
	struct flame_node *n;
	bool fresh;
	long id = frames_group_id(children, (uint64_t)parent << 32 | name, (uint32_t)t->nodes.len,
				  &fresh);

	if (id < 0 || !fresh)
		return id;
	n = MODEL_VEC_PUSH(t->nodes);
	n->name = name;
	n->parent = parent;
	n->first_child = n->next_sibling = MODEL_NONE;
	n->depth = t->nodes.items[parent].depth + 1;
	if (n->depth > t->max_depth)
		t->max_depth = n->depth;
	return id;
}

/* Sorting children: by parent, then by the rank of their names. */
static int cmp_name_id(const void *a, const void *b, void *arg)
{
	const struct frame_name *names = arg;
	const struct frame_name *x = &names[*(const uint32_t *)a], *y = &names[*(const uint32_t *)b];
	int c = strcmp(x->text, y->text);

	return c ? c : (x->kind > y->kind) - (x->kind < y->kind);
}

struct link_ctx {
	const struct flame_node *nodes;
	const uint32_t *rank;
};

static int cmp_child(const void *a, const void *b, void *arg)
{
	const struct link_ctx *c = arg;
	const struct flame_node *x = &c->nodes[*(const uint32_t *)a];
	const struct flame_node *y = &c->nodes[*(const uint32_t *)b];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return (c->rank[x->name] > c->rank[y->name]) - (c->rank[x->name] < c->rank[y->name]);
}

static int link_children(struct flametree *t)
{
	size_t n_names = t->frames.names.len, n = t->nodes.len;
	uint32_t *by_name = malloc((n_names + 1) * sizeof(*by_name));
	uint32_t *rank = malloc((n_names + 1) * sizeof(*rank));
	uint32_t *order = malloc((n + 1) * sizeof(*order));
	struct link_ctx ctx = { t->nodes.items, rank };

	if (!by_name || !rank || !order) {
		free(by_name);
		free(rank);
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_names; i++)
		by_name[i] = (uint32_t)i;
	qsort_r(by_name, n_names, sizeof(*by_name), cmp_name_id, t->frames.names.items);
	for (size_t i = 0; i < n_names; i++)
		rank[by_name[i]] = (uint32_t)i;
	for (size_t i = 1; i < n; i++)
		order[i - 1] = (uint32_t)i;
	qsort_r(order, n - 1, sizeof(*order), cmp_child, &ctx);
	/* backwards, so that each child is pushed in front of its later siblings */
	for (size_t i = n - 1; i-- > 0;) {
		struct flame_node *c = &t->nodes.items[order[i]];
		struct flame_node *p = &t->nodes.items[c->parent];

		c->next_sibling = p->first_child;
		p->first_child = order[i];
	}
	free(by_name);
	free(rank);
	free(order);
	return 0;
}

int flametree_build(struct flametree *t, const struct model *m)
{
	struct stack_counts counts = { 0 };
	struct idmap children = { 0 };
	size_t cap = frame_table_max_depth(m) + 1;
	uint32_t *path = malloc(cap * sizeof(*path));
	struct flame_node *root;
	int err;

	memset(t, 0, sizeof(*t));
	err = frame_table_init(&t->frames, m);
	if (err || !path) {
		free(path);
		return err ? err : -ENOMEM;
	}
	root = MODEL_VEC_PUSH(t->nodes);
	root->parent = root->first_child = root->next_sibling = MODEL_NONE;
	root->name = MODEL_NONE;
	err = count_stacks(t, m, &counts);
	for (size_t i = 0; !err && i < counts.len; i++) {
		const struct stack_count *c = &counts.items[i];
		long n = frame_table_stack(&t->frames, c->stack, path, cap);
		long node;

		t->nodes.items[FLAMETREE_ROOT].total += c->count;
		node = n < 0 ? n : child_of(t, &children, FLAMETREE_ROOT, c->pname);
		for (long k = 0; node >= 0; k++) {
			t->nodes.items[node].total += c->count;
			if (k == n) {
				t->nodes.items[node].self += c->count;
				break;
			}
			node = child_of(t, &children, (uint32_t)node, t->frames.frames.items[path[k]].name);
		}
		if (node < 0)
			err = (int)node;
	}
	if (!err)
		err = link_children(t);
	idmap_free(&children);
	free(counts.items);
	free(path);
	if (err)
		flametree_free(t);
	return err;
}

void flametree_free(struct flametree *t)
{
	frame_table_free(&t->frames);
	free(t->nodes.items);
	memset(t, 0, sizeof(*t));
}
