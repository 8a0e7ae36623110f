// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind writer: the text of a file's body.  Names are compressed
 * ("(id) name" the first time, "(id)" after), positions are relative to
 * the previous cost line, and everything goes through one large buffer.
 */
#include "formats/callgrind/callgrind_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- compressed name ids --------------------------------------------------- */

static int name_ids_init(struct name_ids *ids, size_t n_dense)
{
	memset(ids, 0, sizeof(*ids));
	ids->dense = calloc(n_dense ? n_dense : 1, sizeof(*ids->dense));
	ids->n_dense = n_dense;
	return ids->dense ? 0 : -ENOMEM;
}

static void name_ids_free(struct name_ids *ids)
{
	free(ids->dense);
	idmap_free(&ids->rest);
	memset(ids, 0, sizeof(*ids));
}

/* The id of key, given the next one when new (*added). */
static int name_id(struct name_ids *ids, uint64_t key, uint32_t *id, bool *added)
{
	struct idmap_entry *e;

	if (key < ids->n_dense) {
		*added = !ids->dense[key];
		if (*added)
			ids->dense[key] = ++ids->next;
		*id = ids->dense[key];
		return 0;
	}
	e = idmap_upsert(&ids->rest, &key, added);
	if (!e)
		return -ENOMEM;
	if (*added) {
		e->key = key;
		e->val = ++ids->next;
	}
	*id = e->val;
	return 0;
}

int writer_init(struct writer *w, const struct model *m)
{
	int err;

	memset(w, 0, sizeof(*w));
	w->m = m;
	w->buf = malloc(OUT_BUF_SIZE);
	err = name_ids_init(&w->ob_ids, m->images.len);
	if (!err)
		err = name_ids_init(&w->fl_ids, m->files.len);
	if (!err)
		err = name_ids_init(&w->fn_ids, m->functions.len);
	return err || !w->buf ? -ENOMEM : 0;
}

void writer_free(struct writer *w)
{
	name_ids_free(&w->ob_ids);
	name_ids_free(&w->fl_ids);
	name_ids_free(&w->fn_ids);
	idmap_free(&w->renamed);
	free(w->buf);
	memset(w, 0, sizeof(*w));
}

/* ---- the buffer ------------------------------------------------------------- */

void w_flush(struct writer *w)
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

void w_putc(struct writer *w, char c)
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

void w_puts(struct writer *w, const char *s)
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

void put_u64(struct writer *w, uint64_t v)
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

/* ---- names -------------------------------------------------------------------- */

/* Writes "(id) name" the first time, "(id)" after. */
static int put_compressed(struct writer *w, struct name_ids *ids, uint64_t key,
			  const char *prefix, const char *name1, const char *name2)
{
	uint32_t id;
	bool added;
	int err = name_id(ids, key, &id, &added);

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
	if (idmap_get(&w->renamed, g) != UINT32_MAX) {
		char suffix[32];

		snprintf(suffix, sizeof(suffix), " [0x%" PRIx64 "]", m->functions.items[g].entry);
		return put_compressed(w, &w->fn_ids, g, prefix,
				      m->functions.items[g].name, suffix);
	}
	return put_compressed(w, &w->fn_ids, g, prefix, m->functions.items[g].name,
			      NULL);
}

/* ---- homonyms ----------------------------------------------------------------- */

/* A function's (object << 32 | home file, name), looked up among the first
 * functions met with each. */
struct homonym_key {
	uint64_t where, hash;
	const char *name;
	const struct model *m;
};

struct homonym_entry {
	uint64_t where, hash;
	uint32_t function;
};

static const char *function_name(const struct model *m, uint32_t f)
{
	return m->functions.items[f].name ? m->functions.items[f].name : "";
}

static inline uint64_t homonym_key_hash(const struct homonym_key *k)
{
	return k->hash;
}

static inline uint64_t homonym_entry_hash(const struct homonym_entry *e)
{
	return e->hash;
}

static inline bool homonym_match(const struct homonym_entry *e, const struct homonym_key *k)
{
	return e->hash == k->hash && e->where == k->where &&
	       !strcmp(function_name(k->m, e->function), k->name);
}

HASHTAB_DEFINE(homonyms, struct homonym_entry, struct homonym_key, homonym_entry_hash,
	       homonym_key_hash, homonym_match)

