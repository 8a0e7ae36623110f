// SPDX-License-Identifier: GPL-2.0
/*
 * speedscope: the writer on the hand-built model (stack_model.h), its JSON
 * compared with what speedscope's file format says the model must give
 * (derived by hand: frames in the order stacks first use them, samples in
 * time order with runs of one stack merged, times from the run's start, a
 * traced thread's calls as properly nested open/close events), and the
 * reader's checks beyond the schema.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <json-c/json.h>

#include "formats/speedscope/speedscope.h"
#include "formats/speedscope/speedscope_reader.h"
#include "stack_model.h"

#define P SM_PERIOD

static json_object *write_and_parse(struct stack_model *sm)
{
	struct speedscope_file s;
	struct format_error err;
	json_object *root;
	char path[128];

	assert_int_equal(speedscope_write(&sm->m, &sm->opts), 0);
	sm_path(sm, "speedscope.json", path, sizeof(path));
	if (speedscope_read_file(path, &s, &err))
		fail_msg("%s", err.reason);
	speedscope_file_free(&s);
	root = json_object_from_file(path);
	assert_non_null(root);
	return root;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no '%s'", key);
	return v;
}

/* o (an array or a value) printed compactly, for comparing with text */
static void expect_json(json_object *o, const char *want)
{
	assert_string_equal(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE), want);
}

static void test_sampled(void **state)
{
	struct stack_model *sm = sm_new();
	json_object *root = write_and_parse(sm), *profiles, *p;
	char want[256];

	(void)state;
	expect_json(get(root, "$schema"), "\"" SPEEDSCOPE_SCHEMA "\"");
	expect_json(get(root, "activeProfileIndex"), "0");
	/* frames as stacks first use them: main, work, leaf, inl, [work], [anon:exec], k_irq */
	expect_json(get(root, "shared"),
		    "{\"frames\":[{\"name\":\"main\",\"file\":\"/src/work.c\",\"line\":10},"
		    "{\"name\":\"work\",\"file\":\"/src/work.c\",\"line\":20},"
		    "{\"name\":\"leaf\",\"file\":\"/src/work.c\",\"line\":30},"
		    "{\"name\":\"inl\",\"file\":\"/src/work.c\",\"line\":40},"
		    "{\"name\":\"[work]\",\"file\":\"/usr/bin/work\"},"
		    "{\"name\":\"[anon:exec]\",\"file\":\"[anon:exec]\"},"
		    "{\"name\":\"k_irq\",\"file\":\"[kernel.kallsyms]\"}]}");
	profiles = get(root, "profiles");
	assert_int_equal(json_object_array_length(profiles), 2);
	p = json_object_array_get_idx(profiles, 0);
	expect_json(get(p, "type"), "\"sampled\"");
	expect_json(get(p, "name"), "\"work 100/100\"");
	expect_json(get(p, "unit"), "\"nanoseconds\"");
	expect_json(get(p, "samples"), "[[0,1,2,3],[0,4],[0,5],[]]");
	snprintf(want, sizeof(want), "[%llu,%llu,%llu,%llu]", 3 * P, P, P, P);
	expect_json(get(p, "weights"), want);
	/* from the start of the first sample's period to the last sample */
	expect_json(get(p, "startValue"), "0");
	snprintf(want, sizeof(want), "%llu", 8 * P);
	expect_json(get(p, "endValue"), want);
	p = json_object_array_get_idx(profiles, 1);
	expect_json(get(p, "name"), "\"worker 100/101\"");
	expect_json(get(p, "samples"), "[[0,1,6],[0,1,2,3]]");
	json_object_put(root);
	sm_free(sm);
}

static void trace_event(struct stack_model *sm, uint32_t func, int kind, uint64_t at)
{
	struct model_trace_event *e = model_add_trace_event(&sm->m, NULL, 0);

	e->time_ns = SM_T0 + at;
	e->process = sm->proc;
	e->thread = sm->t101;
	e->func = func;
	e->kind = (uint8_t)kind;
}

static void test_evented(void **state)
{
	struct stack_model *sm = sm_new();
	json_object *root, *p;
	uint32_t f, g;

	(void)state;
	f = model_add_traced_function(&sm->m, sm->exe, 0x1100, sm->f_work);
	g = model_add_traced_function(&sm->m, sm->exe, 0x1200, sm->f_leaf);
	trace_event(sm, f, MODEL_TRACE_ENTRY, 1000);
	trace_event(sm, g, MODEL_TRACE_ENTRY, 2000);
	trace_event(sm, g, MODEL_TRACE_EXIT, 3000);
	trace_event(sm, g, MODEL_TRACE_ENTRY, 4000);
	trace_event(sm, f, MODEL_TRACE_EXIT, 5000);   /* g's exit was lost */
	trace_event(sm, g, MODEL_TRACE_EXIT, 6000);   /* no entry: left out */
	trace_event(sm, f, MODEL_TRACE_ENTRY, 7000);  /* still open at the end */
	root = write_and_parse(sm);
	assert_int_equal(json_object_array_length(get(root, "profiles")), 3);
	p = json_object_array_get_idx(get(root, "profiles"), 2);
	expect_json(get(p, "type"), "\"evented\"");
	expect_json(get(p, "name"), "\"worker 100/101: traced calls\"");
	expect_json(get(p, "startValue"), "1000");
	expect_json(get(p, "endValue"), "7000");
	/* work is frame 1, leaf frame 2 */
	expect_json(get(p, "events"),
		    "[{\"type\":\"O\",\"frame\":1,\"at\":1000},{\"type\":\"O\",\"frame\":2,\"at\":2000},"
		    "{\"type\":\"C\",\"frame\":2,\"at\":3000},{\"type\":\"O\",\"frame\":2,\"at\":4000},"
		    "{\"type\":\"C\",\"frame\":2,\"at\":5000},{\"type\":\"C\",\"frame\":1,\"at\":5000},"
		    "{\"type\":\"O\",\"frame\":1,\"at\":7000},{\"type\":\"C\",\"frame\":1,\"at\":7000}]");
	json_object_put(root);
	sm_free(sm);
}

