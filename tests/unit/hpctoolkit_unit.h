/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the HPCToolkit unit tests share (test_hpctoolkit.c: round trips of
 * the writer; test_hpctoolkit_reader.c: the reader against hpcprof's
 * databases and hostile input): the test model, lookups in a database read
 * back, the invariants every database must satisfy, and the fixture of a
 * written database.  Include after <cmocka.h>.
 */
#ifndef COLLECTOR_HPCTOOLKIT_UNIT_H
#define COLLECTOR_HPCTOOLKIT_UNIT_H

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats/format.h"
#include "formats/hpctoolkit/hpctoolkit.h"
#include "formats/hpctoolkit/hpctoolkit_reader.h"
#include "lib/bytes.h"
#include "model/model.h"
#include "unit_files.h"

#define MS 1000000ull
#define T0_NS 1700000000000000000ull

/* ---- helpers ----------------------------------------------------------- */

static inline char *path_join(const char *a, const char *b)
{
	return unit_path_join(a, b);
}

static inline uint8_t *slurp(const char *path, size_t *n)
{
	return unit_slurp(path, n);
}

static inline uint64_t rd64(const uint8_t *p, size_t off)
{
	return le64_get(p + off);
}

static inline void rm_rf(const char *dir)
{
	unit_rm_rf(dir);
}

/* ---- the test model ---------------------------------------------------- */

struct tm_ids {
	uint32_t app, libc, kernel;
	uint32_t file_src, file_missing;
	uint32_t f_main, f_work, f_helper, f_recurse, f_memcpy, f_syswrite, f_thread;
	uint32_t s1, s2, s3, s4, s5, s6;
	uint32_t t0, t1, t2, t3;
	char src_path[PATH_MAX + 16];
};

static inline void add_sample(struct model *m, uint32_t thread, uint32_t stack, uint64_t t,
			      uint64_t weight)
{
	struct model_sample *s = model_add_sample(m);

	s->time_ns = t;
	s->weight = weight;
	s->thread = thread;
	s->process = m->threads.items[thread].process;
	s->stack = stack;
}

static inline void add_switch(struct model *m, uint32_t thread, uint64_t t, bool off)
{
	struct model_switch *s = model_add_switch(m);

	s->time_ns = t;
	s->thread = thread;
	s->process = m->threads.items[thread].process;
	s->off = off;
}

/*
 * Threads: T0 (pid 100 main) 12 samples of 1 ms over S1..S5; T1 (tid 101)
 * 5 of 2 ms on S6; T2 (pid 200 main) 1 x S1 + 2 x S6 of 3 ms; T3 (tid 201)
 * none.  A process without threads sits between the two.
 */
