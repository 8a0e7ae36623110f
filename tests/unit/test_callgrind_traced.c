// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind writer: traced calls (exact counts merged into the sampled
 * edges, TracedNs), a million distinct addresses, and the order of the
 * body's blocks and lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "callgrind_unit.h"

/* Traced work and hot: exact call counts and a TracedNs column. */
static void test_traced(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	const struct callgrind_record *r;
	uint32_t tf_work, tf_hot;
	uint64_t now = 1000000;
	char path[256], *text, *out;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	tf_work = model_add_traced_function(&fx.m, fx.exe, 0x1200, fx.f_work);
	tf_hot = model_add_traced_function(&fx.m, fx.lib, 0x2100, fx.f_hot);
	/* 1000 calls of work, each calling hot twice (300 ns each); work
	 * lasts 1000 ns */
	for (int i = 0; i < 1000; i++) {
		trace_event(&fx, tf_work, MODEL_TRACE_ENTRY, now);
		trace_event(&fx, tf_hot, MODEL_TRACE_ENTRY, now + 100);
		trace_event(&fx, tf_hot, MODEL_TRACE_EXIT, now + 400);
		trace_event(&fx, tf_hot, MODEL_TRACE_ENTRY, now + 500);
		trace_event(&fx, tf_hot, MODEL_TRACE_EXIT, now + 800);
		trace_event(&fx, tf_work, MODEL_TRACE_EXIT, now + 1000);
		now += 2000;
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\nevents: Samples Ns TracedNs\n"));
	assert_non_null(strstr(text, "\nsummary: 105 105000000 1000000\n"));
	read_ok(path, &p);
	assert_int_equal(p.n_events, 3);
	/* work -> hot: from the nesting, exact; sampled costs kept */
	r = find_call(&p, "work", "hot", 0);
	assert_non_null(r);
	assert_null(find_call(&p, "work", "hot", 1));
	assert_int_equal(r->calls, 2000);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 75);
	assert_int_equal(callgrind_record_costs(&p, r)[2], 600000);
	/* main -> work: no traced parent, but the samples show one caller */
	r = find_call(&p, "main", "work", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 1000);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 95);
	assert_int_equal(callgrind_record_costs(&p, r)[2], 1000000);
	/* self traced time at the entry addresses */
	assert_int_equal(self_of(&p, "work", 2), 400000);
	assert_int_equal(self_of(&p, "hot", 2), 600000);
	assert_int_equal(self_of(&p, "hot", 0), 70);
	/* untraced edges keep sample counts */
	assert_int_equal(find_call(&p, "_start", "main", 0)->calls, 105);
	assert_int_equal(find_call(&p, "_start", "main", 0)->kind, CALLGRIND_CALL);
	assert_int_equal(callgrind_record_costs(&p, find_call(&p, "_start", "main", 0))[2], 0);
	if (!system("command -v callgrind_annotate >/dev/null 2>&1")) {
		out = annotate(path, "--inclusive=yes --sort=TracedNs");
		assert_null(strstr(out, "WARNING"));
		assert_non_null(strstr(out, "1,000,000 (100.0%)  /src/demo/main.c:work"));
		free(out);
	}
	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Kernel aggregates only (no event stream): counts without nesting. */
static void test_traced_func_stats_only(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	struct model_func_stats *fs;
	uint32_t tf;
	char path[256];

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	tf = model_add_traced_function(&fx.m, fx.lib, 0x2100, fx.f_hot);
	fs = model_add_func_stats(&fx.m);
	fs->func = tf;
	fs->process = fx.proc;
	fs->thread = fx.thread;
	fs->calls = 12345;
	fs->total_ns = 999;
	fs->self_ns = 999;
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	read_ok(path, &p);
	assert_int_equal(find_call(&p, "work", "hot", 0)->calls, 12345);
	assert_int_equal(callgrind_record_costs(&p, find_call(&p, "work", "hot", 0))[2], 999);
	assert_int_equal(self_of(&p, "hot", 2), 999);
	assert_int_equal(p.totals[2], 999);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* 10^6 distinct addresses write and read back in seconds. */
static void test_million_addresses(void **state)
{
	struct model m;
	struct tmpdir t;
	struct model_image img = { .path = "/usr/bin/big", .kind = MODEL_IMAGE_ELF,
				   .has_symbols = true };
	struct callgrind_profile p;
	uint32_t im, fn, caller, l_call, proc, th, file;
	char path[256];
	struct timespec t0, t1;
	const uint32_t n = 1000000;

	(void)state;
	model_init(&m);
	tmpdir_make(&t);
	im = model_add_image(&m, &img);
	file = model_intern_file(&m, "big.c");
	fn = model_intern_function(&m, im, "big", 0x100000, 0x1000000, file, 1);
	caller = model_intern_function(&m, im, "main", 0x1000, 0x100, file, 100);
	l_call = model_intern_location(&m, im, 0x1010, caller, file, 101, NULL, 0);
	proc = model_add_process(&m, 99, 1, 0, "big", "big", NULL);
	th = model_add_thread(&m, proc, 99, "big");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t fr[2];
		struct model_sample *s;

		fr[0] = model_intern_location(&m, im, 0x100000 + (uint64_t)i * 4, fn, file,
					      1 + i / 16, NULL, 0);
		fr[1] = l_call;
		s = model_add_sample(&m);
		s->process = proc;
		s->thread = th;
		s->stack = model_intern_stack(&m, fr, 2, 0, false);
		s->weight = 1000;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* generous for ASan builds */
	assert_true((t1.tv_sec - t0.tv_sec) < 20);
	snprintf(path, sizeof(path), "%s/callgrind.out.99", t.path);
	read_ok(path, &p);
	assert_int_equal(p.n_records, n + 1);
	assert_int_equal(p.totals[0], n);
	assert_int_equal(find_call(&p, "main", "big", 0)->calls, n);
	assert_int_equal(p.records[n - 1].addr, 0x100000 + (uint64_t)(n - 1) * 4);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&m);
}

