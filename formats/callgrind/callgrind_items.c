// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind writer: the output lines ("items") of one process.  Each stack
 * sum adds a self cost at its leaf and, once per distinct (call site,
 * callee) edge on the stack, a call cost; traced calls then add their self
 * times and put their exact counts on the edges.  The items are then placed
 * (address, line, file), each group gets its home file, and they are sorted
 * into the order of the file.
 */
#include "formats/callgrind/callgrind_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- sampled stacks -------------------------------------------------------- */

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

/* A stack sum's Samples and event columns into an item's costs. */
static void add_stack_costs(const struct proc_ctx *pc, struct item *it, const struct stack_agg *sa)
{
	it->cost[EV_SAMPLES] += sa->samples;
	for (uint32_t e = 0; e < pc->n_events; e++) {
		it->cost[EV_FIRST_EVENT + e] += sa->weight[e];
		if (pc->wall_event[e])
			it->cost[pc->ev_wall] += sa->weight[e];
	}
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
	add_stack_costs(pc, item_at(pc, idx), sa);
	return 0;
}

/* The distinct call edges of stack st into pc->scratch (each once per
 * stack: recursion counts once); returns how many. */
static size_t stack_edges(struct proc_ctx *pc, const struct model_stack *st)
{
	const struct model *m = pc->m;
	const uint32_t *fr = model_stack_frames(m, st);
	size_t n = 0, k = 0;

	for (uint32_t i = 1; i < st->n_frames; i++) {
		uint32_t site = fr[i] < m->locations.len ? fr[i] : MODEL_NONE;
		uint64_t callee = location_group(m, fr[i - 1]);
		uint64_t caller = location_group(m, site);

		if (site == MODEL_NONE || (caller == callee && group_is_unknown(caller)))
			continue;
		pc->scratch[n++] = (struct edge_key){ .site = site, .callee = callee };
	}
	sort_edge_keys(pc->scratch, n);
	for (size_t i = 0; i < n; i++) {
		if (k && !cmp_edge_key(&pc->scratch[k - 1], &pc->scratch[i]))
			continue;
		pc->scratch[k++] = pc->scratch[i];
	}
	return k;
}

/* Each edge's item (new ones created) into its scratch key. */
static int find_edge_items(struct proc_ctx *pc, size_t n)
{
	int err;

	/*
	 * The edge index and the items are far larger than the cache and a
	 * stack's edges are scattered over them: start loading every slot
	 * first, so that the misses overlap instead of waiting in turn.
	 */
	err = edge_index_reserve(&pc->edge_ix, pc->edge_ix.len + n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		edge_index_prefetch(&pc->edge_ix, edge_key_hash(&pc->scratch[i]));
	for (size_t i = 0; i < n; i++) {
		struct edge_key *k = &pc->scratch[i];
		struct edge_entry *e;
		bool fresh;

		e = edge_index_upsert(&pc->edge_ix, k, &fresh);
		if (!e)
			return -ENOMEM;
		if (fresh) {
			struct item *it = vec_push(&pc->items);

			if (!it)
				return -ENOMEM;
			*e = (struct edge_entry){ k->callee, k->site, (uint32_t)(pc->items.len - 1) };
			it->kind = ITEM_CALL;
			it->loc = k->site;
			it->group = location_group(pc->m, k->site);
			it->callee = k->callee;
		} else {
			__builtin_prefetch(item_at(pc, e->item), 1);
		}
		k->item = e->item;
	}
	return 0;
}

static int add_stack(struct proc_ctx *pc, const struct stack_agg *sa)
{
	const struct model *m = pc->m;
	const struct model_stack *st;
	const uint32_t *fr;
	size_t n;
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
	n = stack_edges(pc, st);
	err = find_edge_items(pc, n);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++) {
		struct item *it = item_at(pc, pc->scratch[i].item);

		it->calls += sa->samples;
		add_stack_costs(pc, it, sa);
	}
	return 0;
}

/* ---- traced calls ---------------------------------------------------------- */

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
	best->cost[pc->ev_traced] += ns;
	return 0;
}

/* First index in a vector of records sorted by process (the first member
 * of both trace_pair and trace_self) whose process is >= process. */
