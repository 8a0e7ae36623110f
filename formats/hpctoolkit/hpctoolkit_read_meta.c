// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit reader: meta.db (general properties, identifier names,
 * metrics in both layouts, load modules, files, functions and the context
 * tree, read iteratively: no recursion on hostile depth).
 */
#include "formats/hpctoolkit/hpctoolkit_read.h"

#include <inttypes.h>
#include <stdlib.h>

/* ---- meta.db ------------------------------------------------------------ */

enum { M_GENERAL, M_IDNAMES, M_METRICS, M_CONTEXT, M_STRINGS, M_MODULES, M_FILES, M_FUNCTIONS,
       M_N };

/* an index from a pointer into an array of n elements of stride size */
static bool element_index(struct rd *r, uint64_t ptr, uint64_t base, uint64_t n, uint64_t stride,
			  uint64_t at, const char *what, uint32_t *index)
{
	if (ptr < base || !stride || (ptr - base) % stride || (ptr - base) / stride >= n)
		return hkr_fail(r, at, "%s pointer 0x%" PRIx64 " is not an element of its array", what,
				ptr);
	*index = (ptr - base) / stride;
	return true;
}

static bool read_general(struct rd *r, const struct sec *s, struct hkr_db *db)
{
	if (!hkr_need(r, s->off, 0x10, s, 8, "general properties"))
		return false;
	db->title = hkr_str_at(r, u64(r, s->off), s, "title");
	db->description = hkr_str_at(r, u64(r, s->off + 8), s, "description");
	return db->title && db->description;
}

static bool read_idnames(struct rd *r, const struct sec *s, struct hkr_db *db)
{
	uint64_t pp;

	if (!hkr_need(r, s->off, 9, s, 8, "identifier names"))
		return false;
	pp = u64(r, s->off);
	db->n_kinds = u8(r, s->off + 8);
	if (!hkr_need_array(r, pp, db->n_kinds, 8, s, 8, "ppNames"))
		return false;
	db->kind_names = hkr_alloc_array(r, db->n_kinds, sizeof(char *));
	if (!db->kind_names)
		return false;
	for (size_t k = 0; k < db->n_kinds; k++)
		if (!(db->kind_names[k] = hkr_str_at(r, u64(r, pp + 8 * k), s, "identifier name")))
			return false;
	return true;
}

