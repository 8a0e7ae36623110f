// SPDX-License-Identifier: GPL-2.0
/*
 * Sampler full-profile writer, reader and dump.  The files are checked with
 * an independent decoder written here after the reference reader's rules
 * (Python struct, packed, little-endian: header '<IQQQI' 32 bytes, sample
 * '<dI' 12, thread '<IQQ' 20, VMMap '<QQ256s' 272; reference layout: VMMaps
 * after the last sample, spec layout: right after the header), and every
 * expected value is worked out by hand from the model the test builds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/format.h"
#include "formats/sampler/sampler.h"
#include "model/model.h"
#include "formats/sampler/sampler_reader.h"
#include "unit_files.h"

#define S0 (1700000000ULL * 1000000000ULL)
#define MS 1000000ULL
#define US 1000ULL

#define BIAS_EXE 0x555555554000ULL
#define BIAS_LIB 0x7f1234500000ULL

struct fixture {
	char dir[64];
	struct export_options opts;
	struct model m;
	uint32_t exe, lib, proc, t1, t2;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	strcpy(fx->dir, "/tmp/test_sampler.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->opts.dir = fx->dir;
	fx->opts.quiet = true;
	model_init(&fx->m);
	fx->m.run.start_ns = S0;
	fx->m.run.end_ns = S0 + 3500 * US;     /* periods [0,1) .. [3,3.5) ms: 4 */
	fx->m.run.freq_hz = 1000;
	fx->m.run.period_ns = MS;
	fx->m.run.collector_cpu_ns = 2 * MS;
	fx->m.run.bpf_run_ns = 500 * US;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	model_free(&fx->m);
	unit_rm_rf(fx->dir);
	free(fx);
	return 0;
}

static void add_sample(struct model *m, uint32_t proc, uint32_t thread, uint64_t t,
		       uint64_t pc, uint64_t cputime)
{
	struct model_sample *s = model_add_sample(m);

	s->time_ns = t;
	s->process = proc;
	s->thread = thread;
	s->stack = MODEL_NONE;
	s->user_pc = pc;
	s->cputime_ns = cputime;
	s->weight = MS;
}

static void add_switch(struct model *m, uint32_t proc, uint32_t thread, uint64_t t,
		       uint64_t pc, uint64_t cputime, bool off)
{
	struct model_switch *s = model_add_switch(m);

	s->time_ns = t;
	s->process = proc;
	s->thread = thread;
	s->user_pc = pc;
	s->cputime_ns = cputime;
	s->off = off;
}

/*
 * Process 4242 ("work", a PIE executable and one library), threads 4242
 * (whole run, final cputime 5 ms) and 70000 (from 1.2 to 2.5 ms, final
 * cputime 0.9 ms).
 *   period 0: 4242 sampled at A1 then A2, then switched out at A3;
 *   period 1: 70000 sampled at B1; 4242 nothing;
 *   period 2: 4242 sampled at A4 with a cputime below what it had;
 *   period 3: nothing.
 */
