// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind writer.  Models are built here by hand; every file written is
 * read back with our reader, checked byte by byte against the rules of the
 * spec and of the real readers (specs/README.md), and run through the real
 * callgrind_annotate.  (Traced calls, order and scale:
 * test_callgrind_traced.c; the reader: test_callgrind_reader.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "callgrind_unit.h"

static void test_round_trip_fields(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	const struct callgrind_record *r;
	char path[256], *text;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	assert_int_equal(count_files(t.path), 1);
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\npositions: instr line\nevent: Samples : "));
	assert_non_null(strstr(text, "\nevents: Samples Ns\nsummary: 105 105000000\n"));
	assert_non_null(strstr(text, "\ntotals: 105 105000000\n"));
	assert_non_null(strstr(text, "\ncmd: ./demo --fast\n"));
	assert_non_null(strstr(text, "\ndesc: Jumps: "));
	assert_non_null(strstr(text, "\ndesc: CallCounts: "));
	/* addresses in hex with 0x, kernel addresses as they are */
	assert_non_null(strstr(text, "\n0x2110 4 40 40000000\n"));
	assert_non_null(strstr(text, "0xffffffff81a00010 0 5 5000000\n"));
	assert_non_null(strstr(text, "ob=(3) [kernel.kallsyms]\n"));

	read_ok(path, &p);
	assert_true(p.has_format_line);
	assert_int_equal(p.version, 1);
	assert_string_equal(p.creator, "collector " COLLECTOR_VERSION);
	assert_true(p.has_pid);
	assert_int_equal(p.pid, 4242);
	assert_true(p.pos_instr && p.pos_line);
	assert_int_equal(p.n_events, 2);
	assert_string_equal(p.events[0], "Samples");
	assert_string_equal(p.events[1], "Ns");
	assert_non_null(p.event_long[1]);
	assert_int_equal(p.summary[0], 105);
	assert_int_equal(p.totals[1], 105000000);
	assert_int_equal(p.self_sum[0], 105);

	assert_int_equal(self_of(&p, "hot", 0), 70);
	assert_int_equal(self_of(&p, "work", 0), 20);
	assert_int_equal(self_of(&p, "cold", 0), 10);
	assert_int_equal(self_of(&p, "do_syscall_64", 0), 5);
	assert_int_equal(self_of(&p, "main", 0), 0);

	/* main -> work: every sample but cold's passes through it */
	r = find_call(&p, "main", "work", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 95);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 95);
	assert_int_equal(callgrind_record_costs(&p, r)[1], 95000000);
	assert_int_equal(r->addr, 0x1160);
	assert_int_equal(r->line, 25);
	assert_int_equal(r->target_addr, 0x1200); /* callee entry */
	assert_int_equal(r->target_line, 10);
	assert_string_equal(callgrind_name(&p, r->called_file), "/src/demo/main.c");
	/* work -> hot crosses objects: cob= and cfi= name the library */
	r = find_call(&p, "work", "hot", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 75);
	assert_string_equal(callgrind_name(&p, r->called_object), "/usr/lib/libhot.so");
	assert_string_equal(callgrind_name(&p, r->called_file), "/src/hot/hot.c");
	assert_string_equal(callgrind_name(&p, r->object), "/usr/bin/demo");
	/* user -> kernel */
	r = find_call(&p, "hot", "do_syscall_64", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 5);
	assert_int_equal(r->addr, 0x2130);
	assert_string_equal(callgrind_name(&p, r->called_object), "[kernel.kallsyms]");
	assert_string_equal(callgrind_name(&p, r->called_file), "???");
	/* _start has no file: "???" */
	r = find_call(&p, "_start", "main", 0);
	assert_non_null(r);
	assert_string_equal(callgrind_name(&p, r->fn_file), "???");
	assert_int_equal(callgrind_record_costs(&p, r)[0], 105);

	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

static void test_callgrind_annotate(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	char path[256], name[128], *out;
	double perc;

	(void)state;
	if (system("command -v callgrind_annotate >/dev/null 2>&1")) {
		skip();
		return;
	}
	fixture_build(&fx);
	tmpdir_make(&t);
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));

	out = annotate(path, "");
	assert_null(strstr(out, "WARNING"));
	assert_non_null(strstr(out, "Events recorded:  Samples Ns"));
	assert_non_null(strstr(out, "./demo --fast (PID 4242)"));
	assert_non_null(strstr(out, "Jumps: no jump="));
	first_function(out, &perc, name, sizeof(name));
	assert_string_equal(name, "/src/hot/hot.c:hot");
	assert_true(perc > 66.0 && perc < 67.0); /* 70 of 105 */
	free(out);

	/* inclusive: _start is the root of every stack */
	out = annotate(path, "--inclusive=yes");
	assert_null(strstr(out, "WARNING"));
	first_function(out, &perc, name, sizeof(name));
	assert_true(perc > 99.9);
	assert_non_null(strstr(out, "105,000,000 (100.0%)  ???:_start"));
	assert_non_null(strstr(out, "95,000,000 (90.48%)  /src/demo/main.c:work"));
	free(out);

	tmpdir_remove(&t);
	model_free(&fx.m);
}

