// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graph page: the writer on the hand-built model (stack_model.h),
 * read back by the page reader, whose tree is derived by hand from the
 * stacks; the page holds its CSS and JavaScript and nothing from outside;
 * text from the run cannot end the data element; the reader rejects trees
 * that do not add up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "formats/flamegraph/flamegraph.h"
#include "formats/flamegraph/flamegraph_reader.h"
#include "stack_model.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

struct want {
	int depth;
	const char *name;
	uint64_t total, self;
	uint8_t kind;
};

static void test_tree(void **state)
{
	/* depth first, children by name; the no-stack sample ends at "work" */
	static const struct want want[] = {
		{ 0, "all", 8, 0, 0 },
		{ 1, "work", 8, 1, 8 },             /* the process */
		{ 2, "main", 7, 0, 0 },
		{ 3, "[anon:exec]", 1, 1, 2 | 4 },  /* JIT, unknown */
		{ 3, "[work]", 1, 1, 4 },
		{ 3, "work", 5, 0, 0 },             /* the function */
		{ 4, "k_irq", 1, 1, 1 },
		{ 4, "leaf", 4, 0, 0 },
		{ 5, "inl", 4, 4, 0 },
	};
	struct stack_model *sm = sm_new();
	struct flamegraph_page p;
	struct format_error err;
	char path[128];

	(void)state;
	assert_int_equal(flamegraph_write(&sm->m, &sm->opts), 0);
	sm_path(sm, "flamegraph.html", path, sizeof(path));
	assert_int_equal(flamegraph_read_file(path, &p, &err), 0);
	assert_int_equal(p.samples, SM_SAMPLES);
	assert_int_equal(p.n_nodes, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < p.n_nodes; i++) {
		const struct flamegraph_node *n = &p.nodes[i];

		assert_int_equal(n->depth, want[i].depth);
		assert_string_equal(n->name < 0 ? "all" : p.names[n->name], want[i].name);
		assert_int_equal(n->total, want[i].total);
		assert_int_equal(n->self, want[i].self);
		if (n->name >= 0)
			assert_int_equal(p.kinds[n->name], want[i].kind);
	}
	assert_string_equal(p.title, "collector: work --hard");
	flamegraph_page_free(&p);
	sm_free(sm);
}

static void test_page(void **state)
{
	struct stack_model *sm = sm_new();
	char path[128], *page;
	size_t len;

	(void)state;
	/* text of the run must not end the <script> element nor the title */
	model_set_command_line(&sm->m, "work </script><b>");
	assert_int_equal(flamegraph_write(&sm->m, &sm->opts), 0);
	page = slurp(sm_path(sm, "flamegraph.html", path, sizeof(path)), &len);
	assert_true(flamegraph_recognize(path, (const unsigned char *)page, len < 512 ? len : 512));
	assert_non_null(strstr(page, "<title>work &lt;/script&gt;&lt;b&gt; - flame graph</title>"));
	assert_non_null(strstr(page, "\"collector: work \\u003c/script>\\u003cb>\""));
	/* the assets are in, whole: the CSS's first rule, the script's end */
	assert_non_null(strstr(page, "<style>\n/* collector's flame graph page"));
	assert_non_null(strstr(page, "\tzoom(zoomed);\n})();\n</script>\n</body>\n</html>\n"));
	assert_null(strstr(page, " src="));
	assert_null(strstr(page, "https://"));
	free(page);
	sm_free(sm);
}

static void expect_bad(const char *nodes, const char *reason)
{
	char page[512];
	struct flamegraph_page p;
	struct format_error err;

	snprintf(page, sizeof(page), "<!-- " FLAMEGRAPH_MARK " -->\n<script type=\"application/json\" "
		 "id=\"" FLAMEGRAPH_DATA_ID "\">{\"version\":1,\"title\":\"t\",\"subtitle\":\"s\","
		 "\"samples\":5,\"names\":[\"a\",\"b\"],\"kinds\":[0,8],\"nodes\":[%s]}</script>"
		 "</html>\n",
		 nodes);
	assert_int_equal(flamegraph_parse(page, strlen(page), &p, &err), -EINVAL);
	if (!strstr(err.reason, reason))
		fail_msg("'%s' does not say '%s'", err.reason, reason);
}

static void test_reader_rejects(void **state)
{
	struct flamegraph_page p;
	struct format_error err;
	const char ok[] = "<script type=\"application/json\" id=\"" FLAMEGRAPH_DATA_ID "\">"
			  "{\"version\":1,\"title\":\"t\",\"subtitle\":\"s\",\"samples\":5,"
			  "\"names\":[\"a\",\"b\"],\"kinds\":[0,8],\"nodes\":[-1,5,1,1,5,1,0,3,0]}"
			  "</script></html>\n";

	(void)state;
	assert_int_equal(flamegraph_parse(ok, strlen(ok), &p, &err), 0);
	assert_int_equal(p.nodes[1].self, 2);
	flamegraph_page_free(&p);
	/* the page cut after the data */
	assert_int_equal(flamegraph_parse(ok, strlen(ok) - 1, &p, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "cut short"));
	expect_bad("-1,5,1,1,5,1,0,6,0", "more samples");
	expect_bad("-1,5,2,1,5,0", "missing");
	expect_bad("-1,5,0,1,5,0", "after the root");
	expect_bad("0,5,0", "-1 (the root)");
	expect_bad("-1,5,1,2,5,0", "not an index of names");
	expect_bad("-1,4,0", "the page says 5");
	expect_bad("-1,5", "triples");
	expect_bad("-1,5,1,1,-5,0", ">= 0");
	assert_int_equal(flamegraph_parse("<html></html>", 13, &p, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "not a collector flame graph"));
}

