// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind writer: one OUT/callgrind.out.<pid> per process that has
 * samples (callgrind.out.<pid>.<generation> for the images a later exec
 * started; "-<process entry id>" is appended if a reused pid repeats a
 * name), for callgrind_annotate and KCachegrind.  cmd: is the process's
 * command line (or comm), cut at 512 bytes with the whole kept in a
 * comment.
 *
 * Layout of a file, in the order both real readers need:
 *
 *   # callgrind format / version: 1 / creator: / pid: / cmd: / desc: ...
 *   positions: instr line
 *   event: <Name> : <long name> ...        (before events:, for annotate)
 *   events: Samples Ns [TracedNs]          (ends the header, < byte 2047)
 *   summary: ...                           (after events:, as Valgrind
 *                                           writes it: KCachegrind rejects
 *                                           it before events: and
 *                                           callgrind_annotate ignores it
 *                                           there with a warning)
 *   ob= / fl= / fn= blocks, fi= for inlined code, cost and calls= lines
 *   totals: ...
 *
 * Functions.  A resolved location belongs to its out-of-line function; its
 * cost line carries the address (file-relative, as the spec wants) and the
 * line, and fi= names the source file of the address when it is not the
 * function's own (inlined code).  Code that no symbol covers is grouped per
 * image as "[unknown] <image basename>": one function per unknown address
 * would flood the function list and invent call edges at every return
 * address, while the cost lines keep every exact address.
 *
 * Calls.  For each sample and each distinct (call site, callee function)
 * edge on its stack, the sample adds once to the edge: calls= is the number
 * of samples in which the edge was on the stack and the cost line after it
 * the sampled inclusive cost, so a recursive function is counted once per
 * stack, not once per frame.  Consecutive frames of one unknown group are
 * one node, not a call.
 *
 * Traced functions (uprobes).  Their wall-clock time is the separate event
 * TracedNs, never added to the sampled CPU time: each traced call's self
 * time is a cost line at the function's entry address, and each call whose
 * caller is known (the enclosing traced call on the thread, else the only
 * caller the samples show) is a calls= line with the exact call count and
 * the traced inclusive time, merged into the sampled edge between the same
 * two functions when there is one.
 */
#include "formats/format.h"
#include "formats/callgrind/callgrind.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_EVENTS_LIMIT 1900 /* "events:" must start before byte 2047 */
#define CMD_MAX 512

/* ---- a hash map from two 64-bit keys to a 32-bit value ------------------ */

/* Keys and value of a slot side by side: a probe touches one cache line,
 * not three arrays. */
struct keyslot {
	uint64_t k1, k2;
	uint32_t val; /* UINT32_MAX: empty */
};

struct keymap {
	struct keyslot *slots;
	size_t cap, len;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL + (a << 6) + (a >> 2));

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x;
}

static int keymap_grow(struct keymap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 256;
	struct keyslot *slots = malloc(ncap * sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < ncap; i++)
		slots[i].val = UINT32_MAX;
	for (size_t i = 0; i < m->cap; i++) {
		const struct keyslot *o = &m->slots[i];
		size_t j;

		if (o->val == UINT32_MAX)
			continue;
		for (j = mix(o->k1, o->k2) & (ncap - 1); slots[j].val != UINT32_MAX;
		     j = (j + 1) & (ncap - 1))
			;
		slots[j] = *o;
	}
	free(m->slots);
	m->slots = slots;
	m->cap = ncap;
	return 0;
}

/* Slot of (a, b), or the empty slot where it would go. */
static struct keyslot *keymap_slot(const struct keymap *m, uint64_t a, uint64_t b)
{
	size_t j = mix(a, b) & (m->cap - 1);

	while (m->slots[j].val != UINT32_MAX && (m->slots[j].k1 != a || m->slots[j].k2 != b))
		j = (j + 1) & (m->cap - 1);
	return &m->slots[j];
}

/* Makes room for n more keys without growing, so that slots found now
 * stay where they are. */
static int keymap_reserve(struct keymap *m, size_t n)
{
	while ((m->len + n + 1) * 4 > m->cap * 3) {
		int err = keymap_grow(m);

		if (err)
			return err;
	}
	return 0;
}

/* Starts loading the cache line where (a, b) is looked for first. */
static void keymap_prefetch(const struct keymap *m, uint64_t a, uint64_t b)
{
	__builtin_prefetch(&m->slots[mix(a, b) & (m->cap - 1)]);
}

/*
 * Looks (a, b) up; when absent, stores `fresh` under it and sets *added.
 * *val receives the stored value.
 */
static int keymap_get_or_add(struct keymap *m, uint64_t a, uint64_t b, uint32_t fresh,
			     uint32_t *val, bool *added)
{
	struct keyslot *sl;

	if ((m->len + 1) * 4 > m->cap * 3) {
		int err = keymap_grow(m);

		if (err)
			return err;
	}
	sl = keymap_slot(m, a, b);
	if (sl->val != UINT32_MAX) {
		*val = sl->val;
		*added = false;
		return 0;
	}
	sl->k1 = a;
	sl->k2 = b;
	sl->val = fresh;
	m->len++;
	*val = fresh;
	*added = true;
	return 0;
}

static uint32_t keymap_get(const struct keymap *m, uint64_t a, uint64_t b)
{
	if (!m->cap)
		return UINT32_MAX;
	return keymap_slot(m, a, b)->val;
}

/* Stores val under (a, b), replacing any previous value. */
static int keymap_set(struct keymap *m, uint64_t a, uint64_t b, uint32_t val)
{
	uint32_t have;
	bool added;
	int err = keymap_get_or_add(m, a, b, val, &have, &added);

	if (err || added)
		return err;
	keymap_slot(m, a, b)->val = val;
	return 0;
}