static void expect_bad(const char *profile, const char *reason)
{
	char text[1024];
	struct speedscope_file s;
	struct format_error err;

	snprintf(text, sizeof(text), "{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\"shared\":{\"frames\":"
		 "[{\"name\":\"a\"},{\"name\":\"b\"}]},\"profiles\":[%s]}", profile);
	assert_int_equal(speedscope_parse(text, strlen(text), &s, &err), -EINVAL);
	if (!strstr(err.reason, reason))
		fail_msg("'%s' does not say '%s'", err.reason, reason);
}

#define SAMPLED(rest) "{\"type\":\"sampled\",\"name\":\"t\",\"unit\":\"nanoseconds\"," \
		      "\"startValue\":0,\"endValue\":10," rest "}"
#define EVENTED(events) "{\"type\":\"evented\",\"name\":\"t\",\"unit\":\"nanoseconds\"," \
			"\"startValue\":0,\"endValue\":10,\"events\":[" events "]}"
#define O(f, t) "{\"type\":\"O\",\"frame\":" #f ",\"at\":" #t "}"
#define C(f, t) "{\"type\":\"C\",\"frame\":" #f ",\"at\":" #t "}"

static void test_reader_rejects(void **state)
{
	static const char ok[] = "{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\"shared\":{\"frames\":"
				 "[{\"name\":\"a\"}]},\"profiles\":[" EVENTED(O(0, 1) "," C(0, 2)) "]}";
	struct speedscope_file s;
	struct format_error err;

	(void)state;
	assert_int_equal(speedscope_parse(ok, strlen(ok), &s, &err), 0);
	assert_int_equal(s.profiles[0].n, 2);
	speedscope_file_free(&s);
	expect_bad(SAMPLED("\"samples\":[[0],[1]],\"weights\":[1]"), "2 samples but 1 weights");
	expect_bad(SAMPLED("\"samples\":[[0,2]],\"weights\":[1]"), "not an index of shared.frames");
	expect_bad(SAMPLED("\"samples\":[[0.5]],\"weights\":[1]"), "not an index");
	expect_bad(SAMPLED("\"samples\":[[0]],\"weights\":[-1]"), ">= 0");
	expect_bad(SAMPLED("\"samples\":[[0]]"), "'weights' is missing");
	expect_bad(EVENTED(O(0, 1) "," O(1, 2) "," C(0, 3)), "not the innermost");
	expect_bad(EVENTED(O(0, 1)), "still open");
	expect_bad(EVENTED(O(0, 5) "," C(0, 4)), "comes before");
	expect_bad(EVENTED(O(0, 5) "," C(0, 11)), "outside [startValue, endValue]");
	expect_bad(EVENTED(O(2, 5) "," C(2, 6)), "not an index");
	expect_bad("{\"type\":\"sampled\",\"name\":\"t\",\"unit\":\"hours\",\"startValue\":0,"
		   "\"endValue\":1,\"samples\":[],\"weights\":[]}", "not one of speedscope's");
	expect_bad("{\"type\":\"other\",\"name\":\"t\",\"unit\":\"none\",\"startValue\":0,"
		   "\"endValue\":1}", "not sampled or evented");
	assert_int_equal(speedscope_parse("{\"$schema\":\"x\"}", 15, &s, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "'$schema' is not"));
	assert_int_equal(speedscope_parse("{\"a\":1,}", 8, &s, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "not valid JSON"));
	assert_int_equal(speedscope_parse("{} x", 4, &s, &err), -EINVAL);
}

/* A run without samples: a valid file that says so. */
static void test_empty(void **state)
{
	struct stack_model *sm = sm_new();
	struct format_error err;
	struct speedscope_file out;
	char path[128];

	(void)state;
	sm->m.samples.len = 0;
	assert_int_equal(speedscope_write(&sm->m, &sm->opts), 0);
	if (speedscope_read_file(sm_path(sm, "speedscope.json", path, sizeof(path)), &out, &err))
		fail_msg("%s", err.reason);
	assert_int_equal(out.n_profiles, 0);
	speedscope_file_free(&out);
	sm_free(sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_sampled),
		cmocka_unit_test(test_evented),
		cmocka_unit_test(test_reader_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