#define LOWER_BOUND_PROCESS(arr, n, proc)                                           \
	({                                                                          \
		size_t _lo = 0, _hi = (n);                                          \
		while (_lo < _hi) {                                                 \
			size_t _mid = _lo + (_hi - _lo) / 2;                        \
			if ((arr)[_mid].process < (proc))                           \
				_lo = _mid + 1;                                     \
			else                                                        \
				_hi = _mid;                                         \
		}                                                                   \
		_lo;                                                                \
	})

/* The traced functions' self times, at their entries. */
static int add_traced_selfs(struct proc_ctx *pc, const struct aggregates *ag, uint32_t process)
{
	const struct trace_self *selfs = ag->selfs.items;
	size_t lo = LOWER_BOUND_PROCESS(selfs, ag->selfs.len, process);

	for (size_t i = lo; i < ag->selfs.len && selfs[i].process == process; i++) {
		struct item *it;

		if (!selfs[i].ns)
			continue;
		it = vec_push(&pc->items);
		if (!it)
			return -ENOMEM;
		it->kind = ITEM_SELF;
		it->loc = MODEL_NONE;
		it->group = traced_group(pc->m, selfs[i].func);
		it->cost[pc->ev_traced] = selfs[i].ns;
	}
	return 0;
}

/* The caller of a traced call that no traced call encloses: known only if
 * the samples show exactly one; false otherwise. */
static bool only_sampled_caller(const struct call_ref *refs, size_t n_refs, uint64_t callee,
				uint64_t *caller)
{
	size_t j = lower_bound_callee(refs, n_refs, callee), k;

	for (k = j; k < n_refs && refs[k].callee == callee; k++)
		if (refs[k].caller != refs[j].caller)
			break;
	if (j == k || (k < n_refs && refs[k].callee == callee))
		return false;
	*caller = refs[j].caller;
	return true;
}

static int add_traced(struct proc_ctx *pc, const struct aggregates *ag, uint32_t process)
{
	const struct model *m = pc->m;
	const struct trace_pair *pairs = ag->pairs.items;
	struct call_ref *refs;
	size_t n_refs = 0, lo;
	int err;

	err = add_traced_selfs(pc, ag, process);
	if (err)
		return err;
	refs = malloc((pc->items.len ? pc->items.len : 1) * sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < pc->items.len; i++) {
		struct item *it = item_at(pc, (uint32_t)i);

		if (it->kind == ITEM_CALL)
			refs[n_refs++] = (struct call_ref){ it->callee, it->group, (uint32_t)i };
	}
	qsort(refs, n_refs, sizeof(*refs), cmp_call_ref);
	lo = LOWER_BOUND_PROCESS(pairs, ag->pairs.len, process);
	for (size_t i = lo; i < ag->pairs.len && pairs[i].process == process; i++) {
		const struct trace_pair *tp = &pairs[i];
		uint64_t callee = traced_group(m, tp->child), caller;

		if (tp->parent != MODEL_NONE) {
			caller = traced_group(m, tp->parent);
		} else if (!only_sampled_caller(refs, n_refs, callee, &caller)) {
			pc->unattributed_calls += tp->calls;
			continue;
		}
		err = apply_traced_edge(pc, refs, n_refs, caller, callee, tp->calls, tp->ns);
		if (err)
			break;
	}
	free(refs);
	return err;
}

/* ---- places and home files -------------------------------------------------- */

static uint32_t function_file(const struct model *m, uint64_t g)
{
	if (g >= m->functions.len)
		return MODEL_NONE;
	return m->functions.items[g].file < m->files.len ? m->functions.items[g].file : MODEL_NONE;
}

uint32_t home_file(const struct proc_ctx *pc, uint64_t g)
{
	uint32_t v = idmap_get(&pc->home, g);

	return v != UINT32_MAX ? v : function_file(pc->m, g);
}