static void keymap_free(struct keymap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* A growable array of fixed-size elements. */
struct vec {
	void *items;
	size_t len, cap, size;
};

static void *vec_push(struct vec *v)
{
	if (v->len == v->cap) {
		size_t ncap = v->cap ? v->cap * 2 : 64;
		void *n = realloc(v->items, ncap * v->size);

		if (!n)
			return NULL;
		v->items = n;
		v->cap = ncap;
	}
	memset((char *)v->items + v->len * v->size, 0, v->size);
	return (char *)v->items + v->len++ * v->size;
}

static void vec_free(struct vec *v)
{
	free(v->items);
	v->items = NULL;
	v->len = v->cap = 0;
}

/* ---- function groups ----------------------------------------------------- */

/*
 * A "group" is what Callgrind calls a function: a model function id, all
 * unsymbolized code of one image, or the samples that have no stack.
 */
#define GROUP_UNKNOWN_TAG (1ULL << 32)
#define GROUP_NOSTACK (2ULL << 32)

static uint64_t group_unknown(uint32_t image)
{
	return GROUP_UNKNOWN_TAG | image;
}

static bool group_is_unknown(uint64_t g)
{
	return (g >> 32) == 1;
}

static uint64_t location_group(const struct model *m, uint32_t loc)
{
	const struct model_location *l;

	if (loc == MODEL_NONE || loc >= m->locations.len)
		return GROUP_NOSTACK;
	l = &m->locations.items[loc];
	if (l->function != MODEL_NONE && l->function < m->functions.len)
		return l->function;
	return group_unknown(l->image);
}

static uint64_t traced_group(const struct model *m, uint32_t tf)
{
	const struct model_traced_function *t = &m->traced.items[tf];

	if (t->function != MODEL_NONE && t->function < m->functions.len)
		return t->function;
	return group_unknown(t->image);
}

/* Image of a group; UINT32_MAX for the no-stack group. */
static uint32_t group_image(const struct model *m, uint64_t g)
{
	if (g == GROUP_NOSTACK)
		return UINT32_MAX;
	if (group_is_unknown(g))
		return (uint32_t)g;
	return m->functions.items[g].image;
}

/* ---- aggregation -------------------------------------------------------- */

/* Samples of one (process, stack). */
struct stack_agg {
	uint32_t process, stack;
	uint64_t samples, ns;
};

/* Traced calls of one process: parent traced function (or MODEL_NONE when
 * no traced call encloses it) -> traced function. */
struct trace_pair {
	uint32_t process, parent, child;
	uint64_t calls, ns;
};

struct trace_self {
	uint32_t process, func;
	uint64_t ns;
};

/* Per process counters for the desc: lines. */
struct proc_info {
	uint64_t samples, truncated;
	uint64_t trace_unmatched; /* exits without their entry, entries without exit */
	bool has_trace_events;
};

struct aggregates {
	struct vec stacks;       /* struct stack_agg, sorted by (process, stack) */
	struct vec pairs;        /* struct trace_pair, sorted by process */
	struct vec selfs;        /* struct trace_self, sorted by process */
	struct proc_info *procs; /* per model process */
};

static int cmp_trace_pair(const void *a, const void *b)
{
	const struct trace_pair *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->child < y->child ? -1 : x->child > y->child;
}

static int cmp_trace_self(const void *a, const void *b)
{
	const struct trace_self *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/*
 * Sums the samples by (process, stack) and leaves the sums sorted by
 * (process, stack).  The stack id indexes a dense array of chains (one
 * entry per process that sampled the stack; nearly always one), so a
 * sample costs no hashing, and the order comes from a counting sort on the
 * process over the stacks taken in id order, not from a comparison sort.
 */
#define AGG_AHEAD 16

static int aggregate_samples(const struct model *m, struct aggregates *ag)
{
	size_t n_slots = m->stacks.len + 1; /* the last: no (valid) stack */
	uint32_t *head = malloc(n_slots * sizeof(*head));
	uint32_t *next = NULL, *pos = NULL;
	struct stack_agg *sorted = NULL;
	const struct stack_agg *sa;
	size_t np = m->processes.len, n, next_cap = 0;
	int err = -ENOMEM;

	if (!head)
		goto out;
	memset(head, 0xff, n_slots * sizeof(*head));
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		size_t slot = s->stack < m->stacks.len ? s->stack : m->stacks.len;
		struct stack_agg *a = NULL;
		uint32_t idx;

		/* stacks come in random order: start loading the head of a
		 * sample's chain, then its sum, some samples ahead */
		if (i + AGG_AHEAD < m->samples.len) {
			uint32_t ahead = m->samples.items[i + AGG_AHEAD].stack;

			if (ahead < m->stacks.len)
				__builtin_prefetch(&head[ahead]);
			ahead = m->samples.items[i + AGG_AHEAD / 2].stack;
			if (ahead < m->stacks.len && head[ahead] != UINT32_MAX)
				__builtin_prefetch((struct stack_agg *)ag->stacks.items + head[ahead], 1);
		}
		if (s->process >= np)
			continue; /* not attributable to a file */
		for (idx = head[slot]; idx != UINT32_MAX; idx = next[idx]) {
			a = (struct stack_agg *)ag->stacks.items + idx;
			if (a->process == s->process)
				break;
		}
		if (idx == UINT32_MAX) {
			uint32_t *nn;

			if (ag->stacks.len >= UINT32_MAX - 1)
				goto out;
			a = vec_push(&ag->stacks);
			if (!a)
				goto out;
			idx = (uint32_t)(ag->stacks.len - 1);
			if (idx >= next_cap) {
				size_t ncap = next_cap ? 2 * next_cap : 1024;

				nn = realloc(next, ncap * sizeof(*next));
				if (!nn)
					goto out;
				next = nn;
				next_cap = ncap;
			}
			a->process = s->process;
			a->stack = slot < m->stacks.len ? (uint32_t)slot : MODEL_NONE;
			next[idx] = head[slot];
			head[slot] = idx;
		}
		a->samples++;
		a->ns += s->weight_ns;
	}
	n = ag->stacks.len;
	sa = ag->stacks.items;
	for (size_t i = 0; i < n; i++) {
		ag->procs[sa[i].process].samples += sa[i].samples;
		if (sa[i].stack != MODEL_NONE && m->stacks.items[sa[i].stack].truncated)
			ag->procs[sa[i].process].truncated += sa[i].samples;
	}
	pos = calloc(np + 1, sizeof(*pos));
	sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!pos || !sorted)
		goto out;
	for (size_t i = 0; i < n; i++)
		pos[sa[i].process + 1]++;
	for (size_t p = 0; p < np; p++)
		pos[p + 1] += pos[p];
	/* stacks in id order (MODEL_NONE last, as it sorts), each to its
	 * process's next place */
	for (size_t slot = 0; slot < n_slots; slot++)
		for (uint32_t idx = head[slot]; idx != UINT32_MAX; idx = next[idx])
			sorted[pos[sa[idx].process]++] = sa[idx];
	free(ag->stacks.items);
	ag->stacks.items = sorted;
	ag->stacks.cap = n ? n : 1;
	sorted = NULL;
	err = 0;
out:
	free(head);
	free(next);
	free(pos);
	free(sorted);
	return err;
}

/* One thread's stack of open traced calls. */
struct open_call {
	uint32_t func;
	uint64_t start, child_ns;
};

struct thread_calls {
	struct open_call *items;
	size_t len, cap;
};

static int add_pair(struct keymap *map, struct vec *pairs, uint32_t process, uint32_t parent,
		    uint32_t child, uint64_t calls, uint64_t ns)
{
	struct trace_pair *tp;
	uint32_t idx;
	bool added;
	int err;

	err = keymap_get_or_add(map, process, (uint64_t)parent << 32 | child,
				(uint32_t)pairs->len, &idx, &added);
	if (err)
		return err;
	if (added) {
		tp = vec_push(pairs);
		if (!tp)
			return -ENOMEM;
		tp->process = process;
		tp->parent = parent;
		tp->child = child;
	}
	tp = (struct trace_pair *)pairs->items + idx;
	tp->calls += calls;
	tp->ns += ns;
	return 0;
}

static int add_self(struct keymap *map, struct vec *selfs, uint32_t process, uint32_t func,
		    uint64_t ns)
{
	struct trace_self *ts;
	uint32_t idx;
	bool added;
	int err;

	err = keymap_get_or_add(map, process, func, (uint32_t)selfs->len, &idx, &added);
	if (err)
		return err;
	if (added) {
		ts = vec_push(selfs);
		if (!ts)
			return -ENOMEM;
		ts->process = process;
		ts->func = func;
	}
	ts = (struct trace_self *)selfs->items + idx;
	ts->ns += ns;
	return 0;
}

/* Closes the open call at depth d of thread tc at time t. */
static int close_call(const struct model_trace_event *e, struct thread_calls *tc, size_t d,
		      struct keymap *pmap, struct keymap *smap, struct aggregates *ag)
{
	struct open_call *oc = &tc->items[d];
	uint64_t dur = e->time_ns > oc->start ? e->time_ns - oc->start : 0;
	uint64_t self = dur > oc->child_ns ? dur - oc->child_ns : 0;
	uint32_t parent = MODEL_NONE;
	int err;

	if (d > 0) {
		parent = tc->items[d - 1].func;
		tc->items[d - 1].child_ns += dur;
	}
	err = add_pair(pmap, &ag->pairs, e->process, parent, oc->func, 1, dur);
	if (!err)
		err = add_self(smap, &ag->selfs, e->process, oc->func, self);
	return err;
}