static void build_scenario(struct fixture *fx)
{
	struct model *m = &fx->m;
	struct model_image exe = { .path = "/usr/bin/work", .kind = MODEL_IMAGE_ELF };
	struct model_image lib = { .path = "/usr/lib/x86_64-linux-gnu/libc.so.6",
				   .kind = MODEL_IMAGE_ELF };
	struct model_image vdso = { .path = "[vdso]", .kind = MODEL_IMAGE_ANON };
	struct model_mapping map;
	uint32_t iv;

	fx->exe = model_add_image(m, &exe);
	fx->lib = model_add_image(m, &lib);
	iv = model_add_image(m, &vdso);
	fx->proc = model_add_process(m, 4242, 1, 0, "work", "work", "/usr/bin/work");
	m->processes.items[fx->proc].start_ns = S0 - 5 * MS; /* before the run */
	/* text of the PIE at file offset 0x1000, vaddr 0x1000 */
	map = (struct model_mapping){ .start = BIAS_EXE + 0x1000, .end = BIAS_EXE + 0x3000,
				      .pgoff = 0x1000, .bias = BIAS_EXE, .image = fx->exe,
				      .exec = true };
	model_add_mapping(m, fx->proc, &map);
	/* its read-only data: not executable, not a VMMap */
	map = (struct model_mapping){ .start = BIAS_EXE + 0x3000, .end = BIAS_EXE + 0x4000,
				      .pgoff = 0x3000, .bias = BIAS_EXE, .image = fx->exe };
	model_add_mapping(m, fx->proc, &map);
	map = (struct model_mapping){ .start = BIAS_LIB + 0x28000, .end = BIAS_LIB + 0x1bd000,
				      .pgoff = 0x28000, .bias = BIAS_LIB, .image = fx->lib,
				      .exec = true };
	model_add_mapping(m, fx->proc, &map);
	/* anonymous executable memory: no file to label */
	map = (struct model_mapping){ .start = 0x7ffd000, .end = 0x7fff000, .bias = 0x7ffd000,
				      .image = iv, .exec = true };
	model_add_mapping(m, fx->proc, &map);

	fx->t1 = model_add_thread(m, fx->proc, 4242, "work");
	m->threads.items[fx->t1].start_ns = S0 - 5 * MS;
	m->threads.items[fx->t1].cputime_ns = 5 * MS;
	fx->t2 = model_add_thread(m, fx->proc, 70000, "worker");
	m->threads.items[fx->t2].start_ns = S0 + 1200 * US;
	m->threads.items[fx->t2].end_ns = S0 + 2500 * US;
	m->threads.items[fx->t2].cputime_ns = 900 * US;

	add_sample(m, fx->proc, fx->t1, S0 + 300 * US, BIAS_EXE + 0x1a1, 300 * US);
	add_sample(m, fx->proc, fx->t1, S0 + 800 * US, BIAS_EXE + 0x1a2, 800 * US);
	add_switch(m, fx->proc, fx->t1, S0 + 900 * US, BIAS_LIB + 0x2a3, 850 * US, true);
	add_sample(m, fx->proc, fx->t2, S0 + 1500 * US, BIAS_LIB + 0x2b1, 100 * US);
	add_sample(m, fx->proc, fx->t1, S0 + 2100 * US, BIAS_EXE + 0x1a4, 700 * US);
}

/* ---- an independent decoder, after the reference reader ----------------- */

struct ref_thread {
	uint32_t tid;
	uint64_t pc, cputime;
};

struct ref_sample {
	double pmu;
	uint32_t n;
	struct ref_thread t[8];
};

struct ref_vmmap {
	uint64_t address, size;
	char label[257];
};

struct ref_file {
	uint32_t magic, n_vmmaps;
	uint64_t wall, latency, n_samples;
	struct ref_sample s[16];
	struct ref_vmmap v[8];
};

static uint32_t u32_at(const unsigned char *b, size_t o)
{
	return b[o] | b[o + 1] << 8 | b[o + 2] << 16 | (uint32_t)b[o + 3] << 24;
}

static uint64_t u64_at(const unsigned char *b, size_t o)
{
	return u32_at(b, o) | (uint64_t)u32_at(b, o + 4) << 32;
}

