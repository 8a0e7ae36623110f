// SPDX-License-Identifier: GPL-2.0
/* perf map files: "START SIZE NAME" lines, the last written entry wins
 * where code was replaced, malformed lines skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "symbols/perfmap.h"

static void parse(struct perfmap *pm, const char *text)
{
	assert_int_equal(perfmap_parse(pm, strdup(text), strlen(text)), 0);
}

static const char *name_at(const struct perfmap *pm, uint64_t addr)
{
	const struct perfmap_entry *e = perfmap_lookup(pm, addr);

	return e ? e->name : "(none)";
}

static void test_lines(void **state)
{
	struct perfmap pm;

	(void)state;
	parse(&pm, "7f0000001000 40 JS:*hotLoop /tmp/hot.js:1:17\n"
		   "0x7f0000002000 0x10 LazyCompile:~main file.js:3\r\n"
		   "not a line\n"
		   "7f0000003000 0 zero-sized\n"
		   "7f0000004000 20\n"
		   "7f0000000100 8 first");
	assert_int_equal(pm.n, 3);
	assert_string_equal(name_at(&pm, 0x7f0000001000), "JS:*hotLoop /tmp/hot.js:1:17");
	assert_string_equal(name_at(&pm, 0x7f000000103f), "JS:*hotLoop /tmp/hot.js:1:17");
	assert_string_equal(name_at(&pm, 0x7f0000001040), "(none)");
	assert_string_equal(name_at(&pm, 0x7f0000002008), "LazyCompile:~main file.js:3");
	assert_string_equal(name_at(&pm, 0x7f0000000104), "first");
	assert_string_equal(name_at(&pm, 0x7f00000000ff), "(none)");
	assert_string_equal(name_at(&pm, 0x7f0000003000), "(none)");
	perfmap_free(&pm);
}

static void test_replaced_code(void **state)
{
	struct perfmap pm;

	(void)state;
	/* a long old entry, then new code inside it, then the old range
	 * reused from its start */
	parse(&pm, "1000 100 old\n"
		   "1040 10 inner\n"
		   "1000 20 newer\n");
	assert_string_equal(name_at(&pm, 0x1044), "inner");
	assert_string_equal(name_at(&pm, 0x1004), "newer");
	assert_string_equal(name_at(&pm, 0x1080), "old");
	perfmap_free(&pm);
	parse(&pm, "");
	assert_int_equal(pm.n, 0);
	assert_null(perfmap_lookup(&pm, 0x1000));
	perfmap_free(&pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_replaced_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
