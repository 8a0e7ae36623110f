// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit writer: the metrics (one per event, and the wall-clock view)
 * and their values: ns or counts per (thread, context, metric) for the
 * four scopes:
 *   point      the samples whose leaf is the context;
 *   function   point + the function values of the children whose relation
 *              is lexical (propagation bit 0 set): cost exclusive to the
 *              function, excluding calls and inlined calls;
 *   lex_aware  hpcprof's custom scope; equal to function without loops;
 *   execution  point + all children's execution values (inclusive).
 * Integers are summed (exact) and converted to seconds when written.
 * Profiles are the threads in (process, thread) order.
 */
#include "formats/hpctoolkit/hpctoolkit_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- metrics ---------------------------------------------------------- */

static void event_metric(struct hk_metric *mt, const struct model_event *e)
{
	mt->seconds = e->clock;
	snprintf(mt->unit, sizeof(mt->unit), "%s", e->clock ? "s" : e->unit);
	if (!strcmp(e->name, "cpu-clock")) {
		snprintf(mt->name, sizeof(mt->name), "CPUTIME (sec)");
		snprintf(mt->description, sizeof(mt->description),
			 "CPU time in seconds, from the sampled cpu-clock");
		return;
	}
	snprintf(mt->name, sizeof(mt->name), e->clock ? "%s (sec)" : "%s", e->name);
	snprintf(mt->description, sizeof(mt->description), "%s, in %s, %s %s", e->description,
		 e->clock ? "seconds" : e->unit, e->aggregated ? "summed by stack from" :
		 "from the sampled", e->name);
}

void hk_list_metrics(struct hk_tree *t)
{
	const struct model *m = t->m;
	uint32_t n = model_event_count(m);

	_Static_assert(MODEL_MAX_EVENTS <= 16, "an event id takes 4 bits of a leaf's key");
	if (n > MODEL_MAX_EVENTS)
		n = MODEL_MAX_EVENTS;
	t->trace_event = MODEL_NONE;
	for (uint32_t ev = 0; ev < n; ev++) {
		const struct model_event *e = model_event(m, ev);

		event_metric(&t->metrics[ev], e);
		t->wall_event[ev] = model_wall_event(m, ev);
		if (t->trace_event == MODEL_NONE && !e->aggregated)
			t->trace_event = ev;
	}
	t->n_metrics = n;
	t->wall_metric = n;
	if (model_has_wall(m)) {
		struct hk_metric *w = &t->metrics[t->n_metrics++];

		snprintf(w->name, sizeof(w->name), "wall (sec)");
		snprintf(w->description, sizeof(w->description), "Wall-clock time in seconds, "
			 "on-CPU time plus off-CPU time, by the stack where it was spent");
		snprintf(w->unit, sizeof(w->unit), "s");
		w->seconds = true;
		w->wall = true;
	}
}

/* ---- threads ----------------------------------------------------------- */

/* The entry point of a complete stack of thread th. */
static unsigned thread_entry(const struct model *m, const struct model_thread *th)
{
	if (th->process < m->processes.len && m->processes.items[th->process].pid == th->tid)
		return HK_ENTRY_MAIN;
	return HK_ENTRY_THREAD;
}

int hk_order_threads(struct hk_tree *t)
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

/* ---- leaf weights ---------------------------------------------------------- */

