// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit exporter and reader: round trips on models built here (both
 * layouts), invariants every database must satisfy, the bytes the specs
 * fix, the two databases written by hpcprof against the YAML dumps of
 * HPCToolkit's own reader beside them, and mutated files (no crash).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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
#include "model/model.h"

#define MS 1000000ull
#define T0_NS 1700000000000000000ull

/* ---- helpers ----------------------------------------------------------- */

static char *path_join(const char *a, const char *b)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", a, b) > 0);
	return p;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, len, f), (size_t)len);
	fclose(f);
	buf[len] = 0;
	*n = len;
	return buf;
}

static uint64_t rd64(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p + off, 8);
	return v;
}

static void rm_rf(const char *dir)
{
	char *cmd;

	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(cmd);
}

static const char *fixtures(void)
{
	const char *env = getenv("COLLECTOR_FIXTURES");

	return env ? env : "tests/fixtures";
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

static void add_sample(struct model *m, uint32_t thread, uint32_t stack, uint64_t t,
		       uint64_t weight)
{
	struct model_sample *s = model_add_sample(m);

	s->time_ns = t;
	s->weight_ns = weight;
	s->thread = thread;
	s->process = m->threads.items[thread].process;
	s->stack = stack;
}

static void add_switch(struct model *m, uint32_t thread, uint64_t t, bool off)
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
static void build_model(struct model *m, struct tm_ids *id, const char *srcdir)
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

static const char *ctx_fn(const struct hkr_db *db, const struct hkr_context *c)
{
	return c->function == HKR_NONE ? NULL : db->functions[c->function].name;
}

/* the child of parent (index, or HKR_NONE for the top level) that matches */
static uint32_t find_child(const struct hkr_db *db, uint32_t parent, int lexical,
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
static uint32_t find_entry(const struct hkr_db *db, unsigned entry)
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

static double pval(const struct hkr_db *db, uint32_t prof, uint32_t ctx_index, int metric)
{
	return hkr_profile_value(&db->profiles[prof], db->contexts[ctx_index].id, metric);
}

/* ---- invariants ---------------------------------------------------------- */

static double cct_value(const struct hkr_db *db, uint32_t ctx, uint16_t metric, uint32_t prof)
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

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

/*
 * For every thread profile and context: execution = point + children's
 * execution; function = point + lexical children's function; function >=
 * point; lex_aware = function (no loops); the same value in cct.db; the
 * summary profile's sum/min/max over threads.  Traces: known contexts.
 */
static void check_invariants(const struct hkr_db *db)
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

static int setup(void **state)
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

static int teardown(void **state)
{
	struct env *e = *state;

	model_free(&e->m);
	rm_rf(e->dir);
	free(e);
	return 0;
}

static void write_db(struct env *e, bool draft, struct hkr_db *db, char **dbdir)
{
	struct export_options opts = { .dir = e->dir, .hpctoolkit_draft = draft, .quiet = true };

	assert_int_equal(hpctoolkit_write(&e->m, &opts), 0);
	*dbdir = path_join(e->dir, "hpctoolkit");
	memset(db, 0, sizeof(*db));
	assert_int_equal(hkr_read_dir(*dbdir, db, stderr), 0);
	assert_int_equal(db->draft, draft);
}

static void check_model_db(struct env *e, const struct hkr_db *db)
{
	uint32_t ep, mainc, line7, work, l17, leaf, l16, helper, l26, inl_leaf, rec, l8, kent, kfn;
	double s = 1e-3;

	check_invariants(db);
	/* profiles: summary + 4 threads in (process, thread) order */
	assert_int_equal(db->n_profiles, 5);
	assert_false(db->profiles[0].n_ids);
	for (size_t p = 1; p < 5; p++) {
		const struct hkr_profile *pr = &db->profiles[p];
		const uint32_t rank[] = { 0, 0, 0, 1, 1 }, thread[] = { 0, 0, 1, 0, 1 };

		assert_int_equal(pr->n_ids, 3);
		assert_int_equal(pr->ids[0].kind, 1); /* NODE */
		assert_int_equal(pr->ids[0].flags, 1);
		assert_true(pr->ids[0].physical == 0x11ac0300);
		assert_int_equal(pr->ids[1].kind, 2); /* RANK */
		assert_int_equal(pr->ids[1].flags, 0);
		assert_int_equal(pr->ids[1].logical, rank[p]);
		assert_true(pr->ids[1].physical == rank[p]);
		assert_int_equal(pr->ids[2].kind, 3); /* THREAD */
		assert_int_equal(pr->ids[2].logical, thread[p]);
		assert_true(pr->ids[2].physical == thread[p]);
	}
	assert_int_equal(db->profiles[4].n_values, 0); /* T3: no samples */
	assert_true(near(hkr_profile_value(&db->profiles[1], 0, 3), 12 * s));
	assert_true(near(hkr_profile_value(&db->profiles[2], 0, 3), 10 * s));
	assert_true(near(hkr_profile_value(&db->profiles[3], 0, 3), 9 * s));
	assert_true(near(hkr_profile_value(&db->profiles[0], 0, 3), 31 * s));
	assert_true(near(hkr_profile_value(&db->profiles[0], 0, 4 + 3), 9 * s));
	assert_true(near(hkr_profile_value(&db->profiles[0], 0, 8 + 3), 12 * s));

	/* main thread -call-> main -> line 7 (the call site) -call-> work ->
	 * line 17 -> insn 0x1110 (the sampled instruction of S1) */
	ep = find_entry(db, 1);
	assert_int_not_equal(ep, HKR_NONE);
	mainc = find_child(db, ep, 0, 1, "main", 0, 0);
	assert_int_not_equal(mainc, HKR_NONE);
	line7 = find_child(db, mainc, 2, 0, NULL, 7, 0);
	assert_int_not_equal(line7, HKR_NONE);
	assert_int_equal(db->contexts[line7].n_children, 2); /* work, memcpy */
	work = find_child(db, line7, 0, 1, "work", 0, 0);
	assert_int_not_equal(work, HKR_NONE);
	l17 = find_child(db, work, 2, 0, NULL, 17, 0);
	leaf = find_child(db, l17, 3, 0, NULL, 0, 0x1110);
	assert_int_not_equal(leaf, HKR_NONE);
	assert_true(db->modules[db->contexts[leaf].module].path[0] == '/');
	if (!db->draft) {
		assert_int_equal(db->contexts[line7].propagation, 1);
		assert_int_equal(db->contexts[leaf].propagation, 1);
		assert_int_equal(db->contexts[work].propagation, 0);
	}
	/* T0 has 3 samples there, T2 one of 3 ms */
	assert_true(near(pval(db, 1, leaf, 0), 3 * s));
	assert_true(near(pval(db, 3, leaf, 0), 3 * s));
	/* work: inlined helper excluded from its function value */
	assert_true(near(pval(db, 1, work, 1), 3 * s));
	assert_true(near(pval(db, 1, work, 3), 5 * s));
	assert_true(near(pval(db, 1, mainc, 3), 10 * s));
	assert_true(pval(db, 1, mainc, 1) == 0);
	/* the inlined call: work -> line 16 -inlined-> helper -> line 26 -> insn */
	l16 = find_child(db, work, 2, 0, NULL, 16, 0);
	assert_int_not_equal(l16, HKR_NONE);
	helper = find_child(db, l16, 0, 2, "helper", 0, 0);
	assert_int_not_equal(helper, HKR_NONE);
	l26 = find_child(db, helper, 2, 0, NULL, 26, 0);
	inl_leaf = find_child(db, l26, 3, 0, NULL, 0, 0x1120);
	assert_int_not_equal(inl_leaf, HKR_NONE);
	assert_true(near(pval(db, 1, helper, 1), 2 * s));
	/* recursion: recurse three deep below main's call at line 8 */
	l8 = find_child(db, mainc, 2, 0, NULL, 8, 0);
	rec = find_child(db, l8, 0, 1, "recurse", 0, 0);
	for (int depth = 0; depth < 2; depth++) {
		assert_int_not_equal(rec, HKR_NONE);
		assert_true(near(pval(db, 1, rec, 3), 4 * s));
		assert_true(pval(db, 1, rec, 1) == 0);
		rec = find_child(db, find_child(db, rec, 2, 0, NULL, 36, 0), 0, 1, "recurse", 0, 0);
	}
	assert_int_not_equal(rec, HKR_NONE);
	assert_true(near(pval(db, 1, rec, 1), 4 * s));
	assert_int_not_equal(find_child(db, find_child(db, rec, 2, 0, NULL, 37, 0), 3, 0, NULL, 0,
					0x1320), HKR_NONE);
	/* memcpy has no source line: its call site is its instruction, and the
	 * kernel frame hangs there, under the kernel's load module */
	kent = find_child(db, find_child(db, line7, 0, 1, "memcpy", 0, 0), 3, 0, NULL, 0, 0x5010);
	assert_int_not_equal(kent, HKR_NONE);
	kfn = find_child(db, kent, 0, 1, "ksys_write", 0, 0);
	assert_int_not_equal(kfn, HKR_NONE);
	assert_string_equal(db->modules[db->functions[db->contexts[kfn].function].module].path,
			    "[kernel.kallsyms]");
	assert_int_not_equal(find_child(db, kfn, 3, 0, NULL, 0, 0xffffffff81000100ull), HKR_NONE);
	/* truncated stack: unknown entry -> work -> ... -> [unknown] insn by call */
	ep = find_entry(db, 0);
	assert_int_not_equal(ep, HKR_NONE);
	work = find_child(db, ep, 0, 1, "work", 0, 0);
	l17 = find_child(db, work, 2, 0, NULL, 17, 0);
	assert_int_not_equal(l17, HKR_NONE);
	assert_int_not_equal(find_child(db, l17, 3, 1, NULL, 0, 0x9000), HKR_NONE);
	assert_true(near(pval(db, 1, ep, 3), 2 * s));
	/* application thread entry for T1 */
	ep = find_entry(db, 2);
	assert_int_not_equal(ep, HKR_NONE);
	assert_true(near(pval(db, 2, ep, 3), 10 * s));

	/* functions: name, module, entry offset, file, line */
	for (size_t i = 0; i < db->n_functions; i++) {
		const struct hkr_function *f = &db->functions[i];

		if (f->name && !strcmp(f->name, "work")) {
			assert_string_equal(db->modules[f->module].path, "/usr/bin/app");
			assert_true(f->offset == 0x1100);
			assert_int_equal(f->line, 15);
		}
	}
	/* source files: the existing one copied under src/, the other not */
	{
		char real[PATH_MAX], *want;
		bool seen_copy = false, seen_missing = false;

		assert_non_null(realpath(e->id.src_path, real));
		assert_true(asprintf(&want, "src%s", real) > 0);
		for (size_t i = 0; i < db->n_files; i++) {
			if (!strcmp(db->files[i].path, want)) {
				assert_int_equal(db->files[i].flags, 1);
				seen_copy = true;
			}
			if (!strcmp(db->files[i].path, "/nonexistent/dir/missing.c")) {
				assert_int_equal(db->files[i].flags, 0);
				seen_missing = true;
			}
		}
		assert_true(seen_copy && seen_missing);
		free(want);
	}
	/* traces: one per thread profile, in profile order */
	assert_int_equal(db->n_traces, 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(db->traces[i].prof, i + 1);
	/* T3 ran no sample: "not running" from the start */
	assert_int_equal(db->traces[3].n, 1);
	assert_int_equal(db->traces[3].elems[0].ctx, 0);
	assert_true(db->traces[3].elems[0].timestamp == T0_NS);
	{
		const struct hkr_trace *tr = &db->traces[0];

		assert_int_equal(tr->prof, 1);
		/* 12 samples, one 0 for the two switch-outs, a final 0 */
		assert_int_equal(tr->n, 14);
		assert_int_equal(tr->elems[3].ctx, 0);
		assert_true(tr->elems[3].timestamp == T0_NS + 31 * MS);
		assert_true(tr->elems[13].ctx == 0 && tr->elems[13].timestamp == T0_NS + 500 * MS);
		assert_int_equal(db->traces[1].n, 6);
		assert_true(db->traces[1].elems[5].timestamp == T0_NS + 300 * MS);
		if (!db->draft) {
			assert_true(db->min_ts == T0_NS); /* T3's start */
			assert_true(db->max_ts == T0_NS + 500 * MS);
		}
	}
	/* the description names the pid and tid of each index */
	assert_non_null(strstr(db->description, "| 2 | 0 | 1 | 100 | 101 | worker |"));
	assert_non_null(strstr(db->description, "| 4 | 1 | 1 | 200 | 201 | sleeper |"));
	assert_non_null(strstr(db->description, "Lost events: 7"));
	assert_non_null(strstr(db->description, "loop"));
	assert_string_equal(db->title, "./app --work");
}

static void test_round_trip_released(void **state)
{
	struct env *e = *state;
	struct hkr_db db;
	char *dbdir, *p, *yaml;
	uint8_t *b;
	size_t n;

	write_db(e, false, &db, &dbdir);
	check_model_db(e, &db);
	/* metric names and scopes as hpcprof writes them */
	assert_int_equal(db.n_metrics, 1);
	assert_string_equal(db.metrics[0].name, "CPUTIME (sec)");
	assert_int_equal(db.n_scopes, 4);
	assert_string_equal(db.scopes[0].name, "point");
	assert_int_equal(db.scopes[0].type, 1);
	assert_string_equal(db.scopes[1].name, "function");
	assert_int_equal(db.scopes[1].type, 3);
	assert_int_equal(db.scopes[1].prop_index, 0);
	assert_string_equal(db.scopes[2].name, "lex_aware");
	assert_int_equal(db.scopes[2].type, 0);
	assert_string_equal(db.scopes[3].name, "execution");
	assert_int_equal(db.scopes[3].type, 2);
	assert_int_equal(db.metrics[0].n_summaries, 12);
	assert_int_equal(db.n_kinds, 8);
	assert_string_equal(db.kind_names[3], "THREAD");
	assert_string_equal(db.kind_names[7], "CORE");

	/* bytes the released spec and hpcprof fix */
	p = path_join(dbdir, "meta.db");
	b = slurp(p, &n);
	assert_memory_equal(b, "HPCTOOLKITmeta\x04\x00", 16);
	assert_memory_equal(b + n - 8, "_meta.db", 8);
	assert_int_equal(b[rd64(b, 0x38) + 0x0c], 32); /* szMetric */
	assert_int_equal(b[rd64(b, 0x38) + 0x0d], 16); /* szScopeInst */
	assert_int_equal(b[rd64(b, 0x38) + 0x0e], 24); /* szSummary */
	assert_int_equal(b[rd64(b, 0x38) + 0x1a], 16); /* szScope */
	assert_int_equal(b[rd64(b, 0x88) + 0x0c], 40); /* szFunction */
	assert_int_equal(b[rd64(b, 0x48) + 0x0a], 32); /* szEntryPoint */
	for (int s = 0; s < 8; s++)
		assert_int_equal(rd64(b, 0x18 + 16 * s) % 8, 0);
	free(b);
	free(p);
	p = path_join(dbdir, "profile.db");
	b = slurp(p, &n);
	assert_memory_equal(b, "HPCTOOLKITprof\x04\x00", 16);
	assert_memory_equal(b + n - 8, "_prof.db", 8);
	assert_int_equal(b[rd64(b, 0x18) + 0x0c], 0x30);
	assert_int_equal(b[rd64(b, rd64(b, 0x18)) + 0x28], 1); /* isSummary */
	assert_true(rd64(b, rd64(b, 0x18)) + 0x20 != 0);
	assert_true(rd64(b, rd64(b, rd64(b, 0x18)) + 0x20) == 0); /* summary: no tuple */
	free(b);
	free(p);
	p = path_join(dbdir, "cct.db");
	b = slurp(p, &n);
	assert_memory_equal(b, "HPCTOOLKITctxt\x04\x00", 16);
	assert_memory_equal(b + n - 8, "__ctx.db", 8);
	assert_int_equal(b[rd64(b, 0x18) + 0x0c], 0x20);
	free(b);
	free(p);
	p = path_join(dbdir, "trace.db");
	b = slurp(p, &n);
	assert_memory_equal(b, "HPCTOOLKITtrce\x04\x00", 16);
	assert_memory_equal(b + n - 8, "trace.db", 8);
	assert_int_equal(rd64(b, 0x10), 0x20 + 4 * 24);
	assert_int_equal(b[rd64(b, 0x18) + 0x0c], 24);
	free(b);
	free(p);
	/* the taxonomy hpcviewer reads */
	p = path_join(dbdir, "metrics/default.yaml");
	yaml = (char *)slurp(p, &n);
	assert_non_null(strstr(yaml, "metric: CPUTIME (sec)"));
	assert_non_null(strstr(yaml, "standard: *CPUTIME-sum-execution"));
	assert_non_null(strstr(yaml, "custom: *CPUTIME-sum-lex_aware"));
	free(yaml);
	free(p);
	/* the copy of the source file */
	{
		char real[PATH_MAX], *copy;

		assert_non_null(realpath(e->id.src_path, real));
		assert_true(asprintf(&copy, "%s/src%s", dbdir, real) > 0);
		yaml = (char *)slurp(copy, &n);
		assert_string_equal(yaml, "int main(void) { return work(); }\n");
		free(yaml);
		free(copy);
	}
	/* dump prints it, check prints nothing */
	{
		char *out = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&out, &len);

		assert_true(hpctoolkit_recognize(dbdir, NULL, 0));
		assert_int_equal(hpctoolkit_dump(dbdir, f, false), 0);
		fclose(f);
		assert_non_null(strstr(out, "-call-> [function] work"));
		assert_non_null(strstr(out, "-lexical-> [instruction] /usr/bin/app+0x1110"));
		assert_non_null(strstr(out, "entry point 1 \"main thread\""));
		assert_non_null(strstr(out, "{NODE 0 [0x11ac0300] / RANK 0 / THREAD 1}"));
		free(out);
		f = open_memstream(&out, &len);
		assert_int_equal(hpctoolkit_dump(dbdir, f, true), 0);
		fclose(f);
		assert_int_equal(len, 0);
		free(out);
	}
	hkr_free(&db);
	free(dbdir);
}

static void test_round_trip_draft(void **state)
{
	struct env *e = *state;
	struct hkr_db db;
	char *dbdir, *p;
	uint8_t *b;
	size_t n;
	uint64_t ms, ctx;

	write_db(e, true, &db, &dbdir);
	check_model_db(e, &db);
	assert_string_equal(db.metrics[0].name, "CPUTIME (sec)");
	assert_int_equal(db.metrics[0].n_insts, 4);
	assert_int_equal(db.metrics[0].n_summaries, 12);
	/* the draft's decided sizes */
	p = path_join(dbdir, "meta.db");
	b = slurp(p, &n);
	ms = rd64(b, 0x38);
	assert_int_equal(b[ms + 0x0c], 24);
	assert_int_equal(b[ms + 0x0d], 24);
	assert_int_equal(b[ms + 0x0e], 16);
	ctx = rd64(b, 0x48);
	/* roots: szRoots, pRoots; the first root: {Ctx} with flex at 0x18 */
	assert_true(rd64(b, ctx) > 0);
	assert_int_equal(b[rd64(b, ctx + 8) + 0x16], 0); /* lexicalType function */
	assert_int_equal(b[rd64(b, ctx + 8) + 0x17], 1); /* one flex word */
	assert_true(rd64(b, ctx) == 3 * (0x18 + 8));     /* three entry roots */
	free(b);
	free(p);
	p = path_join(dbdir, "profile.db");
	b = slurp(p, &n);
	assert_int_equal(b[rd64(b, 0x18) + 0x0c], 0x28);
	assert_int_equal(*(uint32_t *)(b + rd64(b, 0x18) + 8), 5);
	/* the summary's tuple is an empty one inside the section */
	assert_true(rd64(b, rd64(b, rd64(b, 0x18)) + 0x20) == rd64(b, 0x28));
	free(b);
	free(p);
	p = path_join(dbdir, "trace.db");
	b = slurp(p, &n);
	assert_int_equal(b[rd64(b, 0x18) + 0x0c], 0x18);
	assert_true(rd64(b, rd64(b, 0x18)) == rd64(b, 0x18) + 0x10); /* no min/max */
	free(b);
	free(p);
	p = path_join(dbdir, "cct.db");
	b = slurp(p, &n);
	assert_int_equal(b[rd64(b, 0x18) + 0x0c], 0x20);
	free(b);
	free(p);
	hkr_free(&db);
	free(dbdir);
}

static void test_nothing_to_write(void **state)
{
	struct env *e = *state;
	struct model m;
	struct export_options opts = { .dir = e->dir };
	struct stat st;
	char *p = path_join(e->dir, "hpctoolkit");

	(void)state;
	model_init(&m);
	assert_int_equal(hpctoolkit_write(&m, &opts), 0);
	assert_int_not_equal(stat(p, &st), 0);
	model_free(&m);
	free(p);
}

/* ---- scale ------------------------------------------------------------------ */

static void test_scale(void **state)
{
	struct env *e = *state;
	struct model m;
	struct model_image img = { .path = "/usr/bin/big" };
	struct export_options opts = { .dir = e->dir };
	struct hkr_db db = { 0 };
	uint32_t app, file, fns[64], p, threads[300];
	char name[32], *dbdir;
	struct timespec t0, t1;
	uint64_t t = T0_NS;
	size_t n_stacks = 30000;
	uint32_t *stacks = malloc(n_stacks * sizeof(*stacks));

	model_init(&m);
	app = model_add_image(&m, &img);
	file = model_intern_file(&m, "/nonexistent/big.c");
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "fn%d", i);
		fns[i] = model_intern_function(&m, app, name, 0x1000 * (i + 1), 0x1000, file, i);
	}
	/* 30000 distinct 4-deep stacks: about 10^5 contexts */
	for (size_t s = 0; s < n_stacks; s++) {
		uint32_t fr[4];

		for (int d = 0; d < 4; d++) {
			uint32_t f = d == 0 ? 0 : (s >> (3 * d)) % 64;
			uint64_t addr = 0x1000 * (f + 1) + (d == 3 ? s % 4000 : (s % 7) * 4);

			fr[3 - d] = model_intern_location(&m, app, addr, fns[f], file,
							  (uint32_t)(addr & 0xfff), NULL, 0);
		}
		stacks[s] = model_intern_stack(&m, fr, 4, 0, false);
	}
	p = model_add_process(&m, 1000, 1, 0, "big", NULL, NULL);
	for (int i = 0; i < 300; i++)
		threads[i] = model_add_thread(&m, p, 1000 + i, "big");
	for (size_t i = 0; i < 300000; i++)
		add_sample(&m, threads[i % 300], stacks[(i * 7919) % n_stacks], t += 1000, MS);
	m.run.end_ns = t + MS;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(hpctoolkit_write(&m, &opts), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("scale: 300 threads, 3e5 samples written in %.2f s (sanitizers on)\n",
		      (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_true(t1.tv_sec - t0.tv_sec < 60);
	dbdir = path_join(e->dir, "hpctoolkit");
	assert_int_equal(hkr_read_dir(dbdir, &db, stderr), 0);
	assert_true(db.n_contexts > 90000);
	assert_int_equal(db.n_profiles, 301);
	assert_int_equal(db.n_traces, 300);
	assert_true(near(hkr_profile_value(&db.profiles[0], 0, 3), 300.0));
	hkr_free(&db);
	free(dbdir);
	free(stacks);
	model_free(&m);
}

/* ---- fixtures: hpcprof's databases against hpctesttool's YAML -------------- */

struct yctx {
	uint32_t id, parent;
	char relation[16], lexical[16];
	int propagation;
	long line;
	long long offset;
	bool entry;
};

struct yaml {
	struct yctx *ctx;
	size_t n_ctx;
	char **functions;
	size_t n_functions;
	char *metric;
	size_t n_profiles;
	/* values: (kind 'p' profile / 'c' cct, a, b, c, value) */
	struct yval { char kind; uint32_t a, b, c; double v; } *vals;
	size_t n_vals;
	char **paths; /* module paths, then file paths */
	size_t n_paths, n_module_paths;
	size_t n_traces;
	uint32_t *trace_prof;
	size_t *trace_len;
	struct hkr_elem *elems; /* all traces, in order */
	size_t n_elems;
	uint64_t min_ts, max_ts, first_ts;
};

static int indent(const char *l)
{
	int n = 0;

	while (l[n] == ' ')
		n++;
	return n;
}

#define GROW(arr, n) (assert_non_null(arr = realloc(arr, (n + 1) * sizeof(*arr))), &arr[n++])

static void parse_yaml(const char *path, struct yaml *y)
{
	FILE *f = fopen(path, "r");
	char line[4096], sect[16] = "", sub[16] = "";
	uint32_t stack_id[256];
	int stack_indent[256], depth = 0;
	size_t prof = 0, cctx = 0, next_ctx = 0;
	uint32_t cur_key = 0;
	struct yctx *c = NULL;

	assert_non_null(f);
	memset(y, 0, sizeof(*y));
	while (fgets(line, sizeof(line), f)) {
		int ind = indent(line);
		char *l = line + ind, *hash;
		unsigned long long a, b;
		double v;

		line[strcspn(line, "\n")] = 0;
		if (ind == 0) {
			sscanf(line, "%15[a-z]", sect);
			continue;
		}
		if (!strcmp(sect, "meta")) {
			if (ind == 2)
				sscanf(l, "%15[a-z_]", sub);
			if (strstr(l, "- !meta.db/v4/Context") == l ||
			    strstr(l, "- !meta.db/v4/EntryPoint") == l) {
				while (depth && stack_indent[depth - 1] >= ind)
					depth--;
				c = GROW(y->ctx, y->n_ctx);
				memset(c, 0, sizeof(*c));
				c->parent = depth ? stack_id[depth - 1] : UINT32_MAX;
				c->entry = strstr(l, "EntryPoint") != NULL;
				c->line = c->offset = -1;
				stack_indent[depth] = ind;
				stack_id[depth++] = 0;
			} else if (c && sscanf(l, "ctx_id: %llu", &a) == 1) {
				c->id = a;
				stack_id[depth - 1] = a;
			} else if (c && sscanf(l, "relation: !meta.db/v4/Context.Relation %15s",
					      c->relation) == 1) {
			} else if (c && sscanf(l, "lexical_type: !meta.db/v4/Context.LexicalType %15s",
					      c->lexical) == 1) {
			} else if (c && sscanf(l, "propagation: %d", &c->propagation) == 1) {
			} else if (c && sscanf(l, "line: %ld", &c->line) == 1) {
			} else if (c && sscanf(l, "offset: %lld", &c->offset) == 1) {
			} else if (!strcmp(sub, "functions") && ind == 6 &&
				   strstr(l, "name: ") == l) {
				*GROW(y->functions, y->n_functions) = strdup(l + 6);
			} else if (!strcmp(sub, "metrics") && ind == 6 &&
				   strstr(l, "name: ") == l) {
				y->metric = strdup(l + 6);
			} else if ((!strcmp(sub, "modules") || !strcmp(sub, "files")) && ind == 6 &&
				   strstr(l, "path: ") == l) {
				char *v = l + 6;
				size_t len = strlen(v);

				if (len >= 2 && v[0] == '\'' && v[len - 1] == '\'') {
					v[len - 1] = 0;
					v++;
				}
				*GROW(y->paths, y->n_paths) = strdup(v);
				if (!strcmp(sub, "modules"))
					y->n_module_paths = y->n_paths;
			}
			continue;
		}
		hash = strstr(l, " #");
		if (hash)
			*hash = 0;
		if (!strcmp(sect, "profile")) {
			if (strstr(l, "- !profile.db/v4/Profile") == l) {
				prof = y->n_profiles++;
			} else if (ind == 8 && sscanf(l, "%llu:", &a) == 1) {
				cur_key = a;
			} else if (ind == 10 && sscanf(l, "%llu: %lf", &a, &v) == 2) {
				struct yval *yv = GROW(y->vals, y->n_vals);

				*yv = (struct yval){ 'p', prof, cur_key, a, v };
			}
		} else if (!strcmp(sect, "context")) {
			if (strstr(l, "- !cct.db/v4/PerContext") == l) {
				/* contexts are listed in ctxId order */
				cctx = next_ctx++;
				cur_key = UINT32_MAX;
			} else if (ind == 8 && sscanf(l, "%llu:", &a) == 1) {
				cur_key = a;
			} else if (ind == 10 && sscanf(l, "%llu: %lf", &a, &v) == 2) {
				struct yval *yv = GROW(y->vals, y->n_vals);

				*yv = (struct yval){ 'c', cctx, cur_key, a, v };
			}
		} else if (!strcmp(sect, "trace")) {
			if (sscanf(l, "min: %llu", &a) == 1)
				y->min_ts = a;
			else if (sscanf(l, "max: %llu", &a) == 1)
				y->max_ts = a;
			else if (strstr(l, "- !trace.db/v4/ContextTrace ") == l ||
				 strstr(l, "- !trace.db/v4/ContextTrace\t") == l ||
				 !strcmp(l, "- !trace.db/v4/ContextTrace")) {
				*GROW(y->trace_len, y->n_traces) = 0;
				y->n_traces--;
				*GROW(y->trace_prof, y->n_traces) = 0;
			} else if (sscanf(l, "prof_index: %llu", &a) == 1) {
				y->trace_prof[y->n_traces - 1] = a;
			} else if (sscanf(l, "timestamp: %llu", &b) == 1) {
				if (!y->first_ts)
					y->first_ts = b;
				y->trace_len[y->n_traces - 1]++;
				GROW(y->elems, y->n_elems)->timestamp = b;
			} else if (sscanf(l, "ctx_id: %llu", &a) == 1) {
				y->elems[y->n_elems - 1].ctx = a;
			}
		}
	}
	fclose(f);
}

static void free_yaml(struct yaml *y)
{
	for (size_t i = 0; i < y->n_functions; i++)
		free(y->functions[i]);
	free(y->functions);
	free(y->ctx);
	free(y->metric);
	free(y->vals);
	free(y->trace_prof);
	free(y->trace_len);
	for (size_t i = 0; i < y->n_paths; i++)
		free(y->paths[i]);
	free(y->paths);
	free(y->elems);
}

static const char *const rel_names[] = { "lexical", "call", "inlined_call" };
static const char *const lex_names[] = { "function", "loop", "line", "instruction" };

static void compare_fixture(const char *name, size_t want_ctx, size_t want_fn)
{
	char *dir, *ypath, *base;
	struct hkr_db db = { 0 };
	struct yaml y;
	size_t n_cvals = 0, n_pvals = 0;

	assert_true(asprintf(&base, "%s/hpctoolkit/%s", fixtures(), name) > 0);
	dir = base;
	assert_true(asprintf(&ypath, "%s.yaml", base) > 0);
	assert_int_equal(hkr_read_dir(dir, &db, stderr), 0);
	parse_yaml(ypath, &y);
	assert_false(db.draft);

	/* contexts: same ids, parents, relations, types, propagation, lines */
	assert_int_equal(y.n_ctx, want_ctx);
	assert_int_equal(db.n_contexts, y.n_ctx);
	for (size_t i = 0; i < y.n_ctx; i++) {
		const struct yctx *yc = &y.ctx[i];
		uint32_t ci = hkr_find_context(&db, yc->id);
		const struct hkr_context *c;

		assert_int_not_equal(ci, HKR_NONE);
		c = &db.contexts[ci];
		assert_int_equal(c->is_entry, yc->entry);
		if (yc->parent == UINT32_MAX)
			assert_int_equal(c->parent, HKR_NONE);
		else
			assert_int_equal(db.contexts[c->parent].id, yc->parent);
		if (yc->entry)
			continue;
		assert_string_equal(rel_names[c->relation], yc->relation);
		assert_string_equal(lex_names[c->lexical_type], yc->lexical);
		assert_int_equal(c->propagation, yc->propagation);
		if (yc->line >= 0)
			assert_int_equal(c->line, yc->line);
		if (yc->offset >= 0)
			assert_true(c->offset == (uint64_t)yc->offset);
	}
	/* functions and the metric */
	assert_int_equal(y.n_functions, want_fn);
	assert_int_equal(db.n_functions, y.n_functions);
	for (size_t i = 0; i < y.n_functions; i++)
		assert_string_equal(db.functions[i].name, y.functions[i]);
	assert_non_null(y.metric);
	assert_string_equal(db.metrics[0].name, y.metric);
	/* every value in profile.db and cct.db, exactly */
	assert_int_equal(db.n_profiles, y.n_profiles);
	for (size_t i = 0; i < y.n_vals; i++) {
		const struct yval *v = &y.vals[i];

		if (v->kind == 'p') {
			n_pvals++;
			assert_true(hkr_profile_value(&db.profiles[v->a], v->b, v->c) == v->v);
		} else {
			n_cvals++;
			assert_true(cct_value(&db, v->a, v->b, v->c) == v->v);
		}
	}
	{
		size_t total_p = 0, total_c = 0;

		for (size_t p = 0; p < db.n_profiles; p++)
			total_p += db.profiles[p].n_values;
		for (size_t c = 0; c < db.n_cct; c++)
			total_c += db.cct[c].n_values;
		assert_int_equal(total_p, n_pvals);
		assert_int_equal(total_c, n_cvals);
		assert_true(n_pvals > 100 && n_cvals > 100);
	}
	/* module and file paths */
	assert_int_equal(db.n_modules, y.n_module_paths);
	assert_int_equal(db.n_modules + db.n_files, y.n_paths);
	for (size_t i = 0; i < db.n_modules; i++)
		assert_string_equal(db.modules[i].path, y.paths[i]);
	for (size_t i = 0; i < db.n_files; i++)
		assert_string_equal(db.files[i].path, y.paths[db.n_modules + i]);
	/* traces, element by element */
	assert_int_equal(db.n_traces, y.n_traces);
	for (size_t i = 0, e = 0; i < y.n_traces; i++) {
		assert_int_equal(db.traces[i].prof, y.trace_prof[i]);
		assert_int_equal(db.traces[i].n, y.trace_len[i]);
		for (size_t k = 0; k < db.traces[i].n; k++, e++) {
			assert_true(e < y.n_elems);
			assert_true(db.traces[i].elems[k].timestamp == y.elems[e].timestamp);
			assert_int_equal(db.traces[i].elems[k].ctx, y.elems[e].ctx);
		}
	}
	assert_true(db.has_range && db.min_ts == y.min_ts && db.max_ts == y.max_ts);
	assert_true(db.traces[0].elems[0].timestamp == y.first_ts);
	hkr_free(&db);
	free_yaml(&y);
	free(ypath);
	free(base);
}

static void test_fixture_structured(void **state)
{
	(void)state;
	compare_fixture("loops-cputime-t.d", 118, 13);
}

static void test_fixture_nostruct(void **state)
{
	(void)state;
	compare_fixture("loops-cputime-t.nostruct.d", 138, 1);
}

/* ---- hostile input: mutated fixture files never crash the reader ------------ */

/* rounds of 1-4 random byte changes (and truncations) of a file image:
 * the reader must reject or accept, never crash or overrun */
static void mutate_file(const char *path, unsigned seed, int rounds)
{
	uint8_t *orig, *buf;
	size_t n;
	int rejected = 0;

	orig = slurp(path, &n);
	buf = malloc(n);
	assert_non_null(buf);
	for (int round = 0; round < rounds; round++) {
		struct hkr_db db = { 0 };
		int err;

		memcpy(buf, orig, n);
		for (int k = 0; k < 1 + round % 4; k++) {
			size_t off = rand_r(&seed) % n;

			/* hit header and pointer fields more often */
			if (round % 3 == 0)
				off = rand_r(&seed) % (n < 512 ? n : 512);
			buf[off] = round % 5 ? (uint8_t)rand_r(&seed) : 0xff;
		}
		err = hkr_read_mem(path, buf, round % 7 ? n : rand_r(&seed) % n + 1, &db, NULL);
		assert_true(err == 0 || err == -EINVAL);
		rejected += err != 0;
		hkr_free(&db);
	}
	assert_true(rejected > rounds / 20);
	free(buf);
	free(orig);
}

static const char *const db_files[] = { "meta.db", "profile.db", "cct.db", "trace.db" };

static void test_mutations(void **state)
{
	(void)state;
	for (int fi = 0; fi < 4; fi++) {
		char *p;

		assert_true(asprintf(&p, "%s/hpctoolkit/loops-cputime-t.d/%s", fixtures(),
				     db_files[fi]) > 0);
		mutate_file(p, 12345 + fi, 3000);
		free(p);
	}
}

/* the same on our own output, both layouts (the draft parser included) */
static void test_mutations_own(void **state)
{
	struct env *e = *state;

	for (int draft = 0; draft < 2; draft++) {
		struct hkr_db db;
		char *dbdir;

		write_db(e, draft, &db, &dbdir);
		hkr_free(&db);
		for (int fi = 0; fi < 4; fi++) {
			char *p = path_join(dbdir, db_files[fi]);

			mutate_file(p, 777 + fi + 10 * draft, 2000);
			free(p);
		}
		free(dbdir);
	}
}

/* expects hkr_read_mem to reject the image with a message naming `what` */
static void expect_reject(const char *name, const uint8_t *buf, size_t n, const char *what)
{
	struct hkr_db db = { 0 };
	char *msg = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&msg, &len);

	assert_int_equal(hkr_read_mem(name, buf, n, &db, f), -EINVAL);
	fclose(f);
	if (!strstr(msg, what))
		fail_msg("expected '%s' in: %s", what, msg);
	assert_non_null(strstr(msg, ": offset "));
	free(msg);
	hkr_free(&db);
}

/* targeted corruptions of our own files are each caught and explained */
static void test_reader_rejects(void **state)
{
	struct env *e = *state;
	struct hkr_db db;
	char *dbdir, *p;
	uint8_t *b;
	size_t n;
	uint64_t pi, ps, pt;

	write_db(e, false, &db, &dbdir);
	hkr_free(&db);

	p = path_join(dbdir, "profile.db");
	b = slurp(p, &n);
	pi = rd64(b, rd64(b, 0x18)) + 0x30; /* profile 1 */
	assert_true(*(uint32_t *)(b + pi + 0x10) >= 2);
	ps = rd64(b, pi + 0x18);
	{
		uint32_t c0, c1;

		memcpy(&c0, b + ps, 4);
		memcpy(&c1, b + ps + 12, 4);
		memcpy(b + ps, &c1, 4);
		memcpy(b + ps + 12, &c0, 4);
	}
	expect_reject(p, b, n, "not sorted by ctxId");
	free(b);
	b = slurp(p, &n);
	b[rd64(b, 0x18) + 0x0c] = 0x10; /* szProfile */
	expect_reject(p, b, n, "szProfile");
	free(b);
	free(p);

	p = path_join(dbdir, "meta.db");
	b = slurp(p, &n);
	memcpy(b + n - 8, "_meta.dX", 8);
	expect_reject(p, b, n, "footer");
	free(b);
	b = slurp(p, &n);
	{
		uint64_t far = n + 64, fsec = rd64(b, 0x88);

		memcpy(b + fsec, &far, 8); /* pFunctions */
		expect_reject(p, b, n, "function array");
	}
	free(b);
	free(p);

	p = path_join(dbdir, "trace.db");
	b = slurp(p, &n);
	pt = rd64(b, rd64(b, rd64(b, 0x18)) + 8); /* first line's pStart */
	{
		uint64_t ts = rd64(b, pt) - 1;

		memcpy(b + pt + 12, &ts, 8); /* second element before the first */
	}
	expect_reject(p, b, n, "not sorted by timestamp");
	free(b);
	b = slurp(p, &n);
	memset(b + pt + 8, 0, 4);
	memset(b + pt + 12 + 8, 0, 4);
	expect_reject(p, b, n, "two consecutive ctxId 0");
	free(b);
	free(p);

	p = path_join(dbdir, "cct.db");
	b = slurp(p, &n);
	expect_reject(p, b, 100, "footer");
	free(b);
	free(p);
	free(dbdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_released, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_draft, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_to_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale, setup, teardown),
		cmocka_unit_test(test_fixture_structured),
		cmocka_unit_test(test_fixture_nostruct),
		cmocka_unit_test_setup_teardown(test_reader_rejects, setup, teardown),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test_setup_teardown(test_mutations_own, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
