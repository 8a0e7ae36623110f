// SPDX-License-Identifier: GPL-2.0
/* --trace py: the USDT note of python:function__entry found in an ELF file
 * (a hand-written note, tests/symtest/usdt_note.c, kept as a fuzz seed),
 * not in one without it; a spec without a function glob refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtimes/python/python_trace.h"

static bool probes_in(const char *path)
{
	struct elf_file f;
	bool found;

	assert_int_equal(elf_file_open(&f, path), 0);
	found = trace_python_elf_has_probes(&f);
	elf_file_close(&f);
	return found;
}

static void test_note(void **state)
{
	(void)state;
	assert_true(probes_in("tests/fuzz/corpus/elf/usdt-note"));
	assert_false(probes_in("tests/fuzz/corpus/elf/inline"));
}

static void test_bad_specs(void **state)
{
	static char *const cmd[] = { "/bin/true", NULL };
	struct trace_python py;

	(void)state;
	memset(&py, 0, sizeof(py));
	assert_int_equal(trace_python_resolve("", NULL, 0, cmd, &py), -EINVAL);
	assert_int_equal(trace_python_resolve("file.py:", NULL, 0, cmd, &py), -EINVAL);
	assert_int_equal(trace_python_resolve(":work", NULL, 0, cmd, &py), -EINVAL);
	/* /bin/true is no Python interpreter with probes */
	assert_int_equal(trace_python_resolve("work*", NULL, 0, cmd, &py), -ENOTSUP);
	assert_false(py.on);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_note),
		cmocka_unit_test(test_bad_specs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