/*
 * The body's order with many items per function, created in scrambled
 * order: one fn= block per function, blocks by function id (the model's,
 * here the names' order), and in a block the lines by address, then self
 * cost before calls, calls by callee.  Functions with many lines and with
 * few are sorted by different code paths.
 */
static void test_body_order(void **state)
{
	struct model m;
	struct tmpdir t;
	struct model_image img = { .path = "/usr/bin/order", .kind = MODEL_IMAGE_ELF,
				   .has_symbols = true };
	struct callgrind_profile p;
	uint32_t im, file, proc, th, fns[60], locs[2030];
	char path[256], seen[60] = { 0 };
	uint64_t seed = 0x243f6a8885a308d3ULL, self = 0;
	size_t n_locs = 0;
	int last_fn = -1;

	(void)state;
	model_init(&m);
	tmpdir_make(&t);
	im = model_add_image(&m, &img);
	file = model_intern_file(&m, "order.c");
	for (int i = 0; i < 60; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%02d", i);
		fns[i] = model_intern_function(&m, im, name, 0x10000 + (uint64_t)i * 0x1000, 0x1000,
					       file, (uint32_t)(i * 100 + 1));
	}
	/* 40 lines in each of f00..f49, 3 in f50..f59, made in scrambled order */
	for (uint32_t k = 0; k < 2000; k++) {
		uint32_t idx = (k * 7919) % 2000, f = idx % 50, off = idx / 50;

		locs[n_locs++] = model_intern_location(&m, im, 0x10000 + (uint64_t)f * 0x1000 +
						       0x800 - off * 8, fns[f], file,
						       f * 100 + 50 - off, NULL, 0);
	}
	for (uint32_t k = 0; k < 30; k++) {
		uint32_t f = 50 + (k * 7) % 10, off = k / 10;

		locs[n_locs++] = model_intern_location(&m, im, 0x10000 + (uint64_t)f * 0x1000 +
						       0x100 - off * 4, fns[f], file,
						       f * 100 + 9 - off, NULL, 0);
	}
	proc = model_add_process(&m, 77, 1, 0, "order", "order", NULL);
	th = model_add_thread(&m, proc, 77, "order");
	for (int i = 0; i < 3000; i++) {
		uint32_t fr[6];
		struct model_sample *s;

		for (int d = 0; d < 6; d++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			fr[d] = locs[seed % n_locs];
		}
		s = model_add_sample(&m);
		s->process = proc;
		s->thread = th;
		s->stack = model_intern_stack(&m, fr, 6, 0, false);
		s->weight = 1000;
	}
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	snprintf(path, sizeof(path), "%s/callgrind.out.77", t.path);
	read_ok(path, &p);
	for (size_t i = 0; i < p.n_records; i++) {
		const struct callgrind_record *r = &p.records[i], *q = i ? r - 1 : NULL;
		int fn = atoi(callgrind_name(&p, r->function) + 1);

		if (r->kind == CALLGRIND_COST)
			self += callgrind_record_costs(&p, r)[0];
		if (fn != last_fn) {
			/* a new block: each function once, in id order */
			assert_false(seen[fn]);
			assert_true(fn > last_fn);
			seen[fn] = 1;
			last_fn = fn;
			continue;
		}
		assert_true(q->addr <= r->addr);
		if (q->addr < r->addr)
			continue;
		assert_false(q->kind == CALLGRIND_CALL && r->kind == CALLGRIND_COST);
		if (q->kind == CALLGRIND_CALL && r->kind == CALLGRIND_CALL)
			assert_true(strcmp(callgrind_name(&p, q->called_function),
					   callgrind_name(&p, r->called_function)) < 0);
	}
	assert_int_equal(self, 3000);
	assert_int_equal(p.totals[0], 3000);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_traced),
		cmocka_unit_test(test_traced_func_stats_only),
		cmocka_unit_test(test_million_addresses),
		cmocka_unit_test(test_body_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
