// SPDX-License-Identifier: GPL-2.0
/*
 * OTLP profiles: the encoder on the hand-built model (stack_model.h), read
 * back by the reader (protobuf-c); every expected value comes from the
 * model by hand and from profiles.proto's rules: one resource per process
 * with its attributes, one profile per sample type, one sample per (stack,
 * thread) with its thread's attributes, stacks leaf first through the
 * dictionary, inlined lines innermost first, frame types, mappings with
 * build-id and file offset, only what is used in the dictionary; the
 * file format's write and recognize; and the reader's rejections.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>

#include "formats/otlp/otlp.h"
#include "formats/otlp/otlp_reader.h"
#include "stack_model.h"

static void encode_and_read(struct stack_model *sm, struct otlp_request *r)
{
	struct format_error err;
	uint8_t *buf;
	size_t len;

	assert_int_equal(otlp_encode(&sm->m, &buf, &len), 0);
	if (otlp_parse(buf, len, r, &err))
		fail_msg("%s", err.reason);
	assert_false(r->compressed);
	assert_int_equal(r->packed_size, len);
	free(buf);
}

static const otlp_dictionary_t *dict(const struct otlp_request *r)
{
	assert_non_null(r->msg->dictionary);
	return r->msg->dictionary;
}

/* The resource attribute key's value, as a string or a number. */
static const otlp_any_value_t *resource_attr(const otlp_resource_profiles_t *rp, const char *key)
{
	for (size_t k = 0; k < rp->resource->n_attributes; k++)
		if (!strcmp(rp->resource->attributes[k]->key, key))
			return rp->resource->attributes[k]->value;
	return NULL;
}

/* The dictionary attribute at index i, as "key=value". */
static void attr_text(const struct otlp_request *r, int32_t i, char *buf, size_t size)
{
	const otlp_attribute_t *a = dict(r)->attribute_table[i];

	if (a->value->value_case == OTLP_VALUE_STRING)
		snprintf(buf, size, "%s=%s", otlp_string(r, a->key_strindex), a->value->string_value);
	else
		snprintf(buf, size, "%s=%lld", otlp_string(r, a->key_strindex),
			 (long long)a->value->int_value);
}

static const char *function_name(const struct otlp_request *r, const otlp_line_t *ln)
{
	return otlp_string(r, dict(r)->function_table[ln->function_index]->name_strindex);
}

/* Sample i of profile p: its value, thread and stack's leaf-first addresses. */
static void expect_sample(const struct otlp_request *r, const otlp_profile_t *p, size_t i,
			  int64_t value, const char *thread_id, const char *thread_name,
			  const uint64_t *addrs, size_t n_addrs)
{
	const otlp_sample_t *s = p->samples[i];
	const otlp_stack_t *st = dict(r)->stack_table[s->stack_index];
	char a[64];

	assert_int_equal(s->n_values, 1);
	assert_int_equal(s->values[0], value);
	assert_int_equal(s->n_attribute_indices, 2);
	attr_text(r, s->attribute_indices[0], a, sizeof(a));
	assert_string_equal(a, thread_id);
	attr_text(r, s->attribute_indices[1], a, sizeof(a));
	assert_string_equal(a, thread_name);
	assert_int_equal(st->n_location_indices, n_addrs);
	for (size_t k = 0; k < n_addrs; k++)
		assert_int_equal(dict(r)->location_table[st->location_indices[k]]->address, addrs[k]);
}