static void test_empty_profile(void **state)
{
	struct model m;
	struct tmpdir t;

	(void)state;
	model_init(&m);
	tmpdir_make(&t);
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	assert_int_equal(count_files(t.path), 0);
	/* a process without samples gets no file either */
	model_add_process(&m, 7, 1, 0, "idle", NULL, NULL);
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	assert_int_equal(count_files(t.path), 0);
	tmpdir_remove(&t);
	model_free(&m);
}

/* One sample at address 0 of an image without symbols, a pid and tid
 * above 65535, no command line (comm is used). */
static void test_one_sample_address_zero(void **state)
{
	struct model m;
	struct tmpdir t;
	struct model_image img = { .path = "/opt/blob.so", .kind = MODEL_IMAGE_ELF };
	struct callgrind_profile p;
	struct model_sample *s;
	uint32_t im, l0, st, proc, th;
	char path[256], *text;

	(void)state;
	model_init(&m);
	tmpdir_make(&t);
	im = model_add_image(&m, &img);
	l0 = model_intern_location(&m, im, 0, MODEL_NONE, MODEL_NONE, 0, NULL, 0);
	st = model_intern_stack(&m, &l0, 1, 0, true);
	proc = model_add_process(&m, 4000000, 1, 0, "blobby", NULL, NULL);
	th = model_add_thread(&m, proc, 4000001, "blobby");
	s = model_add_sample(&m);
	s->process = proc;
	s->thread = th;
	s->stack = st;
	s->weight = 333;
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	snprintf(path, sizeof(path), "%s/callgrind.out.4000000", t.path);
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\ncmd: blobby\n"));
	assert_non_null(strstr(text, "\nfn=(1) [unknown] blob.so\n0x0 0 1 333\n"));
	assert_non_null(strstr(text, "desc: TruncatedStacks: 1 of 1 samples"));
	read_ok(path, &p);
	assert_int_equal(p.pid, 4000000);
	assert_int_equal(p.n_records, 1);
	assert_int_equal(p.records[0].addr, 0);
	assert_string_equal(callgrind_name(&p, p.records[0].object), "/opt/blob.so");
	assert_int_equal(callgrind_record_costs(&p, &p.records[0])[1], 333);
	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&m);
}

/*
 * Recursion: main -> fib -> fib ... -> fib, 8 samples of 1 us.  The edge
 * fib -> fib is one per stack, whether it repeats in the middle of the
 * stack's sorted edges or at their end (rec_last: its call site gets the
 * highest location id).
 */
static void check_recursion(unsigned depth, bool rec_last)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	const struct callgrind_record *r;
	uint32_t f, l_rec = 0, l_leaf, l_main, deep[8];
	char path[256];

	fixture_build(&fx);
	tmpdir_make(&t);
	f = model_intern_function(&fx.m, fx.exe, "fib", 0x1300, 0x40, fx.file_main, 40);
	if (!rec_last)
		l_rec = loc(&fx, fx.exe, 0x1310, f, fx.file_main, 42);
	l_leaf = loc(&fx, fx.exe, 0x1320, f, fx.file_main, 43);
	l_main = loc(&fx, fx.exe, 0x1190, fx.f_main, fx.file_main, 28);
	if (rec_last)
		l_rec = loc(&fx, fx.exe, 0x1310, f, fx.file_main, 42);
	assert_true(rec_last ? l_rec > l_main : l_rec < l_main);
	deep[0] = l_leaf;
	for (unsigned i = 1; i <= depth; i++)
		deep[i] = l_rec;
	deep[depth + 1] = l_main;
	sample(&fx, deep, depth + 2, 0, 1000, 8);
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	read_ok(path, &p);
	r = find_call(&p, "fib", "fib", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 8);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 8);
	assert_int_equal(callgrind_record_costs(&p, r)[1], 8000);
	assert_null(find_call(&p, "fib", "fib", 1));
	r = find_call(&p, "main", "fib", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 8);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 8);
	assert_int_equal(self_of(&p, "fib", 0), 8);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