static inline void build_model(struct model *m, struct tm_ids *id, const char *srcdir)
{
	struct model_image img = { .path = "/usr/bin/app", .kind = MODEL_IMAGE_ELF };
	struct model_inline inl;
	uint32_t l_main_call_work, l_main_call_rec, l_work_leaf, l_work_inl, l_rec_call,
		l_rec_leaf, l_memcpy, l_unknown, l_kernel, l_thread_leaf, fr[5];
	uint32_t p0, p1;
	uint64_t t = T0_NS;
	FILE *f;

	model_init(m);
	model_set_command_line(m, "./app --work");
	m->run.freq_hz = 1000;
	m->run.period_ns = MS;
	m->run.start_ns = T0_NS;
	m->run.end_ns = T0_NS + 500 * MS;
	m->run.host_id = 0x11ac0300;
	snprintf(m->run.hostname, sizeof(m->run.hostname), "testhost");
	m->run.ncpus = 4;
	model_count_lost(m, "ring buffer full", 7);

	snprintf(id->src_path, sizeof(id->src_path), "%s/app.c", srcdir);
	f = fopen(id->src_path, "w");
	assert_non_null(f);
	fputs("int main(void) { return work(); }\n", f);
	fclose(f);

	id->app = model_add_image(m, &img);
	img.path = "/lib/x86_64-linux-gnu/libc.so.6";
	id->libc = model_add_image(m, &img);
	img.path = "[kernel.kallsyms]";
	img.kind = MODEL_IMAGE_KERNEL;
	id->kernel = model_add_image(m, &img);
	id->file_src = model_intern_file(m, id->src_path);
	id->file_missing = model_intern_file(m, "/nonexistent/dir/missing.c");

	id->f_main = model_intern_function(m, id->app, "main", 0x1000, 0x100, id->file_src, 5);
	id->f_work = model_intern_function(m, id->app, "work", 0x1100, 0x100, id->file_src, 15);
	id->f_helper = model_intern_function(m, id->app, "helper", 0x1200, 0x10, id->file_src, 25);
	id->f_recurse = model_intern_function(m, id->app, "recurse", 0x1300, 0x100, id->file_src,
					      35);
	id->f_memcpy = model_intern_function(m, id->libc, "memcpy", 0x5000, 0x100, MODEL_NONE, 0);
	id->f_syswrite = model_intern_function(m, id->kernel, "ksys_write", 0xffffffff81000000ull,
					       0x200, MODEL_NONE, 0);
	id->f_thread = model_intern_function(m, id->app, "thread_fn", 0x1400, 0x100,
					     id->file_missing, 45);

	l_main_call_work = model_intern_location(m, id->app, 0x1010, id->f_main, id->file_src, 7,
						 NULL, 0);
	l_main_call_rec = model_intern_location(m, id->app, 0x1020, id->f_main, id->file_src, 8,
						NULL, 0);
	l_work_leaf = model_intern_location(m, id->app, 0x1110, id->f_work, id->file_src, 17,
					    NULL, 0);
	inl = (struct model_inline){ id->f_helper, id->file_src, 16 };
	l_work_inl = model_intern_location(m, id->app, 0x1120, id->f_work, id->file_src, 26, &inl,
					   1);
	l_rec_call = model_intern_location(m, id->app, 0x1310, id->f_recurse, id->file_src, 36,
					   NULL, 0);
	l_rec_leaf = model_intern_location(m, id->app, 0x1320, id->f_recurse, id->file_src, 37,
					   NULL, 0);
	l_memcpy = model_intern_location(m, id->libc, 0x5010, id->f_memcpy, MODEL_NONE, 0, NULL,
					 0);
	l_unknown = model_intern_location(m, id->app, 0x9000, MODEL_NONE, MODEL_NONE, 0, NULL, 0);
	l_kernel = model_intern_location(m, id->kernel, 0xffffffff81000100ull, id->f_syswrite,
					 MODEL_NONE, 0, NULL, 0);
	l_thread_leaf = model_intern_location(m, id->app, 0x1410, id->f_thread, id->file_missing,
					      46, NULL, 0);

	fr[0] = l_work_leaf, fr[1] = l_main_call_work;
	id->s1 = model_intern_stack(m, fr, 2, 0, false);
	fr[0] = l_work_inl;
	id->s2 = model_intern_stack(m, fr, 2, 0, false);
	fr[0] = l_rec_leaf, fr[1] = l_rec_call, fr[2] = l_rec_call, fr[3] = l_main_call_rec;
	id->s3 = model_intern_stack(m, fr, 4, 0, false);
	fr[0] = l_kernel, fr[1] = l_memcpy, fr[2] = l_main_call_work;
	id->s4 = model_intern_stack(m, fr, 3, 1, false);
	fr[0] = l_unknown, fr[1] = l_work_leaf;
	id->s5 = model_intern_stack(m, fr, 2, 0, true);
	fr[0] = l_thread_leaf;
	id->s6 = model_intern_stack(m, fr, 1, 0, false);

	p0 = model_add_process(m, 100, 1, 0, "app", "./app --work", "/usr/bin/app");
	model_add_process(m, 150, 1, 0, "idle", NULL, NULL); /* no threads */
	p1 = model_add_process(m, 200, 100, 0, "app", "./app --child", "/usr/bin/app");
	id->t0 = model_add_thread(m, p0, 100, "app");
	id->t1 = model_add_thread(m, p0, 101, "worker");
	id->t2 = model_add_thread(m, p1, 200, "app");
	id->t3 = model_add_thread(m, p1, 201, "sleeper");

	/* T0: S1 x3, switch out/in twice with no sample between, S2 x2,
	 * S3 x4, S4, S5 x2 */
	for (int i = 0; i < 3; i++)
		add_sample(m, id->t0, id->s1, t += 10 * MS, MS);
	add_switch(m, id->t0, t + 1 * MS, true);
	add_switch(m, id->t0, t + 2 * MS, false);
	add_switch(m, id->t0, t + 3 * MS, true);
	add_switch(m, id->t0, t + 4 * MS, false);
	for (int i = 0; i < 2; i++)
		add_sample(m, id->t0, id->s2, t += 10 * MS, MS);
	for (int i = 0; i < 4; i++)
		add_sample(m, id->t0, id->s3, t += 10 * MS, MS);
	add_sample(m, id->t0, id->s4, t += 10 * MS, MS);
	for (int i = 0; i < 2; i++)
		add_sample(m, id->t0, id->s5, t += 10 * MS, MS);
	/* T1, T2 interleaved in time with T0 */
	t = T0_NS + 5 * MS;
	for (int i = 0; i < 5; i++)
		add_sample(m, id->t1, id->s6, t += 10 * MS, 2 * MS);
	add_sample(m, id->t2, id->s1, t += 1 * MS, 3 * MS);
	add_sample(m, id->t2, id->s6, t += 1 * MS, 3 * MS);
	add_sample(m, id->t2, id->s6, t += 1 * MS, 3 * MS);
	add_switch(m, id->t3, T0_NS + 3 * MS, true);
	add_switch(m, id->t3, T0_NS + 4 * MS, false);
	m->threads.items[id->t1].end_ns = T0_NS + 300 * MS;
	model_sort_by_time(m);
}

