// SPDX-License-Identifier: GPL-2.0
/*
 * A run of three events (cpu-clock, page-faults/1, off-cpu) in every format
 * that carries events side by side (Callgrind columns, pprof sample types,
 * OTLP profiles,
 * DCPI profiles per event, HPCToolkit metrics in one database), in the
 * one-event formats (a file per event),
 * in the model's view of one event and in the summary.
 *
 * The stack model's eight samples (stack_model.h): t5 and t6 become
 * page faults (weight 1), the others stay cpu-clock (1 ms each; t7 gets
 * S_JIT, where it had no stack), and one
 * off-cpu sum of 5 ms is added on S_INLINE.  So: cpu-clock 6 samples,
 * 6 ms; page-faults 2; off-cpu 5 ms; wall 11 ms; 9 samples in all.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/summary.h"
#include "formats/hpctoolkit/hpctoolkit_reader.h"
#include "formats/otlp/otlp.h"
#include "formats/otlp/otlp_reader.h"
#include "formats/registry.h"
#include "stack_model.h"
#include "unit_files.h"

#define OFF_NS 5000000ULL

static struct stack_model *three_events(void)
{
	struct stack_model *sm = sm_new();
	struct model_event clock = { .name = "cpu-clock", .unit = "ns", .clock = true,
				     .freq_hz = 1000 };
	struct model_event faults = { .name = "page-faults", .unit = "faults", .period = 1,
				      .description = "page faults" };
	struct model_event off = { .name = "off-cpu", .unit = "ns", .clock = true,
				   .aggregated = true };
	struct model_sample *s;

	assert_int_equal(model_add_event(&sm->m, &clock), 0);
	assert_int_equal(model_add_event(&sm->m, &faults), 1);
	assert_int_equal(model_add_event(&sm->m, &off), 2);
	for (int i = 5; i <= 6; i++) {
		sm->m.samples.items[i].event = 1;
		sm->m.samples.items[i].weight = 1;
	}
	sm->m.samples.items[7].stack = sm->s_jit; /* the summary wants a stack */
	sm_sample(sm, sm->t100, sm->s_inline, 8);
	s = &sm->m.samples.items[sm->m.samples.len - 1];
	s->event = 2;
	s->weight = OFF_NS;
	sm->m.events.items[2].occurrences = 3;
	model_events_tally(&sm->m);
	return sm;
}

/* Writes the formats named in list. */
static void write_formats(struct stack_model *sm, const char *list)
{
	unsigned int mask;

	assert_int_equal(formats_parse(list, &mask), 0);
	assert_int_equal(formats_write(&sm->m, mask, &sm->opts), 0);
}

static char *read_text(const char *path)
{
	size_t n;

	return (char *)unit_slurp(path, &n);
}

static void test_callgrind_a_column_per_event_and_wall(void **state)
{
	struct stack_model *sm = three_events();
	char path[128], *text;
	unsigned long long samples, ns, faults, off, wall;

	(void)state;
	write_formats(sm, "callgrind");
	text = read_text(sm_path(sm, "callgrind.out.100", path, sizeof(path)));
	assert_non_null(strstr(text, "\nevents: Samples Ns PageFaults OffCpuNs WallNs\n"));
	assert_non_null(strstr(text, "\nevent: PageFaults : page faults (faults, sampled)\n"));
	assert_non_null(strstr(text, "\nevent: WallNs : "));
	assert_int_equal(sscanf(strstr(text, "\ntotals: "), "\ntotals: %llu %llu %llu %llu %llu",
				&samples, &ns, &faults, &off, &wall), 5);
	assert_int_equal(samples, 9);
	assert_int_equal(ns, 6 * SM_PERIOD);
	assert_int_equal(faults, 2);
	assert_int_equal(off, OFF_NS);
	assert_int_equal(wall, ns + off);
	free(text);
	sm_free(sm);
}