static void ref_decode(const unsigned char *b, size_t len, bool spec, struct ref_file *r)
{
	size_t o = 32, vm;

	assert_true(len >= 32);
	r->magic = u32_at(b, 0);
	r->wall = u64_at(b, 4);
	r->latency = u64_at(b, 12);
	r->n_samples = u64_at(b, 20);
	r->n_vmmaps = u32_at(b, 28);
	assert_true(r->n_samples <= 16 && r->n_vmmaps <= 8);
	vm = spec ? 32 : len - r->n_vmmaps * 272;
	if (spec)
		o += r->n_vmmaps * 272;
	for (uint64_t i = 0; i < r->n_samples; i++) {
		assert_true(o + 12 <= len);
		memcpy(&r->s[i].pmu, b + o, 8);
		r->s[i].n = u32_at(b, o + 8);
		assert_true(r->s[i].n <= 8);
		o += 12;
		for (uint32_t k = 0; k < r->s[i].n; k++, o += 20) {
			assert_true(o + 20 <= len);
			r->s[i].t[k].tid = u32_at(b, o);
			r->s[i].t[k].pc = u64_at(b, o + 4);
			r->s[i].t[k].cputime = u64_at(b, o + 12);
		}
	}
	/* the samples end exactly where the VMMaps (or the file) begin */
	assert_int_equal(o, spec ? len : vm);
	for (uint32_t i = 0; i < r->n_vmmaps; i++, vm += 272) {
		r->v[i].address = u64_at(b, vm);
		r->v[i].size = u64_at(b, vm + 8);
		memcpy(r->v[i].label, b + vm + 16, 256);
		r->v[i].label[256] = '\0';
		/* NUL-padded: nothing after the first NUL */
		for (size_t k = strlen(r->v[i].label); k < 256; k++)
			assert_int_equal(b[vm + 16 + k], 0);
	}
}

static unsigned char *read_all(const char *path, size_t *len)
{
	return unit_slurp(path, len);
}

static void check_thread(const struct ref_thread *t, uint32_t tid, uint64_t pc,
			 uint64_t cputime)
{
	assert_int_equal(t->tid, tid);
	assert_int_equal(t->pc, pc);
	assert_int_equal(t->cputime, cputime);
}

static void check_scenario(const struct ref_file *r)
{
	assert_int_equal(r->magic, 0);                      /* custom: busy cores */
	assert_int_equal(r->wall, 3500);                    /* us, the run within the process */
	assert_int_equal(r->latency, 2500);                 /* us, collector + BPF */
	assert_int_equal(r->n_samples, 4);
	/* VMMaps: exe and libc, address = load bias, size = end - bias, full path */
	assert_int_equal(r->n_vmmaps, 2);
	assert_int_equal(r->v[0].address, BIAS_EXE);
	assert_int_equal(r->v[0].size, 0x3000);
	assert_string_equal(r->v[0].label, "/usr/bin/work");
	assert_int_equal(r->v[1].address, BIAS_LIB);
	assert_int_equal(r->v[1].size, 0x1bd000);
	assert_string_equal(r->v[1].label, "/usr/lib/x86_64-linux-gnu/libc.so.6");

	/* period 0: two samples of 1 ms each in 1 ms: 2 busy cores; PC of the
	 * last sample although a switch-out came later; cputime of the switch */
	assert_true(fabs(r->s[0].pmu - 2.0) < 1e-12);
	assert_int_equal(r->s[0].n, 1);
	check_thread(&r->s[0].t[0], 4242, BIAS_EXE + 0x1a2, 850 * US);
	/* period 1: 4242 not sampled: where it was switched out */
	assert_true(fabs(r->s[1].pmu - 1.0) < 1e-12);
	assert_int_equal(r->s[1].n, 2);
	check_thread(&r->s[1].t[0], 4242, BIAS_LIB + 0x2a3, 850 * US);
	check_thread(&r->s[1].t[1], 70000, BIAS_LIB + 0x2b1, 100 * US);
	/* period 2: cputime never decreases; 70000 ends in it: its final cputime,
	 * its last known PC */
	assert_true(fabs(r->s[2].pmu - 1.0) < 1e-12);
	assert_int_equal(r->s[2].n, 2);
	check_thread(&r->s[2].t[0], 4242, BIAS_EXE + 0x1a4, 850 * US);
	check_thread(&r->s[2].t[1], 70000, BIAS_LIB + 0x2b1, 900 * US);
	/* period 3: the run's last: the final cputime; 70000 gone */
	assert_true(r->s[3].pmu == 0.0);
	assert_int_equal(r->s[3].n, 1);
	check_thread(&r->s[3].t[0], 4242, BIAS_EXE + 0x1a4, 5 * MS);
}

