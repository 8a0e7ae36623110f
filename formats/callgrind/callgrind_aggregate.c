// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind writer: the whole model summed once, before any file is
 * written: the samples by (process, stack), the traced calls by (process,
 * caller, callee) and their self times by (process, function).
 */
#include "formats/callgrind/callgrind_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void *vec_push(struct vec *v)
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

void vec_free(struct vec *v)
{
	free(v->items);
	v->items = NULL;
	v->len = v->cap = 0;
}

uint64_t location_group(const struct model *m, uint32_t loc)
{
	const struct model_location *l;

	if (loc == MODEL_NONE || loc >= m->locations.len)
		return GROUP_NOSTACK;
	l = &m->locations.items[loc];
	if (l->function != MODEL_NONE && l->function < m->functions.len)
		return l->function;
	return group_unknown(l->image);
}

uint64_t traced_group(const struct model *m, uint32_t tf)
{
	const struct model_traced_function *t = &m->traced.items[tf];

	if (t->function != MODEL_NONE && t->function < m->functions.len)
		return t->function;
	return group_unknown(t->image);
}

uint32_t group_image(const struct model *m, uint64_t g)
{
	if (g == GROUP_NOSTACK)
		return UINT32_MAX;
	if (group_is_unknown(g))
		return (uint32_t)g;
	return m->functions.items[g].image;
}

/* ---- samples -------------------------------------------------------------- */

/*
 * Per stack id (the last: no valid stack), a chain of the sums of the
 * processes that sampled it (nearly always one): a sample costs no hashing.
 */
struct stack_chains {
	uint32_t *head;  /* n_slots */
	uint32_t *next;  /* by index in ag->stacks */
	size_t n_slots, next_cap;
};

#define AGG_AHEAD 16

/* Stacks come in random order: start loading the head of a later sample's
 * chain, and a nearer one's sum. */
static void prefetch_ahead(const struct model *m, const struct aggregates *ag,
			   const struct stack_chains *sc, size_t i)
{
	uint32_t ahead;

	if (i + AGG_AHEAD >= m->samples.len)
		return;
	ahead = m->samples.items[i + AGG_AHEAD].stack;
	if (ahead < m->stacks.len)
		__builtin_prefetch(&sc->head[ahead]);
	ahead = m->samples.items[i + AGG_AHEAD / 2].stack;
	if (ahead < m->stacks.len && sc->head[ahead] != UINT32_MAX)
		__builtin_prefetch((struct stack_agg *)ag->stacks.items + sc->head[ahead], 1);
}

/* The sum of (process, stack slot), new when absent; NULL on ENOMEM. */
static struct stack_agg *stack_sum(const struct model *m, struct aggregates *ag,
				   struct stack_chains *sc, uint32_t process, size_t slot)
{
	struct stack_agg *a;
	uint32_t idx;

	for (idx = sc->head[slot]; idx != UINT32_MAX; idx = sc->next[idx]) {
		a = (struct stack_agg *)ag->stacks.items + idx;
		if (a->process == process)
			return a;
	}
	if (ag->stacks.len >= UINT32_MAX - 1)
		return NULL;
	a = vec_push(&ag->stacks);
	if (!a)
		return NULL;
	idx = (uint32_t)(ag->stacks.len - 1);
	if (idx >= sc->next_cap) {
		size_t ncap = sc->next_cap ? 2 * sc->next_cap : 1024;
		uint32_t *nn = realloc(sc->next, ncap * sizeof(*nn));

		if (!nn)
			return NULL;
		sc->next = nn;
		sc->next_cap = ncap;
	}
	a->process = process;
	a->stack = slot < m->stacks.len ? (uint32_t)slot : MODEL_NONE;
	sc->next[idx] = sc->head[slot];
	sc->head[slot] = idx;
	return a;
}

/* The sums in (process, stack) order: a counting sort on the process over
 * the stacks taken in id order (MODEL_NONE last, as it sorts). */