static void test_pprof_a_sample_type_per_event(void **state)
{
	struct stack_model *sm = three_events();
	char path[128], *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	(void)state;
	write_formats(sm, "pprof");
	assert_int_equal(formats_by_name("pprof")->dump(sm_path(sm, "profile.pb.gz", path,
								  sizeof(path)), f, false), 0);
	fclose(f);
	assert_non_null(strstr(out, "sample_types samples/count cpu/nanoseconds page-faults/count "
				    "off-cpu/nanoseconds wall/nanoseconds\n"));
	assert_non_null(strstr(out, "default_sample_type cpu\n"));
	free(out);
	sm_free(sm);
}

/* OTLP: a Profile per sample type, pprof's, each its own values. */
static void test_otlp_a_profile_per_event(void **state)
{
	static const char *const types[] = { "samples/count", "cpu/nanoseconds",
					     "page-faults/count", "off-cpu/nanoseconds",
					     "wall/nanoseconds" };
	const int64_t totals[] = { 9, 6 * SM_PERIOD, 2, OFF_NS, 6 * SM_PERIOD + OFF_NS };
	struct stack_model *sm = three_events();
	const otlp_scope_profiles_t *sp;
	struct format_error err;
	struct otlp_request r;
	char path[128], type[64];

	(void)state;
	write_formats(sm, "otlp");
	if (otlp_read_file(sm_path(sm, OTLP_FILE, path, sizeof(path)), &r, &err))
		fail_msg("%s", err.reason);
	assert_int_equal(r.msg->n_resource_profiles, 1);
	sp = r.msg->resource_profiles[0]->scope_profiles[0];
	assert_int_equal(sp->n_profiles, 5);
	for (size_t k = 0; k < 5; k++) {
		const otlp_profile_t *p = sp->profiles[k];
		int64_t total = 0;

		snprintf(type, sizeof(type), "%s/%s", otlp_string(&r, p->sample_type->type_strindex),
			 otlp_string(&r, p->sample_type->unit_strindex));
		assert_string_equal(type, types[k]);
		for (size_t i = 0; i < p->n_samples; i++)
			total += p->samples[i]->values[0];
		assert_int_equal(total, totals[k]);
		/* the first event's period, as pprof's period type */
		assert_string_equal(otlp_string(&r, p->period_type->type_strindex), "cpu");
	}
	otlp_request_free(&r);
	sm_free(sm);
}

static void test_dcpi_a_profile_per_event(void **state)
{
	struct stack_model *sm = three_events();
	char path[128], *text;

	(void)state;
	write_formats(sm, "dcpi");
	text = read_text(sm_path(sm, "dcpi/page-faults/work.prof", path, sizeof(path)));
	assert_non_null(strstr(text, "\nevent page-faults faults\nperiod 1\n"));
	free(text);
	text = read_text(sm_path(sm, "dcpi/cpu-clock/work.prof", path, sizeof(path)));
	assert_non_null(strstr(text, "\nevent cpu-clock ns\nperiod 1000000\n"));
	free(text);
	/* no profile at the top: one per event */
	assert_int_not_equal(access(sm_path(sm, "dcpi/work.prof", path, sizeof(path)), F_OK), 0);
	sm_free(sm);
}

/* The sum over the call contexts of function fn of one profile's value of
 * a metric id. */
static double hk_fn_value(const struct hkr_db *db, size_t prof, const char *fn, uint16_t id)
{
	double sum = 0;

	for (size_t i = 0; i < db->n_contexts; i++) {
		const struct hkr_context *c = &db->contexts[i];

		if (!c->is_entry && c->relation == 1 && c->function != HKR_NONE &&
		    db->functions[c->function].name &&
		    !strcmp(db->functions[c->function].name, fn))
			sum += hkr_profile_value(&db->profiles[prof], c->id, id);
	}
	return sum;
}

static bool near_value(double v, double want)
{
	return v > want - 1e-9 && v < want + 1e-9;
}

/* One database, a metric per event and the wall view's, side by side; the
 * traces follow cpu-clock's samples only. */