/* ---- database navigation ------------------------------------------------ */

static inline const char *ctx_fn(const struct hkr_db *db, const struct hkr_context *c)
{
	return c->function == HKR_NONE ? NULL : db->functions[c->function].name;
}

/* the child of parent (index, or HKR_NONE for the top level) that matches */
static inline uint32_t find_child(const struct hkr_db *db, uint32_t parent, int lexical,
				  int relation, const char *fn, uint32_t line, uint64_t offset)
{
	for (size_t i = 0; i < db->n_contexts; i++) {
		const struct hkr_context *c = &db->contexts[i];

		if (c->parent != parent || c->is_entry || c->lexical_type != lexical ||
		    (relation >= 0 && c->relation != relation))
			continue;
		if (fn && (!ctx_fn(db, c) || strcmp(ctx_fn(db, c), fn)))
			continue;
		if (lexical == 2 && c->line != line)
			continue;
		if (lexical == 3 && c->offset != offset)
			continue;
		return i;
	}
	return HKR_NONE;
}

/* the top-level context for an entry point (released: {Entry}; draft: a
 * root function context named after it) */
static inline uint32_t find_entry(const struct hkr_db *db, unsigned entry)
{
	static const char *const names[] = { "unknown entry", "main thread",
					     "application thread" };

	for (size_t i = 0; i < db->n_contexts; i++) {
		const struct hkr_context *c = &db->contexts[i];

		if (c->parent != HKR_NONE)
			continue;
		if (c->is_entry ? c->entry_point == entry :
				  ctx_fn(db, c) && !strcmp(ctx_fn(db, c), names[entry]))
			return i;
	}
	return HKR_NONE;
}

static inline double pval(const struct hkr_db *db, uint32_t prof, uint32_t ctx_index, int metric)
{
	return hkr_profile_value(&db->profiles[prof], db->contexts[ctx_index].id, metric);
}

/* ---- invariants ---------------------------------------------------------- */

static inline double cct_value(const struct hkr_db *db, uint32_t ctx, uint16_t metric, uint32_t prof)
{
	const struct hkr_ctx_values *cv;

	if (ctx >= db->n_cct)
		return 0;
	cv = &db->cct[ctx];
	for (size_t v = 0; v < cv->n_values; v++)
		if (cv->values[v].metric == metric && cv->values[v].prof == prof)
			return cv->values[v].value;
	return 0;
}

static inline bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

/*
 * For every thread profile and context: execution = point + children's
 * execution; function = point + lexical children's function; function >=
 * point; lex_aware = function (no loops); the same value in cct.db; the
 * summary profile's sum/min/max over threads.  Traces: known contexts.
 */