static bool read_metrics_released(struct rd *r, const struct sec *s, struct hkr_db *db)
{
	uint64_t pm, ps;
	uint32_t nm;
	uint16_t nps;
	uint8_t szm, szi, szs, szp;

	if (!hkr_need(r, s->off, 0x1b, s, 8, "metrics header"))
		return false;
	pm = u64(r, s->off);
	nm = u32(r, s->off + 8);
	szm = u8(r, s->off + 0x0c);
	szi = u8(r, s->off + 0x0d);
	szs = u8(r, s->off + 0x0e);
	ps = u64(r, s->off + 0x10);
	nps = u16(r, s->off + 0x18);
	szp = u8(r, s->off + 0x1a);
	if (szm < HK_SZ_METRIC || szi < HK_SZ_SCOPE_INST || szs < HK_SZ_SUMMARY ||
	    szp < HK_SZ_SCOPE)
		return hkr_fail(r, s->off + 0x0c, "structure sizes too small (%u %u %u %u)", szm, szi,
				szs, szp);
	if (!hkr_need_array(r, pm, nm, szm, s, 8, "metric array") ||
	    !hkr_need_array(r, ps, nps, szp, s, 8, "scope array"))
		return false;
	db->n_scopes = nps;
	db->scopes = hkr_alloc_array(r, nps, sizeof(*db->scopes));
	db->n_metrics = nm;
	db->metrics = hkr_alloc_array(r, nm, sizeof(*db->metrics));
	if (!db->scopes || !db->metrics)
		return false;
	for (uint16_t i = 0; i < nps; i++) {
		uint64_t o = ps + (uint64_t)i * szp;

		db->scopes[i].name = hkr_str_at(r, u64(r, o), s, "scope name");
		db->scopes[i].type = u8(r, o + 8);
		db->scopes[i].prop_index = u8(r, o + 9);
		if (!db->scopes[i].name)
			return false;
		if (db->scopes[i].type == HK_PS_TRANSITIVE && db->scopes[i].prop_index >= 16)
			return hkr_fail(r, o + 9, "propagationIndex %u >= 16",
					db->scopes[i].prop_index);
	}
	for (uint32_t i = 0; i < nm; i++) {
		uint64_t o = pm + (uint64_t)i * szm, pi, pss;
		struct hkr_metric *md = &db->metrics[i];

		md->name = hkr_str_at(r, u64(r, o), s, "metric name");
		pi = u64(r, o + 8);
		pss = u64(r, o + 0x10);
		md->n_insts = u16(r, o + 0x18);
		md->n_summaries = u16(r, o + 0x1a);
		if (!md->name || !hkr_need_array(r, pi, md->n_insts, szi, s, 8, "scope instances") ||
		    !hkr_need_array(r, pss, md->n_summaries, szs, s, 8, "summaries"))
			return false;
		md->insts = hkr_alloc_array(r, md->n_insts, sizeof(*md->insts));
		md->summaries = hkr_alloc_array(r, md->n_summaries, sizeof(*md->summaries));
		if (!md->insts || !md->summaries)
			return false;
		for (size_t k = 0; k < md->n_insts; k++) {
			uint64_t q = pi + k * szi;

			if (!element_index(r, u64(r, q), ps, nps, szp, q, "pScope",
					   &md->insts[k].scope))
				return false;
			md->insts[k].prop_id = u16(r, q + 8);
		}
		for (size_t k = 0; k < md->n_summaries; k++) {
			uint64_t q = pss + k * szs;
			struct hkr_summary *ss = &md->summaries[k];

			if (!element_index(r, u64(r, q), ps, nps, szp, q, "pScope", &ss->scope))
				return false;
			ss->formula = hkr_str_at(r, u64(r, q + 8), s, "formula");
			ss->combine = u8(r, q + 0x10);
			ss->stat_id = u16(r, q + 0x12);
			if (!ss->formula)
				return false;
		}
	}
	return true;
}

/* draft: {MD}{pName, nScopes, pScopes} -> {PS}{pScope, nSummaries,
 * propMetricId, pSummaries} -> {SS}{pFormula, combine, statMetricId}.
 * Each {PS} becomes a scope here. */
static bool read_metrics_draft(struct rd *r, const struct sec *s, struct hkr_db *db)
{
	uint64_t pm;
	uint32_t nm;
	uint8_t szm, szp, szs;
	size_t total_scopes = 0;

	if (!hkr_need(r, s->off, 0x0f, s, 8, "metrics header"))
		return false;
	pm = u64(r, s->off);
	nm = u32(r, s->off + 8);
	szm = u8(r, s->off + 0x0c);
	szp = u8(r, s->off + 0x0d);
	szs = u8(r, s->off + 0x0e);
	if (szm < HK_DRAFT_SZ_METRIC || szp < HK_DRAFT_SZ_SCOPE || szs < HK_DRAFT_SZ_SUMMARY)
		return hkr_fail(r, s->off + 0x0c, "structure sizes too small (%u %u %u)", szm, szp,
				szs);
	if (!hkr_need_array(r, pm, nm, szm, s, 8, "metric array"))
		return false;
	for (uint32_t i = 0; i < nm; i++) {
		uint64_t o = pm + (uint64_t)i * szm;

		total_scopes += u16(r, o + 8);
		if (!hkr_need_array(r, u64(r, o + 0x10), u16(r, o + 8), szp, s, 8, "scope array"))
			return false;
	}
	db->n_metrics = nm;
	db->metrics = hkr_alloc_array(r, nm, sizeof(*db->metrics));
	db->scopes = hkr_alloc_array(r, total_scopes, sizeof(*db->scopes));
	if (!db->metrics || !db->scopes)
		return false;
	for (uint32_t i = 0; i < nm; i++) {
		uint64_t o = pm + (uint64_t)i * szm, ps = u64(r, o + 0x10);
		struct hkr_metric *md = &db->metrics[i];
		size_t n_sum = 0;

		md->name = hkr_str_at(r, u64(r, o), s, "metric name");
		md->n_insts = u16(r, o + 8);
		md->insts = hkr_alloc_array(r, md->n_insts, sizeof(*md->insts));
		if (!md->name || !md->insts)
			return false;
		for (size_t k = 0; k < md->n_insts; k++) {
			uint64_t q = ps + k * szp;

			n_sum += u16(r, q + 8);
			if (!hkr_need_array(r, u64(r, q + 0x10), u16(r, q + 8), szs, s, 8,
					    "summary array"))
				return false;
		}
		md->summaries = hkr_alloc_array(r, n_sum, sizeof(*md->summaries));
		if (!md->summaries)
			return false;
		for (size_t k = 0; k < md->n_insts; k++) {
			uint64_t q = ps + k * szp, pss = u64(r, q + 0x10);
			uint32_t sc = db->n_scopes++;

			db->scopes[sc].name = hkr_str_at(r, u64(r, q), s, "scope name");
			db->scopes[sc].type = 0xff;
			db->scopes[sc].prop_index = 0xff;
			if (!db->scopes[sc].name)
				return false;
			md->insts[k].scope = sc;
			md->insts[k].prop_id = u16(r, q + 0x0a);
			for (uint16_t j = 0; j < u16(r, q + 8); j++) {
				uint64_t so = pss + (uint64_t)j * szs;
				struct hkr_summary *ss = &md->summaries[md->n_summaries++];

				ss->scope = sc;
				ss->formula = hkr_str_at(r, u64(r, so), s, "formula");
				ss->combine = u8(r, so + 8);
				ss->stat_id = u16(r, so + 0x0a);
				if (!ss->formula)
					return false;
			}
		}
	}
	return true;
}

