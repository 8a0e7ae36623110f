// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit reader: the two databases hpcprof wrote (tests/fixtures/
 * hpctoolkit/) against the YAML dumps of HPCToolkit's own reader beside
 * them, targeted corruptions of our own files each caught and explained,
 * and mutated files (rejected or read, never a crash).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hpctoolkit_unit.h"

static const char *fixtures(void)
{
	const char *env = getenv("COLLECTOR_FIXTURES");

	return env ? env : "tests/fixtures";
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

/* A propMetricId meta.db does not list, in profile.db: each file reads, the
 * database does not. */
static void reject_unknown_metric(const char *dbdir)
{
	char *p = path_join(dbdir, "profile.db"), *msg = NULL;
	struct hkr_db db = { 0 };
	uint64_t pi, last;
	uint16_t id = 200;
	size_t n, len = 0;
	uint8_t *b = slurp(p, &n);
	FILE *f;

	pi = rd64(b, rd64(b, 0x18)) + 0x30; /* profile 1 */
	/* its last value: the highest id of its last context, still sorted */
	last = rd64(b, pi + 0x08) + (rd64(b, pi) - 1) * 10;
	memcpy(b + last, &id, 2);
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
	f = open_memstream(&msg, &len);
	assert_int_equal(hkr_read_dir(dbdir, &db, f), -EINVAL);
	fclose(f);
	if (!strstr(msg, "profile 1: propMetricId 200 not in meta.db"))
		fail_msg("expected the unknown propMetricId in: %s", msg);
	free(msg);
	hkr_free(&db);
	free(b);
	free(p);
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
	reject_unknown_metric(dbdir);
	free(dbdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_structured),
		cmocka_unit_test(test_fixture_nostruct),
		cmocka_unit_test_setup_teardown(test_reader_rejects, setup, teardown),
		cmocka_unit_test(test_mutations),
		cmocka_unit_test_setup_teardown(test_mutations_own, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