static void test_empty_model_writes_nothing(void **state)
{
	struct fixture *fx = *state;
	struct stat st;
	char path[256];

	/* a process and a thread without any event: nothing to write */
	fx->proc = model_add_process(&fx->m, 7, 1, 0, "idle", NULL, NULL);
	model_add_thread(&fx->m, fx->proc, 7, "idle");
	assert_int_equal(sampler_write(&fx->m, &fx->opts), 0);
	snprintf(path, sizeof(path), "%s/sampler", fx->dir);
	assert_int_equal(stat(path, &st), -1);
}

static void test_reference_layout(void **state)
{
	struct fixture *fx = *state;
	struct sampler_profile p;
	struct format_error err;
	struct ref_file r;
	unsigned char *b;
	char path[256];
	size_t len;

	build_scenario(fx);
	assert_int_equal(sampler_write(&fx->m, &fx->opts), 0);
	snprintf(path, sizeof(path), "%s/sampler/work.4242.prof", fx->dir);
	b = read_all(path, &len);
	/* 32 + 4 samples (12 each) with 1+2+2+1 threads (20 each) + 2 VMMaps */
	assert_int_equal(len, 32 + 4 * 12 + 6 * 20 + 2 * 272);
	memset(&r, 0, sizeof(r));
	ref_decode(b, len, false, &r);
	check_scenario(&r);

	/* our reader agrees and calls it the reference layout */
	assert_int_equal(sampler_parse(b, len, SAMPLER_LAYOUT_AUTO, &p, &err), 0);
	assert_int_equal(p.layout, SAMPLER_LAYOUT_REFERENCE);
	assert_int_equal(p.n_samples, 4);
	assert_int_equal(p.n_threads, 6);
	assert_int_equal(p.threads[2].tid, 70000);
	assert_int_equal(p.vmmaps[1].address, BIAS_LIB);
	assert_int_equal(sampler_check_cputime(&p, &err), 0);
	sampler_profile_free(&p);
	/* and it does not parse as the spec layout */
	assert_int_equal(sampler_parse(b, len, SAMPLER_LAYOUT_SPEC, &p, &err), -EINVAL);
	free(b);
}

static void test_spec_layout(void **state)
{
	struct fixture *fx = *state;
	struct sampler_profile p;
	struct format_error err;
	struct ref_file r;
	unsigned char *b;
	char path[256];
	size_t len;

	build_scenario(fx);
	fx->opts.sampler_layout_spec = true;
	assert_int_equal(sampler_write(&fx->m, &fx->opts), 0);
	snprintf(path, sizeof(path), "%s/sampler/work.4242.prof", fx->dir);
	b = read_all(path, &len);
	assert_int_equal(len, 32 + 4 * 12 + 6 * 20 + 2 * 272);
	/* the first VMMap right after the header */
	assert_int_equal(u64_at(b, 32), BIAS_EXE);
	assert_string_equal((const char *)b + 32 + 16, "/usr/bin/work");
	memset(&r, 0, sizeof(r));
	ref_decode(b, len, true, &r);
	check_scenario(&r);
	assert_int_equal(sampler_parse(b, len, SAMPLER_LAYOUT_AUTO, &p, &err), 0);
	assert_int_equal(p.layout, SAMPLER_LAYOUT_SPEC);
	assert_int_equal(p.n_threads, 6);
	sampler_profile_free(&p);
	free(b);
}

/* One file per process image: the exec'd image gets a generation suffix;
 * comm bytes that do not belong in a file name are replaced. */
