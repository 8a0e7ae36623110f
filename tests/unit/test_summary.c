// SPDX-License-Identifier: GPL-2.0
/* The summary says plainly when the achieved rate is far below the
 * requested one, and not otherwise; its Python table counts as self the
 * innermost Python frame, whatever native code runs under it; an
 * interpreter of a version without layouts is named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/summary.h"
#include "model/model.h"
#include "runtimes/python/python_report.h"

/* The summary of `samples` samples over 1 CPU-second of the targets at
 * freq_hz, into buf. */
static void summary_of(unsigned int samples, uint32_t freq_hz, char *buf, size_t size)
{
	struct summary_figures fig = { .duration_s = 1, .target_cpu_ns = 1000000000ULL, .cpus = 2 };
	struct model_image tmpl = { .path = "/bin/x" };
	struct model m;
	uint32_t img, fn, loc, stack;
	FILE *f = fmemopen(buf, size, "w");

	assert_non_null(f);
	model_init(&m);
	m.run.freq_hz = freq_hz;
	img = model_add_image(&m, &tmpl);
	fn = model_intern_function(&m, img, "work", 0x1000, 16, MODEL_NONE, 0);
	loc = model_intern_location(&m, img, 0x1004, fn, MODEL_NONE, 0, NULL, 0);
	stack = model_intern_stack(&m, &loc, 1, 0, false);
	for (unsigned int i = 0; i < samples; i++)
		model_add_sample(&m)->stack = stack;
	summary_print(f, &m, &fig);
	fclose(f);
	model_free(&m);
}

static void test_rate_warning(void **state)
{
	char buf[8192];

	(void)state;
	summary_of(300, 1000, buf, sizeof(buf));
	assert_non_null(strstr(buf, "the achieved rate is 30% of the requested 1000 Hz"));
	summary_of(900, 1000, buf, sizeof(buf));
	assert_null(strstr(buf, "the achieved rate"));
	assert_non_null(strstr(buf, "work"));
}

/* Stacks innermost first: leaf <- caller <- main (3 samples), native
 * helper <- leaf <- caller (1), native only (1). */
static void test_python_table(void **state)
{
	struct summary_figures fig = { .duration_s = 1, .cpus = 1 };
	struct model_image native = { .path = "/usr/bin/python3.11" };
	struct model_image py = { .path = "[python]", .kind = MODEL_IMAGE_RUNTIME };
	uint32_t ni, pi, file, f_leaf, f_caller, f_main, f_helper, l[4], st[3];
	struct model m;
	char buf[8192];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	(void)state;
	assert_non_null(f);
	model_init(&m);
	m.run.freq_hz = 999;
	ni = model_add_image(&m, &native);
	pi = model_add_image(&m, &py);
	file = model_intern_file(&m, "/srv/a.py");
	f_leaf = model_intern_function(&m, pi, "Kestrel.leaf", 0, 0, file, 3);
	f_caller = model_intern_function(&m, pi, "caller", 0, 0, file, 10);
	f_main = model_intern_function(&m, ni, "main", 0x1000, 16, MODEL_NONE, 0);
	f_helper = model_intern_function(&m, ni, "PyObject_Free", 0x2000, 16, MODEL_NONE, 0);
	l[0] = model_intern_location(&m, pi, (uint64_t)f_leaf << 32 | 4, f_leaf, file, 4, NULL, 0);
	l[1] = model_intern_location(&m, pi, (uint64_t)f_caller << 32 | 11, f_caller, file, 11,
				     NULL, 0);
	l[2] = model_intern_location(&m, ni, 0x1004, f_main, MODEL_NONE, 0, NULL, 0);
	l[3] = model_intern_location(&m, ni, 0x2004, f_helper, MODEL_NONE, 0, NULL, 0);
	st[0] = model_intern_stack(&m, (uint32_t[]){ l[0], l[1], l[2] }, 3, 0, false);
	st[1] = model_intern_stack(&m, (uint32_t[]){ l[3], l[0], l[1], l[2] }, 4, 0, false);
	st[2] = model_intern_stack(&m, (uint32_t[]){ l[3], l[2] }, 2, 0, false);
	for (int i = 0; i < 5; i++)
		model_add_sample(&m)->stack = st[i < 3 ? 0 : i - 2];
	model_named_stat_add(&m, PYTHON_STAT_INTERPRETERS, 1);
	model_named_stat_add(&m, PYTHON_STAT_WALKS, 5);
	model_named_stat_add(&m, PYTHON_STAT_UNSUPPORTED, 1);
	model_named_stat_add(&m, PYTHON_STAT_UNSUPPORTED_VERSION, 0x030c04f0);
	summary_print(f, &m, &fig);
	fclose(f);
	model_free(&m);
	assert_non_null(strstr(buf, "4 of 5 samples (80.0%) with Python frames"));
	assert_non_null(strstr(buf, "the last CPython 3.12.4: their frames stay native"));
	/* said once, with the walks, not again with the tables */
	assert_null(strstr(strstr(buf, "the last CPython 3.12.4") + 1, "the last CPython 3.12.4"));
	assert_non_null(strstr(buf, "Top Python functions"));
	/* self 4 (80%), total 80%; caller: self 0, total 80% */
	assert_non_null(strstr(buf, "   80.0%          4   80.0%  Kestrel.leaf"));
	assert_non_null(strstr(buf, "/srv/a.py:3"));
	assert_non_null(strstr(buf, "    0.0%          0   80.0%  caller"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_warning),
		cmocka_unit_test(test_python_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