/* Frames of two runtimes' images: each kind says which runtime (from bit
 * 5 up, 1 + its index in "runtimes"), the runtimes named by their images;
 * the reader labels them so and refuses a runtime the data does not list.
 * A Java method is JIT code too (its kind says so), labelled by its
 * runtime all the same. */
static void test_runtimes(void **state)
{
	struct stack_model *sm = sm_new();
	struct flamegraph_page p;
	struct format_error err;
	char path[128], *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	sm_sample_runtimes(sm);
	assert_int_equal(flamegraph_write(&sm->m, &sm->opts), 0);
	sm_path(sm, "flamegraph.html", path, sizeof(path));
	assert_int_equal(flamegraph_read_file(path, &p, &err), 0);
	/* met in the tree's order: handle (python) under main, then hotMix */
	assert_int_equal(p.n_runtimes, 2);
	for (size_t i = 0; i < p.n_names; i++) {
		unsigned int rt = p.kinds[i] >> FLAMEGRAPH_RUNTIME_SHIFT;

		if (!strcmp(p.names[i], "handle") || !strcmp(p.names[i], "long Kestrel.hotMix(long[], int)")) {
			assert_true(p.kinds[i] & 16);
			assert_true(rt >= 1 && rt <= 2);
			assert_string_equal(p.runtimes[rt - 1], p.names[i][0] == 'h' ? "python" : "java");
			assert_int_equal(!!(p.kinds[i] & 2), p.names[i][0] != 'h');
		} else {
			assert_int_equal(rt, 0);
		}
	}
	f = open_memstream(&out, &len);
	flamegraph_print(&p, f);
	fclose(f);
	assert_non_null(strstr(out, " handle [python]\n"));
	assert_non_null(strstr(out, " long Kestrel.hotMix(long[], int) [java]\n"));
	free(out);
	flamegraph_page_free(&p);
	sm_free(sm);
}

static void test_reader_runtimes(void **state)
{
	static const struct {
		const char *runtimes, *kinds, *reason;
	} bad[] = {
		{ "", "[0,48]", "names runtime 1 of 0" },
		{ ",\"runtimes\":[\"java\"]", "[0,80]", "names runtime 2 of 1" },
		{ ",\"runtimes\":[\"java\"]", "[0,32]", "not a runtime's frame" },
		{ ",\"runtimes\":[1]", "[0,48]", "runtimes[0] is not a string" },
		{ ",\"runtimes\":\"java\"", "[0,48]", "at most 7 strings" },
		{ ",\"runtimes\":[\"java\"]", "[0,256]", "from 0 to 255" },
		{ ",\"runtimes\":[\"java\"]", "[0,48]", NULL },
	};
	struct flamegraph_page p;
	struct format_error err;
	char page[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;

		snprintf(page, sizeof(page), "<script type=\"application/json\" id=\"" FLAMEGRAPH_DATA_ID
			 "\">{\"version\":1,\"title\":\"t\",\"subtitle\":\"s\",\"samples\":5%s,"
			 "\"names\":[\"a\",\"b\"],\"kinds\":%s,\"nodes\":[-1,5,1,1,5,1,0,3,0]}"
			 "</script></html>\n", bad[i].runtimes, bad[i].kinds);
		rc = flamegraph_parse(page, strlen(page), &p, &err);
		if (!bad[i].reason) {
			assert_int_equal(rc, 0);
			assert_string_equal(p.runtimes[0], "java");
			flamegraph_page_free(&p);
			continue;
		}
		assert_int_equal(rc, -EINVAL);
		if (!strstr(err.reason, bad[i].reason))
			fail_msg("case %zu: '%s' does not say '%s'", i, err.reason, bad[i].reason);
	}
}

/* A run without samples: a valid file that says so. */
static void test_empty(void **state)
{
	struct stack_model *sm = sm_new();
	struct format_error err;
	struct flamegraph_page out;
	char path[128];

	(void)state;
	sm->m.samples.len = 0;
	assert_int_equal(flamegraph_write(&sm->m, &sm->opts), 0);
	if (flamegraph_read_file(sm_path(sm, "flamegraph.html", path, sizeof(path)), &out, &err))
		fail_msg("%s", err.reason);
	assert_int_equal(out.n_nodes, 1);
	assert_int_equal(out.samples, 0);
	flamegraph_page_free(&out);
	sm_free(sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_page),
		cmocka_unit_test(test_reader_rejects),
		cmocka_unit_test(test_runtimes),
		cmocka_unit_test(test_reader_runtimes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
