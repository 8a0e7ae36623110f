// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit writer: the context tree built from the model's stacks (the
 * values are propagated through it in hpctoolkit_values.c).  Built once,
 * shared by meta.db, profile.db, cct.db and trace.db.
 *
 * A stack (leaf first) becomes, from its outermost frame in:
 *
 *   entry point (main thread / application thread / unknown entry when the
 *   stack is truncated, so that no partial path poses as complete)
 *     -call-> function F                       (out-of-line function)
 *       -lexical-> line (call_file:call_line)  for each inlined call, then
 *         -inlined-> function G                (the inlined function)
 *       -lexical-> line (file:line)            the call site (return address - 1)
 *         -call-> the next frame's function ...
 *   and for the sampled instruction (frame 0):
 *       -lexical-> line (file:line) -lexical-> instruction (module+offset)
 *
 * A callee hangs below the source line of its call site: the spec says the
 * parent of a call is "the source-level location of the call", hpcprof's
 * databases do so, and hpcviewer shows a call site only for a function
 * whose parent is a line (else it makes one up).  A call site without a
 * source line keeps its instruction context as the parent instead, and a
 * frame with no known function is an instruction context reached by a call,
 * as hpcprof writes frames without structure (the `nostruct` fixture).
 * Kernel frames (innermost) follow the user frames, under their own load
 * module.  Loop contexts need loop analysis of the binary (hpcstruct);
 * there are none.
 */
#include "formats/hpctoolkit/hpctoolkit_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- context interning ------------------------------------------------- */

static uint64_t node_hash(const struct hk_node *n)
{
	uint64_t h = hash_word(0, n->parent);

	h = hash_word(h, (uint64_t)n->kind << 16 | (uint64_t)n->relation << 8 | n->entry);
	h = hash_word(h, n->function);
	h = hash_word(h, (uint64_t)n->file << 32 | n->line);
	h = hash_word(h, n->image);
	return hash_finish(hash_word(h, n->addr));
}

/* The index again after hk_tree_build() dropped it (a context needed
 * later, by trace.db's walk): every node but the root. */
static int rebuild_index(struct hk_tree *t)
{
	if (hk_node_index_reserve(&t->index, t->n_nodes))
		return -ENOMEM;
	for (size_t i = 1; i < t->n_nodes; i++) {
		uint64_t h = node_hash(&t->nodes[i]);

		*hk_node_index_insert_hashed(&t->index, h) = (struct hk_node_slot){ h, i };
	}
	return 0;
}

/* Returns the id of the node equal to *key, adding it if new; 0 on error. */
static uint32_t intern_node(struct hk_tree *t, const struct hk_node *key)
{
	struct hk_node_key k = { key, node_hash(key), t->nodes };
	struct hk_node_slot *e;

	if (!t->index.cap && t->n_nodes > 1 && rebuild_index(t))
		return 0;
	e = hk_node_index_find_hashed(&t->index, k.hash, &k);
	if (e)
		return e->id;
	if (t->n_nodes == t->cap_nodes) {
		size_t cap = t->cap_nodes * 2;
		struct hk_node *n;

		if (t->n_nodes >= UINT32_MAX - 1)
			return 0;
		n = realloc(t->nodes, cap * sizeof(*n));
		if (!n)
			return 0;
		t->nodes = n;
		t->cap_nodes = cap;
	}
	e = hk_node_index_insert_hashed(&t->index, k.hash);
	if (!e)
		return 0;
	t->nodes[t->n_nodes] = *key;
	*e = (struct hk_node_slot){ k.hash, (uint32_t)t->n_nodes };
	return t->n_nodes++;
}

static uint32_t child(struct hk_tree *t, uint32_t parent, enum hk_node_kind kind,
		      uint8_t relation, uint32_t function, uint32_t file, uint32_t line,
		      uint32_t image, uint64_t addr)
{
	struct hk_node key = {
		.parent = parent, .kind = kind, .relation = relation, .function = function,
		.file = file, .line = line, .image = image, .addr = addr,
	};

	if (!parent)
		return 0;
	return intern_node(t, &key);
}

static uint32_t entry_node(struct hk_tree *t, unsigned entry)
{
	struct hk_node key = {
		.parent = 0, .kind = HK_NODE_ENTRY, .relation = HK_REL_CALL, .entry = entry,
		.function = MODEL_NONE, .file = MODEL_NONE, .image = MODEL_NONE,
	};

	if (!t->entry_ctx[entry])
		t->entry_ctx[entry] = intern_node(t, &key);
	return t->entry_ctx[entry];
}

/* The contexts of one (valid) location below `cur`, which reached it by a
 * call; returns the context its callee hangs from (or, for the sampled
 * instruction, its instruction context), or 0 when out of memory. */
static uint32_t add_frame(struct hk_tree *t, uint32_t cur, uint32_t loc_id, bool sampled)
{
	const struct model *m = t->m;
	const struct model_location *loc = &m->locations.items[loc_id];

	if (loc->function >= m->functions.len)
		return child(t, cur, HK_NODE_INSN, HK_REL_CALL, MODEL_NONE, MODEL_NONE, 0,
			     loc->image, loc->addr);
	cur = child(t, cur, HK_NODE_FUNCTION, HK_REL_CALL, loc->function, MODEL_NONE, 0,
		    MODEL_NONE, 0);
	if ((uint64_t)loc->inlines + loc->n_inlines <= m->inlines.len) {
		const struct model_inline *inl = model_location_inlines(m, loc);

		for (uint32_t i = 0; i < loc->n_inlines; i++) {
			if (inl[i].function >= m->functions.len)
				continue;
			if (inl[i].call_file < m->files.len)
				cur = child(t, cur, HK_NODE_LINE, HK_REL_LEXICAL, MODEL_NONE,
					    inl[i].call_file, inl[i].call_line, MODEL_NONE, 0);
			cur = child(t, cur, HK_NODE_FUNCTION, HK_REL_INLINED, inl[i].function,
				    MODEL_NONE, 0, MODEL_NONE, 0);
		}
	}
	if (loc->file < m->files.len) {
		cur = child(t, cur, HK_NODE_LINE, HK_REL_LEXICAL, MODEL_NONE, loc->file, loc->line,
			    MODEL_NONE, 0);
		if (!sampled)
			return cur;
	}
	return child(t, cur, HK_NODE_INSN, HK_REL_LEXICAL, MODEL_NONE, MODEL_NONE, 0, loc->image,
		     loc->addr);
}

