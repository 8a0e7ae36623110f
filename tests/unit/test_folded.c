// SPDX-License-Identifier: GPL-2.0
/*
 * Folded stacks: the writer on the hand-built model (stack_model.h), whose
 * lines are derived by hand from the stacks (root first, the process name
 * as root, inlined calls as frames, _[k] and _[j], children by name), and
 * the reader on good and bad text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "formats/folded/folded.h"
#include "formats/folded/folded_reader.h"
#include "stack_model.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_writer(void **state)
{
	struct stack_model *sm = sm_new();
	char path[128], *text;

	(void)state;
	assert_int_equal(folded_write(&sm->m, &sm->opts), 0);
	text = slurp(sm_path(sm, "collector.folded", path, sizeof(path)));
	/* the no-stack sample ends at the process; children sorted by name:
	 * "[anon:exec]" < "[work]" < "work", "k_irq" < "leaf" */
	assert_string_equal(text,
			    "work 1\n"
			    "work;main;[anon:exec]_[j] 1\n"
			    "work;main;[work] 1\n"
			    "work;main;work;k_irq_[k] 1\n"
			    "work;main;work;leaf;inl 4\n");
	free(text);
	sm_free(sm);
}

/* A JIT runtime's method ends in "_[j]" (flamegraph.pl --color=java's
 * Java), an interpreter's function (CPython's) in nothing. */
static void test_runtime_frames(void **state)
{
	struct stack_model *sm = sm_new();
	char path[128], *text;

	(void)state;
	sm_sample_runtimes(sm);
	assert_int_equal(folded_write(&sm->m, &sm->opts), 0);
	text = slurp(sm_path(sm, "collector.folded", path, sizeof(path)));
	assert_non_null(strstr(text, "work;main;handle;long Kestrel.hotMix(long[], int)_[j] 1\n"));
	free(text);
	sm_free(sm);
}

static void test_names_are_cleaned(void **state)
{
	struct stack_model *sm = sm_new();
	char path[128], *text;

	(void)state;
	/* a ';' would split the frame, a newline the line */
	free(sm->m.functions.items[sm->f_main].name);
	sm->m.functions.items[sm->f_main].name = strdup("op;er\nator");
	assert_int_equal(folded_write(&sm->m, &sm->opts), 0);
	text = slurp(sm_path(sm, "collector.folded", path, sizeof(path)));
	assert_non_null(strstr(text, "work;op:er ator;work;leaf;inl 4\n"));
	free(text);
	sm_free(sm);
}

static void test_reader(void **state)
{
	static const char good[] = "a;b 3\nx;y z;w 0\r\na 12\n";
	struct folded_profile p;
	struct format_error err;

	(void)state;
	assert_int_equal(folded_parse(good, sizeof(good) - 1, &p, &err), 0);
	assert_int_equal(p.n_lines, 3);
	assert_int_equal(p.total, 15);
	assert_string_equal(p.lines[1].stack, "x;y z;w");
	assert_int_equal(p.lines[1].n_frames, 3);
	assert_int_equal(p.lines[2].offset, 17);
	assert_int_equal(p.max_frames, 3);
	folded_profile_free(&p);
	assert_true(folded_first_line_ok("a;b 3\n", 6));
	assert_false(folded_first_line_ok("a 3\n", 4));
	assert_false(folded_first_line_ok("{\"a\": 1}\n", 9));
}

static void expect_bad(const char *text, size_t offset, const char *reason)
{
	struct folded_profile p;
	struct format_error err;

	assert_int_equal(folded_parse(text, strlen(text), &p, &err), -EINVAL);
	assert_int_equal(err.offset, offset);
	assert_non_null(strstr(err.reason, reason));
}

static void test_reader_rejects(void **state)
{
	(void)state;
	expect_bad("a;b 3", 5, "newline");
	expect_bad("a;b 3\n\n", 6, "empty line");
	expect_bad("a;b\n", 0, "no count");
	expect_bad("a;b x3\n", 4, "not a decimal");
	expect_bad("a;;b 3\n", 2, "empty frame");
	expect_bad("a;b; 3\n", 4, "empty frame");
	expect_bad("a;b 3\nc 99999999999999999999\n", 8, "63 bits");
	expect_bad("a 9223372036854775807\nb 1\n", 22, "more than 63 bits");
}

static void test_dump_and_recognize(void **state)
{
	struct stack_model *sm = sm_new();
	char path[128];
	FILE *out = tmpfile();
	char buf[4096];
	size_t n;

	(void)state;
	assert_int_equal(folded_write(&sm->m, &sm->opts), 0);
	sm_path(sm, "collector.folded", path, sizeof(path));
	assert_true(folded_recognize(path, (const unsigned char *)"", 0));
	assert_true(folded_recognize("/x/y", (const unsigned char *)"a;b 1\n", 6));
	assert_false(folded_recognize("/x/y", (const unsigned char *)"events: a\n", 10));
	assert_int_equal(folded_dump(path, out, false), 0);
	rewind(out);
	n = fread(buf, 1, sizeof(buf) - 1, out);
	buf[n] = '\0';
	assert_non_null(strstr(buf, "stacks 5\nsamples 8\n"));
	assert_non_null(strstr(buf, "root work samples 8 stacks 5\n"));
	fclose(out);
	sm_free(sm);
}

/* A run without samples: a valid file that says so. */
static void test_empty(void **state)
{
	struct stack_model *sm = sm_new();
	struct format_error err;
	struct folded_profile out;
	char path[128];

	(void)state;
	sm->m.samples.len = 0;
	assert_int_equal(folded_write(&sm->m, &sm->opts), 0);
	if (folded_read_file(sm_path(sm, "collector.folded", path, sizeof(path)), &out, &err))
		fail_msg("%s", err.reason);
	assert_int_equal(out.n_lines, 0);
	folded_profile_free(&out);
	sm_free(sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_writer),
		cmocka_unit_test(test_runtime_frames),
		cmocka_unit_test(test_names_are_cleaned),
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_reader_rejects),
		cmocka_unit_test(test_dump_and_recognize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