static void test_file_names_and_one_sample(void **state)
{
	struct fixture *fx = *state;
	struct model *m = &fx->m;
	uint32_t g1, k, tg, tk;
	struct ref_file r;
	unsigned char *b;
	char path[256];
	size_t len;

	build_scenario(fx);
	m->processes.items[fx->proc].end_ns = S0 + 3 * MS; /* exec at 3 ms */
	g1 = model_add_process(m, 4242, 1, 1, "work", "work --child", "/usr/bin/work");
	m->processes.items[g1].start_ns = S0 + 3 * MS;
	tg = model_add_thread(m, g1, 4242, "work");
	m->threads.items[tg].start_ns = S0 + 3 * MS;
	add_sample(m, g1, tg, S0 + 3200 * US, 0x401000, 7 * MS);
	k = model_add_process(m, 99, 2, 0, "kworker/0:1 x", NULL, NULL);
	tk = model_add_thread(m, k, 99, "kworker/0:1 x");
	add_switch(m, k, tk, S0 + 100 * US, 0, 5, true);
	model_sort_by_time(m);
	assert_int_equal(sampler_write(m, &fx->opts), 0);

	/* the exec'd image: one period [3, 3.5) ms, one thread, one sample */
	snprintf(path, sizeof(path), "%s/sampler/work.4242.1.prof", fx->dir);
	b = read_all(path, &len);
	memset(&r, 0, sizeof(r));
	ref_decode(b, len, false, &r);
	assert_int_equal(r.n_samples, 1);
	assert_int_equal(r.wall, 500);
	assert_int_equal(r.n_vmmaps, 0);
	assert_true(fabs(r.s[0].pmu - 1.0) < 1e-12);
	assert_int_equal(r.s[0].n, 1);
	check_thread(&r.s[0].t[0], 4242, 0x401000, 7 * MS);
	free(b);

	/* the first image now ends at the exec: 3 periods */
	snprintf(path, sizeof(path), "%s/sampler/work.4242.prof", fx->dir);
	b = read_all(path, &len);
	memset(&r, 0, sizeof(r));
	ref_decode(b, len, false, &r);
	assert_int_equal(r.n_samples, 3);
	assert_int_equal(r.wall, 3000);
	/* its last period is period 2: thread 4242's final cputime there */
	check_thread(&r.s[2].t[0], 4242, BIAS_EXE + 0x1a4, 5 * MS);
	free(b);

	/* a thread known only from a switch: PC 0 (none known), its cputime */
	snprintf(path, sizeof(path), "%s/sampler/kworker_0_1_x.99.prof", fx->dir);
	b = read_all(path, &len);
	memset(&r, 0, sizeof(r));
	ref_decode(b, len, false, &r);
	assert_int_equal(r.n_samples, 4);
	check_thread(&r.s[0].t[0], 99, 0, 5);
	free(b);
}

/* ---- the reader against malformed input --------------------------------- */

static size_t put_header(unsigned char *b, uint32_t magic, uint64_t n_samples,
			 uint32_t n_vmmaps)
{
	memset(b, 0, 32);
	memcpy(b, &magic, 4);
	memcpy(b + 20, &n_samples, 8);
	memcpy(b + 28, &n_vmmaps, 4);
	return 32;
}

static size_t put_sample(unsigned char *b, double pmu, uint32_t n)
{
	memcpy(b, &pmu, 8);
	memcpy(b + 8, &n, 4);
	return 12;
}

static size_t put_thread(unsigned char *b, uint32_t tid, uint64_t pc, uint64_t cputime)
{
	memcpy(b, &tid, 4);
	memcpy(b + 4, &pc, 8);
	memcpy(b + 12, &cputime, 8);
	return 20;
}

static void expect_reject(const unsigned char *b, size_t len, size_t offset, const char *reason)
{
	struct sampler_profile p;
	struct format_error err;

	assert_int_equal(sampler_parse(b, len, SAMPLER_LAYOUT_AUTO, &p, &err), -EINVAL);
	if (!strstr(err.reason, reason))
		fail_msg("reason '%s' lacks '%s'", err.reason, reason);
	assert_int_equal(err.offset, offset);
}