static void test_resource_and_samples(void **state)
{
	struct stack_model *sm = sm_new();
	struct otlp_request r;
	const otlp_resource_profiles_t *rp;
	const otlp_profile_t *p;
	uint64_t inl[3] = { 0x1210, 0x1110, 0x1010 }, krn[3] = { 0xffffffff81000110ULL, 0x1110, 0x1010 };
	uint64_t unk[2] = { 0x1f00, 0x1010 }, jit[2] = { 0x10, 0x1010 };

	(void)state;
	encode_and_read(sm, &r);
	assert_int_equal(r.msg->n_resource_profiles, 1);
	rp = r.msg->resource_profiles[0];
	assert_string_equal(resource_attr(rp, "service.name")->string_value, "unknown_service:work");
	assert_int_equal(resource_attr(rp, "process.pid")->int_value, 100);
	assert_string_equal(resource_attr(rp, "process.executable.name")->string_value, "work");
	assert_string_equal(resource_attr(rp, "process.executable.path")->string_value,
			    "/usr/bin/work");
	assert_string_equal(resource_attr(rp, "process.command_line")->string_value, "work --hard");
	assert_null(resource_attr(rp, "container.id"));
	assert_null(resource_attr(rp, "host.name")); /* the hand-made model has none */
	assert_int_equal(rp->n_scope_profiles, 1);
	assert_string_equal(rp->scope_profiles[0]->scope->name, "collector");
	assert_int_equal(rp->scope_profiles[0]->n_profiles, 2);
	/* samples/count, then cpu/nanoseconds, each in the run's window */
	for (size_t k = 0; k < 2; k++) {
		int64_t unit = k ? SM_PERIOD : 1;

		p = rp->scope_profiles[0]->profiles[k];
		assert_string_equal(otlp_string(&r, p->sample_type->type_strindex),
				    k ? "cpu" : "samples");
		assert_string_equal(otlp_string(&r, p->sample_type->unit_strindex),
				    k ? "nanoseconds" : "count");
		assert_string_equal(otlp_string(&r, p->period_type->type_strindex), "cpu");
		assert_int_equal(p->period, SM_PERIOD);
		assert_int_equal(p->time_unix_nano, SM_T0);
		assert_int_equal(p->duration_nano, 10 * SM_PERIOD);
		assert_int_equal(p->n_samples, 6);
		expect_sample(&r, p, 0, 3 * unit, "thread.id=100", "thread.name=work", inl, 3);
		expect_sample(&r, p, 1, 1 * unit, "thread.id=101", "thread.name=worker", krn, 3);
		expect_sample(&r, p, 2, 1 * unit, "thread.id=101", "thread.name=worker", inl, 3);
		expect_sample(&r, p, 3, 1 * unit, "thread.id=100", "thread.name=work", unk, 2);
		expect_sample(&r, p, 4, 1 * unit, "thread.id=100", "thread.name=work", jit, 2);
		/* a sample without a stack: the empty stack, entry 0 */
		assert_int_equal(p->samples[5]->stack_index, 0);
		assert_int_equal(p->samples[5]->values[0], unit);
	}
	otlp_request_free(&r);
	sm_free(sm);
}

/* The location of the stack's frame k of profile 0's sample i. */
static const otlp_location_t *frame(const struct otlp_request *r, size_t i, size_t k)
{
	const otlp_profile_t *p = r->msg->resource_profiles[0]->scope_profiles[0]->profiles[0];
	const otlp_stack_t *st = dict(r)->stack_table[p->samples[i]->stack_index];

	return dict(r)->location_table[st->location_indices[k]];
}