static int cmp_leaf_weight(const void *a, const void *b)
{
	const struct hk_leaf_weight *x = a, *y = b;

	if (x->prof != y->prof)
		return x->prof < y->prof ? -1 : 1;
	return (x->ctx > y->ctx) - (x->ctx < y->ctx);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The sums by leaf_key(): profile, context and event in one word, in that
 * order of significance, so that the sorted sums come by profile and
 * context. */
struct leaf_sum {
	uint64_t key;
	uint64_t ns;
};

static inline uint64_t leaf_key_hash(const uint64_t *k)
{
	return hash_mix64(*k);
}

static inline uint64_t leaf_sum_hash(const struct leaf_sum *e)
{
	return hash_mix64(e->key);
}

static inline bool leaf_sum_match(const struct leaf_sum *e, const uint64_t *k)
{
	return e->key == *k;
}

HASHTAB_DEFINE(leaf_sums, struct leaf_sum, uint64_t, leaf_sum_hash, leaf_key_hash, leaf_sum_match)

#define LEAF_MAX_PROFILES (1u << 28)

static inline uint64_t leaf_key(uint32_t prof, uint32_t ctx, uint32_t event)
{
	return (uint64_t)prof << 36 | (uint64_t)ctx << 4 | event;
}

#define LEAF_AHEAD 16

/* Samples hit stacks and contexts in random order: load a later sample's
 * stack and leaf, and a nearer one's sum, early. */
static void prefetch_ahead(const struct hk_tree *t, const struct leaf_sums *tab, size_t i)
{
	const struct model *m = t->m;
	const struct model_sample *a;

	if (i + LEAF_AHEAD >= m->samples.len)
		return;
	a = &m->samples.items[i + LEAF_AHEAD];
	if (a->stack < m->stacks.len) {
		__builtin_prefetch(&m->stacks.items[a->stack]);
		__builtin_prefetch(&t->leaf[(size_t)a->stack * HK_N_ENTRIES]);
	}
	a = &m->samples.items[i + LEAF_AHEAD / 2];
	if (a->stack < m->stacks.len && a->thread < m->threads.len) {
		uint32_t c = t->leaf[(size_t)a->stack * HK_N_ENTRIES + t->thread_entry[a->thread]];

		if (c)
			leaf_sums_prefetch(tab, hash_mix64(leaf_key(t->thread_prof[a->thread], c,
								    a->event)));
	}
}

/* The sums listed in (profile, context) order. */
static int list_leaves(struct leaf_sums *tab, struct hk_leaf_weight **out, size_t *n_out)
{
	struct hk_leaf_weight *list = malloc((tab->len + 1) * sizeof(*list));
	struct leaf_sum *e;
	size_t n = 0;

	if (!list)
		return -ENOMEM;
	HASHTAB_FOR_EACH(tab, e)
		list[n++] = (struct hk_leaf_weight){ (uint32_t)(e->key >> 36),
						     (uint32_t)(e->key >> 4), e->ns,
						     (uint32_t)(e->key & 15) };
	qsort(list, n, sizeof(*list), cmp_leaf_weight);
	*out = list;
	*n_out = n;
	return 0;
}

/* Sums the sample weights by (profile, leaf context, event), building the
 * tree as stacks are met, and counts each metric's samples and weight.
 * Linear in distinct (thread, context, event) triples. */
int hk_collect_leaves(struct hk_tree *t, struct hk_leaf_weight **out, size_t *n_out)
{
	const struct model *m = t->m;
	struct leaf_sums tab = { 0 };
	int err = -ENOMEM;

	if (t->n_threads >= LEAF_MAX_PROFILES)
		return -E2BIG;
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		struct leaf_sum *e;
		uint32_t prof, ctx;
		uint64_t key;
		bool fresh;

		prefetch_ahead(t, &tab, i);
		if (s->thread >= m->threads.len || !(prof = t->thread_prof[s->thread]) ||
		    s->event >= t->wall_metric)
			continue;
		ctx = hk_sample_ctx(t, s);
		if (!ctx)
			goto out;
		t->n_samples++;
		t->metrics[s->event].samples++;
		t->metrics[s->event].total += s->weight;
		if (t->wall_event[s->event]) {
			t->metrics[t->wall_metric].samples++;
			t->metrics[t->wall_metric].total += s->weight;
		}
		key = leaf_key(prof, ctx, s->event);
		e = leaf_sums_upsert(&tab, &key, &fresh);
		if (!e)
			goto out;
		e->key = key;
		e->ns += s->weight;
	}
	err = list_leaves(&tab, out, n_out);
out:
	leaf_sums_free(&tab);
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

/* Dense scratch arrays over the contexts, reused across threads: acc holds
 * each context's sums, HK_N_SCOPES per metric (acc_of()). */
struct propagation {
	uint64_t *acc;
	unsigned n_metrics;
	uint32_t *touched;
	uint8_t *mark;
	size_t values_cap;
};

static inline uint64_t *acc_of(const struct propagation *pg, uint32_t ctx, unsigned metric)
{
	return pg->acc + ((size_t)ctx * pg->n_metrics + metric) * HK_N_SCOPES;
}

/* Marks the leaves of one profile and their ancestors (a walk stops at the
 * first marked node), adding each leaf's weight to its point value (and the
 * wall view's); returns the marked contexts in increasing id order. */
static size_t mark_profile(struct hk_tree *t, struct propagation *pg,
			   const struct hk_leaf_weight *lw, size_t n)
{
	size_t nn = t->n_nodes, nt = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t c = lw[i].ctx;

		acc_of(pg, c, lw[i].event)[HK_SCOPE_POINT] += lw[i].ns;
		if (t->wall_event[lw[i].event])
			acc_of(pg, c, t->wall_metric)[HK_SCOPE_POINT] += lw[i].ns;
		for (; !pg->mark[c]; c = t->nodes[c].parent) {
			pg->mark[c] = 1;
			pg->touched[nt++] = c;
			if (!c)
				break;
		}
	}
	/* in id order: by a scan of the marks when they are dense */
	if (nt > nn / 32) {
		nt = 0;
		for (size_t c = 0; c < nn; c++)
			if (pg->mark[c])
				pg->touched[nt++] = c;
	} else {
		qsort(pg->touched, nt, sizeof(*pg->touched), cmp_u32);
	}
	return nt;
}

