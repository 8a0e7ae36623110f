// SPDX-License-Identifier: GPL-2.0
/*
 * Continuous runs: what the symbolizer resolved, kept across the cuts that
 * empty the model's code tables (model_forget_code()), for the images still
 * mapped and the kernel.  Each interval interns only what its own samples
 * meet, but an address met in an earlier interval is not looked up again
 * (symbols, DWARF lines, inlined calls, the kernel's names): its function,
 * source line and inlined calls are copied back into the model from here.
 *
 * Measured before (collector -a -F 99 --interval 10 under a build loop):
 * every cut made every address of every live image resolve again, so each
 * interval paid for its addresses as if the run had just started.
 *
 * The cache is made anew at every cut from what it held for images still
 * in use and the model's locations of the interval just written, so that
 * it holds nothing of an image no process maps any more.  Strings (names,
 * source paths) are kept once each.
 *
 * An address not met in the last LOCATION_CACHE_KEEP_CUTS intervals is
 * left out too: a compiler always mapped under a build loop kept every
 * address it was ever sampled at, and the cache grew by 1 300 a cut
 * (5 000 after the first, 28 000 after the 14th: measured with -a -F 99
 * --interval 10), its rebuild at each cut with it; over 30 minutes the
 * collector's anonymous memory went from 33 to 75 MiB, and its CPU share
 * from 1.4% to 1.7% of a core.
 */
#include "symbols/symbolize_internal.h"

#include "lib/hashmix.h"

#define NONE UINT32_MAX

struct lc_string_entry {
	uint32_t id;
	uint64_t hash;
};

struct lc_string_key {
	const struct location_cache *c;
	const char *s;
	uint64_t hash;
};

struct lc_loc_entry {
	uint32_t id;
};

struct lc_loc_key {
	const struct location_cache *c;
	uint32_t image;
	uint64_t addr;
};

struct lc_string {
	char *s;
	uint32_t model_file;  /* its model file id in epoch file_epoch */
	uint32_t file_epoch;
};

struct lc_function {
	uint32_t image, name, linkage; /* strings; linkage NONE when none */
	uint64_t entry, size;
	uint32_t file, line;           /* file: a string, or NONE */
	uint32_t model_id, epoch;      /* its model function id in that epoch */
};

struct lc_location {
	uint32_t image;
	uint64_t addr;
	uint32_t function, file, line; /* function NONE: unresolved */
	uint32_t inl, n_inl;
	uint32_t met;                  /* the last interval (code_epoch) it was met in */
};

struct lc_inline {
	uint32_t function, call_file, call_line;
};

static inline uint64_t lc_string_entry_hash(const struct lc_string_entry *e)
{
	return e->hash;
}

static inline uint64_t lc_string_key_hash(const struct lc_string_key *k)
{
	return k->hash;
}

static inline uint64_t lc_loc_hash(uint32_t image, uint64_t addr)
{
	return hash_pair(image, addr);
}

static inline uint64_t lc_loc_key_hash(const struct lc_loc_key *k)
{
	return lc_loc_hash(k->image, k->addr);
}

HASHTAB_STRUCT(lc_strings, struct lc_string_entry);
HASHTAB_STRUCT(lc_locs, struct lc_loc_entry);

struct location_cache {
	struct lc_strings string_index;
	struct lc_locs loc_index;
	struct lc_string *strings;
	struct lc_function *functions;
	struct lc_location *locations;
	struct lc_inline *inlines;
	size_t n_strings, n_functions, n_locations, n_inlines;
	size_t cap_strings, cap_functions, cap_locations, cap_inlines;
};

static inline bool lc_string_match(const struct lc_string_entry *e, const struct lc_string_key *k)
{
	return e->hash == k->hash && strcmp(k->c->strings[e->id].s, k->s) == 0;
}

static inline uint64_t lc_loc_entry_hash_c(const struct lc_loc_entry *e);

HASHTAB_FUNCS(lc_strings, struct lc_strings, struct lc_string_entry, struct lc_string_key,
	      lc_string_entry_hash, lc_string_key_hash, lc_string_match)

/* A location entry's hash needs the cache's array: kept by the caller in a
 * thread-local pointer while the table grows (one thread uses a cache). */
static __thread const struct location_cache *lc_current;

static inline uint64_t lc_loc_entry_hash_c(const struct lc_loc_entry *e)
{
	const struct lc_location *l = &lc_current->locations[e->id];

	return lc_loc_hash(l->image, l->addr);
}

static inline bool lc_loc_match(const struct lc_loc_entry *e, const struct lc_loc_key *k)
{
	const struct lc_location *l = &k->c->locations[e->id];

	return l->addr == k->addr && l->image == k->image;
}

HASHTAB_FUNCS(lc_locs, struct lc_locs, struct lc_loc_entry, struct lc_loc_key,
	      lc_loc_entry_hash_c, lc_loc_key_hash, lc_loc_match)