static void test_dictionary(void **state)
{
	struct stack_model *sm = sm_new();
	const otlp_location_t *l;
	const otlp_mapping_t *mp;
	const otlp_function_t *f;
	struct otlp_request r;
	uint32_t extra[2];
	char a[128];

	(void)state;
	sm->m.processes.items[sm->proc].maps.items[0].pgoff = 0x3000;
	model_function_set_linkage(&sm->m, sm->f_work, "_Z4workv");
	/* a stack of a function no sample has: not in the dictionary */
	extra[0] = model_intern_location(&sm->m, sm->exe, 0x1e00,
					 model_intern_function(&sm->m, sm->exe, "unused", 0x1e00,
							       0x10, MODEL_NONE, 0),
					 MODEL_NONE, 0, NULL, 0);
	extra[1] = sm->l_main;
	model_intern_stack(&sm->m, extra, 2, 0, false);
	encode_and_read(sm, &r);
	/* entry 0 of each table is the empty value, then only what is used */
	assert_int_equal(dict(&r)->n_stack_table, 1 + 4);
	assert_int_equal(dict(&r)->n_location_table, 1 + 6);
	assert_int_equal(dict(&r)->n_function_table, 1 + 5);
	assert_int_equal(dict(&r)->n_mapping_table, 1 + 3);
	assert_string_equal(dict(&r)->string_table[0], "");
	for (size_t i = 0; i < dict(&r)->n_function_table; i++)
		assert_true(strcmp(otlp_string(&r, dict(&r)->function_table[i]->name_strindex),
				   "unused"));
	/* inl inlined into leaf: the innermost first, each at its own line */
	l = frame(&r, 0, 0);
	assert_int_equal(l->n_lines, 2);
	assert_string_equal(function_name(&r, l->lines[0]), "inl");
	assert_int_equal(l->lines[0]->line, 41);
	assert_string_equal(function_name(&r, l->lines[1]), "leaf");
	assert_int_equal(l->lines[1]->line, 33);
	f = dict(&r)->function_table[l->lines[1]->function_index];
	assert_string_equal(otlp_string(&r, f->filename_strindex), "/src/work.c");
	assert_int_equal(f->start_line, 30);
	assert_int_equal(l->n_attribute_indices, 1);
	attr_text(&r, l->attribute_indices[0], a, sizeof(a));
	assert_string_equal(a, "profile.frame.type=native");
	/* a demangled function: its symbol is the system name */
	f = dict(&r)->function_table[frame(&r, 0, 1)->lines[0]->function_index];
	assert_string_equal(otlp_string(&r, f->name_strindex), "work");
	assert_string_equal(otlp_string(&r, f->system_name_strindex), "_Z4workv");
	/* the executable's mapping: path, text range, file offset, build-id */
	mp = dict(&r)->mapping_table[l->mapping_index];
	assert_string_equal(otlp_string(&r, mp->filename_strindex), "/usr/bin/work");
	assert_int_equal(mp->memory_start, 0x1000);
	assert_int_equal(mp->memory_limit, 0x2000);
	assert_int_equal(mp->file_offset, 0x3000);
	assert_int_equal(mp->n_attribute_indices, 1);
	attr_text(&r, mp->attribute_indices[0], a, sizeof(a));
	assert_string_equal(a, "process.executable.build_id.gnu=" SM_BUILD_ID);
	/* kernel code, and unresolved code: an address in its mapping, no line */
	l = frame(&r, 1, 0);
	attr_text(&r, l->attribute_indices[0], a, sizeof(a));
	assert_string_equal(a, "profile.frame.type=kernel");
	assert_string_equal(function_name(&r, l->lines[0]), "k_irq");
	l = frame(&r, 3, 0);
	assert_int_equal(l->n_lines, 0);
	assert_int_equal(l->address, 0x1f00);
	/* JIT code has no text segment: the range covers its locations */
	mp = dict(&r)->mapping_table[frame(&r, 4, 0)->mapping_index];
	assert_int_equal(mp->memory_start, 0x10);
	assert_int_equal(mp->memory_limit, 0x11);
	assert_int_equal(mp->n_attribute_indices, 0);
	otlp_request_free(&r);
	sm_free(sm);
}

/* Who the process is, and what the collector was told of itself: the
 * process's own words first, then the run's, then the machine's name. */