struct arrays {
	struct sec strings;
	uint64_t modules, files, functions;
	uint16_t szm, szf, szfn;
};

static bool read_tables(struct rd *r, const struct sec *secs, struct hkr_db *db,
			struct arrays *a)
{
	const struct sec *str = &secs[M_STRINGS], *sm = &secs[M_MODULES], *sf = &secs[M_FILES],
			 *sfn = &secs[M_FUNCTIONS];

	a->strings = *str;
	if (!hkr_need(r, sm->off, 0x0e, sm, 8, "load modules header") ||
	    !hkr_need(r, sf->off, 0x0e, sf, 8, "source files header") ||
	    !hkr_need(r, sfn->off, 0x0e, sfn, 8, "functions header"))
		return false;
	a->modules = u64(r, sm->off);
	db->n_modules = u32(r, sm->off + 8);
	a->szm = u16(r, sm->off + 0x0c);
	a->files = u64(r, sf->off);
	db->n_files = u32(r, sf->off + 8);
	a->szf = u16(r, sf->off + 0x0c);
	a->functions = u64(r, sfn->off);
	db->n_functions = u32(r, sfn->off + 8);
	a->szfn = u16(r, sfn->off + 0x0c);
	if (a->szm < HK_SZ_MODULE || a->szf < HK_SZ_FILE || a->szfn < HK_SZ_FUNCTION)
		return hkr_fail(r, sm->off + 0x0c, "structure sizes too small (%u %u %u)", a->szm,
				a->szf, a->szfn);
	if (!hkr_need_array(r, a->modules, db->n_modules, a->szm, sm, 8, "module array") ||
	    !hkr_need_array(r, a->files, db->n_files, a->szf, sf, 8, "file array") ||
	    !hkr_need_array(r, a->functions, db->n_functions, a->szfn, sfn, 8, "function array"))
		return false;
	db->modules = hkr_alloc_array(r, db->n_modules, sizeof(*db->modules));
	db->files = hkr_alloc_array(r, db->n_files, sizeof(*db->files));
	db->functions = hkr_alloc_array(r, db->n_functions, sizeof(*db->functions));
	if (!db->modules || !db->files || !db->functions)
		return false;
	for (size_t i = 0; i < db->n_modules; i++) {
		uint64_t o = a->modules + i * a->szm;

		db->modules[i].flags = u32(r, o);
		if (!(db->modules[i].path = hkr_str_at(r, u64(r, o + 8), str, "module path")))
			return false;
	}
	for (size_t i = 0; i < db->n_files; i++) {
		uint64_t o = a->files + i * a->szf;

		db->files[i].flags = u32(r, o);
		if (!(db->files[i].path = hkr_str_at(r, u64(r, o + 8), str, "file path")))
			return false;
	}
	for (size_t i = 0; i < db->n_functions; i++) {
		uint64_t o = a->functions + i * a->szfn, p;
		struct hkr_function *fn = &db->functions[i];

		fn->module = fn->file = HKR_NONE;
		if ((p = u64(r, o)) && !(fn->name = hkr_str_at(r, p, str, "function name")))
			return false;
		if ((p = u64(r, o + 8)) &&
		    !element_index(r, p, a->modules, db->n_modules, a->szm, o + 8, "pModule",
				   &fn->module))
			return false;
		fn->offset = u64(r, o + 0x10);
		if ((p = u64(r, o + 0x18)) &&
		    !element_index(r, p, a->files, db->n_files, a->szf, o + 0x18, "pFile",
				   &fn->file))
			return false;
		fn->line = u32(r, o + 0x20);
		fn->flags = u32(r, o + 0x24);
		if (!fn->name && fn->module == HKR_NONE && fn->file == HKR_NONE)
			return hkr_fail(r, o, "function with no name, module nor file");
	}
	return true;
}