static void test_reader_rejects(void **state)
{
	unsigned char b[1024] = { 0 };
	struct sampler_profile p;
	struct format_error err;
	size_t n;

	(void)state;
	/* an empty profile is valid: header only */
	put_header(b, 3, 0, 0);
	assert_int_equal(sampler_parse(b, 32, SAMPLER_LAYOUT_AUTO, &p, &err), 0);
	assert_int_equal(p.magic, 3);
	assert_int_equal(p.n_samples, 0);
	sampler_profile_free(&p);
	expect_reject(b, 0, 0, "shorter");
	put_header(b, 4, 0, 0);
	expect_reject(b, 32, 0, "magic");
	put_header(b, 3, 0, 1);
	expect_reject(b, 32 + 271, 28, "VMMaps do not fit");
	put_header(b, 0, 3, 0);
	expect_reject(b, 32 + 35, 20, "samples do not fit");
	/* one sample claiming 2 threads with room for 1 */
	n = put_header(b, 0, 1, 0);
	n += put_sample(b + n, 0.5, 2);
	n += put_thread(b + n, 1, 2, 3);
	expect_reject(b, n, 40, "threads do not fit");
	/* a trailing byte no layout explains */
	n = put_header(b, 0, 1, 0);
	n += put_sample(b + n, 0.5, 1);
	n += put_thread(b + n, 1, 2, 3);
	assert_int_equal(sampler_parse(b, n, SAMPLER_LAYOUT_AUTO, &p, &err), 0);
	sampler_profile_free(&p);
	b[n] = 0;
	expect_reject(b, n + 1, 64, "after the last sample");
	/* a PMU value that is not a number */
	put_sample(b + 32, NAN, 1);
	expect_reject(b, n, 32, "finite");
	/* cputime going backwards is legal layout but not a collector file */
	n = put_header(b, 0, 2, 0);
	n += put_sample(b + n, 0, 1);
	n += put_thread(b + n, 70000, 2, 30);
	n += put_sample(b + n, 0, 1);
	n += put_thread(b + n, 70000, 2, 29);
	assert_int_equal(sampler_parse(b, n, SAMPLER_LAYOUT_AUTO, &p, &err), 0);
	assert_int_equal(sampler_check_cputime(&p, &err), -EINVAL);
	assert_int_equal(err.offset, 32 + 12 + 20 + 12 + 12);
	sampler_profile_free(&p);
}

/* ---- collector dump ------------------------------------------------------ */

