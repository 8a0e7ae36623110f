// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the model: interning, counters, ordering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include "model/model.h"

static void test_intern_dedupes(void **state)
{
	struct model m;
	uint32_t img, f1, f2, file, l1, l2, s1, s2, frames[2];
	struct model_image tmpl = { .path = "/bin/x" };

	(void)state;
	model_init(&m);
	img = model_add_image(&m, &tmpl);
	file = model_intern_file(&m, "x.c");
	assert_int_equal(model_intern_file(&m, "x.c"), file);
	assert_int_not_equal(model_intern_file(&m, "y.c"), file);
	f1 = model_intern_function(&m, img, "main", 0x1000, 16, file, 3);
	f2 = model_intern_function(&m, img, "main", 0x1000, 16, file, 3);
	assert_int_equal(f1, f2);
	assert_int_not_equal(model_intern_function(&m, img, "main", 0x2000, 0, MODEL_NONE, 0), f1);
	l1 = model_intern_location(&m, img, 0x1004, f1, file, 4, NULL, 0);
	l2 = model_intern_location(&m, img, 0x1008, f1, file, 5, NULL, 0);
	assert_int_not_equal(l1, l2);
	assert_int_equal(model_find_location(&m, img, 0x1004), l1);
	assert_int_equal(model_find_location(&m, img, 0x1005), MODEL_NONE);
	assert_string_equal(model_location_name(&m, l2), "main");
	frames[0] = l1;
	frames[1] = l2;
	s1 = model_intern_stack(&m, frames, 2, 0, false);
	s2 = model_intern_stack(&m, frames, 2, 0, false);
	assert_int_equal(s1, s2);
	assert_int_not_equal(model_intern_stack(&m, frames, 2, 0, true), s1);
	assert_int_not_equal(model_intern_stack(&m, frames, 1, 0, false), s1);
	assert_int_equal(model_stack_frames(&m, &m.stacks.items[s1])[1], l2);
	model_free(&m);
}

static void test_many_locations(void **state)
{
	struct model m;
	struct model_image tmpl = { .path = "/bin/x" };
	uint32_t img;

	(void)state;
	model_init(&m);
	img = model_add_image(&m, &tmpl);
	for (uint64_t a = 0; a < 100000; a++)
		assert_int_equal(model_intern_location(&m, img, a * 3, MODEL_NONE, MODEL_NONE, 0,
						       NULL, 0), a);
	for (uint64_t a = 0; a < 100000; a++)
		assert_int_equal(model_find_location(&m, img, a * 3), a);
	model_free(&m);
}

/* Files, functions and stacks past many growths of their indexes: every
 * one found again, none taken for another. */
static void test_many_interned(void **state)
{
	struct model m;
	struct model_image tmpl = { .path = "/bin/x" };
	uint32_t img, frames[3];
	char name[32];

	(void)state;
	model_init(&m);
	img = model_add_image(&m, &tmpl);
	/* the first pass makes them, the second finds them again */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < 20000; i++) {
			snprintf(name, sizeof(name), "f%u", i);
			assert_int_equal(model_intern_file(&m, name), i);
			assert_int_equal(model_intern_function(&m, img, name, i, 0, MODEL_NONE, 0), i);
			frames[0] = i;
			frames[1] = i / 7;
			frames[2] = 0;
			assert_int_equal(model_intern_stack(&m, frames, 1 + i % 3, i % 2, false), i);
		}
	}
	assert_int_equal(m.files.len, 20000);
	assert_int_equal(m.functions.len, 20000);
	assert_int_equal(m.stacks.len, 20000);
	/* the same name at another entry is another function */
	assert_int_equal(model_intern_function(&m, img, "f1", 2, 0, MODEL_NONE, 0), 20000);
	model_free(&m);
}