static void test_hpctoolkit_a_metric_per_event(void **state)
{
	static const char *const names[] = { "CPUTIME (sec)", "page-faults", "off-cpu (sec)",
					     "wall (sec)" };
	struct stack_model *sm = three_events();
	struct hkr_db db = { 0 };
	char path[128];
	/* execution scope (inclusive) = 3, function (exclusive) = 1; stat ids:
	 * 12 a metric, the sums first */
	const uint16_t incl[] = { 3, 7, 11, 15 }, sum_incl[] = { 3, 15, 27, 39 };
	const double ms = 1e-3;

	(void)state;
	write_formats(sm, "hpctoolkit");
	assert_int_not_equal(access(sm_path(sm, "page-faults", path, sizeof(path)), F_OK), 0);
	assert_int_equal(hkr_read_dir(sm_path(sm, "hpctoolkit", path, sizeof(path)), &db, stderr),
			 0);
	assert_int_equal(db.n_metrics, 4);
	for (int k = 0; k < 4; k++) {
		assert_string_equal(db.metrics[k].name, names[k]);
		assert_int_equal(db.metrics[k].n_insts, 4);
		assert_int_equal(db.metrics[k].insts[3].prop_id, incl[k]);
		assert_int_equal(db.metrics[k].n_summaries, 12);
	}
	/* profiles: summary, thread 100, thread 101 */
	assert_int_equal(db.n_profiles, 3);
	/* work in thread 100: 3 ms on-CPU, no fault, 5 ms off-CPU, 8 ms wall */
	assert_true(near_value(hk_fn_value(&db, 1, "work", incl[0]), 3 * ms));
	assert_true(hk_fn_value(&db, 1, "work", incl[1]) == 0);
	assert_true(near_value(hk_fn_value(&db, 1, "work", incl[2]), 5 * ms));
	assert_true(near_value(hk_fn_value(&db, 1, "work", incl[3]), 8 * ms));
	/* and in thread 101: 2 ms on-CPU, as much wall */
	assert_true(near_value(hk_fn_value(&db, 2, "work", incl[0]), 2 * ms));
	assert_true(hk_fn_value(&db, 2, "work", incl[2]) == 0);
	assert_true(near_value(hk_fn_value(&db, 2, "work", incl[3]), 2 * ms));
	/* main over the threads (the summary's sums): every event's total */
	assert_true(near_value(hk_fn_value(&db, 0, "main", sum_incl[0]), 6 * ms));
	assert_true(near_value(hk_fn_value(&db, 0, "main", sum_incl[1]), 2));
	assert_true(near_value(hk_fn_value(&db, 0, "main", sum_incl[2]), 5 * ms));
	assert_true(near_value(hk_fn_value(&db, 0, "main", sum_incl[3]), 11 * ms));
	/* thread 100's trace: its cpu-clock samples t0-t2 and t7, and the end */
	assert_int_equal(db.n_traces, 2);
	assert_int_equal(db.traces[0].n, 5);
	assert_true(db.traces[0].elems[3].timestamp == SM_T0 + 8 * SM_PERIOD);
	hkr_free(&db);
	sm_free(sm);
}

static void test_one_event_formats_a_file_per_event(void **state)
{
	struct stack_model *sm = three_events();
	char path[128], *text;

	(void)state;
	write_formats(sm, "folded,speedscope");
	/* the first event where it always is: cpu-clock's 6 samples */
	text = read_text(sm_path(sm, "collector.folded", path, sizeof(path)));
	assert_non_null(strstr(text, "main;work;leaf;inl 4\n"));
	free(text);
	text = read_text(sm_path(sm, "page-faults/collector.folded", path, sizeof(path)));
	assert_null(strstr(text, "leaf"));
	free(text);
	/* off-cpu: a sum counts its µs */
	text = read_text(sm_path(sm, "off-cpu/collector.folded", path, sizeof(path)));
	assert_string_equal(text, "work;main;work;leaf;inl 5000\n");
	free(text);
	text = read_text(sm_path(sm, "page-faults/speedscope.json", path, sizeof(path)));
	assert_non_null(strstr(text, "\"unit\":\"none\""));
	free(text);
	sm_free(sm);
}