/* Parses one {Ctx} at o (size checked by the caller). */
static bool read_ctx(struct rd *r, uint64_t o, const struct arrays *a, struct hkr_db *db,
		     struct hkr_context *c)
{
	uint64_t head = db->draft ? HK_DRAFT_CTX_HEAD : HK_CTX_HEAD, flex = o + head;
	unsigned w = 0;
	uint64_t p;

	c->id = u32(r, o + 0x10);
	c->flags = u8(r, o + 0x14);
	c->relation = u8(r, o + 0x15);
	c->lexical_type = u8(r, o + 0x16);
	c->n_flex = u8(r, o + 0x17);
	c->propagation = db->draft ? 0 : u16(r, o + 0x18);
	c->function = c->file = c->module = HKR_NONE;
	if (c->id == 0)
		return hkr_fail(r, o + 0x10, "context id 0 is reserved for the global context");
	/* flex packing: u64 sub-fields take the next whole word; the u32
	 * line takes the low half of the next word */
	if (c->flags & HK_CTX_HAS_FUNCTION) {
		if (w + 1 > c->n_flex)
			return hkr_fail(r, o + 0x17, "nFlexWords too small for its flags");
		p = u64(r, flex + 8 * w++);
		if (!element_index(r, p, a->functions, db->n_functions, a->szfn, flex,
				   "pFunction", &c->function))
			return false;
	}
	if (c->flags & HK_CTX_HAS_SRCLOC) {
		if (w + 2 > c->n_flex)
			return hkr_fail(r, o + 0x17, "nFlexWords too small for its flags");
		p = u64(r, flex + 8 * w++);
		if (!element_index(r, p, a->files, db->n_files, a->szf, flex, "pFile", &c->file))
			return false;
		c->line = u32(r, flex + 8 * w++);
	}
	if (c->flags & HK_CTX_HAS_POINT) {
		if (w + 2 > c->n_flex)
			return hkr_fail(r, o + 0x17, "nFlexWords too small for its flags");
		p = u64(r, flex + 8 * w++);
		if (!element_index(r, p, a->modules, db->n_modules, a->szm, flex, "pModule",
				   &c->module))
			return false;
		c->offset = u64(r, flex + 8 * w++);
	}
	return true;
}

struct todo {
	uint32_t parent; /* index in contexts */
	uint64_t off, size;
};

static int cmp_ctx_id(const void *a, const void *b, void *arg)
{
	const struct hkr_context *c = arg;
	uint32_t x = c[*(const uint32_t *)a].id, y = c[*(const uint32_t *)b].id;

	return (x > y) - (x < y);
}

/* The work list of the tree walk: (parent index, children array). */
struct walk {
	struct todo *stack;
	size_t n, cap;
	size_t cap_contexts;
};