static void test_identity(void **state)
{
	struct stack_model *sm = sm_new();
	const otlp_resource_profiles_t *rp;
	struct otlp_request r;

	(void)state;
	model_set_process_identity(&sm->m, sm->proc, "checkout",
				   "4b3c2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b");
	snprintf(sm->m.run.hostname, sizeof(sm->m.run.hostname), "vm-7");
	assert_int_equal(model_add_run_attribute(&sm->m, "deployment.environment", "prod"), 0);
	assert_int_equal(model_add_run_attribute(&sm->m, "service.name", "not-this"), 0);
	encode_and_read(sm, &r);
	rp = r.msg->resource_profiles[0];
	assert_string_equal(resource_attr(rp, "service.name")->string_value, "checkout");
	assert_string_equal(resource_attr(rp, "container.id")->string_value,
			    "4b3c2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b");
	assert_string_equal(resource_attr(rp, "deployment.environment")->string_value, "prod");
	assert_string_equal(resource_attr(rp, "host.name")->string_value, "vm-7");
	otlp_request_free(&r);
	/* a host.name of the run's attributes is the user's word */
	assert_int_equal(model_add_run_attribute(&sm->m, "host.name", "web-01"), 0);
	encode_and_read(sm, &r);
	assert_string_equal(resource_attr(r.msg->resource_profiles[0], "host.name")->string_value,
			    "web-01");
	otlp_request_free(&r);
	sm_free(sm);
}

/* Two processes: a resource each, their samples apart, one dictionary. */
static void test_two_processes(void **state)
{
	struct stack_model *sm = sm_new();
	struct otlp_request r;
	uint32_t proc2, t200;

	(void)state;
	proc2 = model_add_process(&sm->m, 200, 1, 0, "other", NULL, NULL);
	t200 = model_add_thread(&sm->m, proc2, 200, "other");
	sm_sample(sm, t200, sm->s_inline, 8);
	sm->m.samples.items[sm->m.samples.len - 1].process = proc2;
	encode_and_read(sm, &r);
	assert_int_equal(r.msg->n_resource_profiles, 2);
	assert_int_equal(resource_attr(r.msg->resource_profiles[1], "process.pid")->int_value, 200);
	/* no path: the comm names the service */
	assert_string_equal(resource_attr(r.msg->resource_profiles[1], "service.name")->string_value,
			    "unknown_service:other");
	assert_int_equal(r.msg->resource_profiles[1]->scope_profiles[0]->profiles[0]->n_samples, 1);
	assert_int_equal(r.msg->resource_profiles[0]->scope_profiles[0]->profiles[0]->n_samples, 6);
	/* the stack both processes ran is one entry */
	assert_int_equal(r.msg->resource_profiles[1]->scope_profiles[0]->profiles[0]->samples[0]
				 ->stack_index,
			 r.msg->resource_profiles[0]->scope_profiles[0]->profiles[0]->samples[0]
				 ->stack_index);
	otlp_request_free(&r);
	sm_free(sm);
}

static void test_file_and_empty(void **state)
{
	struct stack_model *sm = sm_new();
	struct format_error err;
	struct otlp_request r;
	char path[128];

	(void)state;
	sm->m.samples.len = 0;
	assert_int_equal(otlp_write(&sm->m, &sm->opts), 0);
	sm_path(sm, OTLP_FILE, path, sizeof(path));
	assert_true(otlp_recognize(path, NULL, 0));
	assert_false(otlp_recognize("/x/profile.pb", NULL, 0));
	if (otlp_read_file(path, &r, &err))
		fail_msg("%s", err.reason);
	assert_int_equal(r.msg->n_resource_profiles, 0);
	otlp_request_free(&r);
	assert_int_equal(otlp_dump(path, stdout, true), 0);
	sm_free(sm);
}