/* Remembers function g; marks it renamed when an earlier function has its
 * object, home file and name. */
static int check_homonym(struct writer *w, struct proc_ctx *pc, struct homonyms *first,
			 uint64_t g)
{
	const struct model *m = pc->m;
	struct homonym_key k = { .m = m };
	struct homonym_entry *e;
	bool fresh;

	k.name = function_name(m, (uint32_t)g);
	k.where = (uint64_t)m->functions.items[g].image << 32 | home_file(pc, g);
	k.hash = hash_bytes(k.where, k.name, strlen(k.name));
	e = homonyms_upsert(first, &k, &fresh);
	if (!e)
		return -ENOMEM;
	if (fresh) {
		*e = (struct homonym_entry){ k.where, k.hash, (uint32_t)g };
		return 0;
	}
	if (e->function == g)
		return 0;
	return idmap_put(&w->renamed, g, 1);
}

/*
 * Both readers identify a function by (object, file, name): two distinct
 * functions that share all three (static functions of a binary without
 * debug information) would merge.  All but the first get " [0x<entry>]".
 */
int find_homonyms(struct writer *w, struct proc_ctx *pc)
{
	struct homonyms first = { 0 };
	int err = 0;

	for (size_t i = 0; i < pc->items.len && !err; i++) {
		const struct item *it = item_at(pc, (uint32_t)i);
		uint64_t gs[2] = { it->group, it->kind == ITEM_CALL ? it->callee : it->group };

		for (int k = 0; k < 2 && !err; k++)
			if (gs[k] < pc->m->functions.len)
				err = check_homonym(w, pc, &first, gs[k]);
	}
	homonyms_free(&first);
	return err;
}

/* ---- the body ------------------------------------------------------------------ */

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

void put_costs(struct writer *w, const uint64_t *cost, int n_ev)
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

/* cob= cfi= cfn= and calls= of a call item (cob=/cfi= hold for one call
 * only in KCachegrind, so they are written every time). */
static int put_call(struct writer *w, struct proc_ctx *pc, const struct item *it)
{
	const struct model *m = pc->m;
	uint64_t tline, taddr = target_entry(m, it->callee, &tline);
	int err;

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
	return 0;
}

/* Where the body's writing stands: what ob=/fl=/fn= last said. */
struct body_state {
	uint64_t group;
	uint32_t image, last_fl, file, home;
};

/* The ob=, fl= and fn= lines that open the block of the item's group. */
static int open_group(struct writer *w, struct proc_ctx *pc, struct body_state *bs,
		      const struct item *it)
{
	int err;

	bs->home = home_file(pc, it->group);
	w_putc(w, '\n');
	if (it->image != bs->image) {
		err = put_object(w, "ob=", it->image);
		if (err)
			return err;
		bs->image = it->image;
	}
	/* annotate opens fn= in the last fl=/fi= file, KCachegrind in the
	 * last fl= file: both must be the home file */
	if (bs->last_fl != bs->home || bs->file != bs->home) {
		err = put_file(w, "fl=", bs->home);
		if (err)
			return err;
		bs->last_fl = bs->file = bs->home;
	}
	err = put_function(w, "fn=", it->group);
	bs->group = it->group;
	w->fresh = true;
	return err;
}

int write_body(struct writer *w, struct proc_ctx *pc, int n_ev)
{
	/* none written yet */
	struct body_state bs = { UINT64_MAX, UINT32_MAX - 1, UINT32_MAX - 1, UINT32_MAX - 1,
				 MODEL_NONE };
	int err;

	for (size_t i = 0; i < pc->items.len; i++) {
		const struct item *it = item_at(pc, (uint32_t)i);

		if (it->dead)
			continue;
		if (it->group != bs.group) {
			err = open_group(w, pc, &bs, it);
			if (err)
				return err;
		}
		if (it->file != bs.file) {
			err = put_file(w, it->file == bs.home ? "fe=" : "fi=", it->file);
			if (err)
				return err;
			bs.file = it->file;
		}
		if (it->kind == ITEM_CALL) {
			err = put_call(w, pc, it);
			if (err)
				return err;
		}
		put_position(w, it->addr, it->line);
		put_costs(w, it->cost, n_ev);
	}
	return 0;
}