static void test_counters(void **state)
{
	struct model m;

	(void)state;
	model_init(&m);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_TRUNCATED_STACKS), 0);
	model_lost_add(&m, MODEL_LOST_RB_FULL_SWITCHES, 0);
	model_lost_add(&m, MODEL_LOST_RB_FULL_SAMPLES, 3);
	model_lost_add(&m, MODEL_LOST_RB_FULL_SAMPLES, 4);
	model_stat_add(&m, MODEL_STAT_TRUNCATED_STACKS, 9);
	model_stat_add(&m, MODEL_STAT_MALFORMED_RECORDS, 1);
	model_stat_add(&m, MODEL_STAT_TRUNCATED_STACKS, 1);
	assert_int_equal(model_lost_value(&m, MODEL_LOST_RB_FULL_SAMPLES), 7);
	assert_int_equal(model_lost_value(&m, MODEL_LOST_RB_FULL_SWITCHES), 0);
	assert_int_equal(model_lost_value(&m, MODEL_LOST_TRACE_TOO_DEEP), 0);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_TRUNCATED_STACKS), 10);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_UNWOUND_SAMPLES), 0);
	assert_int_equal(model_total_lost(&m), 7);
	/* what the formats read: names in the order first counted, a counter
	 * counted 0 included, one never counted absent */
	assert_int_equal(m.lost.len, 2);
	assert_string_equal(m.lost.items[0].name, "ring buffer full (switches)");
	assert_int_equal(m.lost.items[0].value, 0);
	assert_string_equal(m.lost.items[1].name, "ring buffer full (samples)");
	assert_int_equal(m.lost.items[1].value, 7);
	assert_int_equal(m.stats.len, 2);
	assert_string_equal(m.stats.items[0].name, "truncated_stacks");
	assert_int_equal(m.stats.items[0].value, 10);
	assert_string_equal(m.stats.items[1].name, "malformed_records");
	/* a cause counted by name (a model built by hand) is the same counter */
	model_count_lost(&m, "per-function map full", 2);
	model_count_lost(&m, "cause of a test", 5);
	model_lost_add(&m, MODEL_LOST_TRACE_STATS_FULL, 1);
	assert_int_equal(model_lost_value(&m, MODEL_LOST_TRACE_STATS_FULL), 3);
	assert_int_equal(m.lost.len, 4);
	assert_int_equal(model_total_lost(&m), 15);
	model_free(&m);
}

/* Every counter has a name of its own. */
static void test_counter_names(void **state)
{
	(void)state;
	for (int i = 0; i < MODEL_LOST_COUNT; i++) {
		assert_true(model_lost_name(i)[0] != '\0');
		for (int j = 0; j < i; j++)
			assert_string_not_equal(model_lost_name(i), model_lost_name(j));
	}
	for (int i = 0; i < MODEL_STAT_COUNT; i++) {
		assert_true(model_stat_name(i)[0] != '\0');
		for (int j = 0; j < i; j++)
			assert_string_not_equal(model_stat_name(i), model_stat_name(j));
	}
	assert_string_equal(model_stat_name(MODEL_STAT_UNWOUND_SAMPLES), "unwound_samples");
	assert_string_equal(model_lost_name(MODEL_LOST_SPILL_UNREAD),
			    "events not read back from the spill file");
}

static void test_sort_is_stable(void **state)
{
	struct model m;
	uint64_t times[] = { 5, 3, 5, 1, 3 };

	(void)state;
	model_init(&m);
	for (size_t i = 0; i < 5; i++) {
		struct model_sample *s = model_add_sample(&m);

		s->time_ns = times[i];
		s->cpu = i;
	}
	model_sort_by_time(&m);
	assert_int_equal(m.samples.items[0].time_ns, 1);
	assert_int_equal(m.samples.items[1].cpu, 1); /* first 3 */
	assert_int_equal(m.samples.items[2].cpu, 4); /* second 3 */
	assert_int_equal(m.samples.items[3].cpu, 0); /* first 5 */
	assert_int_equal(m.samples.items[4].cpu, 2);
	model_free(&m);
}

/* Two orders, each checked against the order it must give: interleaved
 * streams a few places out of order (the insertion sort), and a reversed
 * run longer than it shifts an element (it gives up: the merge sort);
 * equal times keep their arrival order. */
static void check_sorted_stable(const struct model *m)
{
	for (size_t i = 1; i < m->samples.len; i++) {
		const struct model_sample *a = &m->samples.items[i - 1], *b = &m->samples.items[i];

		assert_true(a->time_ns < b->time_ns ||
			    (a->time_ns == b->time_ns && a->user_pc < b->user_pc));
	}
}

static void test_sort_large(void **state)
{
	struct model m;
	size_t n = 20000;

	(void)state;
	model_init(&m);
	for (size_t i = 0; i < n; i++) {
		struct model_sample *s = model_add_sample(&m);

		/* two CPUs' streams, one lagging by up to 7 places; times repeat */
		s->time_ns = (i / 2) + (i % 2 ? (i % 7) : 0);
		s->user_pc = i; /* arrival order */
	}
	model_sort_by_time(&m);
	assert_int_equal(m.samples.len, n);
	check_sorted_stable(&m);
	model_free(&m);

	model_init(&m);
	for (size_t i = 0; i < n; i++) {
		struct model_sample *s = model_add_sample(&m);

		s->time_ns = (n - i) / 3; /* reversed: each element 3 of a kind */
		s->user_pc = i;
	}
	model_sort_by_time(&m);
	check_sorted_stable(&m);
	assert_true(m.samples.items[0].time_ns == 0);
	model_free(&m);
}

static void test_trace_args(void **state)
{
	struct model m;
	uint64_t args[3] = { 7, 8, 9 };
	struct model_trace_event *e;

	(void)state;
	model_init(&m);
	model_add_trace_event(&m, NULL, 0);
	e = model_add_trace_event(&m, args, 3);
	assert_int_equal(e->n_args, 3);
	assert_int_equal(model_trace_event_args(&m, e)[2], 9);
	model_free(&m);
}