/*
 * add_frame() for a frame that is not the sampled one, remembered by
 * (context, location): stacks share their outer frames, and one lookup
 * here replaces the two to four node lookups of the frame's contexts.
 * Returns 0 when out of memory.
 */
static uint32_t call_frame(struct hk_tree *t, uint32_t cur, uint32_t loc_id)
{
	uint64_t key = (uint64_t)cur << 32 | loc_id;
	uint32_t ctx = idmap_get(&t->memo, key);

	if (ctx != UINT32_MAX)
		return ctx;
	ctx = add_frame(t, cur, loc_id, false);
	if (ctx && idmap_put(&t->memo, key, ctx))
		return 0;
	return ctx;
}

static uint32_t build_path(struct hk_tree *t, uint32_t stack_id, unsigned entry)
{
	const struct model *m = t->m;
	const struct model_stack *s = &m->stacks.items[stack_id];
	const uint32_t *frames;
	uint32_t cur = entry_node(t, entry);

	if ((uint64_t)s->frames + s->n_frames > m->frames.len || s->n_kernel > s->n_frames)
		return cur;
	frames = model_stack_frames(m, s);
	/* outermost first: user frames, then the kernel frames below them */
	for (uint32_t i = s->n_frames; i-- > 0 && cur;)
		if (frames[i] < m->locations.len) /* skip a bad id, keep the rest */
			cur = i ? call_frame(t, cur, frames[i]) : add_frame(t, cur, frames[i], true);
	return cur;
}

uint32_t hk_sample_ctx(struct hk_tree *t, const struct model_sample *smp)
{
	const struct model *m = t->m;
	const struct model_stack *s = NULL;
	unsigned entry;
	size_t slot;

	if (smp->thread >= m->threads.len)
		return 0;
	if (smp->stack < m->stacks.len)
		s = &m->stacks.items[smp->stack];
	entry = !s || s->truncated ? HK_ENTRY_UNKNOWN : t->thread_entry[smp->thread];
	if (!s)
		return entry_node(t, entry);
	slot = (size_t)smp->stack * HK_N_ENTRIES + entry;
	if (!t->leaf[slot])
		t->leaf[slot] = build_path(t, smp->stack, entry);
	return t->leaf[slot];
}

static int build_children(struct hk_tree *t)
{
	size_t nn = t->n_nodes;
	uint32_t *fill;

	t->child_start = calloc(nn + 1, sizeof(uint32_t));
	t->children = malloc((nn + 1) * sizeof(uint32_t));
	fill = calloc(nn + 1, sizeof(uint32_t));
	if (!t->child_start || !t->children || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 1; i < nn; i++)
		t->child_start[t->nodes[i].parent + 1]++;
	for (size_t i = 0; i < nn; i++)
		t->child_start[i + 1] += t->child_start[i];
	/* ids increase, so each child list comes out sorted by ctxId */
	for (size_t i = 1; i < nn; i++) {
		uint32_t p = t->nodes[i].parent;

		t->children[t->child_start[p] + fill[p]++] = i;
	}
	free(fill);
	return 0;
}

/* The indexes serve building the tree, done when every sample has its
 * context; should a new path be needed later, intern_node() and
 * call_frame() rebuild them. */
static void drop_indexes(struct hk_tree *t)
{
	hk_node_index_free(&t->index);
	idmap_free(&t->memo);
}

int hk_tree_build(struct hk_tree *t, const struct model *m, bool draft)
{
	struct hk_leaf_weight *lw = NULL;
	size_t n_lw = 0;
	int err;

	memset(t, 0, sizeof(*t));
	t->m = m;
	t->draft = draft;
	t->cap_nodes = 1024;
	t->nodes = calloc(t->cap_nodes, sizeof(*t->nodes));
	t->n_stacks = m->stacks.len;
	t->leaf = calloc(m->stacks.len * HK_N_ENTRIES + 1, sizeof(*t->leaf));
	if (!t->nodes || !t->leaf)
		return -ENOMEM;
	t->nodes[0] = (struct hk_node){ .kind = HK_NODE_ROOT, .function = MODEL_NONE,
					.file = MODEL_NONE, .image = MODEL_NONE };
	t->n_nodes = 1;
	hk_list_metrics(t);
	err = hk_order_threads(t);
	if (!err)
		err = hk_collect_leaves(t, &lw, &n_lw);
	drop_indexes(t);
	if (!err)
		err = hk_propagate(t, lw, n_lw);
	if (!err)
		err = build_children(t);
	if (!err)
		err = hk_order_values(t);
	free(lw);
	return err;
}

void hk_tree_free(struct hk_tree *t)
{
	free(t->nodes);
	hk_node_index_free(&t->index);
	idmap_free(&t->memo);
	free(t->leaf);
	free(t->threads);
	free(t->thread_prof);
	free(t->thread_entry);
	free(t->values);
	free(t->ns);
	free(t->ctx_first);
	free(t->ctx_values);
	free(t->child_start);
	free(t->children);
	memset(t, 0, sizeof(*t));
}