/*
 * Rebuilds the traced calls from the entry/exit stream, thread by thread:
 * an exit closes the innermost open call of its function (the calls above
 * it lost their exits and are dropped); an exit without entry is dropped.
 * Processes without events fall back on the kernel's per-thread aggregates,
 * whose calls have no known traced parent.
 */
static int aggregate_trace(const struct model *m, struct aggregates *ag)
{
	struct keymap pmap = { 0 }, smap = { 0 };
	struct thread_calls *threads = NULL;
	int err = 0;

	if (!m->traced.len)
		return 0;
	threads = calloc(m->threads.len ? m->threads.len : 1, sizeof(*threads));
	if (!threads)
		return -ENOMEM;
	for (size_t i = 0; i < m->trace.len; i++) {
		const struct model_trace_event *e = &m->trace.items[i];
		struct thread_calls *tc;

		if (e->thread >= m->threads.len || e->process >= m->processes.len ||
		    e->func >= m->traced.len)
			continue;
		ag->procs[e->process].has_trace_events = true;
		tc = &threads[e->thread];
		if (e->kind == MODEL_TRACE_ENTRY) {
			if (tc->len == tc->cap) {
				size_t ncap = tc->cap ? tc->cap * 2 : 16;
				struct open_call *n = realloc(tc->items, ncap * sizeof(*n));

				if (!n) {
					err = -ENOMEM;
					goto out;
				}
				tc->items = n;
				tc->cap = ncap;
			}
			tc->items[tc->len++] = (struct open_call){ e->func, e->time_ns, 0 };
		} else if (e->kind == MODEL_TRACE_EXIT) {
			size_t d = tc->len;

			while (d > 0 && tc->items[d - 1].func != e->func)
				d--;
			if (!d) {
				ag->procs[e->process].trace_unmatched++;
				continue;
			}
			ag->procs[e->process].trace_unmatched += tc->len - d;
			err = close_call(e, tc, d - 1, &pmap, &smap, ag);
			if (err)
				goto out;
			tc->len = d - 1;
		}
	}
	for (size_t t = 0; t < m->threads.len; t++) {
		uint32_t p = m->threads.items[t].process;

		if (threads[t].len && p < m->processes.len)
			ag->procs[p].trace_unmatched += threads[t].len;
	}
	for (size_t i = 0; i < m->func_stats.len; i++) {
		const struct model_func_stats *fs = &m->func_stats.items[i];

		if (fs->process >= m->processes.len || fs->func >= m->traced.len ||
		    ag->procs[fs->process].has_trace_events || !fs->calls)
			continue;
		err = add_pair(&pmap, &ag->pairs, fs->process, MODEL_NONE, fs->func, fs->calls,
			       fs->total_ns);
		if (!err)
			err = add_self(&smap, &ag->selfs, fs->process, fs->func, fs->self_ns);
		if (err)
			goto out;
	}
	/* no traced call may have completed: qsort() takes no NULL array */
	if (ag->pairs.len)
		qsort(ag->pairs.items, ag->pairs.len, sizeof(struct trace_pair), cmp_trace_pair);
	if (ag->selfs.len)
		qsort(ag->selfs.items, ag->selfs.len, sizeof(struct trace_self), cmp_trace_self);
out:
	for (size_t t = 0; t < m->threads.len; t++)
		free(threads[t].items);
	free(threads);
	keymap_free(&pmap);
	keymap_free(&smap);
	return err;
}

/* ---- one process ---------------------------------------------------------- */

enum { EV_SAMPLES = 0, EV_NS = 1, EV_TRACED = 2, N_EV = 3 };

enum item_kind { ITEM_SELF = 0, ITEM_CALL = 1 };

/*
 * One output line: a self cost line, or a calls= line with its cost line.
 * Call sites are locations; a traced call with no sampled edge has no
 * location and sits at the caller's entry address.
 */
struct item {
	uint64_t group;
	uint64_t callee;     /* ITEM_CALL */
	uint32_t loc;        /* MODEL_NONE: at the group's entry */
	uint32_t file;       /* source file of the line, MODEL_NONE = "???" */
	uint32_t rank;       /* 0 for the group's home file, else file + 1 */
	uint32_t image;      /* group_image(), for ordering by object */
	uint64_t addr;
	uint64_t line;
	uint64_t calls;
	uint64_t cost[N_EV];
	uint8_t kind;
	bool dead;           /* merged into another item */
	bool exact;          /* calls is an exact traced count */
};

struct edge_key {
	uint32_t site;
	uint32_t item; /* add_stack(): the edge's item */
	uint64_t callee;
};