/* Room for one more value and its sums. */
static int grow_values(struct hk_tree *t, struct propagation *pg)
{
	size_t cap = pg->values_cap * 2;
	struct hk_value *nv;
	uint64_t *ns;

	nv = realloc(t->values, cap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	t->values = nv;
	ns = realloc(t->ns, cap * t->n_metrics * 3 * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	t->ns = ns;
	pg->values_cap = cap;
	return 0;
}

/* Emits the profile's values, sorted by ctx, and clears the scratch. */
static int emit_profile(struct hk_tree *t, struct propagation *pg, uint32_t prof, size_t nt)
{
	struct hk_thread *th = &t->threads[prof - 1];

	th->first_value = t->n_values;
	for (size_t k = 0; k < nt; k++) {
		uint32_t c = pg->touched[k];
		size_t v = t->n_values;

		if (v == pg->values_cap && grow_values(t, pg))
			return -ENOMEM;
		t->values[v] = (struct hk_value){ .ctx = c, .prof = prof };
		for (unsigned mi = 0; mi < t->n_metrics; mi++) {
			uint64_t *a = acc_of(pg, c, mi), *out = &t->ns[(v * t->n_metrics + mi) * 3];

			for (int s = 0; s < HK_N_SCOPES; s++)
				out[hk_value_slot(s)] = a[s];
		}
		t->n_values++;
		memset(acc_of(pg, c, 0), 0, t->n_metrics * HK_N_SCOPES * sizeof(*pg->acc));
		pg->mark[c] = 0;
	}
	th->n_values = t->n_values - th->first_value;
	return 0;
}

/* Adds context c's sums of every metric to its parent's. */
static void propagate_ctx(struct hk_tree *t, struct propagation *pg, uint32_t c)
{
	uint32_t p = t->nodes[c].parent;
	bool lexical = hk_node_propagation(&t->nodes[c]) & 1;

	for (unsigned mi = 0; mi < t->n_metrics; mi++) {
		uint64_t *a = acc_of(pg, c, mi), *pa;

		a[HK_SCOPE_EXECUTION] += a[HK_SCOPE_POINT];
		a[HK_SCOPE_FUNCTION] += a[HK_SCOPE_POINT];
		a[HK_SCOPE_LEX_AWARE] = a[HK_SCOPE_FUNCTION];
		if (!c)
			continue;
		pa = acc_of(pg, p, mi);
		pa[HK_SCOPE_EXECUTION] += a[HK_SCOPE_EXECUTION];
		if (lexical)
			pa[HK_SCOPE_FUNCTION] += a[HK_SCOPE_FUNCTION];
	}
}

/*
 * Propagates each thread's leaf weights up the tree with dense scratch
 * arrays reused across threads; emits the thread's values sorted by ctx.
 *
 * Bottom up rather than one walk to the root per leaf: the leaves and their
 * ancestors are marked, then taken in decreasing id order, which puts every
 * child before its parent (a parent is created first), each adding its sums
 * to its parent's once:
 *   execution(c) = point(c) + the execution of all its children,
 *   function(c)  = point(c) + the function of its children whose
 *                  propagation bit 0 is set (lex_aware: the same).
 */
int hk_propagate(struct hk_tree *t, const struct hk_leaf_weight *lw, size_t n_lw)
{
	size_t nn = t->n_nodes;
	struct propagation pg = { .values_cap = 1024, .n_metrics = t->n_metrics };
	int err = -ENOMEM;

	pg.acc = calloc(nn * t->n_metrics * HK_N_SCOPES, sizeof(*pg.acc));
	pg.touched = malloc(nn * sizeof(*pg.touched));
	pg.mark = calloc(nn, 1);
	t->values = malloc(pg.values_cap * sizeof(*t->values));
	t->ns = malloc(pg.values_cap * t->n_metrics * 3 * sizeof(*t->ns));
	if (!pg.acc || !pg.touched || !pg.mark || !t->values || !t->ns)
		goto out;
	err = 0;
	for (size_t i = 0, j; i < n_lw && !err; i = j) {
		uint32_t prof = lw[i].prof;
		size_t nt;

		for (j = i; j < n_lw && lw[j].prof == prof; j++)
			;
		nt = mark_profile(t, &pg, lw + i, j - i);
		for (size_t k = nt; k-- > 0;)
			propagate_ctx(t, &pg, pg.touched[k]);
		err = emit_profile(t, &pg, prof, nt);
	}
out:
	free(pg.acc);
	free(pg.touched);
	free(pg.mark);
	return err;
}

/* The values by context, each context's in profile order: what cct.db
 * lists, and what the summary statistics are taken over. */
int hk_order_values(struct hk_tree *t)
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

void hk_ctx_stat(const struct hk_tree *t, uint32_t ctx, unsigned metric, struct hk_stat *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t k = t->ctx_first[ctx]; k < t->ctx_first[ctx + 1]; k++)
		for (int s = 0; s < HK_N_SCOPES; s++)
			stat_add(st, s, hk_value_ns(t, t->ctx_values[k], metric, s));
}