static void test_dump(void **state)
{
	struct fixture *fx = *state;
	char path[256], *out = NULL;
	unsigned char *b;
	size_t len = 0, flen;
	FILE *fp;

	build_scenario(fx);
	assert_int_equal(sampler_write(&fx->m, &fx->opts), 0);
	snprintf(path, sizeof(path), "%s/sampler/work.4242.prof", fx->dir);
	b = read_all(path, &flen);
	assert_true(sampler_recognize(path, b, flen));
	assert_false(sampler_recognize(path, (const unsigned char *)
			"image 20231114221320abcdef\nepoch 2311142213\n", 44));
	/* an XRay FDR header: u16 version 1, u16 type 1 */
	assert_false(sampler_recognize(path, (const unsigned char *)
			"\x01\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
			"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 32));
	assert_string_equal(sampler_format.name, "sampler");

	fp = open_memstream(&out, &len);
	assert_int_equal(sampler_dump(path, fp, false), 0);
	fclose(fp);
	assert_non_null(strstr(out, "magic 0 (custom)\nwall_time_us 3500\nlatency_us 2500\n"
				    "samples 4\nvmmaps 2\nlayout reference\n"
				    "vmmap 0 address 0x555555554000 size 0x3000 label /usr/bin/work\n"));
	assert_non_null(strstr(out, "sample 1 pmu 1 threads 2\n"
				    "  tid 4242 pc 0x7f12345002a3 cputime 850000\n"
				    "  tid 70000 pc 0x7f12345002b1 cputime 100000\n"));
	free(out);

	out = NULL;
	fp = open_memstream(&out, &len);
	assert_int_equal(sampler_dump(path, fp, true), 0);
	fclose(fp);
	assert_int_equal(len, 0);
	free(out);
	free(b);
}

/* Many periods and threads: every thread in every period, sizes exact. */
/* With RAPL readings in the model: magic 3, the package power in watts per
 * period, interpolated between readings. */
static void test_power_from_energy(void **state)
{
	struct fixture *fx = *state;
	struct model_energy *e;
	struct ref_file r;
	unsigned char *b;
	char path[256];
	size_t len;

	build_scenario(fx);
	/* from 1 mJ at the start: 20 W for 2 ms (40 mJ), then 50 W for 2 ms */
	e = MODEL_VEC_PUSH(fx->m.energy);
	e->time_ns = S0;
	e->energy_uj = 1000;
	e = MODEL_VEC_PUSH(fx->m.energy);
	e->time_ns = S0 + 2 * MS;
	e->energy_uj = 41000;
	e = MODEL_VEC_PUSH(fx->m.energy);
	e->time_ns = S0 + 4 * MS;
	e->energy_uj = 141000;
	assert_int_equal(sampler_write(&fx->m, &fx->opts), 0);
	snprintf(path, sizeof(path), "%s/sampler/work.4242.prof", fx->dir);
	b = read_all(path, &len);
	memset(&r, 0, sizeof(r));
	ref_decode(b, len, false, &r);
	assert_int_equal(r.magic, 3);
	assert_int_equal(r.n_samples, 4);
	if (fabs(r.s[0].pmu - 20.0) > 1e-6)
		fail_msg("watts %f %f %f %f", r.s[0].pmu, r.s[1].pmu, r.s[2].pmu, r.s[3].pmu);
	assert_true(fabs(r.s[1].pmu - 20.0) < 1e-6);
	assert_true(fabs(r.s[2].pmu - 50.0) < 1e-6);
	/* the last period ends at 3.5 ms: 0.5 ms at 50 W over a 1 ms period */
	assert_true(fabs(r.s[3].pmu - 50.0) < 1e-6 || fabs(r.s[3].pmu - 25.0) < 1e-6);
	free(b);
}

static void test_many_periods(void **state)
{
	struct fixture *fx = *state;
	struct model *m = &fx->m;
	struct sampler_profile p;
	struct format_error err;
	uint32_t proc, th[3];
	char path[256];

	m->run.end_ns = S0 + 10000 * MS; /* 10 s: 10^4 periods */
	proc = model_add_process(m, 5, 1, 0, "many", NULL, NULL);
	for (int i = 0; i < 3; i++)
		th[i] = model_add_thread(m, proc, 100000 + i, "many");
	for (uint64_t i = 0; i < 30000; i++)
		add_sample(m, proc, th[i % 3], S0 + i * MS / 3, 0x401000 + i, i * 100);
	assert_int_equal(sampler_write(m, &fx->opts), 0);
	snprintf(path, sizeof(path), "%s/sampler/many.5.prof", fx->dir);
	assert_int_equal(sampler_read_file(path, SAMPLER_LAYOUT_AUTO, &p, &err), 0);
	assert_int_equal(p.n_samples, 10000);
	assert_int_equal(p.n_threads, 30000);
	assert_int_equal(sampler_check_cputime(&p, &err), 0);
	for (uint64_t i = 0; i < 10000; i++)
		assert_true(fabs(p.samples[i].pmu - 3.0) < 1e-12);
	sampler_profile_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty_model_writes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reference_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spec_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_names_and_one_sample, setup, teardown),
		cmocka_unit_test(test_reader_rejects),
		cmocka_unit_test_setup_teardown(test_dump, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_from_energy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_periods, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