#define LC_GROW(c, arr, n, cap)                                                    \
	do {                                                                       \
		if ((c)->n == (c)->cap) {                                          \
			(c)->cap = (c)->cap ? 2 * (c)->cap : 256;                  \
			(c)->arr = xrealloc((c)->arr, (c)->cap * sizeof(*(c)->arr)); \
		}                                                                  \
	} while (0)

static uint32_t lc_string(struct location_cache *c, const char *s)
{
	struct lc_string_key k = { c, s, 0 };
	struct lc_string_entry *e;
	bool fresh;

	if (!s)
		return NONE;
	k.hash = hash_string(s);
	e = sym_check_alloc(lc_strings_upsert(&c->string_index, &k, &fresh));
	if (fresh) {
		LC_GROW(c, strings, n_strings, cap_strings);
		c->strings[c->n_strings] = (struct lc_string){ xstrdup(s), NONE, 0 };
		e->id = (uint32_t)c->n_strings++;
		e->hash = k.hash;
	}
	return e->id;
}

static const char *lc_str(const struct location_cache *c, uint32_t id)
{
	return id == NONE ? NULL : c->strings[id].s;
}

/* The model's function fid, as a cached function (memo: model id -> ours). */
static uint32_t keep_function(struct location_cache *c, const struct model *m, uint32_t fid,
			      uint32_t *memo)
{
	const struct model_function *f;

	if (fid == MODEL_NONE)
		return NONE;
	if (memo[fid] != NONE)
		return memo[fid];
	f = &m->functions.items[fid];
	LC_GROW(c, functions, n_functions, cap_functions);
	c->functions[c->n_functions] = (struct lc_function){
		.image = f->image, .name = lc_string(c, f->name),
		.linkage = lc_string(c, f->linkage_name), .entry = f->entry, .size = f->size,
		.file = f->file == MODEL_NONE ? NONE : lc_string(c, m->files.items[f->file].path),
		.line = f->line, .model_id = NONE,
	};
	return memo[fid] = (uint32_t)c->n_functions++;
}

/* A function of the old cache, copied into the new one (memo: old -> new). */
static uint32_t copy_function(struct location_cache *c, const struct location_cache *old,
			      uint32_t fn, uint32_t *memo)
{
	const struct lc_function *f;

	if (fn == NONE)
		return NONE;
	if (memo[fn] != NONE)
		return memo[fn];
	f = &old->functions[fn];
	LC_GROW(c, functions, n_functions, cap_functions);
	c->functions[c->n_functions] = (struct lc_function){
		.image = f->image, .name = lc_string(c, lc_str(old, f->name)),
		.linkage = lc_string(c, lc_str(old, f->linkage)), .entry = f->entry,
		.size = f->size, .file = lc_string(c, lc_str(old, f->file)), .line = f->line,
		.model_id = NONE,
	};
	return memo[fn] = (uint32_t)c->n_functions++;
}

/* A new location slot for (image, addr), or NULL when it is there already. */
static struct lc_location *add_location(struct location_cache *c, uint32_t image, uint64_t addr)
{
	struct lc_loc_key k = { c, image, addr };
	struct lc_loc_entry *e;
	bool fresh;

	LC_GROW(c, locations, n_locations, cap_locations);
	c->locations[c->n_locations] = (struct lc_location){ .image = image, .addr = addr };
	lc_current = c;
	e = sym_check_alloc(lc_locs_upsert(&c->loc_index, &k, &fresh));
	if (!fresh)
		return NULL;
	e->id = (uint32_t)c->n_locations;
	return &c->locations[c->n_locations++];
}

static void add_inline(struct location_cache *c, uint32_t fn, uint32_t call_file,
		       uint32_t call_line)
{
	LC_GROW(c, inlines, n_inlines, cap_inlines);
	c->inlines[c->n_inlines++] = (struct lc_inline){ fn, call_file, call_line };
}

void location_cache_free(struct location_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_strings; i++)
		free(c->strings[i].s);
	free(c->strings);
	free(c->functions);
	free(c->locations);
	free(c->inlines);
	lc_strings_free(&c->string_index);
	lc_locs_free(&c->loc_index);
	free(c);
}

/* Whether the locations of image are the symbolizer's to keep. */
static bool keeps(const struct symbolizer *s, uint32_t image, const bool *in_use, size_t n)
{
	const struct sym_image *si = sym_peek_image(s, image);

	if (image == s->kernel_image)
		return true;
	/* in use, or resolved in the interval that ends: kept open
	 * (symbolizer_forget_code()) */
	return si && si->opened && s->m->images.items[image].kind == MODEL_IMAGE_ELF &&
	       ((image < n && in_use[image]) || si->used_in == s->code_epoch + 1);
}

