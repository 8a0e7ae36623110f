// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit writer: the context tree built from the model's stacks, and
 * the per-thread metric values propagated through it.  Built once, shared by
 * meta.db, profile.db, cct.db and trace.db.
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
 *
 * Values: CPU time in ns per (thread, context) for the four scopes:
 *   point      the samples whose leaf is the context;
 *   function   point + the function values of the children whose relation
 *              is lexical (propagation bit 0 set): cost exclusive to the
 *              function, excluding calls and inlined calls;
 *   lex_aware  hpcprof's custom scope; equal to function without loops;
 *   execution  point + all children's execution values (inclusive).
 * Integers are summed (exact) and converted to seconds when written.
 */
#include "formats/hpctoolkit/hpctoolkit_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[HK_N_KINDS] = {
	"SUMMARY", "NODE", "RANK", "THREAD", "GPUDEVICE", "GPUCONTEXT", "GPUSTREAM", "CORE",
};
static const char *const scope_names[HK_N_SCOPES] = {
	"point", "function", "lex_aware", "execution",
};
static const char *const entry_names[HK_N_ENTRIES] = {
	"unknown entry", "main thread", "application thread",
};

const char *hk_kind_name(unsigned kind)
{
	return kind < HK_N_KINDS ? kind_names[kind] : NULL;
}

const char *hk_scope_name(unsigned scope)
{
	return scope < HK_N_SCOPES ? scope_names[scope] : NULL;
}

const char *hk_entry_name(unsigned entry)
{
	return entry < HK_N_ENTRIES ? entry_names[entry] : NULL;
}

/* ---- byte buffer -------------------------------------------------------- */

