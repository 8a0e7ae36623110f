// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind reader: malformed files each rejected with the offset and the
 * reason, the spec's own example, a file as Valgrind writes it, and
 * `collector dump`'s hooks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "callgrind_unit.h"

struct bad_case {
	const char *text;
	size_t offset;
	const char *reason;
};

static void test_reader_rejects(void **state)
{
	static const char head[] = "# callgrind format\nversion: 1\npositions: instr line\n"
				   "events: A B\n";
	static const struct bad_case cases[] = {
		{ "# callgrind format\nversion: 2\nevents: A\n", 19, "version 2" },
		{ "# callgrind format\ncreator: x\nversion: 1\nevents: A\n", 30, "version: must" },
		{ "# callgrind format\ncmd: x\n", 26, "no events: line" },
		{ "# callgrind format\nsummary: 1\nevents: A\n", 19, "summary: before events:" },
		{ "# callgrind format\nevents: A 3B\n", 29, "not a Name" },
		{ "# callgrind format\nevents:\tA\n", 26, "tab" },
		{ "# callgrind format\nbogus: 1\nevents: A\n", 19, "unknown header" },
		/* head is 64 bytes, "fl=a.c\n" 7, "fn=f\n" 5 */
		{ "%sfl=a.c\n0x10 1 5\n", 71, "before any fn=" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5 6 7\n", 87, "more costs" },
		{ "%sfl=a.c\nfn=(3)\n", 74, "undefined compressed" },
		{ "%sfl=(1) a.c\nfl=(1) b.c\n", 78, "redefined" },
		{ "%sfl=a.c\nfn=f\ncfn=g\ncalls=1 0x10 1\nfn=h\n", 97, "not followed" },
		{ "%sfl=a.c\nfn=f\ncfn=g\ncalls=1 0x10 1\n", 82, "end of the file" },
		{ "%sfl=a.c\nfn=f\ncalls=1 0x10 1\n 1 2\n", 76, "without cfn=" },
		{ "%sfl=a.c\nfn=f\n0x10 1 99999999999999999999\n", 83, "exceeds 64 bits" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\n-0x20 1 5\n", 85, "leaves the 64-bit range" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\ntotals: 6\n", 85, "totals: A is 6" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\nsummary: 1\n", 85, "summary: after body" },
		{ "%sfl=a.c\nfn=f\n0x1g 1 5\n", 79, "unexpected character" },
		{ "%sfl=a.c\nfn=f\nevents: C\n", 76, "second events:" },
		{ "%sfl=a.c\nfn=f\nwhat\n", 76, "unknown line" },
		{ "%sfi=x.c\n", 64, "fi=/fe= before" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\r\n", 84, "carriage return" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\nsummary: 1\n", 85, "summary: after body" },
	};
	char buf[4096];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct callgrind_profile p;
		struct format_error err;
		int ret;

		assert_int_equal(strlen(head), 64);
		snprintf(buf, sizeof(buf), cases[i].text, head);
		ret = callgrind_parse(buf, strlen(buf), &p, &err);
		if (ret != -EINVAL || !strstr(err.reason, cases[i].reason) ||
		    err.offset != cases[i].offset)
			fail_msg("case %zu: ret %d offset %zu (want %zu) reason '%s' (want '%s')", i,
				 ret, err.offset, cases[i].offset, err.reason, cases[i].reason);
	}
	/* events: beyond KCachegrind's 2047-byte window */
	{
		struct callgrind_profile p;
		struct format_error err;
		size_t n = 0;

		n += (size_t)snprintf(buf, sizeof(buf), "# callgrind format\n");
		for (int i = 0; i < 30; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "desc: Pad: %070d\n", i);
		snprintf(buf + n, sizeof(buf) - n, "events: A\n");
		assert_int_equal(callgrind_parse(buf, strlen(buf), &p, &err), -EINVAL);
		assert_int_equal(err.offset, n);
		assert_non_null(strstr(err.reason, "2047"));
	}
}

/* Relative subpositions, compression, cfi= defaults, as the spec shows. */
static void test_reader_spec_example(void **state)
{
	static const char text[] =
		"# callgrind format\n"
		"positions: instr line\n"
		"events: ticks\n"
		"fn=func\n"
		"0x80001234 90 1\n"
		"+3 * 5\n"
		"+1 +1 6\n"
		"fl=(1) file1.c\n"
		"fn=(1) main\n"
		"0x10 16 20\n"
		"cfn=(2) func1\n"
		"calls=1 0x50 50\n"
		"* * 400\n"
		"cfi=(2) file2.c\n"
		"cfn=(3) func2\n"
		"calls=3 0x20 20\n"
		"+2 * 400\n";
	struct callgrind_profile p;
	struct format_error err;

	(void)state;
	assert_int_equal(callgrind_parse(text, strlen(text), &p, &err), 0);
	assert_int_equal(p.n_records, 6);
	assert_int_equal(p.records[1].addr, 0x80001237);
	assert_int_equal(p.records[1].line, 90);
	assert_int_equal(p.records[2].addr, 0x80001238);
	assert_int_equal(p.records[2].line, 91);
	assert_int_equal(callgrind_record_costs(&p, &p.records[2])[0], 6);
	assert_int_equal(p.records[4].kind, CALLGRIND_CALL);
	assert_string_equal(callgrind_name(&p, p.records[4].called_file), "file1.c");
	assert_int_equal(p.records[4].addr, 0x10);
	assert_int_equal(p.records[4].target_addr, 0x50);
	assert_string_equal(callgrind_name(&p, p.records[5].called_file), "file2.c");
	assert_string_equal(callgrind_name(&p, p.records[5].called_function), "func2");
	assert_int_equal(p.records[5].calls, 3);
	assert_int_equal(p.records[5].addr, 0x12);
	assert_int_equal(p.self_sum[0], 32);
	callgrind_profile_free(&p);
}

/* A file written by Valgrind's own Callgrind, if valgrind is here. */
static void test_reader_valgrind_file(void **state)
{
	char dir[64] = "/tmp/test_callgrind_vg.XXXXXX", cmd[512], path[128];
	struct callgrind_profile p;
	bool main_seen = false;

	(void)state;
	if (system("command -v valgrind >/dev/null 2>&1")) {
		skip();
		return;
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/callgrind.out.vg", dir);
	snprintf(cmd, sizeof(cmd),
		 "valgrind -q --tool=callgrind --dump-instr=yes --collect-jumps=yes "
		 "--callgrind-out-file=%s /bin/true >/dev/null 2>&1", path);
	if (system(cmd) || access(path, R_OK)) {
		unlink(path);
		rmdir(dir);
		skip();
		return;
	}
	read_ok(path, &p);
	assert_true(p.has_format_line);
	assert_string_equal(p.events[0], "Ir");
	assert_true(p.n_jumps > 0);
	assert_non_null(p.totals);
	assert_int_equal(p.totals[0], p.self_sum[0]);
	for (size_t i = 0; i < p.n_records; i++)
		if (!strcmp(callgrind_name(&p, p.records[i].function), "(below main)"))
			main_seen = true;
	assert_true(main_seen);
	/* dump recognizes and checks it */
	{
		char head[64];
		FILE *f = fopen(path, "rb");
		size_t n;

		assert_non_null(f);
		n = fread(head, 1, sizeof(head), f);
		fclose(f);
		assert_true(callgrind_recognize(path, (unsigned char *)head, n));
		assert_int_equal(callgrind_dump(path, stdout, true), 0);
	}
	callgrind_profile_free(&p);
	unlink(path);
	rmdir(dir);
}

static void test_dump(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	char path[256], *text, *dumped;
	FILE *out;
	size_t n;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	text = slurp(path, &n);
	assert_true(callgrind_recognize(path, (unsigned char *)text, n));
	assert_false(callgrind_recognize(path, (unsigned char *)"\x7f" "ELF", 4));
	assert_false(callgrind_recognize(path, (unsigned char *)"hello\nworld\n", 12));
	assert_true(callgrind_recognize(path, (unsigned char *)"cmd: x\nevents: Ir\n", 18));
	/* check: nothing printed */
	out = tmpfile();
	assert_int_equal(callgrind_dump(path, out, true), 0);
	assert_int_equal(ftell(out), 0);
	/* dump: header then records */
	assert_int_equal(callgrind_dump(path, out, false), 0);
	n = (size_t)ftell(out);
	rewind(out);
	dumped = malloc(n + 1);
	assert_int_equal(fread(dumped, 1, n, out), n);
	dumped[n] = 0;
	fclose(out);
	assert_non_null(strstr(dumped, "pid: 4242\n"));
	assert_non_null(strstr(dumped, "event 0: Samples : "));
	assert_non_null(strstr(dumped, "cost ob=/usr/lib/libhot.so fl=/src/hot/hot.c fn=hot "
					"instr=0x2110 line=4 Samples=40 Ns=40000000\n"));
	assert_non_null(strstr(dumped, "-> cob=/usr/lib/libhot.so cfi=/src/hot/hot.c cfn=hot "
					"calls=75"));
	assert_true(strstr(dumped, "records: ") > strstr(dumped, "totals: "));
	/* a corrupted file: offset and reason on stderr, non-zero */
	{
		FILE *f = fopen(path, "r+b");

		assert_non_null(f);
		fseek(f, (long)(strstr(text, "\nfn=") - text) + 1, SEEK_SET);
		fputs("xx", f);
		fclose(f);
		assert_int_equal(callgrind_dump(path, stdout, true), -EINVAL);
	}
	free(dumped);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_rejects),
		cmocka_unit_test(test_reader_spec_example),
		cmocka_unit_test(test_reader_valgrind_file),
		cmocka_unit_test(test_dump),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