static int sort_stack_sums(const struct model *m, struct aggregates *ag,
			   const struct stack_chains *sc)
{
	const struct stack_agg *sa = ag->stacks.items;
	size_t np = m->processes.len, n = ag->stacks.len;
	uint32_t *pos = calloc(np + 1, sizeof(*pos));
	struct stack_agg *sorted = malloc((n ? n : 1) * sizeof(*sorted));

	if (!pos || !sorted) {
		free(pos);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		pos[sa[i].process + 1]++;
	for (size_t p = 0; p < np; p++)
		pos[p + 1] += pos[p];
	for (size_t slot = 0; slot < sc->n_slots; slot++)
		for (uint32_t idx = sc->head[slot]; idx != UINT32_MAX; idx = sc->next[idx])
			sorted[pos[sa[idx].process]++] = sa[idx];
	free(ag->stacks.items);
	ag->stacks.items = sorted;
	ag->stacks.cap = n ? n : 1;
	free(pos);
	return 0;
}

/*
 * Sums the samples by (process, stack) and leaves the sums sorted by
 * (process, stack).  The stack id indexes a dense array of chains, and the
 * order comes from a counting sort, not from a comparison sort.
 */
int aggregate_samples(const struct model *m, struct aggregates *ag)
{
	struct stack_chains sc = { .n_slots = m->stacks.len + 1 };
	const struct stack_agg *sa;
	int err = -ENOMEM;

	sc.head = malloc(sc.n_slots * sizeof(*sc.head));
	if (!sc.head)
		goto out;
	memset(sc.head, 0xff, sc.n_slots * sizeof(*sc.head));
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		size_t slot = s->stack < m->stacks.len ? s->stack : m->stacks.len;
		struct stack_agg *a;

		prefetch_ahead(m, ag, &sc, i);
		if (s->process >= m->processes.len)
			continue; /* not attributable to a file */
		a = stack_sum(m, ag, &sc, s->process, slot);
		if (!a)
			goto out;
		a->samples++;
		if (s->event < MODEL_MAX_EVENTS)
			a->weight[s->event] += s->weight;
	}
	sa = ag->stacks.items;
	for (size_t i = 0; i < ag->stacks.len; i++) {
		ag->procs[sa[i].process].samples += sa[i].samples;
		if (sa[i].stack != MODEL_NONE && m->stacks.items[sa[i].stack].truncated)
			ag->procs[sa[i].process].truncated += sa[i].samples;
	}
	err = sort_stack_sums(m, ag, &sc);
out:
	free(sc.head);
	free(sc.next);
	return err;
}

/* ---- traced calls ----------------------------------------------------------- */

struct pair_key {
	uint32_t process, parent, child;
};

/* (process, parent, child) -> index in ag->pairs */
struct pair_entry {
	uint32_t process, parent, child;
	uint32_t idx;
};

static inline uint64_t pair_key_hash(const struct pair_key *k)
{
	return hash_pair(k->process, (uint64_t)k->parent << 32 | k->child);
}

static inline uint64_t pair_entry_hash(const struct pair_entry *e)
{
	return hash_pair(e->process, (uint64_t)e->parent << 32 | e->child);
}

static inline bool pair_match(const struct pair_entry *e, const struct pair_key *k)
{
	return e->process == k->process && e->parent == k->parent && e->child == k->child;
}

HASHTAB_DEFINE(pair_index, struct pair_entry, struct pair_key, pair_entry_hash, pair_key_hash,
	       pair_match)

/* The indexes of the sums: pairs by (process, parent, child), self times
 * by process << 32 | function. */
struct trace_sums {
	struct pair_index pairs;
	struct idmap selfs;
	struct aggregates *ag;
};

static int add_pair(struct trace_sums *ts, uint32_t process, uint32_t parent, uint32_t child,
		    uint64_t calls, uint64_t ns)
{
	struct pair_key k = { process, parent, child };
	struct vec *pairs = &ts->ag->pairs;
	struct pair_entry *e;
	struct trace_pair *tp;
	bool fresh;

	e = pair_index_upsert(&ts->pairs, &k, &fresh);
	if (!e)
		return -ENOMEM;
	if (fresh) {
		*e = (struct pair_entry){ process, parent, child, (uint32_t)pairs->len };
		tp = vec_push(pairs);
		if (!tp)
			return -ENOMEM;
		tp->process = process;
		tp->parent = parent;
		tp->child = child;
	}
	tp = (struct trace_pair *)pairs->items + e->idx;
	tp->calls += calls;
	tp->ns += ns;
	return 0;
}