/* Events pushed while spilling come back whole and in order, the trace
 * arguments' indexes still right across chunks. */
static void spill_round_trip(bool spill)
{
	char dir[] = "/tmp/collector-spill-XXXXXX";
	const size_t n = 300000; /* several chunks of each vector */
	struct model m;

	assert_non_null(mkdtemp(dir));
	model_init(&m);
	if (spill)
		assert_int_equal(model_spill_events(&m, dir), 0);
	for (size_t i = 0; i < n; i++) {
		uint64_t args[2] = { i, ~i };
		struct model_trace_event *e;

		model_add_sample(&m)->time_ns = i;
		model_add_switch(&m)->cputime_ns = 2 * i;
		e = model_add_trace_event(&m, args, i % 3);
		e->time_ns = 3 * i;
	}
	assert_int_equal(model_trace_event_count(&m), n);
	if (spill) /* the events are not all in memory */
		assert_true(m.samples.len < n);
	assert_int_equal(model_seal_events(&m), 0);
	assert_int_equal(m.samples.len, n);
	assert_int_equal(m.switches.len, n);
	assert_int_equal(m.trace.len, n);
	for (size_t i = 0; i < n; i++) {
		const struct model_trace_event *e = &m.trace.items[i];

		assert_int_equal(m.samples.items[i].time_ns, i);
		assert_int_equal(m.switches.items[i].cputime_ns, 2 * i);
		assert_int_equal(e->time_ns, 3 * i);
		assert_int_equal(e->n_args, i % 3);
		if (e->n_args)
			assert_int_equal(m.trace_args.items[e->args], i);
		if (e->n_args > 1)
			assert_int_equal(m.trace_args.items[e->args + 1], ~i);
	}
	/* sealed vectors can still be sorted and grow */
	model_sort_by_time(&m);
	model_add_sample(&m)->time_ns = n;
	assert_int_equal(m.samples.len, n + 1);
	assert_int_equal(m.samples.items[n - 1].time_ns, n - 1);
	model_free(&m);
	assert_int_equal(rmdir(dir), 0); /* the spill files had no names */
}

static void test_spill_round_trip(void **state)
{
	(void)state;
	spill_round_trip(true);
	spill_round_trip(false);
}

/* A spill file that stops taking writes (a full disk, here a file size
 * limit past the first chunk): the events stay in memory, none lost. */
static void test_spill_write_fails(void **state)
{
	char dir[] = "/tmp/collector-spill-XXXXXX";
	struct rlimit old, lim;
	struct model m;

	(void)state;
	assert_non_null(mkdtemp(dir));
	model_init(&m);
	assert_int_equal(model_spill_events(&m, dir), 0);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 300 * 1024;
	signal(SIGXFSZ, SIG_IGN); /* EFBIG instead of the signal */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	for (size_t i = 0; i < 100000; i++)
		model_add_sample(&m)->time_ns = i;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_true(m.samples_spill.failed);
	assert_true(m.samples_spill.spilled > 0);
	assert_int_equal(model_seal_events(&m), 0);
	assert_int_equal(m.samples.len, 100000);
	for (size_t i = 0; i < 100000; i++)
		assert_int_equal(m.samples.items[i].time_ns, i);
	assert_int_equal(model_total_lost(&m), 0);
	model_free(&m);
	rmdir(dir);
}

/* Continuous runs: three intervals of samples, each sealed, read and
 * dropped; every interval sees exactly its own samples (spilled or not),
 * what was interned stays, and the last energy reading is kept. */
static void test_drop_events(void **state)
{
	char dir[] = "/tmp/collector-spill-XXXXXX";
	const size_t per = 70000; /* more than a chunk: some go to the file */
	struct model m;
	uint32_t fn;

	(void)state;
	assert_non_null(mkdtemp(dir));
	model_init(&m);
	fn = model_intern_function(&m, 0, "kept", 0, 0, 0, 0);
	assert_int_equal(model_spill_events(&m, dir), 0);
	for (size_t k = 0; k < 3; k++) {
		for (size_t i = 0; i < per; i++)
			model_add_sample(&m)->time_ns = k * per + i;
		MODEL_VEC_PUSH(m.energy)->energy_uj = k;
		MODEL_VEC_PUSH(m.energy)->energy_uj = k + 10;
		assert_true(m.samples.len < per); /* the rest is in the file */
		assert_int_equal(model_seal_events(&m), 0);
		assert_int_equal(m.samples.len, per);
		for (size_t i = 0; i < per; i++)
			assert_int_equal(m.samples.items[i].time_ns, k * per + i);
		assert_int_equal(model_drop_events(&m, dir), 0);
		assert_int_equal(m.samples.len, 0);
		assert_int_equal(m.energy.len, 1);
		assert_int_equal(m.energy.items[0].energy_uj, k + 10);
		assert_int_equal(model_intern_function(&m, 0, "kept", 0, 0, 0, 0), fn);
	}
	/* without a directory the events stay in memory */
	assert_int_equal(model_drop_events(&m, NULL), 0);
	model_add_sample(&m)->time_ns = 1;
	assert_int_equal(model_seal_events(&m), 0);
	assert_int_equal(m.samples.len, 1);
	model_free(&m);
	assert_int_equal(rmdir(dir), 0);
}

