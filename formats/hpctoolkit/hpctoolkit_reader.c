// SPDX-License-Identifier: GPL-2.0
/*
 * Reader of HPCToolkit databases, both layouts.  Nothing read from the file
 * is trusted: every pointer must lie (with its whole array) inside its
 * section or the file, be aligned as the spec says, and every count is
 * bounded by the bytes it needs before anything is allocated.
 */
#include "formats/hpctoolkit/hpctoolkit_reader.h"
#include "formats/hpctoolkit/hpctoolkit_internal.h"
#include "lib/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct rd {
	const char *name;
	const uint8_t *p;
	uint64_t n;
	FILE *errf;
	bool failed;
};

struct sec {
	uint64_t off, size;
};

__attribute__((format(printf, 3, 4)))
static bool fail(struct rd *r, uint64_t off, const char *fmt, ...)
{
	va_list ap;

	if (!r->failed && r->errf) {
		fprintf(r->errf, "%s: offset %" PRIu64 ": ", r->name, off);
		va_start(ap, fmt);
		vfprintf(r->errf, fmt, ap);
		va_end(ap);
		fputc('\n', r->errf);
	}
	r->failed = true;
	return false;
}

static bool in_range(uint64_t off, uint64_t len, uint64_t start, uint64_t size)
{
	return off >= start && off <= start + size && len <= start + size - off;
}

/* Bounds-checked loads; the caller has checked off + size <= r->n. */
static uint8_t u8(const struct rd *r, uint64_t off)
{
	return r->p[off];
}

static uint16_t u16(const struct rd *r, uint64_t off)
{
	return le16_get(r->p + off);
}

static uint32_t u32(const struct rd *r, uint64_t off)
{
	return le32_get(r->p + off);
}

static uint64_t u64(const struct rd *r, uint64_t off)
{
	return le64_get(r->p + off);
}

static double f64(const struct rd *r, uint64_t off)
{
	double v;

	memcpy(&v, r->p + off, 8);
	return v;
}

/* A structure of `len` bytes at `off`, inside `s`, aligned to `align`. */
static bool need(struct rd *r, uint64_t off, uint64_t len, const struct sec *s, uint64_t align,
		 const char *what)
{
	if (align > 1 && off % align)
		return fail(r, off, "%s not aligned to %" PRIu64 " bytes", what, align);
	if (!in_range(off, len, s->off, s->size))
		return fail(r, off, "%s (%" PRIu64 " bytes) outside its %s", what, len,
			    s->off == 0 && s->size == r->n ? "file" : "section");
	return true;
}

/* An array of n elements of `size` bytes: checks n against the room. */
static bool need_array(struct rd *r, uint64_t off, uint64_t n, uint64_t size,
		       const struct sec *s, uint64_t align, const char *what)
{
	if (n && size && n > (s->size + 1) / size)
		return fail(r, off, "%s: %" PRIu64 " elements cannot fit", what, n);
	return need(r, off, n * size, s, align, what);
}

/* A NUL-terminated string wholly inside s. */
static char *str_at(struct rd *r, uint64_t off, const struct sec *s, const char *what)
{
	const uint8_t *end;
	char *v;

	if (!in_range(off, 1, s->off, s->size)) {
		fail(r, off, "%s string outside its section", what);
		return NULL;
	}
	end = memchr(r->p + off, 0, s->off + s->size - off);
	if (!end) {
		fail(r, off, "%s string not terminated inside its section", what);
		return NULL;
	}
	v = strdup((const char *)r->p + off);
	if (!v)
		fail(r, off, "out of memory");
	return v;
}

static void *alloc_array(struct rd *r, uint64_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		fail(r, 0, "out of memory");
	return p;
}

/* Common header: magic, format, version, n sections (8-aligned, except
 * those in the `unaligned` bit mask); footer. */
static bool read_header(struct rd *r, const char *format, const char *footer, int n_sec,
			struct sec *secs, unsigned unaligned)
{
	uint64_t hdr = 0x10 + 0x10 * n_sec;
	struct sec file = { 0, r->n };

	if (r->n < hdr + 8)
		return fail(r, 0, "file too small (%" PRIu64 " bytes)", r->n);
	if (memcmp(r->p, HK_MAGIC, 10) != 0)
		return fail(r, 0, "bad magic (not HPCTOOLKIT)");
	if (memcmp(r->p + 10, format, 4) != 0)
		return fail(r, 10, "format is not '%s'", format);
	if (u8(r, 14) != HK_MAJOR)
		return fail(r, 14, "major version %u, expected %u", u8(r, 14), HK_MAJOR);
	if (memcmp(r->p + r->n - 8, footer, 8) != 0)
		return fail(r, r->n - 8, "missing footer '%.8s'", footer);
	for (int i = 0; i < n_sec; i++) {
		secs[i].size = u64(r, 0x10 + 0x10 * i);
		secs[i].off = u64(r, 0x18 + 0x10 * i);
		if (!need(r, secs[i].off, secs[i].size, &file,
			  secs[i].size && !(unaligned & 1u << i) ? 8 : 1, "section"))
			return false;
		if (secs[i].off < hdr && secs[i].size)
			return fail(r, 0x18 + 0x10 * i, "section overlaps the file header");
	}
	return true;
}

