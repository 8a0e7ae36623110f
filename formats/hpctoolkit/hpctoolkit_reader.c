// SPDX-License-Identifier: GPL-2.0
/*
 * Reader of HPCToolkit databases, both layouts: the checked accessors every
 * part uses, and the entry points for a file, a memory image and a
 * database directory.  Nothing read from the file is trusted: every pointer
 * must lie (with its whole array) inside its section or the file, be
 * aligned as the spec says, and every count is bounded by the bytes it
 * needs before anything is allocated.
 */
#include "formats/hpctoolkit/hpctoolkit_read.h"
#include "formats/infile.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

bool hkr_fail(struct rd *r, uint64_t off, const char *fmt, ...)
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

/* A structure of `len` bytes at `off`, inside `s`, aligned to `align`. */
bool hkr_need(struct rd *r, uint64_t off, uint64_t len, const struct sec *s, uint64_t align,
	      const char *what)
{
	if (align > 1 && off % align)
		return hkr_fail(r, off, "%s not aligned to %" PRIu64 " bytes", what, align);
	if (!in_range(off, len, s->off, s->size))
		return hkr_fail(r, off, "%s (%" PRIu64 " bytes) outside its %s", what, len,
				s->off == 0 && s->size == r->n ? "file" : "section");
	return true;
}

/* An array of n elements of `size` bytes: checks n against the room.  An
 * empty one may be at 0, as pChildren is (and the writer puts every empty
 * array: a run with no source file has no file array). */
bool hkr_need_array(struct rd *r, uint64_t off, uint64_t n, uint64_t size,
		    const struct sec *s, uint64_t align, const char *what)
{
	if (!n && !off)
		return true;
	if (n && size && n > (s->size + 1) / size)
		return hkr_fail(r, off, "%s: %" PRIu64 " elements cannot fit", what, n);
	return hkr_need(r, off, n * size, s, align, what);
}

/* A NUL-terminated string wholly inside s. */
char *hkr_str_at(struct rd *r, uint64_t off, const struct sec *s, const char *what)
{
	const uint8_t *end;
	char *v;

	if (!in_range(off, 1, s->off, s->size)) {
		hkr_fail(r, off, "%s string outside its section", what);
		return NULL;
	}
	end = memchr(r->p + off, 0, s->off + s->size - off);
	if (!end) {
		hkr_fail(r, off, "%s string not terminated inside its section", what);
		return NULL;
	}
	v = strdup((const char *)r->p + off);
	if (!v)
		hkr_fail(r, off, "out of memory");
	return v;
}

void *hkr_alloc_array(struct rd *r, uint64_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		hkr_fail(r, 0, "out of memory");
	return p;
}

/* Common header: magic, format, version, n sections (8-aligned, except
 * those in the `unaligned` bit mask); footer. */
bool hkr_read_header(struct rd *r, const char *format, const char *footer, int n_sec,
		     struct sec *secs, unsigned unaligned)
{
	uint64_t hdr = 0x10 + 0x10 * n_sec;
	struct sec file = { 0, r->n };

	if (r->n < hdr + 8)
		return hkr_fail(r, 0, "file too small (%" PRIu64 " bytes)", r->n);
	if (memcmp(r->p, HK_MAGIC, 10) != 0)
		return hkr_fail(r, 0, "bad magic (not HPCTOOLKIT)");
	if (memcmp(r->p + 10, format, 4) != 0)
		return hkr_fail(r, 10, "format is not '%s'", format);
	if (u8(r, 14) != HK_MAJOR)
		return hkr_fail(r, 14, "major version %u, expected %u", u8(r, 14), HK_MAJOR);
	if (memcmp(r->p + r->n - 8, footer, 8) != 0)
		return hkr_fail(r, r->n - 8, "missing footer '%.8s'", footer);
	for (int i = 0; i < n_sec; i++) {
		secs[i].size = u64(r, 0x10 + 0x10 * i);
		secs[i].off = u64(r, 0x18 + 0x10 * i);
		if (!hkr_need(r, secs[i].off, secs[i].size, &file,
			      secs[i].size && !(unaligned & 1u << i) ? 8 : 1, "section"))
			return false;
		if (secs[i].off < hdr && secs[i].size)
			return hkr_fail(r, 0x18 + 0x10 * i, "section overlaps the file header");
	}
	return true;
}