void hk_buf_free(struct hk_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static bool buf_reserve(struct hk_buf *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->err)
		return false;
	if (b->len + n <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	/* no zeroing here: every append writes its bytes, and zeroing the
	 * spare capacity would make all of it resident */
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

size_t hk_buf_put(struct hk_buf *b, const void *data, size_t n)
{
	size_t off = b->len;

	if (!buf_reserve(b, n))
		return 0;
	if (data)
		memcpy(b->p + off, data, n);
	else
		memset(b->p + off, 0, n);
	b->len += n;
	return off;
}

size_t hk_buf_zero(struct hk_buf *b, size_t n)
{
	return hk_buf_put(b, NULL, n);
}

void hk_buf_align(struct hk_buf *b, size_t a)
{
	size_t pad = (a - b->len % a) % a;

	hk_buf_zero(b, pad);
}

size_t hk_buf_str(struct hk_buf *b, const char *s)
{
	return hk_buf_put(b, s, strlen(s) + 1);
}

void hk_buf_set(struct hk_buf *b, size_t off, const void *data, size_t n)
{
	if (!b->err && off + n <= b->len)
		memcpy(b->p + off, data, n);
}

void hk_buf_set_u8(struct hk_buf *b, size_t off, uint8_t v)
{
	hk_buf_set(b, off, &v, 1);
}

void hk_buf_set_u16(struct hk_buf *b, size_t off, uint16_t v)
{
	hk_buf_set(b, off, &v, 2);
}

void hk_buf_set_u32(struct hk_buf *b, size_t off, uint32_t v)
{
	hk_buf_set(b, off, &v, 4);
}

void hk_buf_set_u64(struct hk_buf *b, size_t off, uint64_t v)
{
	hk_buf_set(b, off, &v, 8);
}

void hk_buf_set_f64(struct hk_buf *b, size_t off, double v)
{
	hk_buf_set(b, off, &v, 8);
}

void hk_file_header(uint8_t *hdr, const char *format)
{
	memcpy(hdr, HK_MAGIC, 10);
	memcpy(hdr + 10, format, 4);
	hdr[14] = HK_MAJOR;
	hdr[15] = HK_MINOR;
}

/* ---- context interning ------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

static uint64_t node_hash(const struct hk_node *n)
{
	uint64_t h = mix(0, n->parent);

	h = mix(h, (uint64_t)n->kind << 16 | (uint64_t)n->relation << 8 | n->entry);
	h = mix(h, n->function);
	h = mix(h, (uint64_t)n->file << 32 | n->line);
	h = mix(h, n->image);
	return mix(h, n->addr);
}

static bool node_equal(const struct hk_node *a, const struct hk_node *b)
{
	return a->parent == b->parent && a->kind == b->kind && a->relation == b->relation &&
	       a->entry == b->entry && a->function == b->function && a->file == b->file &&
	       a->line == b->line && a->image == b->image && a->addr == b->addr;
}

/*
 * The index holds, per used slot, the node id and the low 32 bits of its
 * hash, which also place it: a probe compares hashes before it reads a
 * node (the nodes are tens of MB, each read a cache miss), and growing
 * the index never reads a node.
 */
#define INDEX_EMPTY UINT64_MAX

static int index_grow(struct hk_tree *t)
{
	size_t cap = t->index_cap ? t->index_cap : 512;
	uint64_t *idx;

	do
		cap *= 2;
	while ((t->n_nodes + 1) * 2 > cap);
	idx = malloc(cap * sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	memset(idx, 0xff, cap * sizeof(*idx));
	if (t->index) {
		for (size_t i = 0; i < t->index_cap; i++) {
			size_t j;

			if (t->index[i] == INDEX_EMPTY)
				continue;
			j = (t->index[i] >> 32) & (cap - 1);
			while (idx[j] != INDEX_EMPTY)
				j = (j + 1) & (cap - 1);
			idx[j] = t->index[i];
		}
	} else {
		/* rebuilt after hk_tree_build() dropped it */
		for (size_t i = 1; i < t->n_nodes; i++) {
			uint64_t h = (uint32_t)node_hash(&t->nodes[i]);
			size_t j = h & (cap - 1);

			while (idx[j] != INDEX_EMPTY)
				j = (j + 1) & (cap - 1);
			idx[j] = h << 32 | i;
		}
	}
	free(t->index);
	t->index = idx;
	t->index_cap = cap;
	return 0;
}

/* Returns the id of the node equal to *key, adding it if new; 0 on error. */
static uint32_t intern_node(struct hk_tree *t, const struct hk_node *key)
{
	uint64_t h;
	size_t j;

	if ((t->n_nodes + 1) * 2 > t->index_cap && index_grow(t) < 0)
		return 0;
	h = (uint32_t)node_hash(key);
	j = h & (t->index_cap - 1);
	while (t->index[j] != INDEX_EMPTY) {
		uint32_t id = (uint32_t)t->index[j];

		if (t->index[j] >> 32 == h && node_equal(&t->nodes[id], key))
			return id;
		j = (j + 1) & (t->index_cap - 1);
	}
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
	t->nodes[t->n_nodes] = *key;
	t->index[j] = h << 32 | t->n_nodes;
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
	struct hk_frame_memo *fm;
	size_t j;

	if ((t->n_memo + 1) * 2 > t->memo_cap) {
		size_t cap = t->memo_cap ? 2 * t->memo_cap : 1024;
		struct hk_frame_memo *nm = malloc(cap * sizeof(*nm));

		if (!nm)
			return 0;
		for (size_t i = 0; i < cap; i++)
			nm[i].ctx = 0;
		for (size_t i = 0; i < t->memo_cap; i++) {
			if (!t->memo[i].ctx)
				continue;
			for (j = mix(0, t->memo[i].key) & (cap - 1); nm[j].ctx; j = (j + 1) & (cap - 1))
				;
			nm[j] = t->memo[i];
		}
		free(t->memo);
		t->memo = nm;
		t->memo_cap = cap;
	}
	for (j = mix(0, key) & (t->memo_cap - 1); t->memo[j].ctx; j = (j + 1) & (t->memo_cap - 1))
		if (t->memo[j].key == key)
			return t->memo[j].ctx;
	fm = &t->memo[j];
	fm->ctx = add_frame(t, cur, loc_id, false);
	fm->key = key;
	t->n_memo += fm->ctx != 0;
	return fm->ctx;
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

/* The entry point of a complete stack of thread th. */
static unsigned thread_entry(const struct model *m, const struct model_thread *th)
{
	if (th->process < m->processes.len && m->processes.items[th->process].pid == th->tid)
		return HK_ENTRY_MAIN;
	return HK_ENTRY_THREAD;
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

/* ---- threads ----------------------------------------------------------- */

static int order_threads(struct hk_tree *t)
{
	const struct model *m = t->m;
	size_t np = m->processes.len, n = 0;
	uint32_t *count = calloc(np + 1, sizeof(*count));
	uint32_t *next = calloc(np + 1, sizeof(*next));
	int err = -ENOMEM;

	t->threads = calloc(m->threads.len + 1, sizeof(*t->threads));
	t->thread_prof = calloc(m->threads.len + 1, sizeof(*t->thread_prof));
	t->thread_entry = calloc(m->threads.len + 1, sizeof(*t->thread_entry));
	if (!count || !next || !t->threads || !t->thread_prof || !t->thread_entry)
		goto out;
	for (size_t i = 0; i < m->threads.len; i++)
		t->thread_entry[i] = thread_entry(m, &m->threads.items[i]);
	/* profiles in (process, thread) order: RANK is the dense index of the
	 * process among those with threads, THREAD the index within it */
	for (size_t i = 0; i < m->threads.len; i++)
		if (m->threads.items[i].process < np)
			count[m->threads.items[i].process]++;
	for (size_t p = 0, pos = 0; p < np; p++) {
		next[p] = pos;
		pos += count[p];
	}
	for (size_t i = 0; i < m->threads.len; i++) {
		uint32_t p = m->threads.items[i].process;

		if (p < np)
			t->threads[next[p]++].thread = i;
		n += p < np;
	}
	t->n_threads = n;
	for (size_t i = 0, rank = 0; i < n;) {
		uint32_t p = m->threads.items[t->threads[i].thread].process, idx = 0;

		for (; i < n && m->threads.items[t->threads[i].thread].process == p; i++) {
			t->threads[i].rank = rank;
			t->threads[i].index = idx++;
			t->thread_prof[t->threads[i].thread] = i + 1;
		}
		rank++;
		t->n_ranks = rank;
	}
	err = 0;
out:
	free(count);
	free(next);
	return err;
}

/* ---- values -------------------------------------------------------------- */

struct leaf_weight {
	uint32_t prof, ctx;
	uint64_t ns;
};

static int cmp_leaf_weight(const void *a, const void *b)
{
	const struct leaf_weight *x = a, *y = b;

	if (x->prof != y->prof)
		return x->prof < y->prof ? -1 : 1;
	return (x->ctx > y->ctx) - (x->ctx < y->ctx);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Sums the sample weights by (profile, leaf context), building the tree as
 * stacks are met.  Linear in distinct (thread, context) pairs. */
#define LEAF_AHEAD 16

static int collect_leaves(struct hk_tree *t, struct leaf_weight **out, size_t *n_out)
{
	const struct model *m = t->m;
	size_t cap = 1024, n = 0;
	struct leaf_weight *tab = NULL, *list = NULL;
	int err = -ENOMEM;

	tab = malloc(cap * sizeof(*tab));
	if (!tab)
		goto out;
	memset(tab, 0xff, cap * sizeof(*tab));
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		uint32_t prof, ctx;
		size_t j;

		/* samples hit stacks and contexts in random order: load a
		 * later sample's stack and leaf, and a nearer one's sum, early */
		if (i + LEAF_AHEAD < m->samples.len) {
			const struct model_sample *a = &m->samples.items[i + LEAF_AHEAD];

			if (a->stack < m->stacks.len) {
				__builtin_prefetch(&m->stacks.items[a->stack]);
				__builtin_prefetch(&t->leaf[(size_t)a->stack * HK_N_ENTRIES]);
			}
			a = &m->samples.items[i + LEAF_AHEAD / 2];
			if (a->stack < m->stacks.len && a->thread < m->threads.len) {
				uint32_t c = t->leaf[(size_t)a->stack * HK_N_ENTRIES +
						     t->thread_entry[a->thread]];

				if (c)
					__builtin_prefetch(&tab[mix(t->thread_prof[a->thread], c) &
								(cap - 1)]);
			}
		}
		if (s->thread >= m->threads.len || !(prof = t->thread_prof[s->thread]))
			continue;
		ctx = hk_sample_ctx(t, s);
		if (!ctx)
			goto out;
		t->total_ns += s->weight_ns;
		t->n_samples++;
		if ((n + 1) * 2 > cap) {
			size_t ncap = cap * 2;
			struct leaf_weight *nt = malloc(ncap * sizeof(*nt));

			if (!nt)
				goto out;
			memset(nt, 0xff, ncap * sizeof(*nt));
			for (size_t k = 0; k < cap; k++) {
				if (tab[k].prof == UINT32_MAX)
					continue;
				j = mix(tab[k].prof, tab[k].ctx) & (ncap - 1);
				while (nt[j].prof != UINT32_MAX)
					j = (j + 1) & (ncap - 1);
				nt[j] = tab[k];
			}
			free(tab);
			tab = nt;
			cap = ncap;
		}
		j = mix(prof, ctx) & (cap - 1);
		while (tab[j].prof != UINT32_MAX && (tab[j].prof != prof || tab[j].ctx != ctx))
			j = (j + 1) & (cap - 1);
		if (tab[j].prof == UINT32_MAX) {
			tab[j].prof = prof;
			tab[j].ctx = ctx;
			tab[j].ns = 0;
			n++;
		}
		tab[j].ns += s->weight_ns;
	}
	list = malloc((n + 1) * sizeof(*list));
	if (!list)
		goto out;
	n = 0;
	for (size_t k = 0; k < cap; k++)
		if (tab[k].prof != UINT32_MAX)
			list[n++] = tab[k];
	qsort(list, n, sizeof(*list), cmp_leaf_weight);
	*out = list;
	*n_out = n;
	list = NULL;
	err = 0;
out:
	free(tab);
	free(list);
	return err;
}

static void stat_add(struct hk_stat *st, int scope, uint64_t ns)
{
	if (!ns)
		return;
	st->ns[HK_COMBINE_SUM][scope] += ns;
	if (!st->ns[HK_COMBINE_MIN][scope] || ns < st->ns[HK_COMBINE_MIN][scope])
		st->ns[HK_COMBINE_MIN][scope] = ns;
	if (ns > st->ns[HK_COMBINE_MAX][scope])
		st->ns[HK_COMBINE_MAX][scope] = ns;
}

/*
 * Propagates each thread's leaf weights up the tree with dense scratch
 * arrays reused across threads; emits the thread's values sorted by ctx.
 *
 * Bottom up rather than one walk to the root per leaf: the leaves and their
 * ancestors are marked (a walk stops at the first marked node), then taken
 * in decreasing id order, which puts every child before its parent (a
 * parent is created first), each adding its sums to its parent's once:
 *   execution(c) = point(c) + the execution of all its children,
 *   function(c)  = point(c) + the function of its children whose
 *                  propagation bit 0 is set (lex_aware: the same).
 */
static int propagate(struct hk_tree *t, const struct leaf_weight *lw, size_t n_lw)
{
	size_t nn = t->n_nodes, cap = 1024;
	uint64_t (*acc)[HK_N_SCOPES] = calloc(nn, sizeof(*acc));
	uint32_t *touched = malloc(nn * sizeof(*touched));
	uint8_t *mark = calloc(nn, 1);
	int err = -ENOMEM;

	t->values = malloc(cap * sizeof(*t->values));
	if (!acc || !touched || !mark || !t->values)
		goto out;
	for (size_t i = 0; i < n_lw;) {
		uint32_t prof = lw[i].prof;
		size_t nt = 0;
		struct hk_thread *th = &t->threads[prof - 1];

		for (; i < n_lw && lw[i].prof == prof; i++) {
			uint32_t c = lw[i].ctx;

			acc[c][HK_SCOPE_POINT] += lw[i].ns;
			for (; !mark[c]; c = t->nodes[c].parent) {
				mark[c] = 1;
				touched[nt++] = c;
				if (!c)
					break;
			}
		}
		/* in id order: by a scan of the marks when they are dense */
		if (nt > nn / 32) {
			nt = 0;
			for (size_t c = 0; c < nn; c++)
				if (mark[c])
					touched[nt++] = c;
		} else {
			qsort(touched, nt, sizeof(*touched), cmp_u32);
		}
		for (size_t k = nt; k-- > 0;) {
			uint32_t c = touched[k], p = t->nodes[c].parent;

			acc[c][HK_SCOPE_EXECUTION] += acc[c][HK_SCOPE_POINT];
			acc[c][HK_SCOPE_FUNCTION] += acc[c][HK_SCOPE_POINT];
			acc[c][HK_SCOPE_LEX_AWARE] = acc[c][HK_SCOPE_FUNCTION];
			if (!c)
				continue;
			acc[p][HK_SCOPE_EXECUTION] += acc[c][HK_SCOPE_EXECUTION];
			if (hk_node_propagation(&t->nodes[c]) & 1)
				acc[p][HK_SCOPE_FUNCTION] += acc[c][HK_SCOPE_FUNCTION];
		}
		th->first_value = t->n_values;
		for (size_t k = 0; k < nt; k++) {
			uint32_t c = touched[k];
			struct hk_value *v;

			if (t->n_values == cap) {
				struct hk_value *nv = realloc(t->values, cap * 2 * sizeof(*nv));

				if (!nv)
					goto out;
				t->values = nv;
				cap *= 2;
			}
			v = &t->values[t->n_values++];
			v->ctx = c;
			v->prof = prof;
			for (int s = 0; s < HK_N_SCOPES; s++)
				v->ns[hk_value_slot(s)] = acc[c][s];
			memset(acc[c], 0, sizeof(acc[c]));
			mark[c] = 0;
		}
		th->n_values = t->n_values - th->first_value;
	}
	err = 0;
out:
	free(acc);
	free(touched);
	free(mark);
	return err;
}

/* The values by context, each context's in profile order: what cct.db
 * lists, and what the summary statistics are taken over. */
static int order_values(struct hk_tree *t)
{
	size_t nn = t->n_nodes;
	uint32_t *fill;

	if (t->n_values >= UINT32_MAX)
		return -ENOMEM;
	t->ctx_first = calloc(nn + 1, sizeof(*t->ctx_first));
	t->ctx_values = malloc((t->n_values + 1) * sizeof(*t->ctx_values));
	fill = calloc(nn + 1, sizeof(*fill));
	if (!t->ctx_first || !t->ctx_values || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t v = 0; v < t->n_values; v++)
		t->ctx_first[t->values[v].ctx + 1]++;
	for (size_t c = 0; c < nn; c++)
		t->ctx_first[c + 1] += t->ctx_first[c];
	for (size_t v = 0; v < t->n_values; v++) {
		uint32_t c = t->values[v].ctx;

		t->ctx_values[t->ctx_first[c] + fill[c]++] = v;
	}
	free(fill);
	return 0;
}

void hk_ctx_stat(const struct hk_tree *t, uint32_t ctx, struct hk_stat *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t k = t->ctx_first[ctx]; k < t->ctx_first[ctx + 1]; k++) {
		const struct hk_value *v = &t->values[t->ctx_values[k]];

		for (int s = 0; s < HK_N_SCOPES; s++)
			stat_add(st, s, hk_value_ns(v, s));
	}
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
	free(t->index);
	t->index = NULL;
	t->index_cap = 0;
	free(t->memo);
	t->memo = NULL;
	t->memo_cap = t->n_memo = 0;
}

int hk_tree_build(struct hk_tree *t, const struct model *m, bool draft)
{
	struct leaf_weight *lw = NULL;
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
	err = order_threads(t);
	if (!err)
		err = collect_leaves(t, &lw, &n_lw);
	drop_indexes(t);
	if (!err)
		err = propagate(t, lw, n_lw);
	if (!err)
		err = build_children(t);
	if (!err)
		err = order_values(t);
	free(lw);
	return err;
}

void hk_tree_free(struct hk_tree *t)
{
	free(t->nodes);
	free(t->index);
	free(t->memo);
	free(t->leaf);
	free(t->threads);
	free(t->thread_prof);
	free(t->thread_entry);
	free(t->values);
	free(t->ctx_first);
	free(t->ctx_values);
	free(t->child_start);
	free(t->children);
	memset(t, 0, sizeof(*t));
}