static bool push(struct rd *r, struct walk *w, struct todo td)
{
	if (w->n == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 64;
		struct todo *ns = realloc(w->stack, ncap * sizeof(*ns));

		if (!ns)
			return hkr_fail(r, td.off, "out of memory");
		w->stack = ns;
		w->cap = ncap;
	}
	w->stack[w->n++] = td;
	return true;
}

/* The released layout's entry points: the top contexts, each pushed with
 * its children array (in reverse, to read them in order). */
static bool read_entry_points(struct rd *r, const struct sec *s, const struct arrays *a,
			      struct hkr_db *db, struct walk *w)
{
	uint64_t top;
	uint16_t n;
	uint8_t sz;

	if (!hkr_need(r, s->off, 0x0b, s, 8, "context tree header"))
		return false;
	top = u64(r, s->off);
	n = u16(r, s->off + 8);
	sz = u8(r, s->off + 0x0a);
	if (sz < HK_SZ_ENTRY)
		return hkr_fail(r, s->off + 0x0a, "szEntryPoint %u < %u", sz, HK_SZ_ENTRY);
	if (!hkr_need_array(r, top, n, sz, s, 8, "entry points"))
		return false;
	w->cap_contexts = n + 16;
	db->contexts = hkr_alloc_array(r, w->cap_contexts, sizeof(*db->contexts));
	if (!db->contexts)
		return false;
	for (uint16_t i = 0; i < n; i++) {
		uint64_t o = top + (uint64_t)i * sz;
		struct hkr_context *c = &db->contexts[db->n_contexts++];

		c->parent = HKR_NONE;
		c->at = o;
		c->is_entry = true;
		c->function = c->file = c->module = HKR_NONE;
		c->id = u32(r, o + 0x10);
		c->entry_point = u16(r, o + 0x14);
		if (!c->id)
			return hkr_fail(r, o + 0x10, "entry point with context id 0");
		c->pretty_name = hkr_str_at(r, u64(r, o + 0x18), &a->strings, "entry point name");
		if (!c->pretty_name)
			return false;
	}
	for (size_t i = db->n_contexts; i-- > 0;) {
		uint64_t o = top + i * sz;
		uint64_t csz = u64(r, o), p = u64(r, o + 8);

		if (!csz)
			continue;
		if (!hkr_need(r, p, csz, s, 8, "children array") ||
		    !push(r, w, (struct todo){ i, p, csz }))
			return false;
	}
	return true;
}

/* The draft layout's roots: one children array. */
static bool read_roots(struct rd *r, const struct sec *s, struct walk *w)
{
	uint64_t top, top_size;

	if (!hkr_need(r, s->off, 0x10, s, 8, "context tree header"))
		return false;
	top_size = u64(r, s->off);
	top = u64(r, s->off + 8);
	if (top_size && !hkr_need(r, top, top_size, s, 8, "root contexts"))
		return false;
	return !top_size || push(r, w, (struct todo){ HKR_NONE, top, top_size });
}

/* A new context at the end of db->contexts; NULL after a failure. */
static struct hkr_context *new_context(struct rd *r, struct hkr_db *db, struct walk *w,
				       uint64_t o)
{
	struct hkr_context *c;

	if (db->n_contexts == w->cap_contexts) {
		size_t ncap = w->cap_contexts ? w->cap_contexts * 2 : 256;
		struct hkr_context *nc = realloc(db->contexts, ncap * sizeof(*nc));

		if (!nc) {
			hkr_fail(r, o, "out of memory");
			return NULL;
		}
		db->contexts = nc;
		w->cap_contexts = ncap;
	}
	c = &db->contexts[db->n_contexts];
	memset(c, 0, sizeof(*c));
	return c;
}

/* One children array: its contexts, then their own arrays pushed. */
static bool read_children(struct rd *r, const struct sec *s, const struct arrays *a,
			  struct hkr_db *db, struct walk *w, struct todo td)
{
	uint64_t head = db->draft ? HK_DRAFT_CTX_HEAD : HK_CTX_HEAD;
	uint64_t max_ctx = s->size / head + 1, o = td.off, end = td.off + td.size;
	struct sec arr = { td.off, td.size };
	size_t first = db->n_contexts, depth;