static void test_recursion_once_per_stack(void **state)
{
	(void)state;
	check_recursion(3, false);
}

static void test_recursion_last_edge_once(void **state)
{
	(void)state;
	check_recursion(2, true);
	check_recursion(3, true);
}

/* Inlined code: fi= names the inlined function's file; the cost stays with
 * the out-of-line function. */
static void test_inlined_file(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	struct model_inline inl;
	uint32_t hdr, sq, l_inl, l_main;
	char path[256], *text, *out;
	bool found = false;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	hdr = model_intern_file(&fx.m, "/src/demo/sq.h");
	sq = model_intern_function(&fx.m, fx.exe, "square", 0, 0, hdr, 2);
	inl = (struct model_inline){ sq, fx.file_main, 30 };
	l_inl = model_intern_location(&fx.m, fx.exe, 0x1190, fx.f_main, hdr, 3, &inl, 1);
	l_main = loc(&fx, fx.exe, 0x1050, fx.f_start, MODEL_NONE, 0);
	{
		uint32_t s[] = { l_inl, l_main };

		sample(&fx, s, 2, 0, 1000, 3);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\nfi=(3) /src/demo/sq.h\n"));
	read_ok(path, &p);
	for (size_t i = 0; i < p.n_records; i++) {
		const struct callgrind_record *r = &p.records[i];

		if (r->kind == CALLGRIND_COST && r->addr == 0x1190) {
			assert_string_equal(callgrind_name(&p, r->function), "main");
			assert_string_equal(callgrind_name(&p, r->fn_file), "/src/demo/main.c");
			assert_string_equal(callgrind_name(&p, r->file), "/src/demo/sq.h");
			assert_int_equal(r->line, 3);
			assert_int_equal(callgrind_record_costs(&p, r)[0], 3);
			found = true;
		}
	}
	assert_true(found);
	/* callgrind_annotate attributes it to sq.h:main, without warnings */
	if (!system("command -v callgrind_annotate >/dev/null 2>&1")) {
		out = annotate(path, "");
		assert_null(strstr(out, "WARNING"));
		assert_non_null(strstr(out, "/src/demo/sq.h:main"));
		free(out);
	}
	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Unsymbolized frames of one image are one node: no self-call. */
static void test_unknown_group(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	struct model_image img = { .path = "/opt/stripped.so", .kind = MODEL_IMAGE_ELF };
	uint32_t im, a, b, c, l_main;
	char path[256];

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	im = model_add_image(&fx.m, &img);
	a = loc(&fx, im, 0x500, MODEL_NONE, MODEL_NONE, 0);
	b = loc(&fx, im, 0x900, MODEL_NONE, MODEL_NONE, 0);
	c = loc(&fx, im, 0x700, MODEL_NONE, MODEL_NONE, 0);
	l_main = loc(&fx, fx.exe, 0x1180, fx.f_main, fx.file_main, 27);
	{
		uint32_t s1[] = { a, b, c, l_main };
		uint32_t s2[] = { b, c, l_main };

		sample(&fx, s1, 4, 0, 10, 2);
		sample(&fx, s2, 3, 0, 10, 1);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	read_ok(path, &p);
	assert_null(find_call(&p, "[unknown] stripped.so", "[unknown] stripped.so", 0));
	assert_non_null(find_call(&p, "main", "[unknown] stripped.so", 0));
	assert_int_equal(find_call(&p, "main", "[unknown] stripped.so", 0)->calls, 3);
	assert_int_equal(self_of(&p, "[unknown] stripped.so", 0), 3);
	for (size_t i = 0; i < p.n_records; i++)
		if (p.records[i].kind == CALLGRIND_COST &&
		    !strcmp(callgrind_name(&p, p.records[i].function), "[unknown] stripped.so"))
			assert_true(p.records[i].addr == 0x500 || p.records[i].addr == 0x900);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Two static functions of one name in one object without debug info would
 * merge in both readers: the second gets its address. */
static void test_homonyms(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	uint32_t h1, h2, l1, l2, l_main;
	char path[256];

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	h1 = model_intern_function(&fx.m, fx.exe, "helper", 0x3000, 0x10, MODEL_NONE, 0);
	h2 = model_intern_function(&fx.m, fx.exe, "helper", 0x3100, 0x10, MODEL_NONE, 0);
	l1 = loc(&fx, fx.exe, 0x3004, h1, MODEL_NONE, 0);
	l2 = loc(&fx, fx.exe, 0x3104, h2, MODEL_NONE, 0);
	l_main = loc(&fx, fx.exe, 0x1180, fx.f_main, fx.file_main, 27);
	{
		uint32_t s1[] = { l1, l_main };
		uint32_t s2[] = { l2, l_main };

		sample(&fx, s1, 2, 0, 1, 4);
		sample(&fx, s2, 2, 0, 1, 6);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	read_ok(path, &p);
	assert_int_equal(self_of(&p, "helper", 0), 4);
	assert_int_equal(self_of(&p, "helper [0x3100]", 0), 6);
	assert_int_equal(find_call(&p, "main", "helper [0x3100]", 0)->calls, 6);
	assert_int_equal(find_call(&p, "main", "helper", 0)->calls, 4);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Exec generations, lost events and truncated stacks. */
static void test_generations_and_desc(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	uint32_t gen1, l;
	struct model_sample *s;
	char path[256];
	size_t lost = 0;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	model_count_lost(&fx.m, "ringbuf_full", 17);
	model_count_lost(&fx.m, "stack_unwind", 3);
	gen1 = model_add_process(&fx.m, 4242, 1, 1, "newimg", "/bin/newimg -x", "/bin/newimg");
	l = loc(&fx, fx.exe, 0x1220, fx.f_work, fx.file_main, 13);
	s = model_add_sample(&fx.m);
	s->process = gen1;
	s->stack = model_intern_stack(&fx.m, &l, 1, 0, true);
	s->weight = 5;
	write_and_path(&fx, &t, "callgrind.out.4242.1", path, sizeof(path));
	assert_int_equal(count_files(t.path), 2);
	read_ok(path, &p);
	assert_string_equal(p.cmd, "/bin/newimg -x");
	for (size_t i = 0; i < p.n_desc; i++) {
		if (!strcmp(p.desc[i].type, "Lost")) {
			lost++;
			assert_true(!strcmp(p.desc[i].value, "17 events (ringbuf_full)") ||
				    !strcmp(p.desc[i].value, "3 events (stack_unwind)"));
		}
		if (!strcmp(p.desc[i].type, "TruncatedStacks"))
			assert_memory_equal(p.desc[i].value, "1 of 1 samples", 14);
		if (!strcmp(p.desc[i].type, "Exec"))
			assert_memory_equal(p.desc[i].value, "image 1 of pid 4242", 19);
		/* desc types fit the grammar's Name */
		for (const char *c = p.desc[i].type; *c; c++)
			assert_true((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				    (*c >= '0' && *c <= '9'));
	}
	assert_int_equal(lost, 2);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* A huge command line and many lost causes: events: stays within
 * KCachegrind's first 2047 bytes, what does not fit becomes comments. */
static void test_long_header(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	char path[256], *text, *cmd, cause[32];
	size_t lost = 0;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	cmd = malloc(5001);
	assert_non_null(cmd);
	memset(cmd, 'a', 5000);
	cmd[5000] = 0;
	cmd[10] = '\n'; /* must not break the line */
	free(fx.m.processes.items[fx.proc].cmdline);
	fx.m.processes.items[fx.proc].cmdline = cmd;
	for (int i = 0; i < 40; i++) {
		snprintf(cause, sizeof(cause), "cause_%02d", i);
		model_count_lost(&fx.m, cause, (uint64_t)i + 1);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\n# cmd (complete): aaaaaaaaaa aaa"));
	assert_non_null(strstr(text, "\n# desc: Lost: 40 events (cause_39)\n"));
	read_ok(path, &p);
	assert_int_equal(strlen(p.cmd), 512 + 3);
	for (size_t i = 0; i < p.n_desc; i++)
		lost += !strcmp(p.desc[i].type, "Lost");
	assert_true(lost > 0 && lost < 40);
	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Write errors are reported (ENOSPC through /dev/full is not possible with
 * rename, so use a directory that does not exist). */
static void test_write_error(void **state)
{
	struct fixture fx;
	struct export_options opts = { .dir = "/nonexistent/dir/for/callgrind", .quiet = true };

	(void)state;
	fixture_build(&fx);
	assert_true(callgrind_write(&fx.m, &opts) < 0);
	model_free(&fx.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_fields),
		cmocka_unit_test(test_callgrind_annotate),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_one_sample_address_zero),
		cmocka_unit_test(test_recursion_once_per_stack),
		cmocka_unit_test(test_recursion_last_edge_once),
		cmocka_unit_test(test_inlined_file),
		cmocka_unit_test(test_unknown_group),
		cmocka_unit_test(test_homonyms),
		cmocka_unit_test(test_generations_and_desc),
		cmocka_unit_test(test_long_header),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
