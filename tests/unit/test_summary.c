// SPDX-License-Identifier: GPL-2.0
/* The summary says plainly when the achieved rate is far below the
 * requested one, and not otherwise. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_warning),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