	depth = td.parent == HKR_NONE ? 0 : db->contexts[td.parent].depth + 1;
	while (o < end) {
		struct hkr_context *c;
		uint64_t sz;

		if (!hkr_need(r, o, head, &arr, 8, "context"))
			return false;
		sz = head + 8 * (uint64_t)u8(r, o + 0x17);
		if (!hkr_need(r, o, sz, &arr, 8, "context"))
			return false;
		/* each {Ctx} needs at least its head bytes: more contexts than
		 * the section could hold mean arrays that overlap or loop */
		if (db->n_contexts >= max_ctx)
			return hkr_fail(r, o, "context arrays overlap or form a cycle");
		c = new_context(r, db, w, o);
		if (!c)
			return false;
		c->at = o;
		c->parent = td.parent;
		c->depth = depth;
		if (!read_ctx(r, o, a, db, c))
			return false;
		db->n_contexts++;
		if (td.parent != HKR_NONE && !db->contexts[td.parent].n_children++)
			db->contexts[td.parent].first_child = db->n_contexts - 1;
		o += sz;
	}
	/* children of this array, pushed in reverse to read in order */
	for (size_t i = db->n_contexts; i-- > first;) {
		uint64_t co = db->contexts[i].at, sz = u64(r, co), p = u64(r, co + 8);

		if (!sz)
			continue;
		if (!hkr_need(r, p, sz, s, 8, "children array") ||
		    !push(r, w, (struct todo){ i, p, sz }))
			return false;
	}
	return true;
}

/* The contexts' ids in order (ctx_order), each id once. */
static bool order_contexts(struct rd *r, const struct sec *s, struct hkr_db *db)
{
	db->ctx_order = hkr_alloc_array(r, db->n_contexts, sizeof(uint32_t));
	if (!db->ctx_order)
		return false;
	for (size_t i = 0; i < db->n_contexts; i++)
		db->ctx_order[i] = i;
	qsort_r(db->ctx_order, db->n_contexts, sizeof(uint32_t), cmp_ctx_id, db->contexts);
	for (size_t i = 1; i < db->n_contexts; i++)
		if (db->contexts[db->ctx_order[i]].id == db->contexts[db->ctx_order[i - 1]].id)
			return hkr_fail(r, s->off, "context id %u appears twice",
					db->contexts[db->ctx_order[i]].id);
	return true;
}

/* The context tree, iteratively (no recursion on hostile depth), in
 * pre-order: the top contexts first, then each array's children. */
static bool read_context(struct rd *r, const struct sec *s, const struct arrays *a,
			 struct hkr_db *db)
{
	struct walk w = { 0 };
	bool ok;

	ok = db->draft ? read_roots(r, s, &w) : read_entry_points(r, s, a, db, &w);
	while (ok && w.n)
		ok = read_children(r, s, a, db, &w, w.stack[--w.n]);
	if (ok)
		ok = order_contexts(r, s, db);
	free(w.stack);
	return ok;
}

int hkr_parse_meta(struct rd *r, struct hkr_db *db)
{
	struct sec secs[M_N];
	struct arrays a;
	const struct sec *ms = &secs[M_METRICS];

	/* the string table is a u8*(1) in the draft */
	if (!hkr_read_header(r, "meta", "_meta.db", M_N, secs, 1u << M_STRINGS))
		return -EINVAL;
	/* the layouts differ first in the metric structure sizes */
	if (!hkr_need(r, ms->off, 0x0f, ms, 8, "metrics header"))
		return -EINVAL;
	db->draft = u8(r, ms->off + 0x0c) == HK_DRAFT_SZ_METRIC &&
		    u8(r, ms->off + 0x0e) == HK_DRAFT_SZ_SUMMARY;
	db->has_meta = true;
	if (read_general(r, &secs[M_GENERAL], db) && read_idnames(r, &secs[M_IDNAMES], db) &&
	    (db->draft ? read_metrics_draft(r, ms, db) : read_metrics_released(r, ms, db)) &&
	    read_tables(r, secs, db, &a))
		read_context(r, &secs[M_CONTEXT], &a, db);
	return hkr_finish(r);
}