/* Each item's address, line and file. */
static void place_item(const struct model *m, struct item *it)
{
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

/* Fills each item's position and file, and each group's home file: the
 * function's definition file, else the file of its lowest non-inlined
 * address. */
static int place_items(struct proc_ctx *pc)
{
	const struct model *m = pc->m;
	struct idmap best_addr = { 0 }; /* group -> index in addrs */
	struct vec addrs = { .size = sizeof(uint64_t) };
	int err = 0;

	for (size_t i = 0; i < pc->items.len; i++)
		place_item(m, item_at(pc, (uint32_t)i));
	for (size_t i = 0; i < pc->items.len && !err; i++) {
		struct item *it = item_at(pc, (uint32_t)i);
		struct idmap_entry *e;
		uint64_t *best;
		bool fresh;

		/* a function without a definition file: its home is the file
		 * of its lowest address outside inlined code */
		if (function_file(m, it->group) != MODEL_NONE || it->file == MODEL_NONE ||
		    it->loc == MODEL_NONE || m->locations.items[it->loc].n_inlines)
			continue;
		e = idmap_upsert(&best_addr, &it->group, &fresh);
		if (!e) {
			err = -ENOMEM;
			break;
		}
		if (fresh) {
			e->key = it->group;
			e->val = (uint32_t)addrs.len;
			best = vec_push(&addrs);
			if (!best) {
				err = -ENOMEM;
				break;
			}
			*best = UINT64_MAX;
		}
		best = (uint64_t *)addrs.items + e->val;
		if (it->addr < *best || (it->addr == *best && it->file < home_file(pc, it->group))) {
			*best = it->addr;
			err = idmap_put(&pc->home, it->group, it->file);
		}
	}
	idmap_free(&best_addr);
	vec_free(&addrs);
	return err;
}

/* ---- file order --------------------------------------------------------------- */

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

/* The groups of the items, in order of first appearance. */
struct group_buckets {
	uint32_t *bucket;          /* per item: its group's bucket */
	struct group_order *groups;
	size_t n_groups, cap;
};

static int new_bucket(struct group_buckets *gb, uint64_t g, uint32_t image)
{
	if (gb->n_groups == gb->cap) {
		size_t ncap = gb->cap ? 2 * gb->cap : 256;
		struct group_order *ng = realloc(gb->groups, ncap * sizeof(*ng));

		if (!ng)
			return -ENOMEM;
		gb->groups = ng;
		gb->cap = ncap;
	}
	gb->groups[gb->n_groups] = (struct group_order){ g, image, (uint32_t)gb->n_groups };
	gb->n_groups++;
	return 0;
}

/* Numbers the groups by first appearance: functions through a dense
 * array, the other groups through a hash map. */
static int bucket_items(const struct proc_ctx *pc, struct group_buckets *gb)
{
	const struct model *m = pc->m;
	const struct item *items = pc->items.items;
	size_t n = pc->items.len, nf = m->functions.len;
	uint32_t *fn_bucket = malloc((nf ? nf : 1) * sizeof(*fn_bucket));
	struct idmap other = { 0 }; /* groups that are not functions -> bucket */
	int err = -ENOMEM;

	gb->bucket = malloc((n ? n : 1) * sizeof(*gb->bucket));
	if (!fn_bucket || !gb->bucket)
		goto out;
	memset(fn_bucket, 0xff, (nf ? nf : 1) * sizeof(*fn_bucket));
	for (size_t i = 0; i < n; i++) {
		uint64_t g = items[i].group;
		uint32_t b = g < nf ? fn_bucket[g] : idmap_get(&other, g);

		if (b == UINT32_MAX) {
			b = (uint32_t)gb->n_groups;
			if (g < nf)
				fn_bucket[g] = b;
			else if (idmap_put(&other, g, b))
				goto out;
			if (new_bucket(gb, g, items[i].image))
				goto out;
		}
		gb->bucket[i] = b;
	}
	err = 0;
out:
	free(fn_bucket);
	idmap_free(&other);
	return err;
}

/* Moves the items once, in place, along the cycles of the permutation:
 * place k takes item order[k]; done places are marked order[k] = k. */
static void permute_items(struct item *items, uint32_t *order, size_t n)
{
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
}

/* Sorts the items of each group (order[start[r-1] .. start[r]) are group
 * r's) by their keys. */
static int sort_groups(struct item *items, uint32_t *order, const uint32_t *start,
		       size_t n_groups)
{
	struct item_key *keys = NULL;
	size_t keys_cap = 0;

	for (size_t r = 0, lo = 0; r < n_groups; lo = start[r++]) {
		size_t len = start[r] - lo;

		if (len > keys_cap) {
			struct item_key *nk = realloc(keys, len * sizeof(*nk));

			if (!nk) {
				free(keys);
				return -ENOMEM;
			}
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
	free(keys);
	return 0;
}

/*
 * Puts the items in file order: by (image, group, rank, addr, line, kind,
 * callee), ties in their order of creation (what the stable merge sort
 * behind glibc's qsort() gave, so the files stay byte for byte the same).
 * Sorting the whole items moved each of them some twenty times; here a
 * counting sort orders their indices by group, each group's few indices
 * are sorted, and the items then move once.
 */
static int sort_items(struct proc_ctx *pc)
{
	size_t n = pc->items.len;
	struct item *items = pc->items.items;
	struct group_buckets gb = { 0 };
	uint32_t *order = malloc((n ? n : 1) * sizeof(*order));
	uint32_t *start = NULL, *rank_of = NULL;
	int err;

	err = order ? bucket_items(pc, &gb) : -ENOMEM;
	if (err)
		goto out;
	qsort(gb.groups, gb.n_groups, sizeof(*gb.groups), cmp_group_order);
	start = calloc(gb.n_groups + 1, sizeof(*start));
	rank_of = malloc((gb.n_groups ? gb.n_groups : 1) * sizeof(*rank_of));
	err = -ENOMEM;
	if (!start || !rank_of)
		goto out;
	for (size_t r = 0; r < gb.n_groups; r++)
		rank_of[gb.groups[r].bucket] = (uint32_t)r;
	for (size_t i = 0; i < n; i++) {
		gb.bucket[i] = rank_of[gb.bucket[i]];
		start[gb.bucket[i] + 1]++;
	}
	for (size_t r = 0; r < gb.n_groups; r++)
		start[r + 1] += start[r];
	for (size_t i = 0; i < n; i++)
		order[start[gb.bucket[i]]++] = (uint32_t)i;
	/* start[r] is now the end of group r */
	err = sort_groups(items, order, start, gb.n_groups);
	if (!err)
		permute_items(items, order, n);
out:
	free(gb.bucket);
	free(gb.groups);
	free(order);
	free(start);
	free(rank_of);
	return err;
}

/* ---- one process ---------------------------------------------------------------- */

int build_items(struct proc_ctx *pc, const struct model *m, const struct aggregates *ag,
		uint32_t process, size_t s_begin, size_t s_end, bool traced)
{
	const struct stack_agg *sa = ag->stacks.items;
	int err = 0;

	memset(pc, 0, sizeof(*pc));
	pc->m = m;
	pc->n_events = model_event_count(m);
	if (pc->n_events > MODEL_MAX_EVENTS)
		pc->n_events = MODEL_MAX_EVENTS;
	pc->ev_traced = EV_FIRST_EVENT + pc->n_events;
	if (model_has_wall(m)) {
		pc->ev_wall = pc->ev_traced++;
		for (uint32_t e = 0; e < pc->n_events; e++)
			pc->wall_event[e] = model_wall_event(m, e);
	}
	pc->items.size = sizeof(struct item);
	pc->self_ix = malloc((m->locations.len + 1) * sizeof(*pc->self_ix));
	if (!pc->self_ix)
		return -ENOMEM;
	memset(pc->self_ix, 0xff, (m->locations.len + 1) * sizeof(*pc->self_ix));
	for (size_t i = s_begin; i < s_end && !err; i++)
		err = add_stack(pc, &sa[i]);
	if (!err && traced)
		err = add_traced(pc, ag, process);
	/* the indexes served the adding only: give their memory back first */
	free(pc->self_ix);
	pc->self_ix = NULL;
	edge_index_free(&pc->edge_ix);
	if (!err)
		err = place_items(pc);
	if (err)
		return err;
	for (size_t i = 0; i < pc->items.len; i++) {
		struct item *it = item_at(pc, (uint32_t)i);
		uint32_t home = home_file(pc, it->group);

		it->rank = it->file == home ? 0 : (it->file == MODEL_NONE ? 1 : it->file + 2);
	}
	return sort_items(pc);
}

void proc_ctx_free(struct proc_ctx *pc)
{
	free(pc->self_ix);
	edge_index_free(&pc->edge_ix);
	idmap_free(&pc->home);
	vec_free(&pc->items);
	free(pc->scratch);
	memset(pc, 0, sizeof(*pc));
}
