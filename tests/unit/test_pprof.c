// SPDX-License-Identifier: GPL-2.0
/*
 * pprof: the writer on the hand-built model (stack_model.h), read back by
 * the reader (protobuf-c); every expected value comes from the model by
 * hand and from profile.proto's rules: sample types, one sample per (stack,
 * thread) in first-occurrence order, leaf-first location ids, inlined lines
 * innermost first, labels, mappings (main binary first, build-id, file
 * offset from the process mapping), the traced calls' sample types; and the
 * reader's rejections.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <zlib.h>

#include "formats/pprof/pprof.h"
#include "formats/pprof/pprof_reader.h"
#include "stack_model.h"

static const char *str(const struct pprof_profile *p, int64_t i)
{
	return pprof_string(p, i);
}

static void read_back(struct stack_model *sm, struct pprof_profile *p)
{
	struct format_error err;
	char path[128];

	assert_int_equal(pprof_write(&sm->m, &sm->opts), 0);
	if (pprof_read_file(sm_path(sm, "profile.pb.gz", path, sizeof(path)), p, &err))
		fail_msg("offset %zu: %s", err.offset, err.reason);
	assert_true(p->compressed);
}

static void expect_sample(const struct pprof_profile *p, size_t i, uint64_t count,
			  const uint32_t *locs, size_t n_locs, int64_t tid, const char *thread)
{
	const Perftools__Profiles__Sample *s = p->msg->sample[i];

	assert_int_equal(s->n_value, 2);
	assert_int_equal(s->value[0], count);
	assert_int_equal(s->value[1], count * SM_PERIOD);
	assert_int_equal(s->n_location_id, n_locs);
	for (size_t k = 0; k < n_locs; k++)
		assert_int_equal(s->location_id[k], (uint64_t)locs[k] + 1);
	/* the process's service as the OTLP push names it; no host.name:
	 * the hand-made model has no host */
	assert_int_equal(s->n_label, 5);
	assert_string_equal(str(p, s->label[0]->key), "pid");
	assert_int_equal(s->label[0]->num, 100);
	assert_string_equal(str(p, s->label[1]->key), "tid");
	assert_int_equal(s->label[1]->num, tid);
	assert_string_equal(str(p, s->label[2]->key), "comm");
	assert_string_equal(str(p, s->label[2]->str), "work");
	assert_string_equal(str(p, s->label[3]->key), "thread_name");
	assert_string_equal(str(p, s->label[3]->str), thread);
	assert_string_equal(str(p, s->label[4]->key), "service.name");
	assert_string_equal(str(p, s->label[4]->str), "unknown_service:work");
}