/* A request made by hand with one thing wrong in it. */
static void expect_rejected(int breakage, const char *reason)
{
	otlp_request_t req;
	otlp_dictionary_t d;
	otlp_resource_profiles_t rp, *rpp = &rp;
	otlp_scope_profiles_t sp, *spp = &sp;
	otlp_profile_t p, *pp = &p;
	otlp_value_type_t vt;
	otlp_sample_t s, *sps = &s;
	otlp_stack_t st0, st1, *stacks[2] = { &st0, &st1 };
	otlp_location_t l0, l1, *locs[2] = { &l0, &l1 };
	otlp_line_t ln, *lns = &ln;
	char *strings[2] = { "", "cpu" };
	int32_t loc_idx[1] = { 1 }, sample_attr[1] = { 0 };
	int64_t value = 1;
	struct otlp_request out;
	struct format_error err;
	uint8_t buf[1024];
	size_t n;

	otlp_request_init(&req);
	otlp_dictionary_init(&d);
	otlp_resource_profiles_init(&rp);
	otlp_scope_profiles_init(&sp);
	otlp_profile_init(&p);
	otlp_value_type_init(&vt);
	otlp_sample_init(&s);
	otlp_stack_init(&st0);
	otlp_stack_init(&st1);
	otlp_location_init(&l0);
	otlp_location_init(&l1);
	otlp_line_init(&ln);
	d.string_table = strings;
	d.n_string_table = 2;
	d.stack_table = stacks;
	d.n_stack_table = 2;
	st1.location_indices = loc_idx;
	st1.n_location_indices = 1;
	d.location_table = locs;
	d.n_location_table = 2;
	l1.lines = &lns;
	l1.n_lines = 1;
	vt.type_strindex = 1;
	p.sample_type = &vt;
	s.stack_index = 1;
	s.values = &value;
	s.n_values = 1;
	p.samples = &sps;
	p.n_samples = 1;
	sp.profiles = &pp;
	sp.n_profiles = 1;
	rp.scope_profiles = &spp;
	rp.n_scope_profiles = 1;
	req.resource_profiles = &rpp;
	req.n_resource_profiles = 1;
	req.dictionary = &d;
	switch (breakage) {
	case 1: strings[0] = "x"; break;
	case 2: s.stack_index = 2; break;
	case 3: loc_idx[0] = 5; break;
	case 4: ln.function_index = 1; break;
	case 5: vt.type_strindex = 7; break;
	case 6: p.sample_type = NULL; break;
	case 7: s.n_values = 0; break;
	case 8: sample_attr[0] = 3; s.attribute_indices = sample_attr;
		s.n_attribute_indices = 1; break;
	case 9: l1.mapping_index = 1; break;
	}
	n = protobuf_c_message_get_packed_size(&req.base);
	assert_true(n <= sizeof(buf));
	protobuf_c_message_pack(&req.base, buf);
	if (!breakage) {
		if (otlp_parse(buf, n, &out, &err))
			fail_msg("the valid request: %s", err.reason);
		otlp_request_free(&out);
		return;
	}
	assert_int_equal(otlp_parse(buf, n, &out, &err), -EINVAL);
	if (!strstr(err.reason, reason))
		fail_msg("case %d: '%s' does not say '%s'", breakage, err.reason, reason);
}

static void test_reader_rejects(void **state)
{
	struct otlp_request out;
	struct format_error err;

	(void)state;
	expect_rejected(0, "");
	expect_rejected(1, "string_table[0]");
	expect_rejected(2, "stack index 2 is outside the table of 2");
	expect_rejected(3, "location index 5");
	expect_rejected(4, "function index 1 is outside the table of 0");
	expect_rejected(5, "outside the string table");
	expect_rejected(6, "has no sample type");
	expect_rejected(7, "0 values");
	expect_rejected(8, "attribute index 3");
	expect_rejected(9, "mapping index 1");
	assert_int_equal(otlp_parse((const unsigned char *)"\x0a\xff", 2, &out, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "protobuf-c cannot unpack"));
	assert_int_equal(otlp_parse((const unsigned char *)"\x1f\x8b\x08", 3, &out, &err), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resource_and_samples),
		cmocka_unit_test(test_dictionary),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_two_processes),
		cmocka_unit_test(test_file_and_empty),
		cmocka_unit_test(test_reader_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