static int add_self(struct trace_sums *ts, uint32_t process, uint32_t func, uint64_t ns)
{
	uint64_t key = (uint64_t)process << 32 | func;
	struct vec *selfs = &ts->ag->selfs;
	struct idmap_entry *e;
	struct trace_self *self;
	bool fresh;

	e = idmap_upsert(&ts->selfs, &key, &fresh);
	if (!e)
		return -ENOMEM;
	if (fresh) {
		e->key = key;
		e->val = (uint32_t)selfs->len;
		self = vec_push(selfs);
		if (!self)
			return -ENOMEM;
		self->process = process;
		self->func = func;
	}
	self = (struct trace_self *)selfs->items + e->val;
	self->ns += ns;
	return 0;
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

/* Closes the open call at depth d of thread tc at the time of exit e. */
static int close_call(struct trace_sums *ts, const struct model_trace_event *e,
		      struct thread_calls *tc, size_t d)
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
	err = add_pair(ts, e->process, parent, oc->func, 1, dur);
	if (!err)
		err = add_self(ts, e->process, oc->func, self);
	return err;
}

static int open_call(struct thread_calls *tc, const struct model_trace_event *e)
{
	if (tc->len == tc->cap) {
		size_t ncap = tc->cap ? tc->cap * 2 : 16;
		struct open_call *n = realloc(tc->items, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		tc->items = n;
		tc->cap = ncap;
	}
	tc->items[tc->len++] = (struct open_call){ e->func, e->time_ns, 0 };
	return 0;
}

/* An exit closes the innermost open call of its function (the calls above
 * it lost their exits and are dropped); an exit without entry is dropped. */
static int exit_call(struct trace_sums *ts, struct thread_calls *tc,
		     const struct model_trace_event *e)
{
	struct proc_info *pi = &ts->ag->procs[e->process];
	size_t d = tc->len;
	int err;

	while (d > 0 && tc->items[d - 1].func != e->func)
		d--;
	if (!d) {
		pi->trace_unmatched++;
		return 0;
	}
	pi->trace_unmatched += tc->len - d;
	err = close_call(ts, e, tc, d - 1);
	tc->len = d - 1;
	return err;
}

/* Rebuilds the traced calls from the entry/exit stream, thread by thread. */
static int replay_events(const struct model *m, struct trace_sums *ts)
{
	struct thread_calls *threads;
	int err = 0;

	threads = calloc(m->threads.len ? m->threads.len : 1, sizeof(*threads));
	if (!threads)
		return -ENOMEM;
	for (size_t i = 0; i < m->trace.len && !err; i++) {
		const struct model_trace_event *e = &m->trace.items[i];

		if (e->thread >= m->threads.len || e->process >= m->processes.len ||
		    e->func >= m->traced.len)
			continue;
		ts->ag->procs[e->process].has_trace_events = true;
		if (e->kind == MODEL_TRACE_ENTRY)
			err = open_call(&threads[e->thread], e);
		else if (e->kind == MODEL_TRACE_EXIT)
			err = exit_call(ts, &threads[e->thread], e);
	}
	for (size_t t = 0; t < m->threads.len; t++) {
		uint32_t p = m->threads.items[t].process;

		if (!err && threads[t].len && p < m->processes.len)
			ts->ag->procs[p].trace_unmatched += threads[t].len;
		free(threads[t].items);
	}
	free(threads);
	return err;
}

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
 * The traced calls, from the entry/exit stream.  Processes without events
 * fall back on the kernel's per-thread aggregates, whose calls have no
 * known traced parent.
 */
int aggregate_trace(const struct model *m, struct aggregates *ag)
{
	struct trace_sums ts = { .ag = ag };
	int err;

	if (!m->traced.len)
		return 0;
	err = replay_events(m, &ts);
	for (size_t i = 0; i < m->func_stats.len && !err; i++) {
		const struct model_func_stats *fs = &m->func_stats.items[i];

		if (fs->process >= m->processes.len || fs->func >= m->traced.len ||
		    ag->procs[fs->process].has_trace_events || !fs->calls)
			continue;
		err = add_pair(&ts, fs->process, MODEL_NONE, fs->func, fs->calls, fs->total_ns);
		if (!err)
			err = add_self(&ts, fs->process, fs->func, fs->self_ns);
	}
	/* no traced call may have completed: qsort() takes no NULL array */
	if (!err && ag->pairs.len)
		qsort(ag->pairs.items, ag->pairs.len, sizeof(struct trace_pair), cmp_trace_pair);
	if (!err && ag->selfs.len)
		qsort(ag->selfs.items, ag->selfs.len, sizeof(struct trace_self), cmp_trace_self);
	pair_index_free(&ts.pairs);
	idmap_free(&ts.selfs);
	return err;
}