static void test_samples(void **state)
{
	struct stack_model *sm = sm_new();
	struct pprof_profile p;
	const Perftools__Profiles__Profile *m;
	uint32_t inl[3] = { sm->l_leaf, sm->l_work, sm->l_main };
	uint32_t krn[3] = { sm->l_irq, sm->l_work, sm->l_main };
	uint32_t unk[2] = { sm->l_unknown, sm->l_main }, jit[2] = { sm->l_jit, sm->l_main };

	(void)state;
	read_back(sm, &p);
	m = p.msg;
	assert_int_equal(m->n_sample_type, 2);
	assert_string_equal(str(&p, m->sample_type[0]->type), "samples");
	assert_string_equal(str(&p, m->sample_type[0]->unit), "count");
	assert_string_equal(str(&p, m->sample_type[1]->type), "cpu");
	assert_string_equal(str(&p, m->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(str(&p, m->default_sample_type), "cpu");
	assert_string_equal(str(&p, m->period_type->type), "cpu");
	assert_string_equal(str(&p, m->period_type->unit), "nanoseconds");
	assert_int_equal(m->period, SM_PERIOD);
	assert_int_equal(m->time_nanos, SM_T0);
	assert_int_equal(m->duration_nanos, 10 * SM_PERIOD);
	assert_int_equal(m->n_sample, 6);
	expect_sample(&p, 0, 3, inl, 3, 100, "work");
	expect_sample(&p, 1, 1, krn, 3, 101, "worker");
	expect_sample(&p, 2, 1, inl, 3, 101, "worker");
	expect_sample(&p, 3, 1, unk, 2, 100, "work");
	expect_sample(&p, 4, 1, jit, 2, 100, "work");
	expect_sample(&p, 5, 1, NULL, 0, 100, "work");
	pprof_profile_free(&p);
	sm_free(sm);
}

static void test_locations_and_functions(void **state)
{
	struct stack_model *sm = sm_new();
	struct pprof_profile p;
	const Perftools__Profiles__Location *l;
	const Perftools__Profiles__Function *f;
	const Perftools__Profiles__Mapping *mp;

	(void)state;
	/* the text segment at file offset 0x3000 of the file */
	sm->m.processes.items[sm->proc].maps.items[0].pgoff = 0x3000;
	model_function_set_linkage(&sm->m, sm->f_work, "_Z4workv");
	read_back(sm, &p);
	/* inl inlined into leaf: the innermost first, each at its own line */
	l = pprof_location(&p, sm->l_leaf + 1);
	assert_non_null(l);
	assert_int_equal(l->address, 0x1210);
	assert_int_equal(l->n_line, 2);
	assert_string_equal(str(&p, pprof_function(&p, l->line[0]->function_id)->name), "inl");
	assert_int_equal(l->line[0]->line, 41);
	assert_string_equal(str(&p, pprof_function(&p, l->line[1]->function_id)->name), "leaf");
	assert_int_equal(l->line[1]->line, 33);
	f = pprof_function(&p, l->line[1]->function_id);
	assert_string_equal(str(&p, f->system_name), "leaf");
	assert_string_equal(str(&p, f->filename), "/src/work.c");
	assert_int_equal(f->start_line, 30);
	/* a demangled function: its symbol is the system name */
	l = pprof_location(&p, sm->l_work + 1);
	f = pprof_function(&p, l->line[l->n_line - 1]->function_id);
	assert_string_equal(str(&p, f->name), "work");
	assert_string_equal(str(&p, f->system_name), "_Z4workv");
	/* unresolved code: an address in its mapping, no line */
	l = pprof_location(&p, sm->l_unknown + 1);
	assert_int_equal(l->n_line, 0);
	assert_int_equal(l->address, 0x1f00);
	/* the main binary first: path, build-id, range, file offset */
	mp = p.msg->mapping[0];
	assert_int_equal(l->mapping_id, mp->id);
	assert_string_equal(str(&p, mp->filename), "/usr/bin/work");
	assert_string_equal(str(&p, mp->build_id), SM_BUILD_ID);
	assert_int_equal(mp->memory_start, 0x1000);
	assert_int_equal(mp->memory_limit, 0x2000);
	assert_int_equal(mp->file_offset, 0x3000);
	assert_true(mp->has_functions && mp->has_line_numbers && mp->has_inline_frames);
	mp = pprof_mapping(&p, pprof_location(&p, sm->l_irq + 1)->mapping_id);
	assert_string_equal(str(&p, mp->filename), "[kernel.kallsyms]");
	assert_int_equal(mp->memory_start, 0xffffffff81000000ULL);
	/* JIT code has no text segment: the range covers its locations */
	mp = pprof_mapping(&p, pprof_location(&p, sm->l_jit + 1)->mapping_id);
	assert_int_equal(mp->memory_start, 0x10);
	assert_int_equal(mp->memory_limit, 0x11);
	assert_false(mp->has_functions);
	pprof_profile_free(&p);
	sm_free(sm);
}

static void test_traced_calls(void **state)
{
	struct stack_model *sm = sm_new();
	struct model_func_stats *fs;
	struct pprof_profile p;
	const Perftools__Profiles__Sample *s;
	const Perftools__Profiles__Location *l;
	uint32_t tf;

	(void)state;
	/* work traced at its entry, which no sample hit: a location of its own */
	tf = model_add_traced_function(&sm->m, sm->exe, 0x1100, sm->f_work);
	fs = model_add_func_stats(&sm->m);
	fs->func = tf;
	fs->process = sm->proc;
	fs->thread = sm->t101;
	fs->calls = 7;
	fs->total_ns = 700;
	read_back(sm, &p);
	assert_int_equal(p.msg->n_sample_type, 4);
	assert_string_equal(str(&p, p.msg->sample_type[2]->type), "traced_calls");
	assert_string_equal(str(&p, p.msg->sample_type[3]->type), "traced_time");
	assert_string_equal(str(&p, p.msg->sample_type[3]->unit), "nanoseconds");
	assert_string_equal(str(&p, p.msg->default_sample_type), "cpu");
	assert_int_equal(p.msg->n_sample, 7);
	assert_int_equal(p.msg->sample[0]->value[2], 0);
	s = p.msg->sample[6];
	assert_int_equal(s->value[0], 0);
	assert_int_equal(s->value[1], 0);
	assert_int_equal(s->value[2], 7);
	assert_int_equal(s->value[3], 700);
	assert_int_equal(s->label[1]->num, 101);
	assert_int_equal(s->n_location_id, 1);
	assert_int_equal(s->location_id[0], sm->m.locations.len + 1);
	l = pprof_location(&p, s->location_id[0]);
	assert_int_equal(l->address, 0x1100);
	assert_string_equal(str(&p, pprof_function(&p, l->line[0]->function_id)->name), "work");
	assert_int_equal(l->line[0]->line, 20);
	pprof_profile_free(&p);
	sm_free(sm);
}

static void test_utf8_made_valid(void **state)
{
	struct stack_model *sm = sm_new();
	struct pprof_profile p;

	(void)state;
	free(sm->m.functions.items[sm->f_main].name);
	sm->m.functions.items[sm->f_main].name = strdup("ma\xffin\xc3\xa9");
	read_back(sm, &p);
	assert_string_equal(str(&p, pprof_function(&p, sm->f_main + 1)->name), "ma?in\xc3\xa9");
	pprof_profile_free(&p);
	sm_free(sm);
}

/* A packed profile with one function, one location and one sample, which
 * each case below breaks in one way. */
static void expect_rejected(int breakage, const char *reason)
{
	Perftools__Profiles__Profile m = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vtp = &vt;
	Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT, *fnp[2] = { &fn, &fn };
	Perftools__Profiles__Line line = PERFTOOLS__PROFILES__LINE__INIT, *linep = &line;
	Perftools__Profiles__Location loc = PERFTOOLS__PROFILES__LOCATION__INIT, *locp = &loc;
	Perftools__Profiles__Sample smp = PERFTOOLS__PROFILES__SAMPLE__INIT, *smpp = &smp;
	char *strings[] = { "", "samples", "count", "f" };
	uint64_t loc_id = 1;
	int64_t value = 1;
	uint8_t buf[512];
	struct pprof_profile p;
	struct format_error err;
	size_t n;

	vt.type = 1, vt.unit = 2;
	fn.id = 1, fn.name = 3;
	line.function_id = 1;
	loc.id = 1, loc.line = &linep, loc.n_line = 1;
	smp.location_id = &loc_id, smp.n_location_id = 1, smp.value = &value, smp.n_value = 1;
	m.sample_type = &vtp, m.n_sample_type = 1;
	m.function = fnp, m.n_function = 1;
	m.location = &locp, m.n_location = 1;
	m.sample = &smpp, m.n_sample = 1;
	m.string_table = strings, m.n_string_table = 4;
	switch (breakage) {
	case 1: strings[0] = "x"; break;
	case 2: fn.name = 4; break;
	case 3: line.function_id = 2; break;
	case 4: loc_id = 9; break;
	case 5: smp.n_value = 0; break;
	case 6: m.n_function = 2; break;
	case 7: loc.mapping_id = 3; break;
	case 8: m.default_sample_type = 3; break;
	}
	n = perftools__profiles__profile__pack(&m, buf);
	assert_true(n < sizeof(buf));
	if (!breakage) {
		assert_int_equal(pprof_parse(buf, n, &p, &err), 0);
		pprof_profile_free(&p);
		return;
	}
	assert_int_equal(pprof_parse(buf, n, &p, &err), -EINVAL);
	if (!strstr(err.reason, reason))
		fail_msg("case %d: '%s' does not say '%s'", breakage, err.reason, reason);
}

static void test_reader_rejects(void **state)
{
	struct stack_model *sm = sm_new();
	unsigned char *buf;
	size_t len;
	struct pprof_profile p;
	struct format_error err;
	char path[128];

	(void)state;
	expect_rejected(0, "");
	expect_rejected(1, "string_table[0]");
	expect_rejected(2, "out of the table");
	expect_rejected(3, "no function 2");
	expect_rejected(4, "no location 9");
	expect_rejected(5, "0 values for 1 sample types");
	expect_rejected(6, "two functions have id 1");
	expect_rejected(7, "no mapping 3");
	expect_rejected(8, "default_sample_type 'f'");
	/* the written file cut short, and with bytes after its end */
	assert_int_equal(pprof_write(&sm->m, &sm->opts), 0);
	assert_int_equal(read_whole_file(sm_path(sm, "profile.pb.gz", path, sizeof(path)), &buf,
					 &len), 0);
	assert_int_equal(pprof_parse(buf, len - 9, &p, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "ends early"));
	buf = realloc(buf, len + 1);
	buf[len] = 0;
	assert_int_equal(pprof_parse(buf, len + 1, &p, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "after the end"));
	assert_int_equal(pprof_parse((const unsigned char *)"\x0a\xff", 2, &p, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "protobuf-c cannot unpack"));
	assert_true(pprof_recognize(path, buf, 2));
	free(buf);
	sm_free(sm);
}

/* A run without samples: a valid file that says so. */
static void test_empty(void **state)
{
	struct stack_model *sm = sm_new();
	struct format_error err;
	struct pprof_profile out;
	char path[128];

	(void)state;
	sm->m.samples.len = 0;
	assert_int_equal(pprof_write(&sm->m, &sm->opts), 0);
	if (pprof_read_file(sm_path(sm, "profile.pb.gz", path, sizeof(path)), &out, &err))
		fail_msg("%s", err.reason);
	assert_int_equal(out.msg->n_sample, 0);
	pprof_profile_free(&out);
	sm_free(sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_locations_and_functions),
		cmocka_unit_test(test_traced_calls),
		cmocka_unit_test(test_utf8_made_valid),
		cmocka_unit_test(test_reader_rejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