/* ---- files ------------------------------------------------------------------- */

int hkr_read_mem(const char *name, const uint8_t *data, size_t size, struct hkr_db *db,
		 FILE *errf)
{
	struct rd r = { .name = name, .p = data, .n = size, .errf = errf };

	if (size < 16)
		return hkr_fail(&r, 0, "file too small (%zu bytes)", size), -EINVAL;
	if (!memcmp(data + 10, "meta", 4))
		return hkr_parse_meta(&r, db);
	if (!memcmp(data + 10, "prof", 4))
		return hkr_parse_profile(&r, db);
	if (!memcmp(data + 10, "ctxt", 4))
		return hkr_parse_cct(&r, db);
	if (!memcmp(data + 10, "trce", 4))
		return hkr_parse_trace(&r, db);
	return hkr_fail(&r, 0, "not an HPCToolkit database file"), -EINVAL;
}

static int read_file(const char *path, struct hkr_db *db, FILE *errf, const char *format)
{
	const unsigned char *map;
	size_t n;
	int err;

	err = format_map_file(path, &map, &n);
	if (err && err != -EINVAL) {
		if (errf)
			fprintf(errf, "%s: %s\n", path, strerror(-err));
		return err;
	}
	if (err || n < 16) {
		format_unmap_file(map, n);
		if (errf)
			fprintf(errf, "%s: offset 0: not a database file\n", path);
		return -EINVAL;
	}
	if (format && memcmp(map + 10, format, 4) != 0) {
		if (errf)
			fprintf(errf, "%s: offset 10: format is not '%s'\n", path, format);
		err = -EINVAL;
	} else {
		err = hkr_read_mem(path, map, n, db, errf);
	}
	format_unmap_file(map, n);
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

/* Every metricId of profile.db and cct.db is one meta.db lists: a
 * statMetricId in a summary profile, a propMetricId elsewhere. */
static int check_metric_ids(const char *dir, const struct hkr_db *db, FILE *errf)
{
	uint8_t *known = calloc(2, 65536 / 8); /* prop ids, then stat ids */
	int err = 0;

	if (!known)
		return -ENOMEM;
#define KNOWN(stat, id) (known[(stat) * 8192 + (id) / 8] & 1 << (id) % 8)
	for (size_t i = 0; i < db->n_metrics; i++) {
		const struct hkr_metric *md = &db->metrics[i];

		for (size_t k = 0; k < md->n_insts; k++)
			known[md->insts[k].prop_id / 8] |= 1 << md->insts[k].prop_id % 8;
		for (size_t k = 0; k < md->n_summaries; k++)
			known[8192 + md->summaries[k].stat_id / 8] |= 1 << md->summaries[k].stat_id % 8;
	}
	for (size_t p = 0; p < db->n_profiles && !err; p++) {
		const struct hkr_profile *pr = &db->profiles[p];
		bool summary = db->draft ? p == 0 : pr->flags & 1;

		for (size_t v = 0; v < pr->n_values && !err; v++)
			if (!KNOWN(summary, pr->values[v].metric)) {
				if (errf)
					fprintf(errf, "%s/profile.db: offset 0: profile %zu: %s %u "
						"not in meta.db\n", dir, p, summary ?
						"statMetricId" : "propMetricId", pr->values[v].metric);
				err = -EINVAL;
			}
	}
	for (size_t c = 0; c < db->n_cct && !err; c++)
		for (size_t v = 0; v < db->cct[c].n_values && !err; v++)
			if (!KNOWN(0, db->cct[c].values[v].metric)) {
				if (errf)
					fprintf(errf, "%s/cct.db: offset 0: context %zu: propMetricId "
						"%u not in meta.db\n", dir, c,
						db->cct[c].values[v].metric);
				err = -EINVAL;
			}
#undef KNOWN
	free(known);
	return err;
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
	return check_metric_ids(dir, db, errf);
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