/* Continuous runs: ended processes and threads leave the model, the
 * others keep their order and fields under their new ids. */
static void test_forget_ended_tasks(void **state)
{
	uint32_t pmap[3], tmap[4];
	struct model m;

	(void)state;
	model_init(&m);
	for (int i = 0; i < 3; i++)
		model_add_process(&m, 100 + i, 1, 0, "p", "cmd", "/bin/p");
	m.processes.items[1].end_ns = 5; /* ended: goes with its thread */
	for (int i = 0; i < 4; i++) {
		struct model_thread *th = MODEL_VEC_PUSH(m.threads);

		th->tid = 1000 + i;
		th->process = i < 3 ? i : 2;
	}
	m.threads.items[3].end_ns = 7; /* a thread that ended in process 2 */
	model_forget_ended_tasks(&m, pmap, tmap);
	assert_int_equal(m.processes.len, 2);
	assert_int_equal(pmap[0], 0);
	assert_int_equal(pmap[1], MODEL_NONE);
	assert_int_equal(pmap[2], 1);
	assert_int_equal(m.processes.items[1].pid, 102);
	assert_string_equal(m.processes.items[1].cmdline, "cmd");
	assert_int_equal(m.threads.len, 2);
	assert_int_equal(tmap[0], 0);
	assert_int_equal(tmap[1], MODEL_NONE);
	assert_int_equal(tmap[2], 1);
	assert_int_equal(tmap[3], MODEL_NONE);
	assert_int_equal(m.threads.items[1].tid, 1002);
	assert_int_equal(m.threads.items[1].process, 1);
	model_free(&m);
}

/* The code tables start over: nothing found, ids from 0 again, images and
 * processes kept. */
static void test_forget_code(void **state)
{
	uint32_t img, f, g, loc, frames[2], st;
	struct model m;

	(void)state;
	model_init(&m);
	img = model_add_image(&m, &(struct model_image){ .path = "/lib/x.so" });
	model_add_process(&m, 100, 1, 0, "p", "cmd", "/bin/p");
	f = model_intern_function(&m, img, "f", 0x10, 4, model_intern_file(&m, "x.c"), 3);
	g = model_intern_function(&m, img, "g", 0x20, 4, MODEL_NONE, 0);
	frames[0] = model_intern_location(&m, img, 0x11, f, MODEL_NONE, 0, NULL, 0);
	frames[1] = model_intern_location(&m, img, 0x21, g, MODEL_NONE, 0,
					  &(struct model_inline){ f, MODEL_NONE, 0 }, 1);
	st = model_intern_stack(&m, frames, 2, 0, false);
	assert_int_equal(st, 0);
	model_forget_code(&m);
	assert_int_equal(m.functions.len + m.files.len + m.locations.len + m.inlines.len +
			 m.stacks.len + m.frames.len, 0);
	assert_int_equal(model_find_location(&m, img, 0x11), MODEL_NONE);
	assert_int_equal(m.images.len, 1);
	assert_int_equal(m.processes.len, 1);
	/* interned again from nothing: g first this time */
	assert_int_equal(model_intern_function(&m, img, "g", 0x20, 4, MODEL_NONE, 0), 0);
	assert_int_equal(model_intern_function(&m, img, "f", 0x10, 4, MODEL_NONE, 0), 1);
	loc = model_intern_location(&m, img, 0x21, 0, MODEL_NONE, 0, NULL, 0);
	assert_int_equal(loc, 0);
	assert_int_equal(model_find_location(&m, img, 0x21), 0);
	assert_int_equal(model_intern_stack(&m, &loc, 1, 0, false), 0);
	assert_int_equal(m.frames.len, 1);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern_dedupes),
		cmocka_unit_test(test_many_locations),
		cmocka_unit_test(test_many_interned),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_counter_names),
		cmocka_unit_test(test_sort_is_stable),
		cmocka_unit_test(test_sort_large),
		cmocka_unit_test(test_trace_args),
		cmocka_unit_test(test_spill_round_trip),
		cmocka_unit_test(test_spill_write_fails),
		cmocka_unit_test(test_drop_events),
		cmocka_unit_test(test_forget_ended_tasks),
		cmocka_unit_test(test_forget_code),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