/* ---- meta.db ------------------------------------------------------------ */

enum { M_GENERAL, M_IDNAMES, M_METRICS, M_CONTEXT, M_STRINGS, M_MODULES, M_FILES, M_FUNCTIONS,
       M_N };

/* an index from a pointer into an array of n elements of stride size */
static bool element_index(struct rd *r, uint64_t ptr, uint64_t base, uint64_t n, uint64_t stride,
			  uint64_t at, const char *what, uint32_t *index)
{
	if (ptr < base || !stride || (ptr - base) % stride || (ptr - base) / stride >= n)
		return fail(r, at, "%s pointer 0x%" PRIx64 " is not an element of its array", what,
			    ptr);
	*index = (ptr - base) / stride;
	return true;
}

static bool read_general(struct rd *r, const struct sec *s, struct hkr_db *db)
{
	if (!need(r, s->off, 0x10, s, 8, "general properties"))
		return false;
	db->title = str_at(r, u64(r, s->off), s, "title");
	db->description = str_at(r, u64(r, s->off + 8), s, "description");
	return db->title && db->description;
}

static bool read_idnames(struct rd *r, const struct sec *s, struct hkr_db *db)
{
	uint64_t pp;

	if (!need(r, s->off, 9, s, 8, "identifier names"))
		return false;
	pp = u64(r, s->off);
	db->n_kinds = u8(r, s->off + 8);
	if (!need_array(r, pp, db->n_kinds, 8, s, 8, "ppNames"))
		return false;
	db->kind_names = alloc_array(r, db->n_kinds, sizeof(char *));
	if (!db->kind_names)
		return false;
	for (size_t k = 0; k < db->n_kinds; k++)
		if (!(db->kind_names[k] = str_at(r, u64(r, pp + 8 * k), s, "identifier name")))
			return false;
	return true;
}

