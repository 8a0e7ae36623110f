// SPDX-License-Identifier: GPL-2.0
/* The -e parser: names, periods, frequencies, raw codes and bad input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "lib/perf_events.h"

static int parse(const char *arg, struct perf_event_request *ev, int *n, char *err)
{
	return perf_events_parse(arg, 0, ev, n, PERF_EVENTS_MAX, err, 256);
}

static void test_period_frequency_and_default(void **state)
{
	struct perf_event_request ev[PERF_EVENTS_MAX];
	char err[256];
	int n = 0;

	(void)state;
	assert_int_equal(parse("page-faults/1,cpu-clock@250,context-switches", ev, &n, err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ev[0].name, "page-faults");
	assert_int_equal(ev[0].type, PERF_TYPE_SOFTWARE);
	assert_int_equal(ev[0].config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_false(ev[0].use_freq);
	assert_int_equal(ev[0].period, 1);
	assert_false(ev[0].clock);
	assert_string_equal(ev[0].unit, "faults");
	assert_true(ev[1].use_freq);
	assert_int_equal(ev[1].freq, 250);
	assert_true(ev[1].clock);
	assert_string_equal(ev[1].unit, "ns");
	assert_true(ev[2].use_freq);
	assert_int_equal(ev[2].freq, 0); /* -F's, filled by the caller */
	/* repeatable: a second -e appends */
	assert_int_equal(parse("cycles/100000", ev, &n, err), 0);
	assert_int_equal(n, 4);
	assert_true(ev[3].hardware);
	assert_int_equal(ev[3].type, PERF_TYPE_HARDWARE);
}

static void test_raw_codes(void **state)
{
	struct perf_event_request ev[PERF_EVENTS_MAX];
	char err[256];
	int n = 0;

	(void)state;
	assert_int_equal(parse("r01c2@100", ev, &n, err), 0);
	assert_int_equal(ev[0].type, PERF_TYPE_RAW);
	assert_int_equal(ev[0].config, 0x1c2);
	assert_true(ev[0].hardware);
	assert_int_equal(parse("rzz", ev, &n, err), -EINVAL);
	assert_int_equal(n, 1);
}

static void test_bad_input_says_what_to_do(void **state)
{
	static const char *bad[] = {
		"nosuchevent", "page-faults/0", "page-faults/x", "cpu-clock@", "cpu-clock@-5",
		"", ",", "cpu-clock,cpu-clock", "off-cpu", "page-faults/1,bogus",
	};
	struct perf_event_request ev[PERF_EVENTS_MAX];
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int n = 0;

		err[0] = 0;
		assert_int_equal(parse(bad[i], ev, &n, err), -EINVAL);
		assert_int_equal(n, 0); /* nothing half-added */
		assert_true(strlen(err) > 10);
	}
	{
		int n = 0;

		parse("nosuchevent", ev, &n, err);
		assert_non_null(strstr(err, "-e list"));
	}
}

static void test_at_most_max_events(void **state)
{
	struct perf_event_request ev[PERF_EVENTS_MAX];
	char err[256];
	int n = 0;

	(void)state;
	assert_int_equal(parse("cpu-clock,task-clock,page-faults,minor-faults,major-faults,"
			       "context-switches,cpu-migrations,alignment-faults", ev, &n, err), 0);
	assert_int_equal(n, PERF_EVENTS_MAX);
	assert_int_equal(parse("emulation-faults", ev, &n, err), -EINVAL);
	assert_int_equal(n, PERF_EVENTS_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_period_frequency_and_default),
		cmocka_unit_test(test_raw_codes),
		cmocka_unit_test(test_bad_input_says_what_to_do),
		cmocka_unit_test(test_at_most_max_events),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
