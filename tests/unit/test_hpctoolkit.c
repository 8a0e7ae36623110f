// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit exporter: round trips on models built here (both layouts)
 * read back by the reader, the invariants every database must satisfy, the
 * bytes the specs fix, nothing written without samples, and a large model.
 * (The reader against hpcprof's own databases: test_hpctoolkit_reader.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hpctoolkit_unit.h"

/* The profiles: the summary and 4 threads in (process, thread) order, and
 * their root values. */
static void check_profiles(const struct hkr_db *db)
{
	double s = 1e-3;

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
}

/* The context tree: call sites as lines, inlined calls, recursion, the
 * kernel under its load module, truncated stacks under "unknown entry". */
static void check_contexts(const struct hkr_db *db)
{
	uint32_t ep, mainc, line7, work, l17, leaf, l16, helper, l26, inl_leaf, rec, l8, kent, kfn;
	double s = 1e-3;

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
}

/* Functions, source files (copied or not), traces and the description. */
static void check_files_traces(struct env *e, const struct hkr_db *db)
{
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


static void check_model_db(struct env *e, const struct hkr_db *db)
{
	check_invariants(db);
	check_profiles(db);
	check_contexts(db);
	check_files_traces(e, db);
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
	assert_non_null(strstr(yaml, "standard: *m0-sum-execution"));
	assert_non_null(strstr(yaml, "custom: *m0-sum-lex_aware"));
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

/* Frames without source files (a stripped binary): the file array is empty,
 * at 0, and the database reads. */
static void test_no_source_files(void **state)
{
	struct env *e = *state;
	struct model m;
	struct model_image img = { .path = "/usr/bin/stripped", .kind = MODEL_IMAGE_ELF };
	struct export_options opts = { .dir = e->dir, .quiet = true };
	struct hkr_db db = { 0 };
	uint32_t app, fn, loc, stack, p, th;
	char *dbdir;

	model_init(&m);
	app = model_add_image(&m, &img);
	fn = model_intern_function(&m, app, "spin", 0x1000, 0x100, MODEL_NONE, 0);
	loc = model_intern_location(&m, app, 0x1010, fn, MODEL_NONE, 0, NULL, 0);
	stack = model_intern_stack(&m, &loc, 1, 0, false);
	p = model_add_process(&m, 300, 1, 0, "stripped", NULL, NULL);
	th = model_add_thread(&m, p, 300, "stripped");
	add_sample(&m, th, stack, T0_NS, MS);
	m.run.end_ns = T0_NS + MS;
	assert_int_equal(hpctoolkit_write(&m, &opts), 0);
	dbdir = path_join(e->dir, "hpctoolkit");
	assert_int_equal(hkr_read_dir(dbdir, &db, stderr), 0);
	assert_int_equal(db.n_files, 0);
	assert_int_equal(db.n_functions >= 1, 1);
	hkr_free(&db);
	free(dbdir);
	model_free(&m);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_released, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_draft, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_to_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_source_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