static bool read_metrics_released(struct rd *r, const struct sec *s, struct hkr_db *db)
{
	uint64_t pm, ps;
	uint32_t nm;
	uint16_t nps;
	uint8_t szm, szi, szs, szp;

	if (!need(r, s->off, 0x1b, s, 8, "metrics header"))
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
		return fail(r, s->off + 0x0c, "structure sizes too small (%u %u %u %u)", szm, szi,
			    szs, szp);
	if (!need_array(r, pm, nm, szm, s, 8, "metric array") ||
	    !need_array(r, ps, nps, szp, s, 8, "scope array"))
		return false;
	db->n_scopes = nps;
	db->scopes = alloc_array(r, nps, sizeof(*db->scopes));
	db->n_metrics = nm;
	db->metrics = alloc_array(r, nm, sizeof(*db->metrics));
	if (!db->scopes || !db->metrics)
		return false;
	for (uint16_t i = 0; i < nps; i++) {
		uint64_t o = ps + (uint64_t)i * szp;

		db->scopes[i].name = str_at(r, u64(r, o), s, "scope name");
		db->scopes[i].type = u8(r, o + 8);
		db->scopes[i].prop_index = u8(r, o + 9);
		if (!db->scopes[i].name)
			return false;
		if (db->scopes[i].type == HK_PS_TRANSITIVE && db->scopes[i].prop_index >= 16)
			return fail(r, o + 9, "propagationIndex %u >= 16",
				    db->scopes[i].prop_index);
	}
	for (uint32_t i = 0; i < nm; i++) {
		uint64_t o = pm + (uint64_t)i * szm, pi, pss;
		struct hkr_metric *md = &db->metrics[i];

		md->name = str_at(r, u64(r, o), s, "metric name");
		pi = u64(r, o + 8);
		pss = u64(r, o + 0x10);
		md->n_insts = u16(r, o + 0x18);
		md->n_summaries = u16(r, o + 0x1a);
		if (!md->name || !need_array(r, pi, md->n_insts, szi, s, 8, "scope instances") ||
		    !need_array(r, pss, md->n_summaries, szs, s, 8, "summaries"))
			return false;
		md->insts = alloc_array(r, md->n_insts, sizeof(*md->insts));
		md->summaries = alloc_array(r, md->n_summaries, sizeof(*md->summaries));
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
			ss->formula = str_at(r, u64(r, q + 8), s, "formula");
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

	if (!need(r, s->off, 0x0f, s, 8, "metrics header"))
		return false;
	pm = u64(r, s->off);
	nm = u32(r, s->off + 8);
	szm = u8(r, s->off + 0x0c);
	szp = u8(r, s->off + 0x0d);
	szs = u8(r, s->off + 0x0e);
	if (szm < HK_DRAFT_SZ_METRIC || szp < HK_DRAFT_SZ_SCOPE || szs < HK_DRAFT_SZ_SUMMARY)
		return fail(r, s->off + 0x0c, "structure sizes too small (%u %u %u)", szm, szp,
			    szs);
	if (!need_array(r, pm, nm, szm, s, 8, "metric array"))
		return false;
	for (uint32_t i = 0; i < nm; i++) {
		uint64_t o = pm + (uint64_t)i * szm;

		total_scopes += u16(r, o + 8);
		if (!need_array(r, u64(r, o + 0x10), u16(r, o + 8), szp, s, 8, "scope array"))
			return false;
	}
	db->n_metrics = nm;
	db->metrics = alloc_array(r, nm, sizeof(*db->metrics));
	db->scopes = alloc_array(r, total_scopes, sizeof(*db->scopes));
	if (!db->metrics || !db->scopes)
		return false;
	for (uint32_t i = 0; i < nm; i++) {
		uint64_t o = pm + (uint64_t)i * szm, ps = u64(r, o + 0x10);
		struct hkr_metric *md = &db->metrics[i];
		size_t n_sum = 0;

		md->name = str_at(r, u64(r, o), s, "metric name");
		md->n_insts = u16(r, o + 8);
		md->insts = alloc_array(r, md->n_insts, sizeof(*md->insts));
		if (!md->name || !md->insts)
			return false;
		for (size_t k = 0; k < md->n_insts; k++) {
			uint64_t q = ps + k * szp;

			n_sum += u16(r, q + 8);
			if (!need_array(r, u64(r, q + 0x10), u16(r, q + 8), szs, s, 8,
					"summary array"))
				return false;
		}
		md->summaries = alloc_array(r, n_sum, sizeof(*md->summaries));
		if (!md->summaries)
			return false;
		for (size_t k = 0; k < md->n_insts; k++) {
			uint64_t q = ps + k * szp, pss = u64(r, q + 0x10);
			uint32_t sc = db->n_scopes++;

			db->scopes[sc].name = str_at(r, u64(r, q), s, "scope name");
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
				ss->formula = str_at(r, u64(r, so), s, "formula");
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
	if (!need(r, sm->off, 0x0e, sm, 8, "load modules header") ||
	    !need(r, sf->off, 0x0e, sf, 8, "source files header") ||
	    !need(r, sfn->off, 0x0e, sfn, 8, "functions header"))
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
		return fail(r, sm->off + 0x0c, "structure sizes too small (%u %u %u)", a->szm,
			    a->szf, a->szfn);
	if (!need_array(r, a->modules, db->n_modules, a->szm, sm, 8, "module array") ||
	    !need_array(r, a->files, db->n_files, a->szf, sf, 8, "file array") ||
	    !need_array(r, a->functions, db->n_functions, a->szfn, sfn, 8, "function array"))
		return false;
	db->modules = alloc_array(r, db->n_modules, sizeof(*db->modules));
	db->files = alloc_array(r, db->n_files, sizeof(*db->files));
	db->functions = alloc_array(r, db->n_functions, sizeof(*db->functions));
	if (!db->modules || !db->files || !db->functions)
		return false;
	for (size_t i = 0; i < db->n_modules; i++) {
		uint64_t o = a->modules + i * a->szm;

		db->modules[i].flags = u32(r, o);
		if (!(db->modules[i].path = str_at(r, u64(r, o + 8), str, "module path")))
			return false;
	}
	for (size_t i = 0; i < db->n_files; i++) {
		uint64_t o = a->files + i * a->szf;

		db->files[i].flags = u32(r, o);
		if (!(db->files[i].path = str_at(r, u64(r, o + 8), str, "file path")))
			return false;
	}
	for (size_t i = 0; i < db->n_functions; i++) {
		uint64_t o = a->functions + i * a->szfn, p;
		struct hkr_function *fn = &db->functions[i];

		fn->module = fn->file = HKR_NONE;
		if ((p = u64(r, o)) && !(fn->name = str_at(r, p, str, "function name")))
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
			return fail(r, o, "function with no name, module nor file");
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
		return fail(r, o + 0x10, "context id 0 is reserved for the global context");
	/* flex packing: u64 sub-fields take the next whole word; the u32
	 * line takes the low half of the next word */
	if (c->flags & HK_CTX_HAS_FUNCTION) {
		if (w + 1 > c->n_flex)
			return fail(r, o + 0x17, "nFlexWords too small for its flags");
		p = u64(r, flex + 8 * w++);
		if (!element_index(r, p, a->functions, db->n_functions, a->szfn, flex,
				   "pFunction", &c->function))
			return false;
	}
	if (c->flags & HK_CTX_HAS_SRCLOC) {
		if (w + 2 > c->n_flex)
			return fail(r, o + 0x17, "nFlexWords too small for its flags");
		p = u64(r, flex + 8 * w++);
		if (!element_index(r, p, a->files, db->n_files, a->szf, flex, "pFile", &c->file))
			return false;
		c->line = u32(r, flex + 8 * w++);
	}
	if (c->flags & HK_CTX_HAS_POINT) {
		if (w + 2 > c->n_flex)
			return fail(r, o + 0x17, "nFlexWords too small for its flags");
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

/*
 * The context tree, iteratively (no recursion on hostile depth).  Each
 * {Ctx} needs at least its head bytes, so more contexts than the section
 * could hold distinct means arrays that overlap or loop: rejected.
 */
static bool read_context(struct rd *r, const struct sec *s, const struct arrays *a,
			 struct hkr_db *db)
{
	uint64_t head = db->draft ? HK_DRAFT_CTX_HEAD : HK_CTX_HEAD;
	uint64_t max_ctx = s->size / head + 1, top, top_size;
	struct todo *stack = NULL;
	size_t n_stack = 0, cap_stack = 0, cap = 0;
	bool ok = false;

	if (db->draft) {
		if (!need(r, s->off, 0x10, s, 8, "context tree header"))
			return false;
		top_size = u64(r, s->off);
		top = u64(r, s->off + 8);
		if (top_size && !need(r, top, top_size, s, 8, "root contexts"))
			return false;
	} else {
		uint16_t n;
		uint8_t sz;

		if (!need(r, s->off, 0x0b, s, 8, "context tree header"))
			return false;
		top = u64(r, s->off);
		n = u16(r, s->off + 8);
		sz = u8(r, s->off + 0x0a);
		if (sz < HK_SZ_ENTRY)
			return fail(r, s->off + 0x0a, "szEntryPoint %u < %u", sz, HK_SZ_ENTRY);
		if (!need_array(r, top, n, sz, s, 8, "entry points"))
			return false;
		cap = n + 16;
		db->contexts = alloc_array(r, cap, sizeof(*db->contexts));
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
				return fail(r, o + 0x10, "entry point with context id 0");
			c->pretty_name = str_at(r, u64(r, o + 0x18), &a->strings,
						"entry point name");
			if (!c->pretty_name)
				return false;
		}
		top_size = 0;
	}
	/* work list: (parent index, children array); entries first */
	cap_stack = 64;
	stack = malloc(cap_stack * sizeof(*stack));
	if (!stack)
		return fail(r, 0, "out of memory");
	if (db->draft) {
		if (top_size)
			stack[n_stack++] = (struct todo){ HKR_NONE, top, top_size };
	} else {
		for (size_t i = db->n_contexts; i-- > 0;) {
			uint64_t o = top + i * u8(r, s->off + 0x0a);
			uint64_t sz = u64(r, o), p = u64(r, o + 8);

			if (!sz)
				continue;
			if (!need(r, p, sz, s, 8, "children array"))
				goto out;
			stack[n_stack++] = (struct todo){ i, p, sz };
		}
	}
	while (n_stack) {
		struct todo td = stack[--n_stack];
		uint64_t o = td.off, end = td.off + td.size;
		size_t first = db->n_contexts, depth;

		depth = td.parent == HKR_NONE ? 0 : db->contexts[td.parent].depth + 1;
		while (o < end) {
			struct hkr_context *c;
			uint64_t sz;

			if (!need(r, o, head, &(struct sec){ td.off, td.size }, 8, "context"))
				goto out;
			sz = head + 8 * (uint64_t)u8(r, o + 0x17);
			if (!need(r, o, sz, &(struct sec){ td.off, td.size }, 8, "context"))
				goto out;
			if (db->n_contexts >= max_ctx) {
				fail(r, o, "context arrays overlap or form a cycle");
				goto out;
			}
			if (db->n_contexts == cap) {
				size_t ncap = cap ? cap * 2 : 256;
				struct hkr_context *nc = realloc(db->contexts, ncap * sizeof(*nc));

				if (!nc) {
					fail(r, o, "out of memory");
					goto out;
				}
				db->contexts = nc;
				cap = ncap;
			}
			c = &db->contexts[db->n_contexts];
			memset(c, 0, sizeof(*c));
			c->at = o;
			c->parent = td.parent;
			c->depth = depth;
			if (!read_ctx(r, o, a, db, c))
				goto out;
			db->n_contexts++;
			if (td.parent != HKR_NONE) {
				if (!db->contexts[td.parent].n_children++)
					db->contexts[td.parent].first_child = db->n_contexts - 1;
			}
			o += sz;
		}
		/* children of this array, pushed in reverse to read in order */
		for (size_t i = db->n_contexts; i-- > first;) {
			uint64_t co = db->contexts[i].at, sz = u64(r, co), p = u64(r, co + 8);

			if (!sz)
				continue;
			if (!need(r, p, sz, s, 8, "children array"))
				goto out;
			if (n_stack == cap_stack) {
				struct todo *ns = realloc(stack, cap_stack * 2 * sizeof(*ns));

				if (!ns) {
					fail(r, p, "out of memory");
					goto out;
				}
				stack = ns;
				cap_stack *= 2;
			}
			stack[n_stack++] = (struct todo){ i, p, sz };
		}
	}
	db->ctx_order = alloc_array(r, db->n_contexts, sizeof(uint32_t));
	if (!db->ctx_order)
		goto out;
	for (size_t i = 0; i < db->n_contexts; i++)
		db->ctx_order[i] = i;
	qsort_r(db->ctx_order, db->n_contexts, sizeof(uint32_t), cmp_ctx_id, db->contexts);
	for (size_t i = 1; i < db->n_contexts; i++)
		if (db->contexts[db->ctx_order[i]].id == db->contexts[db->ctx_order[i - 1]].id) {
			fail(r, s->off, "context id %u appears twice",
			     db->contexts[db->ctx_order[i]].id);
			goto out;
		}
	ok = true;
out:
	free(stack);
	return ok;
}

static int finish(struct rd *r)
{
	return r->failed ? -EINVAL : 0;
}

static int parse_meta(struct rd *r, struct hkr_db *db)
{
	struct sec secs[M_N];
	struct arrays a;
	const struct sec *ms = &secs[M_METRICS];

	/* the string table is a u8*(1) in the draft */
	if (!read_header(r, "meta", "_meta.db", M_N, secs, 1u << M_STRINGS))
		return -EINVAL;
	/* the layouts differ first in the metric structure sizes */
	if (!need(r, ms->off, 0x0f, ms, 8, "metrics header"))
		return -EINVAL;
	db->draft = u8(r, ms->off + 0x0c) == HK_DRAFT_SZ_METRIC &&
		    u8(r, ms->off + 0x0e) == HK_DRAFT_SZ_SUMMARY;
	db->has_meta = true;
	if (read_general(r, &secs[M_GENERAL], db) && read_idnames(r, &secs[M_IDNAMES], db) &&
	    (db->draft ? read_metrics_draft(r, ms, db) : read_metrics_released(r, ms, db)) &&
	    read_tables(r, secs, db, &a))
		read_context(r, &secs[M_CONTEXT], &a, db);
	return finish(r);
}

/* ---- profile.db ----------------------------------------------------------- */

static bool read_tuple(struct rd *r, uint64_t p, const struct sec *s, struct hkr_profile *pr)
{
	if (!need(r, p, 8, s, 8, "identifier tuple"))
		return false;
	pr->n_ids = u16(r, p);
	if (!need_array(r, p + 8, pr->n_ids, 16, s, 8, "identifier tuple"))
		return false;
	pr->ids = alloc_array(r, pr->n_ids, sizeof(*pr->ids));
	if (!pr->ids)
		return false;
	for (uint16_t k = 0; k < pr->n_ids; k++) {
		uint64_t o = p + 8 + 16 * (uint64_t)k;

		pr->ids[k].kind = u8(r, o);
		pr->ids[k].flags = u16(r, o + 2);
		pr->ids[k].logical = u32(r, o + 4);
		pr->ids[k].physical = u64(r, o + 8);
		if (!(pr->ids[k].flags & 1) && pr->ids[k].physical != pr->ids[k].logical)
			return fail(r, o + 8, "logical identifier with physicalId != logicalId");
	}
	pr->has_tuple = true;
	return true;
}

/* A sparse value block: values (vsz bytes, key of ksz bytes first) and
 * indices (isz bytes: key, u64 start).  Calls back per element. */
static bool read_block(struct rd *r, uint64_t at, uint64_t n_values, uint64_t p_values,
		       uint64_t n_idx, uint64_t p_idx, unsigned vkey, unsigned ikey,
		       const char *what)
{
	struct sec file = { 0, r->n };
	unsigned vsz = vkey + 8, isz = ikey + 8;

	if (!n_values && !n_idx)
		return true;
	if (!need_array(r, p_values, n_values, vsz, &file, vkey, what) ||
	    !need_array(r, p_idx, n_idx, isz, &file, ikey, what))
		return false;
	if (n_idx && n_values && p_values + n_values * vsz > p_idx)
		return fail(r, at, "%s: values overlap or follow the indices", what);
	return true;
}

static bool read_profile_block(struct rd *r, uint64_t o, struct hkr_profile *pr)
{
	uint64_t nv = u64(r, o), pv = u64(r, o + 8), pi = u64(r, o + 0x18);
	uint32_t nc = u32(r, o + 0x10);
	uint64_t prev_start = 0;

	if (!read_block(r, o, nv, pv, nc, pi, 2, 4, "profile values"))
		return false;
	if (nc && !nv)
		return fail(r, o, "context indices without values");
	pr->n_ctxs = nc;
	pr->n_values = nv;
	pr->values = alloc_array(r, nv, sizeof(*pr->values));
	if (!pr->values)
		return false;
	for (uint32_t k = 0; k < nc; k++) {
		uint64_t io = pi + 12 * (uint64_t)k;
		uint32_t ctx = u32(r, io);
		uint64_t start = u64(r, io + 4), end = k + 1 < nc ? u64(r, io + 16) : nv;

		if (k && ctx <= u32(r, io - 12))
			return fail(r, io, "context indices not sorted by ctxId");
		if (start < prev_start || start > end || end > nv || (k == 0 && start))
			return fail(r, io + 4, "bad startIndex %" PRIu64, start);
		prev_start = start;
		for (uint64_t v = start; v < end; v++) {
			uint64_t vo = pv + 10 * v;

			pr->values[v].ctx = ctx;
			pr->values[v].metric = u16(r, vo);
			pr->values[v].value = f64(r, vo + 2);
			if (v > start && pr->values[v].metric <= pr->values[v - 1].metric)
				return fail(r, vo, "values not sorted by metricId");
		}
	}
	return true;
}

static int parse_profile(struct rd *r, struct hkr_db *db)
{
	struct sec secs[2];
	const struct sec *pis = &secs[0], *tus = &secs[1];
	uint64_t pp;
	uint32_t n;
	uint8_t sz;
	bool draft;

	if (!read_header(r, "prof", "_prof.db", 2, secs, 0))
		return -EINVAL;
	if (!need(r, pis->off, 0x0d, pis, 8, "profile info header"))
		return -EINVAL;
	pp = u64(r, pis->off);
	n = u32(r, pis->off + 8);
	sz = u8(r, pis->off + 0x0c);
	/* released {PI} is 0x30 (with flags), the draft's 0x28 */
	draft = sz < HK_SZ_PROFILE;
	if (sz < HK_DRAFT_SZ_PROFILE)
		return fail(r, pis->off + 0x0c, "szProfile %u too small", sz), -EINVAL;
	if (db->has_meta && draft != db->draft)
		return fail(r, pis->off + 0x0c, "szProfile %u does not match meta.db's layout",
			    sz), -EINVAL;
	db->draft = draft;
	if (!n)
		return fail(r, pis->off + 8, "no profiles (the summary must be first)"), -EINVAL;
	if (!need_array(r, pp, n, sz, pis, 8, "profile array"))
		return -EINVAL;
	db->profiles = alloc_array(r, n, sizeof(*db->profiles));
	if (!db->profiles)
		return -EINVAL;
	db->n_profiles = n;
	db->has_profile = true;
	for (uint32_t i = 0; i < n && !r->failed; i++) {
		uint64_t o = pp + (uint64_t)i * sz, tup = u64(r, o + 0x20);
		struct hkr_profile *pr = &db->profiles[i];

		if (!draft) {
			pr->flags = u32(r, o + 0x28);
			if ((i == 0) != (pr->flags & 1))
				fail(r, o + 0x28, i ? "summary profile after the first"
						    : "first profile is not the summary");
		}
		if (tup)
			read_tuple(r, tup, tus, pr);
		else if (draft || i)
			fail(r, o + 0x20, "profile without identifier tuple");
		if (!r->failed)
			read_profile_block(r, o, pr);
	}
	return finish(r);
}

/* ---- cct.db --------------------------------------------------------------- */

static int parse_cct(struct rd *r, struct hkr_db *db)
{
	struct sec secs[1];
	uint64_t pc;
	uint32_t n;
	uint8_t sz;

	if (!read_header(r, "ctxt", "__ctx.db", 1, secs, 0))
		return -EINVAL;
	if (!need(r, secs[0].off, 0x0d, &secs[0], 8, "context info header"))
		return -EINVAL;
	pc = u64(r, secs[0].off);
	n = u32(r, secs[0].off + 8);
	sz = u8(r, secs[0].off + 0x0c);
	if (sz < HK_SZ_CTXINFO)
		return fail(r, secs[0].off + 0x0c, "szCtx %u < %u", sz, HK_SZ_CTXINFO), -EINVAL;
	if (!need_array(r, pc, n, sz, &secs[0], 8, "context info array"))
		return -EINVAL;
	db->cct = alloc_array(r, n, sizeof(*db->cct));
	if (!db->cct)
		return -EINVAL;
	db->n_cct = n;
	db->has_cct = true;
	for (uint32_t c = 0; c < n && !r->failed; c++) {
		uint64_t o = pc + (uint64_t)c * sz;
		uint64_t nv = u64(r, o), pv = u64(r, o + 8), pi = u64(r, o + 0x18);
		uint16_t nm = u16(r, o + 0x10);
		struct hkr_ctx_values *cv = &db->cct[c];
		uint64_t prev_start = 0;

		if (!read_block(r, o, nv, pv, nm, pi, 4, 2, "context values"))
			break;
		if (nm && !nv) {
			fail(r, o, "metric indices without values");
			break;
		}
		cv->n_metrics = nm;
		cv->n_values = nv;
		cv->values = alloc_array(r, nv, sizeof(*cv->values));
		if (!cv->values)
			break;
		for (uint16_t k = 0; k < nm && !r->failed; k++) {
			uint64_t io = pi + 10 * (uint64_t)k;
			uint16_t metric = u16(r, io);
			uint64_t start = u64(r, io + 2), end = k + 1 < nm ? u64(r, io + 12) : nv;

			if (k && metric <= u16(r, io - 10)) {
				fail(r, io, "metric indices not sorted by metricId");
				break;
			}
			if (start < prev_start || start > end || end > nv || (k == 0 && start)) {
				fail(r, io + 2, "bad startIndex %" PRIu64, start);
				break;
			}
			prev_start = start;
			for (uint64_t v = start; v < end; v++) {
				uint64_t vo = pv + 12 * v;

				cv->values[v].metric = metric;
				cv->values[v].prof = u32(r, vo);
				cv->values[v].value = f64(r, vo + 4);
				if (v > start && cv->values[v].prof <= cv->values[v - 1].prof) {
					fail(r, vo, "values not sorted by profIndex");
					break;
				}
			}
		}
	}
	return finish(r);
}

/* ---- trace.db -------------------------------------------------------------- */

static int parse_trace(struct rd *r, struct hkr_db *db)
{
	struct sec secs[1], file;
	const struct sec *s = &secs[0];
	uint64_t pt;
	uint32_t n;
	uint8_t sz;

	if (!read_header(r, "trce", "trace.db", 1, secs, 0))
		return -EINVAL;
	file = (struct sec){ 0, r->n };
	if (!need(r, s->off, 0x0d, s, 8, "trace header"))
		return -EINVAL;
	pt = u64(r, s->off);
	n = u32(r, s->off + 8);
	sz = u8(r, s->off + 0x0c);
	/* the released header has min/max timestamps (0x20 bytes), the
	 * draft's ends at 0x0d: known from meta.db, else from where the
	 * trace headers start */
	db->has_range = db->has_meta ? !db->draft : pt >= s->off + 0x20;
	if (db->has_range) {
		if (!need(r, s->off, 0x20, s, 8, "trace header"))
			return -EINVAL;
		db->min_ts = u64(r, s->off + 0x10);
		db->max_ts = u64(r, s->off + 0x18);
	}
	if (sz < HK_SZ_TRACE)
		return fail(r, s->off + 0x0c, "szTrace %u < %u", sz, HK_SZ_TRACE), -EINVAL;
	if (!need_array(r, pt, n, sz, s, 8, "trace headers"))
		return -EINVAL;
	db->traces = alloc_array(r, n, sizeof(*db->traces));
	if (!db->traces)
		return -EINVAL;
	db->n_traces = n;
	db->has_trace = true;
	for (uint32_t i = 0; i < n && !r->failed; i++) {
		uint64_t o = pt + (uint64_t)i * sz, ps = u64(r, o + 8), pe = u64(r, o + 0x10);
		struct hkr_trace *tr = &db->traces[i];

		tr->prof = u32(r, o);
		if (pe < ps || (pe - ps) % 12) {
			fail(r, o + 0x10, "pEnd does not end whole elements after pStart");
			break;
		}
		tr->n = (pe - ps) / 12;
		if (!need_array(r, ps, tr->n, 12, &file, 4, "trace line"))
			break;
		tr->elems = alloc_array(r, tr->n, sizeof(*tr->elems));
		if (!tr->elems)
			break;
		for (size_t k = 0; k < tr->n; k++) {
			uint64_t eo = ps + 12 * k;

			tr->elems[k].timestamp = u64(r, eo);
			tr->elems[k].ctx = u32(r, eo + 8);
			if (k && tr->elems[k].timestamp < tr->elems[k - 1].timestamp) {
				fail(r, eo, "trace line not sorted by timestamp");
				break;
			}
			if (k && !tr->elems[k].ctx && !tr->elems[k - 1].ctx) {
				fail(r, eo, "two consecutive ctxId 0 elements");
				break;
			}
			if (db->has_range && (tr->elems[k].timestamp < db->min_ts ||
					      tr->elems[k].timestamp > db->max_ts)) {
				fail(r, eo, "timestamp outside [minTimestamp, maxTimestamp]");
				break;
			}
		}
	}
	return finish(r);
}

/* ---- files ------------------------------------------------------------------- */

int hkr_read_mem(const char *name, const uint8_t *data, size_t size, struct hkr_db *db,
		 FILE *errf)
{
	struct rd r = { .name = name, .p = data, .n = size, .errf = errf };

	if (size < 16)
		return fail(&r, 0, "file too small (%zu bytes)", size), -EINVAL;
	if (!memcmp(data + 10, "meta", 4))
		return parse_meta(&r, db);
	if (!memcmp(data + 10, "prof", 4))
		return parse_profile(&r, db);
	if (!memcmp(data + 10, "ctxt", 4))
		return parse_cct(&r, db);
	if (!memcmp(data + 10, "trce", 4))
		return parse_trace(&r, db);
	return fail(&r, 0, "not an HPCToolkit database file"), -EINVAL;
}

static int read_file(const char *path, struct hkr_db *db, FILE *errf, const char *format)
{
	struct stat st;
	void *map = NULL;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		err = -errno;
		if (errf)
			fprintf(errf, "%s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 16) {
		close(fd);
		if (errf)
			fprintf(errf, "%s: offset 0: not a database file\n", path);
		return -EINVAL;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		err = -errno;
		if (errf)
			fprintf(errf, "%s: %s\n", path, strerror(errno));
		return err;
	}
	if (format && memcmp((const uint8_t *)map + 10, format, 4) != 0) {
		if (errf)
			fprintf(errf, "%s: offset 10: format is not '%s'\n", path, format);
		err = -EINVAL;
	} else {
		err = hkr_read_mem(path, map, st.st_size, db, errf);
	}
	munmap(map, st.st_size);
	return err;
}

int hkr_read_meta(const char *path, struct hkr_db *db, FILE *errf)
{
	return read_file(path, db, errf, "meta");
}

int hkr_read_profile(const char *path, struct hkr_db *db, FILE *errf)
{
	return read_file(path, db, errf, "prof");
}

int hkr_read_cct(const char *path, struct hkr_db *db, FILE *errf)
{
	return read_file(path, db, errf, "ctxt");
}

int hkr_read_trace(const char *path, struct hkr_db *db, FILE *errf)
{
	return read_file(path, db, errf, "trce");
}

int hkr_read_dir(const char *dir, struct hkr_db *db, FILE *errf)
{
	static const char *const names[] = { "meta.db", "profile.db", "cct.db", "trace.db" };
	char path[4096];
	int err = 0;

	for (int i = 0; i < 4 && !err; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		/* a database without traces has no trace.db */
		if (i == 3 && access(path, F_OK) != 0 && errno == ENOENT)
			break;
		err = read_file(path, db, errf, NULL);
	}
	if (err)
		return err;
	/* across files: profile indexes and context ids must exist */
	for (size_t c = 0; c < db->n_cct; c++)
		for (size_t v = 0; v < db->cct[c].n_values; v++)
			if (db->cct[c].values[v].prof >= db->n_profiles) {
				if (errf)
					fprintf(errf, "%s/cct.db: offset 0: profIndex %u of "
						"context %zu not in profile.db\n", dir,
						db->cct[c].values[v].prof, c);
				return -EINVAL;
			}
	for (size_t i = 0; i < db->n_traces; i++) {
		const struct hkr_trace *tr = &db->traces[i];

		if (tr->prof >= db->n_profiles) {
			if (errf)
				fprintf(errf, "%s/trace.db: offset 0: trace %zu: profIndex %u not "
					"in profile.db\n", dir, i, tr->prof);
			return -EINVAL;
		}
		for (size_t k = 0; k < tr->n; k++)
			if (tr->elems[k].ctx >= db->n_cct) {
				if (errf)
					fprintf(errf, "%s/trace.db: offset 0: trace %zu: ctxId %u "
						"beyond cct.db's %zu contexts\n", dir, i,
						tr->elems[k].ctx, db->n_cct);
				return -EINVAL;
			}
	}
	return 0;
}

uint32_t hkr_find_context(const struct hkr_db *db, uint32_t id)
{
	size_t lo = 0, hi = db->n_contexts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t mid_id = db->contexts[db->ctx_order[mid]].id;

		if (mid_id == id)
			return db->ctx_order[mid];
		if (mid_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return HKR_NONE;
}

double hkr_profile_value(const struct hkr_profile *p, uint32_t ctx, uint16_t metric)
{
	size_t lo = 0, hi = p->n_values;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct hkr_pval *v = &p->values[mid];

		if (v->ctx == ctx && v->metric == metric)
			return v->value;
		if (v->ctx < ctx || (v->ctx == ctx && v->metric < metric))
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

void hkr_free(struct hkr_db *db)
{
	free(db->title);
	free(db->description);
	for (size_t i = 0; i < db->n_kinds && db->kind_names; i++)
		free(db->kind_names[i]);
	free(db->kind_names);
	for (size_t i = 0; i < db->n_scopes && db->scopes; i++)
		free(db->scopes[i].name);
	free(db->scopes);
	for (size_t i = 0; i < db->n_metrics && db->metrics; i++) {
		free(db->metrics[i].name);
		free(db->metrics[i].insts);
		for (size_t k = 0; k < db->metrics[i].n_summaries && db->metrics[i].summaries; k++)
			free(db->metrics[i].summaries[k].formula);
		free(db->metrics[i].summaries);
	}
	free(db->metrics);
	for (size_t i = 0; i < db->n_modules && db->modules; i++)
		free(db->modules[i].path);
	free(db->modules);
	for (size_t i = 0; i < db->n_files && db->files; i++)
		free(db->files[i].path);
	free(db->files);
	for (size_t i = 0; i < db->n_functions && db->functions; i++)
		free(db->functions[i].name);
	free(db->functions);
	for (size_t i = 0; i < db->n_contexts && db->contexts; i++)
		free(db->contexts[i].pretty_name);
	free(db->contexts);
	free(db->ctx_order);
	for (size_t i = 0; i < db->n_profiles && db->profiles; i++) {
		free(db->profiles[i].ids);
		free(db->profiles[i].values);
	}
	free(db->profiles);
	for (size_t i = 0; i < db->n_cct && db->cct; i++)
		free(db->cct[i].values);
	free(db->cct);
	for (size_t i = 0; i < db->n_traces && db->traces; i++)
		free(db->traces[i].elems);
	free(db->traces);
	memset(db, 0, sizeof(*db));
}