static void test_event_view_and_summary(void **state)
{
	struct stack_model *sm = three_events();
	struct summary_figures fig = { .duration_s = 0.01, .cpus = 2 };
	struct model view;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(model_event_view(&sm->m, 1, &view), 0);
	assert_int_equal(view.samples.len, 2);
	assert_int_equal(view.samples.items[0].event, 0);
	assert_int_equal(model_event_count(&view), 1);
	assert_string_equal(model_event(&view, 0)->name, "page-faults");
	model_event_view_free(&view);

	f = open_memstream(&out, &len);
	summary_print(f, &sm->m, &fig);
	fclose(f);
	/* cpu-clock's 6 and page-faults' 2: the off-cpu sum is no sample */
	assert_non_null(strstr(out, "  samples         8 of 3 events on 2 CPUs\n"));
	assert_non_null(strstr(out, "page-faults        2 samples (every 1 faults), 2 faults, 0 lost"));
	assert_non_null(strstr(out, "off-cpu            3 intervals"));
	assert_non_null(strstr(out, "on-CPU 0.006 s + off-CPU 0.005 s = 0.011 s"));
	assert_non_null(strstr(out, "Top functions by self samples of page-faults:"));
	assert_non_null(strstr(out, "Top functions by total time of off-cpu:"));
	free(out);
	sm_free(sm);
}

/* Which formats keep the stream: those that write samples in time order. */
static void test_time_ordered_formats(void **state)
{
	unsigned int mask;

	(void)state;
	assert_true(formats_need_time_order(0)); /* every format: sampler among them */
	for (const char *const *n = (const char *const[]){ "sampler", "hpctoolkit", "speedscope",
							   NULL }; *n; n++) {
		assert_int_equal(formats_parse(*n, &mask), 0);
		assert_true(formats_need_time_order(mask));
	}
	assert_int_equal(formats_parse("folded,pprof,callgrind,dcpi,flamegraph,xray", &mask), 0);
	assert_false(formats_need_time_order(mask));
}

/* The images' CRC-32 is read (each file whole) only for DCPI's image line. */
static void test_image_crc_formats(void **state)
{
	unsigned int mask;

	(void)state;
	assert_true(formats_need_image_crc(0)); /* every format: dcpi among them */
	assert_int_equal(formats_parse("pprof,dcpi", &mask), 0);
	assert_true(formats_need_image_crc(mask));
	assert_int_equal(formats_parse("folded,pprof,callgrind,sampler,hpctoolkit,speedscope,"
				       "flamegraph,xray", &mask), 0);
	assert_false(formats_need_image_crc(mask));
}

/* A sampling event summed in the kernel counts the samples its sums hold;
 * off-cpu's sums count none. */
static void test_sample_count(void **state)
{
	struct stack_model *sm = three_events();

	(void)state;
	assert_int_equal(model_sample_count(&sm->m), 8);
	assert_int_equal(model_sum_records(&sm->m), 1);
	sm->m.events.items[1].aggregated = true;
	sm->m.events.items[1].occurrences = 40;
	assert_int_equal(model_sample_count(&sm->m), 6 + 40);
	assert_int_equal(model_sum_records(&sm->m), 1);
	sm_free(sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_callgrind_a_column_per_event_and_wall),
		cmocka_unit_test(test_pprof_a_sample_type_per_event),
		cmocka_unit_test(test_otlp_a_profile_per_event),
		cmocka_unit_test(test_dcpi_a_profile_per_event),
		cmocka_unit_test(test_hpctoolkit_a_metric_per_event),
		cmocka_unit_test(test_one_event_formats_a_file_per_event),
		cmocka_unit_test(test_event_view_and_summary),
		cmocka_unit_test(test_time_ordered_formats),
		cmocka_unit_test(test_image_crc_formats),
		cmocka_unit_test(test_sample_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