struct location_cache *location_cache_cut(struct symbolizer *s, struct location_cache *old,
					  const bool *in_use, size_t n)
{
	const struct model *m = s->m;
	struct location_cache *c = xcalloc(1, sizeof(*c));
	size_t n_memo = m->functions.len > (old ? old->n_functions : 0)
				? m->functions.len : (old ? old->n_functions : 0);
	uint32_t *memo = xrealloc(NULL, (n_memo + 1) * sizeof(*memo));

	/* the model's locations of this interval */
	memset(memo, 0xff, (n_memo + 1) * sizeof(*memo));
	for (size_t i = 0; i < m->locations.len; i++) {
		const struct model_location *l = &m->locations.items[i];
		const struct model_inline *inl = model_location_inlines(m, l);
		struct lc_location *cl;

		if (!keeps(s, l->image, in_use, n) || !(cl = add_location(c, l->image, l->addr)))
			continue;
		cl->met = s->code_epoch;
		cl->function = keep_function(c, m, l->function, memo);
		cl->file = l->file == MODEL_NONE ? NONE : lc_string(c, m->files.items[l->file].path);
		cl->line = l->line;
		cl->inl = (uint32_t)c->n_inlines;
		cl->n_inl = l->n_inlines;
		for (uint32_t k = 0; k < l->n_inlines; k++)
			add_inline(c, keep_function(c, m, inl[k].function, memo),
				   inl[k].call_file == MODEL_NONE ? NONE :
				   lc_string(c, m->files.items[inl[k].call_file].path),
				   inl[k].call_line);
	}
	/* and what the old cache held that this interval did not meet */
	memset(memo, 0xff, (n_memo + 1) * sizeof(*memo));
	for (size_t i = 0; old && i < old->n_locations; i++) {
		const struct lc_location *ol = &old->locations[i];
		struct lc_location *cl;

		if (s->code_epoch - ol->met >= LOCATION_CACHE_KEEP_CUTS ||
		    !keeps(s, ol->image, in_use, n) || !(cl = add_location(c, ol->image, ol->addr)))
			continue;
		cl->met = ol->met;
		cl->function = copy_function(c, old, ol->function, memo);
		cl->file = lc_string(c, lc_str(old, ol->file));
		cl->line = ol->line;
		cl->inl = (uint32_t)c->n_inlines;
		cl->n_inl = ol->n_inl;
		for (uint32_t k = 0; k < ol->n_inl; k++) {
			const struct lc_inline *oi = &old->inlines[ol->inl + k];

			add_inline(c, copy_function(c, old, oi->function, memo),
				   lc_string(c, lc_str(old, oi->call_file)), oi->call_line);
		}
	}
	free(memo);
	location_cache_free(old);
	return c;
}

static uint32_t model_file_of(struct symbolizer *s, struct location_cache *c, uint32_t str,
			      uint32_t epoch)
{
	struct lc_string *cs;

	if (str == NONE)
		return MODEL_NONE;
	cs = &c->strings[str];
	if (cs->file_epoch != epoch || cs->model_file == NONE) {
		cs->model_file = model_intern_file(s->m, cs->s);
		cs->file_epoch = epoch;
	}
	return cs->model_file;
}

static uint32_t model_function_of(struct symbolizer *s, struct location_cache *c, uint32_t fn,
				  uint32_t epoch)
{
	struct lc_function *f;

	if (fn == NONE)
		return MODEL_NONE;
	f = &c->functions[fn];
	if (f->epoch != epoch || f->model_id == NONE) {
		f->model_id = model_intern_function(s->m, f->image, f->name == NONE ? "" :
						    c->strings[f->name].s, f->entry, f->size,
						    model_file_of(s, c, f->file, epoch), f->line);
		if (f->linkage != NONE)
			model_function_set_linkage(s->m, f->model_id, c->strings[f->linkage].s);
		f->epoch = epoch;
	}
	return f->model_id;
}

uint32_t location_cache_find(struct symbolizer *s, struct location_cache *c, uint32_t image,
			     uint64_t addr, uint32_t epoch)
{
	struct lc_loc_key k = { c, image, addr };
	struct model_inline inl[64];
	const struct lc_location *l;
	struct lc_loc_entry *e;
	uint32_t n_inl;

	if (!c)
		return MODEL_NONE;
	lc_current = c;
	e = lc_locs_find(&c->loc_index, &k);
	if (!e)
		return MODEL_NONE;
	l = &c->locations[e->id];
	n_inl = l->n_inl < 64 ? l->n_inl : 64;
	for (uint32_t i = 0; i < n_inl; i++) {
		const struct lc_inline *ci = &c->inlines[l->inl + i];

		inl[i] = (struct model_inline){ model_function_of(s, c, ci->function, epoch),
						model_file_of(s, c, ci->call_file, epoch),
						ci->call_line };
	}
	return model_intern_location(s->m, image, addr, model_function_of(s, c, l->function, epoch),
				     model_file_of(s, c, l->file, epoch), l->line, inl, n_inl);
}

size_t location_cache_len(const struct location_cache *c)
{
	return c ? c->n_locations : 0;
}