static int cmp_edge_key(const void *a, const void *b)
{
	const struct edge_key *x = a, *y = b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

/* Most stacks are a few dozen frames: an insertion sort beats qsort()'s
 * call per comparison there. */
static void sort_edge_keys(struct edge_key *k, size_t n)
{
	if (n > 48) {
		qsort(k, n, sizeof(*k), cmp_edge_key);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct edge_key v = k[i];
		size_t j = i;

		for (; j > 0 && (k[j - 1].site > v.site ||
				 (k[j - 1].site == v.site && k[j - 1].callee > v.callee)); j--)
			k[j] = k[j - 1];
		k[j] = v;
	}
}

struct proc_ctx {
	const struct model *m;
	struct vec items;         /* struct item */
	uint32_t *self_ix;        /* loc (MODEL_NONE: the last) -> item */
	struct keymap edge_ix;    /* (site, callee) -> item */
	struct keymap home;       /* group -> home file, for functions without one */
	struct edge_key *scratch;
	size_t scratch_cap;
	uint64_t unattributed_calls;
};

static struct item *item_at(struct proc_ctx *pc, uint32_t i)
{
	return (struct item *)pc->items.items + i;
}

/* A function group's place in the file: by object, then group id. */
struct group_order {
	uint64_t group;
	uint32_t image;
	uint32_t bucket;
};

static int cmp_group_order(const void *a, const void *b)
{
	const struct group_order *x = a, *y = b;

	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	return x->group < y->group ? -1 : x->group > y->group;
}

/* What orders the items of one group, gathered so that sorting a group
 * reads a small array instead of items scattered over the whole list. */
struct item_key {
	uint64_t addr, line, callee;
	uint32_t rank;
	uint32_t item;
	uint8_t kind;
};

static bool item_key_less(const struct item_key *x, const struct item_key *y)
{
	if (x->rank != y->rank)
		return x->rank < y->rank;
	if (x->addr != y->addr)
		return x->addr < y->addr;
	if (x->line != y->line)
		return x->line < y->line;
	if (x->kind != y->kind)
		return x->kind < y->kind;
	if (x->callee != y->callee)
		return x->callee < y->callee;
	return x->item < y->item; /* ties keep their order of creation */
}

static int cmp_item_key(const void *a, const void *b)
{
	return item_key_less(a, b) ? -1 : item_key_less(b, a);
}

/* Sorts one group's keys: small groups by insertion (no call per
 * comparison), larger ones by qsort(). */
static void sort_item_keys(struct item_key *k, size_t n)
{
	if (n > 32) {
		qsort(k, n, sizeof(*k), cmp_item_key);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct item_key v = k[i];
		size_t j = i;

		for (; j > 0 && item_key_less(&v, &k[j - 1]); j--)
			k[j] = k[j - 1];
		k[j] = v;
	}
}

/*
 * Puts the items in file order: by (image, group, rank, addr, line, kind,
 * callee), ties in their order of creation (what the stable merge sort
 * behind glibc's qsort() gave, so the files stay byte for byte the same).
 * Sorting the whole items moved each of them some twenty times; here a
 * counting sort orders their indices by group, each group's few indices
 * are sorted, and the items then move once, in place, along the cycles of
 * the permutation.
 */
static int sort_items(struct proc_ctx *pc)
{
	const struct model *m = pc->m;
	size_t n = pc->items.len, nf = m->functions.len, n_groups = 0, groups_cap = 0;
	struct item *items = pc->items.items;
	uint32_t *fn_bucket = malloc((nf ? nf : 1) * sizeof(*fn_bucket));
	uint32_t *bucket = malloc((n ? n : 1) * sizeof(*bucket));
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	uint32_t *start = NULL, *rank_of = NULL;
	struct group_order *groups = NULL;
	struct item_key *keys = NULL;
	size_t keys_cap = 0;
	struct keymap other = { 0 }; /* groups that are not functions -> bucket */
	int err = -ENOMEM;

	if (!fn_bucket || !bucket || !order)
		goto out;
	memset(fn_bucket, 0xff, (nf ? nf : 1) * sizeof(*fn_bucket));
	for (size_t i = 0; i < n; i++) {
		uint64_t g = items[i].group;
		uint32_t b = (uint32_t)n_groups;
		bool added = false;

		if (g < nf) {
			if (fn_bucket[g] == UINT32_MAX) {
				fn_bucket[g] = b;
				added = true;
			}
			b = fn_bucket[g];
		} else {
			err = keymap_get_or_add(&other, g, 0, b, &b, &added);
			if (err)
				goto out;
			err = -ENOMEM;
		}
		if (added) {
			if (n_groups == groups_cap) {
				size_t ncap = groups_cap ? 2 * groups_cap : 256;
				struct group_order *ng = realloc(groups, ncap * sizeof(*ng));

				if (!ng)
					goto out;
				groups = ng;
				groups_cap = ncap;
			}
			groups[n_groups++] = (struct group_order){ g, items[i].image, b };
		}
		bucket[i] = b;
	}
	qsort(groups, n_groups, sizeof(*groups), cmp_group_order);
	start = calloc(n_groups + 1, sizeof(*start));
	rank_of = malloc((n_groups ? n_groups : 1) * sizeof(*rank_of));
	if (!start || !rank_of)
		goto out;
	for (size_t r = 0; r < n_groups; r++)
		rank_of[groups[r].bucket] = (uint32_t)r;
	for (size_t i = 0; i < n; i++) {
		bucket[i] = rank_of[bucket[i]];
		start[bucket[i] + 1]++;
	}
	for (size_t r = 0; r < n_groups; r++)
		start[r + 1] += start[r];
	for (size_t i = 0; i < n; i++)
		order[start[bucket[i]]++] = (uint32_t)i;
	/* start[r] is now the end of group r */
	for (size_t r = 0, lo = 0; r < n_groups; lo = start[r++]) {
		size_t len = start[r] - lo;

		if (len > keys_cap) {
			struct item_key *nk = realloc(keys, len * sizeof(*nk));

			if (!nk)
				goto out;
			keys = nk;
			keys_cap = len;
		}
		for (size_t k = 0; k < len; k++) {
			const struct item *it = &items[order[lo + k]];

			keys[k] = (struct item_key){ it->addr, it->line, it->callee, it->rank,
						     order[lo + k], it->kind };
		}
		sort_item_keys(keys, len);
		for (size_t k = 0; k < len; k++)
			order[lo + k] = keys[k].item;
	}
	/* place k takes item order[k]; done places are marked order[k] = k */
	for (size_t i = 0; i < n; i++) {
		struct item t;
		size_t j = i;

		if (order[i] == i)
			continue;
		t = items[i];
		for (;;) {
			size_t k = order[j];

			order[j] = (uint32_t)j;
			if (k == i) {
				items[j] = t;
				break;
			}
			items[j] = items[k];
			j = k;
		}
	}
	err = 0;
out:
	free(fn_bucket);
	free(bucket);
	free(order);
	free(start);
	free(rank_of);
	free(groups);
	free(keys);
	keymap_free(&other);
	return err;
}

static int add_self_cost(struct proc_ctx *pc, uint32_t loc, const struct stack_agg *sa)
{
	uint32_t idx, *slot = &pc->self_ix[loc < pc->m->locations.len ? loc : pc->m->locations.len];

	idx = *slot;
	if (idx == UINT32_MAX) {
		struct item *it = vec_push(&pc->items);

		if (!it)
			return -ENOMEM;
		idx = *slot = (uint32_t)(pc->items.len - 1);
		it->kind = ITEM_SELF;
		it->loc = loc;
		it->group = location_group(pc->m, loc);
	}
	item_at(pc, idx)->cost[EV_SAMPLES] += sa->samples;
	item_at(pc, idx)->cost[EV_NS] += sa->ns;
	return 0;
}

static int add_stack(struct proc_ctx *pc, const struct stack_agg *sa)
{
	const struct model *m = pc->m;
	const struct model_stack *st;
	const uint32_t *fr;
	size_t n = 0;
	int err;

	if (sa->stack == MODEL_NONE || !m->stacks.items[sa->stack].n_frames)
		return add_self_cost(pc, MODEL_NONE, sa);
	st = &m->stacks.items[sa->stack];
	fr = model_stack_frames(m, st);
	err = add_self_cost(pc, fr[0] < m->locations.len ? fr[0] : MODEL_NONE, sa);
	if (err)
		return err;
	if (st->n_frames > pc->scratch_cap) {
		struct edge_key *s = realloc(pc->scratch, st->n_frames * sizeof(*s));

		if (!s)
			return -ENOMEM;
		pc->scratch = s;
		pc->scratch_cap = st->n_frames;
	}
	for (uint32_t i = 1; i < st->n_frames; i++) {
		uint32_t site = fr[i] < m->locations.len ? fr[i] : MODEL_NONE;
		uint64_t callee = location_group(m, fr[i - 1]);
		uint64_t caller = location_group(m, site);

		if (site == MODEL_NONE || (caller == callee && group_is_unknown(caller)))
			continue;
		pc->scratch[n++] = (struct edge_key){ .site = site, .callee = callee };
	}
	/* each distinct edge once per stack: recursion counts once */
	sort_edge_keys(pc->scratch, n);
	for (size_t i = 0, k = 0; i < n; i++) {
		if (k && !cmp_edge_key(&pc->scratch[k - 1], &pc->scratch[i]))
			continue;
		pc->scratch[k++] = pc->scratch[i];
		if (i + 1 == n)
			n = k;
	}
	/*
	 * The edge index and the items are far larger than the cache and a
	 * stack's edges are scattered over them: start loading every slot
	 * first, so that the misses overlap instead of waiting in turn.
	 */
	err = keymap_reserve(&pc->edge_ix, n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		keymap_prefetch(&pc->edge_ix, pc->scratch[i].site, pc->scratch[i].callee);
	for (size_t i = 0; i < n; i++) {
		struct edge_key *k = &pc->scratch[i];
		bool added;

		err = keymap_get_or_add(&pc->edge_ix, k->site, k->callee,
					(uint32_t)pc->items.len, &k->item, &added);
		if (err)
			return err;
		if (added) {
			struct item *it = vec_push(&pc->items);

			if (!it)
				return -ENOMEM;
			it->kind = ITEM_CALL;
			it->loc = k->site;
			it->group = location_group(m, k->site);
			it->callee = k->callee;
		} else {
			__builtin_prefetch(item_at(pc, k->item), 1);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct item *it = item_at(pc, pc->scratch[i].item);

		it->calls += sa->samples;
		it->cost[EV_SAMPLES] += sa->samples;
		it->cost[EV_NS] += sa->ns;
	}
	return 0;
}

/* Order of call items by (callee, caller group), for the traced merge. */
struct call_ref {
	uint64_t callee, caller;
	uint32_t item;
};

static int cmp_call_ref(const void *a, const void *b)
{
	const struct call_ref *x = a, *y = b;

	if (x->callee != y->callee)
		return x->callee < y->callee ? -1 : 1;
	if (x->caller != y->caller)
		return x->caller < y->caller ? -1 : 1;
	return x->item < y->item ? -1 : x->item > y->item;
}

/* First index in refs[0..n) with callee >= g. */
static size_t lower_bound_callee(const struct call_ref *refs, size_t n, uint64_t g)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (refs[mid].callee < g)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Puts an exact traced call count and time on the edge caller -> callee. */
static int apply_traced_edge(struct proc_ctx *pc, const struct call_ref *refs, size_t n_refs,
			     uint64_t caller, uint64_t callee, uint64_t calls, uint64_t ns)
{
	size_t i = lower_bound_callee(refs, n_refs, callee);
	struct item *best = NULL, *it;

	for (; i < n_refs && refs[i].callee == callee; i++) {
		if (refs[i].caller != caller)
			continue;
		it = item_at(pc, refs[i].item);
		if (it->dead)
			continue;
		if (!best) {
			best = it;
			continue;
		}
		/* one line per (caller, callee): the exact count cannot be
		 * split between call sites, so the sites merge into the one
		 * with the most samples */
		if (it->cost[EV_SAMPLES] > best->cost[EV_SAMPLES]) {
			struct item *t = best;

			best = it;
			it = t;
		}
		for (int e = 0; e < N_EV; e++)
			best->cost[e] += it->cost[e];
		it->dead = true;
	}
	if (!best) {
		it = vec_push(&pc->items);
		if (!it)
			return -ENOMEM;
		it->kind = ITEM_CALL;
		it->loc = MODEL_NONE;
		it->group = caller;
		it->callee = callee;
		best = it;
	} else if (!best->exact) {
		best->calls = 0; /* sample counts give way to the exact count */
	}
	best->exact = true;
	best->calls += calls;
	best->cost[EV_TRACED] += ns;
	return 0;
}

static int add_traced(struct proc_ctx *pc, const struct aggregates *ag, uint32_t process)
{
	const struct model *m = pc->m;
	const struct trace_pair *pairs = ag->pairs.items;
	const struct trace_self *selfs = ag->selfs.items;
	struct call_ref *refs = NULL;
	size_t n_refs = 0;
	int err = 0;

	size_t lo, hi;

	for (lo = 0, hi = ag->selfs.len; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (selfs[mid].process < process)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < ag->selfs.len && selfs[i].process == process; i++) {
		struct item *it;

		if (!selfs[i].ns)
			continue;
		it = vec_push(&pc->items);
		if (!it)
			return -ENOMEM;
		it->kind = ITEM_SELF;
		it->loc = MODEL_NONE;
		it->group = traced_group(m, selfs[i].func);
		it->cost[EV_TRACED] = selfs[i].ns;
	}
	refs = malloc((pc->items.len ? pc->items.len : 1) * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < pc->items.len; i++) {
		struct item *it = item_at(pc, (uint32_t)i);

		if (it->kind == ITEM_CALL)
			refs[n_refs++] = (struct call_ref){ it->callee, it->group, (uint32_t)i };
	}
	qsort(refs, n_refs, sizeof(*refs), cmp_call_ref);
	for (lo = 0, hi = ag->pairs.len; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (pairs[mid].process < process)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < ag->pairs.len && pairs[i].process == process; i++) {
		const struct trace_pair *tp = &pairs[i];
		uint64_t callee, caller;

		callee = traced_group(m, tp->child);
		if (tp->parent != MODEL_NONE) {
			caller = traced_group(m, tp->parent);
		} else {
			/* no traced call encloses it: the caller is known only
			 * if the samples show exactly one */
			size_t j = lower_bound_callee(refs, n_refs, callee), k;

			for (k = j; k < n_refs && refs[k].callee == callee; k++)
				if (refs[k].caller != refs[j].caller)
					break;
			if (j == k || (k < n_refs && refs[k].callee == callee)) {
				pc->unattributed_calls += tp->calls;
				continue;
			}
			caller = refs[j].caller;
		}
		err = apply_traced_edge(pc, refs, n_refs, caller, callee, tp->calls, tp->ns);
		if (err)
			break;
	}
	free(refs);
	return err;
}

static uint32_t function_file(const struct model *m, uint64_t g)
{
	if (g >= m->functions.len)
		return MODEL_NONE;
	return m->functions.items[g].file < m->files.len ? m->functions.items[g].file : MODEL_NONE;
}

/* The file a group's fn= block opens in. */
static uint32_t home_file(const struct proc_ctx *pc, uint64_t g)
{
	uint32_t v = keymap_get(&pc->home, g, 0);

	return v != UINT32_MAX ? v : function_file(pc->m, g);
}

/* Fills each item's position and file, and each group's home file: the
 * function's definition file, else the file of its lowest non-inlined
 * address. */
static int place_items(struct proc_ctx *pc)
{
	const struct model *m = pc->m;
	struct keymap best_addr = { 0 };
	struct vec addrs = { .size = sizeof(uint64_t) };
	int err = 0;

	for (size_t i = 0; i < pc->items.len; i++) {
		struct item *it = item_at(pc, (uint32_t)i);

		it->image = group_image(m, it->group);
		if (it->loc != MODEL_NONE) {
			const struct model_location *l = &m->locations.items[it->loc];

			it->addr = l->addr;
			it->line = l->line;
			it->file = l->file < m->files.len ? l->file : MODEL_NONE;
		} else if (it->group < m->functions.len) {
			it->addr = m->functions.items[it->group].entry;
			it->line = m->functions.items[it->group].line;
			it->file = function_file(m, it->group);
		} else {
			it->addr = 0;
			it->line = 0;
			it->file = MODEL_NONE;
		}
	}
	for (size_t i = 0; i < pc->items.len; i++) {
		struct item *it = item_at(pc, (uint32_t)i);
		uint64_t *best;
		uint32_t idx;
		bool added;

		/* a function without a definition file: its home is the file
		 * of its lowest address outside inlined code */
		if (function_file(m, it->group) != MODEL_NONE || it->file == MODEL_NONE ||
		    it->loc == MODEL_NONE || m->locations.items[it->loc].n_inlines)
			continue;
		err = keymap_get_or_add(&best_addr, it->group, 0, (uint32_t)addrs.len, &idx, &added);
		if (err)
			goto out;
		if (added) {
			best = vec_push(&addrs);
			if (!best) {
				err = -ENOMEM;
				goto out;
			}
			*best = UINT64_MAX;
		}
		best = (uint64_t *)addrs.items + idx;
		if (it->addr < *best || (it->addr == *best && it->file < home_file(pc, it->group))) {
			*best = it->addr;
			err = keymap_set(&pc->home, it->group, 0, it->file);
			if (err)
				goto out;
		}
	}
out:
	keymap_free(&best_addr);
	vec_free(&addrs);
	return err;
}


/* ---- text output ---------------------------------------------------------- */

/*
 * Compressed name ids: a dense array for the model's ids (every call line
 * names an object, a file and a function, so these lookups are many), a
 * hash map for the few keys beyond (unknown groups, bad ids).
 */
struct idmap {
	uint32_t *dense; /* 0: no id yet */
	size_t n_dense;
	struct keymap rest;
	uint32_t next;   /* last id given */
};

static int idmap_init(struct idmap *ids, size_t n_dense)
{
	memset(ids, 0, sizeof(*ids));
	ids->dense = calloc(n_dense ? n_dense : 1, sizeof(*ids->dense));
	ids->n_dense = n_dense;
	return ids->dense ? 0 : -ENOMEM;
}

static void idmap_free(struct idmap *ids)
{
	free(ids->dense);
	keymap_free(&ids->rest);
	memset(ids, 0, sizeof(*ids));
}

/* The id of key, given the next one when new (*added). */
static int idmap_get(struct idmap *ids, uint64_t key, uint32_t *id, bool *added)
{
	int err;

	if (key < ids->n_dense) {
		*added = !ids->dense[key];
		if (*added)
			ids->dense[key] = ++ids->next;
		*id = ids->dense[key];
		return 0;
	}
	err = keymap_get_or_add(&ids->rest, key, 0, ids->next + 1, id, added);
	if (!err && *added)
		ids->next++;
	return err;
}

/*
 * Text goes through the writer's own buffer, flushed to the FILE in large
 * pieces: a file is millions of short tokens, and a locked stdio call per
 * character or number cost more than formatting them.
 */
#define OUT_BUF_SIZE (256u << 10)

struct writer {
	FILE *fp;
	char *buf;                /* OUT_BUF_SIZE bytes */
	size_t len;
	const struct model *m;
	struct idmap ob_ids, fl_ids, fn_ids;
	uint64_t prev_addr, prev_line;
	bool fresh;               /* next position absolute */
	struct keymap renamed;    /* groups whose name needs its address */
};

/* Write errors stick to the FILE, and outfile_commit() reports them. */
static void w_flush(struct writer *w)
{
	if (w->len)
		fwrite(w->buf, 1, w->len, w->fp);
	w->len = 0;
}

/* Room for n more bytes, n <= OUT_BUF_SIZE. */
static char *w_room(struct writer *w, size_t n)
{
	if (w->len + n > OUT_BUF_SIZE)
		w_flush(w);
	return w->buf + w->len;
}

static void w_putc(struct writer *w, char c)
{
	*w_room(w, 1) = c;
	w->len++;
}

static void w_write(struct writer *w, const char *s, size_t n)
{
	while (n) {
		size_t k = n < OUT_BUF_SIZE ? n : OUT_BUF_SIZE;

		memcpy(w_room(w, k), s, k);
		w->len += k;
		s += k;
		n -= k;
	}
}

static void w_puts(struct writer *w, const char *s)
{
	w_write(w, s, strlen(s));
}

/* Names end at the line's end and may not contain control characters;
 * an empty name would read as a compression reference. */
static void put_name(struct writer *w, const char *s)
{
	if (!s || !*s) {
		w_puts(w, "???");
		return;
	}
	for (; *s; s++)
		w_putc(w, (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
}

static const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

static void put_u64(struct writer *w, uint64_t v)
{
	char buf[24];
	int i = sizeof(buf);

	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	w_write(w, buf + i, sizeof(buf) - (size_t)i);
}

static void put_hex(struct writer *w, uint64_t v)
{
	char buf[24];
	int i = sizeof(buf);

	do {
		buf[--i] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	buf[--i] = 'x';
	buf[--i] = '0';
	w_write(w, buf + i, sizeof(buf) - (size_t)i);
}

/* Writes "(id) name" the first time, "(id)" after. */
static int put_compressed(struct writer *w, struct idmap *ids, uint64_t key, const char *prefix,
			  const char *name1, const char *name2)
{
	uint32_t id;
	bool added;
	int err = idmap_get(ids, key, &id, &added);

	if (err)
		return err;
	w_puts(w, prefix);
	w_putc(w, '(');
	put_u64(w, id);
	w_putc(w, ')');
	if (added) {
		w_putc(w, ' ');
		put_name(w, name1);
		if (name2)
			put_name(w, name2);
	}
	w_putc(w, '\n');
	return 0;
}

static int put_object(struct writer *w, const char *prefix, uint32_t image)
{
	const char *name = image < w->m->images.len ? w->m->images.items[image].path : "???";

	return put_compressed(w, &w->ob_ids, image, prefix, name, NULL);
}

static int put_file(struct writer *w, const char *prefix, uint32_t file)
{
	const char *name = file < w->m->files.len ? w->m->files.items[file].path : "???";

	return put_compressed(w, &w->fl_ids, file, prefix, name, NULL);
}

static int put_function(struct writer *w, const char *prefix, uint64_t g)
{
	const struct model *m = w->m;

	if (g == GROUP_NOSTACK)
		return put_compressed(w, &w->fn_ids, g, prefix, "[unknown]", NULL);
	if (group_is_unknown(g)) {
		uint32_t img = (uint32_t)g;
		const char *path = img < m->images.len ? m->images.items[img].path : "???";

		return put_compressed(w, &w->fn_ids, g, prefix, "[unknown] ",
				      path ? basename_of(path) : "???");
	}
	if (keymap_get(&w->renamed, g, 0) != UINT32_MAX) {
		char suffix[32];

		snprintf(suffix, sizeof(suffix), " [0x%" PRIx64 "]", m->functions.items[g].entry);
		return put_compressed(w, &w->fn_ids, g, prefix,
				      m->functions.items[g].name, suffix);
	}
	return put_compressed(w, &w->fn_ids, g, prefix, m->functions.items[g].name,
			      NULL);
}

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/*
 * Both readers identify a function by (object, file, name): two distinct
 * functions that share all three (static functions of a binary without
 * debug information) would merge.  All but the first get " [0x<entry>]".
 */
static int find_homonyms(struct writer *w, struct proc_ctx *pc)
{
	const struct model *m = pc->m;
	struct keymap first = { 0 };
	int err = 0;

	for (size_t i = 0; i < pc->items.len; i++) {
		const struct item *it = item_at(pc, (uint32_t)i);
		uint64_t gs[2] = { it->group, it->kind == ITEM_CALL ? it->callee : it->group };

		for (int k = 0; k < 2; k++) {
			uint64_t g = gs[k], h;
			uint32_t have;
			bool added;

			if (g >= m->functions.len)
				continue;
			h = hash_name(m->functions.items[g].name);
			/* probe on hash collisions between different names */
			for (;; h++) {
				uint64_t where = (uint64_t)m->functions.items[g].image << 32 |
						 home_file(pc, g);

				err = keymap_get_or_add(&first, where, h, (uint32_t)g, &have, &added);
				if (err)
					goto out;
				if (added || have == g)
					break;
				if (!strcmp(m->functions.items[have].name ? m->functions.items[have].name : "",
					    m->functions.items[g].name ? m->functions.items[g].name : "")) {
					err = keymap_set(&w->renamed, g, 0, 1);
					if (err)
						goto out;
					break;
				}
			}
		}
	}
out:
	keymap_free(&first);
	return err;
}

/* Subposition compression: relative to the previous cost line. */
static void put_delta(struct writer *w, uint64_t v, uint64_t prev)
{
	if (v == prev) {
		w_putc(w, '*');
	} else if (v > prev) {
		w_putc(w, '+');
		put_u64(w, v - prev);
	} else {
		w_putc(w, '-');
		put_u64(w, prev - v);
	}
}

static void put_position(struct writer *w, uint64_t addr, uint64_t line)
{
	if (w->fresh) {
		put_hex(w, addr);
		w_putc(w, ' ');
		put_u64(w, line);
	} else {
		put_delta(w, addr, w->prev_addr);
		w_putc(w, ' ');
		put_delta(w, line, w->prev_line);
	}
	w->fresh = false;
	w->prev_addr = addr;
	w->prev_line = line;
}

static void put_costs(struct writer *w, const uint64_t *cost, int n_ev)
{
	int n = n_ev;

	while (n > 1 && !cost[n - 1])
		n--; /* missing trailing costs read as zero */
	for (int e = 0; e < n; e++) {
		w_putc(w, ' ');
		put_u64(w, cost[e]);
	}
	w_putc(w, '\n');
}

static uint64_t target_entry(const struct model *m, uint64_t g, uint64_t *line)
{
	*line = 0;
	if (g < m->functions.len) {
		*line = m->functions.items[g].line;
		return m->functions.items[g].entry;
	}
	return 0;
}

static int write_body(struct writer *w, struct proc_ctx *pc, int n_ev)
{
	const struct model *m = pc->m;
	uint64_t cur_group = UINT64_MAX;
	uint32_t cur_image = UINT32_MAX - 1; /* none written yet */
	uint32_t last_fl = UINT32_MAX - 1, cur_file = UINT32_MAX - 1, home = MODEL_NONE;
	int err;

	for (size_t i = 0; i < pc->items.len; i++) {
		const struct item *it = item_at(pc, (uint32_t)i);

		if (it->dead)
			continue;
		if (it->group != cur_group) {
			home = home_file(pc, it->group);
			w_putc(w, '\n');
			if (it->image != cur_image) {
				err = put_object(w, "ob=", it->image);
				if (err)
					return err;
				cur_image = it->image;
			}
			/* annotate opens fn= in the last fl=/fi= file, KCachegrind
			 * in the last fl= file: both must be the home file */
			if (last_fl != home || cur_file != home) {
				err = put_file(w, "fl=", home);
				if (err)
					return err;
				last_fl = cur_file = home;
			}
			err = put_function(w, "fn=", it->group);
			if (err)
				return err;
			cur_group = it->group;
			w->fresh = true;
		}
		if (it->file != cur_file) {
			err = put_file(w, it->file == home ? "fe=" : "fi=", it->file);
			if (err)
				return err;
			cur_file = it->file;
		}
		if (it->kind == ITEM_CALL) {
			uint64_t tline, taddr = target_entry(m, it->callee, &tline);

			/* cob=/cfi= hold for one call only in KCachegrind */
			err = put_object(w, "cob=", group_image(m, it->callee));
			if (!err)
				err = put_file(w, "cfi=", home_file(pc, it->callee));
			if (!err)
				err = put_function(w, "cfn=", it->callee);
			if (err)
				return err;
			w_puts(w, "calls=");
			put_u64(w, it->calls);
			w_putc(w, ' ');
			put_hex(w, taddr);
			w_putc(w, ' ');
			put_u64(w, tline);
			w_putc(w, '\n');
		}
		put_position(w, it->addr, it->line);
		put_costs(w, it->cost, n_ev);
	}
	return 0;
}

/* ---- header --------------------------------------------------------------- */

struct hbuf {
	char *s;
	size_t len, cap;
};

static int hb_printf(struct hbuf *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int hb_printf(struct hbuf *h, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (h->len + (size_t)n + 1 > h->cap) {
		size_t ncap = (h->len + (size_t)n + 1) * 2;
		char *s = realloc(h->s, ncap);

		if (!s)
			return -ENOMEM;
		h->s = s;
		h->cap = ncap;
	}
	va_start(ap, fmt);
	vsnprintf(h->s + h->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	h->len += (size_t)n;
	return 0;
}

/* Copies s without control characters, at most max bytes. */
static char *clean_text(const char *s, size_t max)
{
	size_t n = strlen(s), i;
	char *d;

	if (n > max)
		n = max;
	d = malloc(n + 4);
	if (!d)
		return NULL;
	for (i = 0; i < n; i++)
		d[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
	if (strlen(s) > max) {
		memcpy(d + i, "...", 3);
		i += 3;
	}
	d[i] = 0;
	return d;
}

/* desc: lines of one file, each ending with '\n': the counts of this run
 * first, the explanations after, since the header has room for ~1.5 KiB
 * and what does not fit becomes comments after it. */
static int build_descs(const struct model *m, const struct model_process *proc,
		       const struct proc_info *pi, const struct proc_ctx *pc, bool traced,
		       struct hbuf *d)
{
	int err = 0;

	for (size_t i = 0; !err && i < m->lost.len; i++) {
		char *cause = clean_text(m->lost.items[i].name ? m->lost.items[i].name : "?", 200);

		if (!cause)
			return -ENOMEM;
		err = hb_printf(d, "desc: Lost: %" PRIu64 " events (%s)\n",
				m->lost.items[i].value, cause);
		free(cause);
	}
	if (!err)
		err = hb_printf(d, "desc: TruncatedStacks: %" PRIu64 " of %" PRIu64
			       " samples have a user stack that does not reach a known root\n",
			       pi->truncated, pi->samples);
	if (!err && proc->generation)
		err = hb_printf(d, "desc: Exec: image %" PRIu32 " of pid %d (after %" PRIu32
			       " exec%s)\n", proc->generation, (int)proc->pid, proc->generation,
			       proc->generation > 1 ? "s" : "");
	if (!err && traced && pc->unattributed_calls)
		err = hb_printf(d, "desc: TracedUnattributed: %" PRIu64 " traced calls had no "
			       "known caller (no enclosing traced call, several sampled callers)\n",
			       pc->unattributed_calls);
	if (!err && traced && pi->trace_unmatched)
		err = hb_printf(d, "desc: TracedUnmatched: %" PRIu64 " traced entries or exits "
			       "without their pair were dropped\n", pi->trace_unmatched);
	if (!err && (m->run.event || m->run.freq_hz || m->run.period_ns))
		err = hb_printf(d, "desc: Sampling: %s at %" PRIu32 " Hz, period %" PRIu64
			       " ns; Samples counts samples, Ns the CPU time they stand for\n",
			       m->run.event ? m->run.event : "cpu-clock", m->run.freq_hz,
			       m->run.period_ns);
	if (!err)
		err = hb_printf(d, "desc: CallCounts: calls= gives the number of samples in "
			       "which the call was on the stack (a recursive call counts once "
			       "per sample), not executed calls%s\n",
			       traced ? "; calls into traced functions with a known caller are "
					"exact counts from uprobes" : "");
	if (!err)
		err = hb_printf(d, "desc: Jumps: no jump=/jcnd= lines: they need branch "
			       "records, which need a hardware PMU that this machine lacks\n");
	if (!err && traced)
		err = hb_printf(d, "desc: Traced: TracedNs is wall-clock time of traced calls "
			       "(uprobes), kept apart from sampled CPU time: self time at each "
			       "traced function's entry address, inclusive time on calls= lines\n");
	if (!err)
		err = hb_printf(d, "desc: Unknown: [unknown] IMAGE holds the code of IMAGE that "
			       "no symbol covers; its cost lines keep the exact addresses\n");
	return err;
}

static int write_process(const struct model *m, const struct export_options *opts,
			 const struct aggregates *ag, uint32_t process, size_t s_begin,
			 size_t s_end, const char *relpath)
{
	const struct model_process *proc = &m->processes.items[process];
	const struct proc_info *pi = &ag->procs[process];
	const struct stack_agg *sa = ag->stacks.items;
	bool traced = m->traced.len > 0;
	int n_ev = traced ? 3 : 2;
	struct proc_ctx pc;
	struct writer w;
	struct outfile f;
	struct hbuf descs = { 0 };
	uint64_t totals[N_EV] = { 0 };
	char *cmd = NULL;
	size_t dpos, head_len;
	int err;

	memset(&pc, 0, sizeof(pc));
	memset(&w, 0, sizeof(w));
	pc.m = m;
	pc.items.size = sizeof(struct item);
	pc.self_ix = malloc((m->locations.len + 1) * sizeof(*pc.self_ix));
	if (!pc.self_ix) {
		err = -ENOMEM;
		goto out;
	}
	memset(pc.self_ix, 0xff, (m->locations.len + 1) * sizeof(*pc.self_ix));
	for (size_t i = s_begin; i < s_end; i++) {
		err = add_stack(&pc, &sa[i]);
		if (err)
			goto out;
	}
	if (traced) {
		err = add_traced(&pc, ag, process);
		if (err)
			goto out;
	}
	/* the indexes served the adding only: give their memory back first */
	free(pc.self_ix);
	pc.self_ix = NULL;
	keymap_free(&pc.edge_ix);
	err = place_items(&pc);
	if (err)
		goto out;
	for (size_t i = 0; i < pc.items.len; i++) {
		struct item *it = item_at(&pc, (uint32_t)i);
		uint32_t home = home_file(&pc, it->group);

		it->rank = it->file == home ? 0 : (it->file == MODEL_NONE ? 1 : it->file + 2);
	}
	err = sort_items(&pc);
	if (err)
		goto out;
	for (size_t i = 0; i < pc.items.len; i++) {
		const struct item *it = item_at(&pc, (uint32_t)i);

		if (it->kind == ITEM_SELF)
			for (int e = 0; e < n_ev; e++)
				totals[e] += it->cost[e];
	}

	err = build_descs(m, proc, pi, &pc, traced, &descs);
	if (err)
		goto out;
	cmd = clean_text(proc->cmdline && *proc->cmdline ? proc->cmdline : proc->comm, CMD_MAX);
	if (!cmd) {
		err = -ENOMEM;
		goto out;
	}

	w.buf = malloc(OUT_BUF_SIZE);
	err = idmap_init(&w.ob_ids, m->images.len);
	if (!err)
		err = idmap_init(&w.fl_ids, m->files.len);
	if (!err)
		err = idmap_init(&w.fn_ids, m->functions.len);
	if (err || !w.buf) {
		err = -ENOMEM;
		goto out;
	}
	err = outfile_open(&f, opts, relpath);
	if (err)
		goto out;
	w.fp = f.fp;
	w.m = m;
	head_len = (size_t)fprintf(f.fp, "# callgrind format\nversion: 1\ncreator: collector %s\n"
				   "pid: %d\ncmd: %s\n", COLLECTOR_VERSION, (int)proc->pid,
				   *cmd ? cmd : "???");
	/* desc: lines go in the header (callgrind_annotate reads them only
	 * there) as long as events: stays where KCachegrind looks for it;
	 * the rest become comments after the header. */
	head_len += 200 + (traced ? 100 : 0); /* positions:, event:, events: */
	dpos = 0;
	while (dpos < descs.len) {
		size_t n = (size_t)(strchr(descs.s + dpos, '\n') - (descs.s + dpos)) + 1;

		if (head_len + n > HEADER_EVENTS_LIMIT)
			break;
		fwrite(descs.s + dpos, 1, n, f.fp);
		head_len += n;
		dpos += n;
	}
	fputs("positions: instr line\n"
	      "event: Samples : Samples (CPU-clock)\n"
	      "event: Ns : CPU time in ns (sampled)\n", f.fp);
	if (traced)
		fputs("event: TracedNs : Wall-clock time of traced calls in ns (uprobes)\n", f.fp);
	fputs(traced ? "events: Samples Ns TracedNs\n" : "events: Samples Ns\n", f.fp);
	w_puts(&w, "summary:");
	for (int e = 0; e < n_ev; e++) {
		w_putc(&w, ' ');
		put_u64(&w, totals[e]);
	}
	w_putc(&w, '\n');
	w_flush(&w);
	while (dpos < descs.len) {
		size_t n = (size_t)(strchr(descs.s + dpos, '\n') - (descs.s + dpos)) + 1;

		fputs("# ", f.fp);
		fwrite(descs.s + dpos, 1, n, f.fp);
		dpos += n;
	}
	if (strlen(proc->cmdline ? proc->cmdline : "") > CMD_MAX) {
		char *full = clean_text(proc->cmdline, SIZE_MAX - 4);

		if (!full) {
			outfile_abort(&f);
			err = -ENOMEM;
			goto out;
		}
		fprintf(f.fp, "# cmd (complete): %s\n", full);
		free(full);
	}
	err = find_homonyms(&w, &pc);
	if (!err)
		err = write_body(&w, &pc, n_ev);
	if (err) {
		w.len = 0;
		outfile_abort(&f);
		goto out;
	}
	w_puts(&w, "\ntotals:");
	for (int e = 0; e < n_ev; e++) {
		w_putc(&w, ' ');
		put_u64(&w, totals[e]);
	}
	w_putc(&w, '\n');
	w_flush(&w);
	err = outfile_commit(&f);
out:
	idmap_free(&w.ob_ids);
	idmap_free(&w.fl_ids);
	idmap_free(&w.fn_ids);
	keymap_free(&w.renamed);
	free(w.buf);
	free(pc.self_ix);
	keymap_free(&pc.edge_ix);
	keymap_free(&pc.home);
	vec_free(&pc.items);
	free(pc.scratch);
	free(descs.s);
	free(cmd);
	return err;
}

/* ---- entry point ---------------------------------------------------------- */

struct proc_run {
	uint32_t process;
	size_t begin, end; /* in ag.stacks */
};

static const struct model *sort_model;

static int cmp_proc_run(const void *a, const void *b)
{
	const struct proc_run *ra = a, *rb = b;
	const struct model_process *x = &sort_model->processes.items[ra->process];
	const struct model_process *y = &sort_model->processes.items[rb->process];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->generation != y->generation)
		return x->generation < y->generation ? -1 : 1;
	return ra->process < rb->process ? -1 : ra->process > rb->process;
}

int callgrind_write(const struct model *m, const struct export_options *opts)
{
	struct aggregates ag;
	struct proc_run *runs = NULL;
	size_t n_runs = 0;
	int err = 0;

	if (!m->samples.len)
		return 0;
	memset(&ag, 0, sizeof(ag));
	ag.stacks.size = sizeof(struct stack_agg);
	ag.pairs.size = sizeof(struct trace_pair);
	ag.selfs.size = sizeof(struct trace_self);
	ag.procs = calloc(m->processes.len ? m->processes.len : 1, sizeof(*ag.procs));
	if (!ag.procs)
		return -ENOMEM;
	err = aggregate_samples(m, &ag);
	if (!err)
		err = aggregate_trace(m, &ag);
	if (err)
		goto out;
	runs = calloc(m->processes.len ? m->processes.len : 1, sizeof(*runs));
	if (!runs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ag.stacks.len;) {
		const struct stack_agg *sa = ag.stacks.items;
		size_t j = i;

		while (j < ag.stacks.len && sa[j].process == sa[i].process)
			j++;
		runs[n_runs++] = (struct proc_run){ sa[i].process, i, j };
		i = j;
	}
	sort_model = m;
	qsort(runs, n_runs, sizeof(*runs), cmp_proc_run);
	for (size_t r = 0; r < n_runs; r++) {
		const struct model_process *p = &m->processes.items[runs[r].process];
		char name[96];
		int len;

		if (p->generation)
			len = snprintf(name, sizeof(name), "callgrind.out.%d.%" PRIu32, (int)p->pid,
				       p->generation);
		else
			len = snprintf(name, sizeof(name), "callgrind.out.%d", (int)p->pid);
		/* a reused pid: the same (pid, generation) twice in one run */
		if (r && m->processes.items[runs[r - 1].process].pid == p->pid &&
		    m->processes.items[runs[r - 1].process].generation == p->generation)
			snprintf(name + len, sizeof(name) - (size_t)len, "-%" PRIu32,
				 runs[r].process);
		err = write_process(m, opts, &ag, runs[r].process, runs[r].begin, runs[r].end,
				    name);
		if (err)
			goto out;
	}
out:
	free(runs);
	vec_free(&ag.stacks);
	vec_free(&ag.pairs);
	vec_free(&ag.selfs);
	free(ag.procs);
	return err;
}

const struct format callgrind_format = {
	.name = "callgrind",
	.needs = FORMAT_NEEDS_SAMPLES | FORMAT_NEEDS_TRACE_EVENTS,
	.write = callgrind_write,
	.recognize = callgrind_recognize,
	.dump = callgrind_dump,
};