static inline void check_invariants(const struct hkr_db *db)
{
	assert_true(db->has_meta && db->has_profile && db->has_cct && db->has_trace);
	assert_true(db->n_profiles >= 1);
	for (size_t p = 1; p < db->n_profiles; p++) {
		const struct hkr_profile *pr = &db->profiles[p];
		double top = 0;

		for (size_t i = 0; i < db->n_contexts; i++) {
			const struct hkr_context *c = &db->contexts[i];
			double pt = hkr_profile_value(pr, c->id, 0), fn = hkr_profile_value(pr, c->id, 1);
			double la = hkr_profile_value(pr, c->id, 2), ex = hkr_profile_value(pr, c->id, 3);
			double ex_sum = pt, fn_sum = pt;

			for (uint32_t k = 0; k < c->n_children; k++) {
				const struct hkr_context *ch = &db->contexts[c->first_child + k];

				ex_sum += hkr_profile_value(pr, ch->id, 3);
				if (db->draft ? ch->relation == 0 : (ch->propagation & 1))
					fn_sum += hkr_profile_value(pr, ch->id, 1);
			}
			assert_true(near(ex, ex_sum));
			if (!c->is_entry)
				assert_true(near(fn, fn_sum));
			assert_true(fn >= pt);
			assert_true(la == fn);
			if (c->parent == HKR_NONE)
				top += ex;
			for (int mt = 0; mt < 4; mt++)
				assert_true(hkr_profile_value(pr, c->id, mt) ==
					    cct_value(db, c->id, mt, p));
		}
		/* the global context holds the total */
		assert_true(near(hkr_profile_value(pr, 0, 3), top));
		/* every value of the profile is in cct.db */
		for (size_t v = 0; v < pr->n_values; v++)
			assert_true(pr->values[v].value ==
				    cct_value(db, pr->values[v].ctx, pr->values[v].metric, p));
	}
	/* cct.db holds nothing else */
	for (size_t c = 0; c < db->n_cct; c++)
		for (size_t v = 0; v < db->cct[c].n_values; v++) {
			const struct hkr_cval *cv = &db->cct[c].values[v];

			assert_true(cv->prof >= 1 && cv->prof < db->n_profiles);
			assert_true(hkr_profile_value(&db->profiles[cv->prof], c, cv->metric) ==
				    cv->value);
		}
	/* summary statistics: statMetricId = combine * 4 + scope */
	for (size_t c = 0; c < db->n_cct; c++) {
		for (int sc = 0; sc < 4; sc++) {
			double sum = 0, mn = 0, mx = 0;

			for (size_t p = 1; p < db->n_profiles; p++) {
				double v = hkr_profile_value(&db->profiles[p], c, sc);

				if (!v)
					continue;
				sum += v;
				mn = mn == 0 || v < mn ? v : mn;
				mx = v > mx ? v : mx;
			}
			assert_true(near(hkr_profile_value(&db->profiles[0], c, sc), sum));
			assert_true(hkr_profile_value(&db->profiles[0], c, 4 + sc) == mn);
			assert_true(hkr_profile_value(&db->profiles[0], c, 8 + sc) == mx);
		}
	}
	for (size_t i = 0; i < db->n_traces; i++) {
		const struct hkr_trace *tr = &db->traces[i];

		assert_true(tr->prof >= 1 && tr->prof < db->n_profiles);
		for (size_t k = 0; k < tr->n; k++) {
			uint32_t ctx = tr->elems[k].ctx;

			if (k)
				assert_true(tr->elems[k].timestamp >= tr->elems[k - 1].timestamp);
			if (ctx) {
				uint32_t ci = hkr_find_context(db, ctx);

				assert_int_not_equal(ci, HKR_NONE);
				assert_int_equal(db->contexts[ci].lexical_type, 3);
			}
		}
	}
}

/* ---- round trip ------------------------------------------------------------ */

struct env {
	char dir[64];
	char src[PATH_MAX];
	struct model m;
	struct tm_ids id;
};

static inline int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	snprintf(e->dir, sizeof(e->dir), "/tmp/test_hpctoolkit.XXXXXX");
	if (!mkdtemp(e->dir))
		return -1;
	snprintf(e->src, sizeof(e->src), "%s/srcroot", e->dir);
	mkdir(e->src, 0755);
	build_model(&e->m, &e->id, e->src);
	*state = e;
	return 0;
}

static inline int teardown(void **state)
{
	struct env *e = *state;

	model_free(&e->m);
	rm_rf(e->dir);
	free(e);
	return 0;
}

static inline void write_db(struct env *e, bool draft, struct hkr_db *db, char **dbdir)
{
	struct export_options opts = { .dir = e->dir, .hpctoolkit_draft = draft, .quiet = true };

	assert_int_equal(hpctoolkit_write(&e->m, &opts), 0);
	*dbdir = path_join(e->dir, "hpctoolkit");
	memset(db, 0, sizeof(*db));
	assert_int_equal(hkr_read_dir(*dbdir, db, stderr), 0);
	assert_int_equal(db->draft, draft);
}

#endif /* COLLECTOR_HPCTOOLKIT_UNIT_H */
