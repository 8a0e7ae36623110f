// SPDX-License-Identifier: GPL-2.0
/*
 * DCPI writer, reader and dump.  Every expected value is derived from
 * dcpiformat(4) and the project's rules (specs README, issue 3) by hand, not
 * copied from the writer's output: the header text, the chunk bytes, the
 * footer, the chunk split (join iff <= 2 zero counts), the file names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/format.h"
#include "formats/dcpi/dcpi.h"
#include "formats/dcpi/dcpi_reader.h"
#include "model/model.h"
#include "unit_files.h"

#define T0_SEC 1700000000ULL  /* 2023-11-14 22:13:20 UTC (date -u -d @1700000000) */

struct fixture {
	char dir[64];
	struct export_options opts;
	struct model m;
	uint32_t img, proc, thread;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct model_image tmpl = {
		.path = "/usr/bin/work", .kind = MODEL_IMAGE_ELF, .has_symbols = false,
		.mtime = (int64_t)T0_SEC, .crc32 = 0x12abcdef,
		.text_start = 0x1040, .text_size = 0x2000,
	};
	struct model_mapping map = {
		.start = 0x555555555000, .end = 0x555555557040, .pgoff = 0x1000,
		.bias = 0x555555554000, .exec = true,
	};

	strcpy(fx->dir, "/tmp/test_dcpi.XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	fx->opts.dir = fx->dir;
	fx->opts.quiet = true;
	model_init(&fx->m);
	fx->m.run.start_ns = T0_SEC * 1000000000ULL + 123;
	fx->m.run.end_ns = fx->m.run.start_ns + 5000000000ULL;
	fx->m.run.freq_hz = 1000;
	fx->m.run.period_ns = 1000000;
	fx->m.run.cpu_mhz = 2400;
	fx->m.run.ncpus = 4;
	fx->img = model_add_image(&fx->m, &tmpl);
	fx->proc = model_add_process(&fx->m, 100, 1, 0, "work", "work", "/usr/bin/work");
	map.image = fx->img;
	model_add_mapping(&fx->m, fx->proc, &map);
	fx->thread = model_add_thread(&fx->m, fx->proc, 100, "work");
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

/* A sample whose stack's frame 0 is (image, addr). */
static void add_sample_at(struct model *m, uint32_t proc, uint32_t thread, uint32_t image,
			  uint64_t addr, bool kernel)
{
	uint32_t loc = model_intern_location(m, image, addr, MODEL_NONE, MODEL_NONE, 0, NULL, 0);
	uint32_t stack = model_intern_stack(m, &loc, 1, kernel ? 1 : 0, false);
	struct model_sample *s = model_add_sample(m);

	s->process = proc;
	s->thread = thread;
	s->stack = stack;
	s->kernel_mode = kernel;
	s->weight = m->run.period_ns;
}

/* A sample with no stack: only its runtime user PC. */
static void add_sample_pc(struct model *m, uint32_t proc, uint32_t thread, uint64_t pc)
{
	struct model_sample *s = model_add_sample(m);

	s->process = proc;
	s->thread = thread;
	s->stack = MODEL_NONE;
	s->user_pc = pc;
	s->weight = m->run.period_ns;
}

static unsigned char *read_all(const char *path, size_t *len)
{
	return unit_slurp(path, len);
}

static uint32_t le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void profile_path(char *buf, size_t n, const struct fixture *fx, const char *name)
{
	snprintf(buf, n, "%s/dcpi/%s", fx->dir, name);
}

static void read_profile(const struct fixture *fx, const char *name, struct dcpi_profile *p)
{
	struct format_error err;
	char path[256];
	int rc;

	profile_path(path, sizeof(path), fx, name);
	rc = dcpi_read_file(path, p, &err);
	if (rc)
		fail_msg("%s: offset %zu: %s", path, err.offset, err.reason);
}

static void test_empty_model_writes_nothing(void **state)
{
	struct fixture *fx = *state;
	struct stat st;
	char path[256];

	assert_int_equal(dcpi_write(&fx->m, &fx->opts), 0);
	snprintf(path, sizeof(path), "%s/dcpi", fx->dir);
	assert_int_equal(stat(path, &st), -1);
}

/* One sample, the whole file checked byte by byte against the grammar. */
static void test_one_sample_exact_bytes(void **state)
{
	struct fixture *fx = *state;
	const char *expect =
		"image 20231114221320abcdef\n"  /* mtime UTC + low 6 hex of the CRC */
		"epoch 2311142213\n"            /* run start, UTC YYMMDDHHMM */
		"platform linux-x86_64\n"
		"event cpu-clock ns\n"
		"period 1000000\n"
		"tsize 8192\n"
		"tstart 1040\n"
		"cpuspeed 2400\n"
		"cpucount 4\n"
		"path /usr/bin/work\n"
		"version 0.07\n"
		"samples";
	size_t elen = strlen(expect), len, h;
	unsigned char *b;
	char path[256];

	add_sample_at(&fx->m, fx->proc, fx->thread, fx->img, 0x1050, false);
	assert_int_equal(dcpi_write(&fx->m, &fx->opts), 0);
	profile_path(path, sizeof(path), fx, "work.prof");
	b = read_all(path, &len);
	assert_memory_equal(b, expect, elen);
	/* spaces after "samples" up to a multiple of 4, then the newline */
	for (h = elen; h < len && b[h] == ' '; h++)
		;
	assert_true(h < len && b[h] == '\n');
	h++;
	assert_int_equal(h % 4, 0);
	assert_true(h - elen - 1 < 4);
	/* one chunk {offset 0x1050 - 0x1040, number 1, count 1}, footer {1, 1} */
	assert_int_equal(len, h + 12 + 8);
	assert_int_equal(le32(b + h), 0x10);
	assert_int_equal(le32(b + h + 4), 1);
	assert_int_equal(le32(b + h + 8), 1);
	assert_int_equal(le32(b + h + 12), 1);
	assert_int_equal(le32(b + h + 16), 1);
	free(b);
}

/*
 * Gaps of 1 and 2 zero counts are joined (4 or 8 bytes of zeros cost no
 * more than an 8-byte chunk header), a gap of 3 starts a new chunk.
 */
static void test_chunk_split(void **state)
{
	struct fixture *fx = *state;
	/* offsets 0x10, 0x11 (x3), 0x13 (gap 1), 0x16 (gap 2), 0x1a (gap 3), 0x30 */
	const uint64_t addrs[] = { 0x1050, 0x1051, 0x1051, 0x1051, 0x1053, 0x1056, 0x105a,
				   0x1070 };
	const uint32_t want_counts[] = { 1, 3, 0, 1, 0, 0, 1 };
	struct dcpi_profile p;
	unsigned char *b;
	char path[256];
	size_t len;

	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++)
		add_sample_at(&fx->m, fx->proc, fx->thread, fx->img, addrs[i], false);
	assert_int_equal(dcpi_write(&fx->m, &fx->opts), 0);
	read_profile(fx, "work.prof", &p);
	assert_int_equal(p.n_chunks, 3);
	assert_int_equal(p.chunks[0].offset, 0x10);
	assert_int_equal(p.chunks[0].number, 7);
	assert_memory_equal(p.counts, want_counts, sizeof(want_counts));
	assert_int_equal(p.chunks[1].offset, 0x1a);
	assert_int_equal(p.chunks[1].number, 1);
	assert_int_equal(p.chunks[2].offset, 0x30);
	assert_int_equal(p.chunks[2].number, 1);
	assert_int_equal(p.total_offsets, 6);
	assert_int_equal(p.total_samples, 8);
	assert_int_equal(p.tstart, 0x1040);
	/* and the file is exactly that: 3 chunk headers, 9 counts, footer */
	profile_path(path, sizeof(path), fx, "work.prof");
	b = read_all(path, &len);
	assert_int_equal(len, p.header_len + 3 * 8 + 9 * 4 + 8);
	free(b);
	dcpi_profile_free(&p);
}

/* Two processes mapping the same file at different addresses merge; a
 * stackless sample resolves through its mapping; kernel samples get their
 * own profile relative to _stext. */
static void test_merge_and_kernel(void **state)
{
	struct fixture *fx = *state;
	struct model_image ktmpl = {
		.path = "[kernel.kallsyms]", .kind = MODEL_IMAGE_KERNEL, .has_symbols = true,
		.text_start = 0xffffffff81000000ULL, .text_size = 0x1000000,
	};
	struct model_mapping map = {
		.start = 0x7f0000001000, .end = 0x7f0000003040, .pgoff = 0x1000,
		.bias = 0x7f0000000000, .exec = true, .image = fx->img,
	};
	uint32_t kimg = model_add_image(&fx->m, &ktmpl);
	uint32_t p2 = model_add_process(&fx->m, 200, 1, 0, "other", NULL, NULL);
	uint32_t t2 = model_add_thread(&fx->m, p2, 200, "other");
	struct dcpi_profile p, k;

	model_add_mapping(&fx->m, p2, &map);
	add_sample_at(&fx->m, fx->proc, fx->thread, fx->img, 0x1100, false);
	add_sample_at(&fx->m, p2, t2, fx->img, 0x1100, false);
	add_sample_pc(&fx->m, p2, t2, 0x7f0000001100);             /* file address 0x1100 */
	add_sample_pc(&fx->m, fx->proc, fx->thread, 0x555555555101); /* 0x1101 */
	add_sample_at(&fx->m, p2, t2, kimg, 0xffffffff81000010ULL, true);
	add_sample_at(&fx->m, p2, t2, kimg, 0xffffffff81000010ULL, true);
	assert_int_equal(dcpi_write(&fx->m, &fx->opts), 0);

	read_profile(fx, "work.prof", &p);
	assert_int_equal(p.n_chunks, 1);
	assert_int_equal(p.chunks[0].offset, 0x1100 - 0x1040);
	assert_int_equal(p.chunks[0].number, 2);
	assert_int_equal(p.counts[0], 3);
	assert_int_equal(p.counts[1], 1);
	assert_int_equal(p.total_samples, 4);
	dcpi_profile_free(&p);

	read_profile(fx, "kernel.kallsyms.prof", &k);
	assert_string_equal(k.path, "[kernel.kallsyms]");
	assert_true(k.has_tstart);
	assert_int_equal(k.tstart, 0xffffffff81000000ULL);
	assert_int_equal(k.tsize, 0x1000000);
	assert_int_equal(k.n_chunks, 1);
	assert_int_equal(k.chunks[0].offset, 0x10);
	assert_int_equal(k.counts[0], 2);
	assert_int_equal(k.total_offsets, 1);
	assert_int_equal(k.total_samples, 2);
	/* unknown mtime: 1970-01-01 00:00:00 and CRC 0 */
	assert_string_equal(k.image, "19700101000000000000");
	dcpi_profile_free(&k);
}

static void test_address_zero(void **state)
{
	struct fixture *fx = *state;
	struct model_image tmpl = { .path = "/opt/zero.so", .kind = MODEL_IMAGE_ELF,
				    .text_start = 0, .text_size = 0x100 };
	uint32_t img = model_add_image(&fx->m, &tmpl);
	struct dcpi_profile p;

	add_sample_at(&fx->m, fx->proc, fx->thread, img, 0, false);
	assert_int_equal(dcpi_write(&fx->m, &fx->opts), 0);
	read_profile(fx, "zero.so.prof", &p);
	assert_int_equal(p.n_chunks, 1);
	assert_int_equal(p.chunks[0].offset, 0);
	assert_int_equal(p.chunks[0].number, 1);
	assert_int_equal(p.counts[0], 1);
	assert_int_equal(p.tstart, 0);
	dcpi_profile_free(&p);
}

/* Same base name, different files: distinct safe names; odd characters and
 * leading dots never reach the file system. */
static void test_file_names(void **state)
{
	struct fixture *fx = *state;
	struct model_image a = { .path = "/a/libx.so", .kind = MODEL_IMAGE_ELF };
	struct model_image b = { .path = "/b/libx.so", .kind = MODEL_IMAGE_ELF };
	struct model_image c = { .path = "/c/..hidden lib\n", .kind = MODEL_IMAGE_ELF };
	struct model_image jit = { .path = "[anon:jit]", .kind = MODEL_IMAGE_ANON };
	uint32_t ia = model_add_image(&fx->m, &a), ib = model_add_image(&fx->m, &b);
	uint32_t ic = model_add_image(&fx->m, &c), ij = model_add_image(&fx->m, &jit);
	struct dcpi_profile p;
	struct stat st;
	char path[256];

	add_sample_at(&fx->m, fx->proc, fx->thread, ia, 0x10, false);
	add_sample_at(&fx->m, fx->proc, fx->thread, ib, 0x20, false);
	add_sample_at(&fx->m, fx->proc, fx->thread, ic, 0x30, false);
	add_sample_at(&fx->m, fx->proc, fx->thread, ij, 0x40, false);
	assert_int_equal(dcpi_write(&fx->m, &fx->opts), 0);
	read_profile(fx, "libx.so.prof", &p);
	assert_string_equal(p.path, "/a/libx.so");
	dcpi_profile_free(&p);
	read_profile(fx, "libx.so~2.prof", &p);
	assert_string_equal(p.path, "/b/libx.so");
	dcpi_profile_free(&p);
	read_profile(fx, "_.hidden_lib_.prof", &p);
	assert_string_equal(p.path, "/c/..hidden lib?"); /* the newline cannot be in a line */
	dcpi_profile_free(&p);
	/* anonymous text (JIT) has no file: no profile */
	profile_path(path, sizeof(path), fx, "anon_jit.prof");
	assert_int_equal(stat(path, &st), -1);
}

static void encode_to_buffer(const struct dcpi_image_info *info,
			     const struct dcpi_addr_count *c, size_t n,
			     struct dcpi_encode_stats *st, char **buf, size_t *len)
{
	FILE *fp = open_memstream(buf, len);

	assert_non_null(fp);
	assert_int_equal(dcpi_encode(fp, info, c, n, st), 0);
	assert_int_equal(fclose(fp), 0);
}

/* Counts above u32 are clamped, never wrapped, and a header line says so;
 * addresses before tstart cannot be encoded and are counted as outside. */
static void test_clamp_and_outside(void **state)
{
	struct dcpi_image_info info = { .path = "/x", .tstart = 0x1000, .tsize = 0x100,
					.period = 1000, .event = "cpu-clock" };
	struct dcpi_addr_count c[] = {
		{ 0x0ff0, 7 },                    /* before tstart */
		{ 0x1000, 0x100000005ULL },       /* would wrap to 5 */
		{ 0x1001, 3 },
		{ 0x1000 + 0x100000000ULL, 1 },   /* offset beyond u32 */
	};
	struct dcpi_encode_stats st;
	struct dcpi_profile p;
	struct format_error err;
	char *buf = NULL;
	size_t len = 0;

	(void)state;
	encode_to_buffer(&info, c, 4, &st, &buf, &len);
	assert_int_equal(st.outside, 8);
	assert_int_equal(st.clamped, 2); /* one count and the footer total */
	assert_int_equal(dcpi_parse((unsigned char *)buf, len, &p, &err), 0);
	assert_int_equal(p.clamped, 2);
	assert_int_equal(p.n_counts, 2);
	assert_int_equal(p.counts[0], UINT32_MAX);
	assert_int_equal(p.counts[1], 3);
	assert_int_equal(p.total_offsets, 2);
	assert_int_equal(p.total_samples, UINT32_MAX);
	assert_non_null(strstr(buf, "\noutside 8\n"));
	dcpi_profile_free(&p);
	free(buf);

	/* no addresses at all: header and the footer {0, 0} */
	buf = NULL;
	encode_to_buffer(&info, c, 0, &st, &buf, &len);
	assert_int_equal(dcpi_parse((unsigned char *)buf, len, &p, &err), 0);
	assert_int_equal(p.n_chunks, 0);
	assert_int_equal(p.header_len % 4, 0);
	assert_int_equal(len, p.header_len + 8);
	assert_null(strstr(buf, "clamped"));
	dcpi_profile_free(&p);
	free(buf);
}

/* 10^6 distinct addresses: 1000 runs of 1000 contiguous addresses, 10
 * unsampled bytes apart, through stackless samples. */
static void test_million_addresses(void **state)
{
	struct fixture *fx = *state;
	struct dcpi_profile p;

	fx->m.images.items[fx->img].text_size = 0x1000000;
	for (uint64_t i = 0; i < 1000000; i++)
		add_sample_pc(&fx->m, fx->proc, fx->thread,
			      0x555555555040 + i + (i / 1000) * 10);
	/* the mapping must cover them */
	fx->m.processes.items[fx->proc].maps.items[0].end = 0x555555555040 + 0x200000;
	assert_int_equal(dcpi_write(&fx->m, &fx->opts), 0);
	read_profile(fx, "work.prof", &p);
	assert_int_equal(p.n_chunks, 1000);
	assert_int_equal(p.n_counts, 1000000);
	assert_int_equal(p.total_offsets, 1000000);
	assert_int_equal(p.total_samples, 1000000);
	assert_int_equal(p.chunks[999].offset, 999 * 1010);
	assert_int_equal(p.chunks[999].number, 1000);
	dcpi_profile_free(&p);
}

/* ---- the reader against malformed input --------------------------------- */

static const char good_header[] =
	"image 20231114221320abcdef\nepoch 2311142213\nplatform p\nevent e\nperiod 1\n"
	"tsize 10\ncpuspeed 0\nsamples\n";

/* header + u32 words; expects rejection at `offset` (relative to the
 * binary part when rel_binary) with `reason` in the message */
static void expect_reject(const char *header, const uint32_t *words, size_t n_words,
			  size_t offset, bool rel_binary, const char *reason)
{
	size_t hl = strlen(header), len = hl + n_words * 4;
	unsigned char *buf = malloc(len + 1);
	struct dcpi_profile p;
	struct format_error err;

	memcpy(buf, header, hl);
	for (size_t i = 0; i < n_words; i++)
		for (int k = 0; k < 4; k++)
			buf[hl + i * 4 + k] = words[i] >> (8 * k);
	assert_int_equal(dcpi_parse(buf, len, &p, &err), -EINVAL);
	if (!strstr(err.reason, reason))
		fail_msg("reason '%s' lacks '%s'", err.reason, reason);
	assert_int_equal(err.offset, offset + (rel_binary ? hl : 0));
	free(buf);
}

static void test_reader_accepts_minimal(void **state)
{
	const uint32_t words[] = { 0, 2, 5, 0, 1, 5 };
	size_t hl = strlen(good_header);
	unsigned char buf[512];
	struct dcpi_profile p;
	struct format_error err;

	(void)state;
	memcpy(buf, good_header, hl);
	memcpy(buf + hl, words, sizeof(words));
	assert_int_equal(dcpi_parse(buf, hl + sizeof(words), &p, &err), 0);
	assert_int_equal(p.n_lines, 7);
	assert_int_equal(p.period, 1);
	assert_int_equal(p.tsize, 10);
	assert_false(p.has_tstart);
	assert_null(p.version);
	dcpi_profile_free(&p);
	/* no chunks at all: only the footer {0, 0} */
	memcpy(buf + hl, (uint32_t[]){ 0, 0 }, 8);
	assert_int_equal(dcpi_parse(buf, hl + 8, &p, &err), 0);
	assert_int_equal(p.n_chunks, 0);
	dcpi_profile_free(&p);
}

static void test_reader_rejects(void **state)
{
	const uint32_t footer0[] = { 0, 0 };
	char h[512];

	(void)state;
	expect_reject("image 1\nepoch 2311142213\n", NULL, 0, 25, false, "terminator");
	expect_reject("image 1\n", footer0, 2, 8, false, "terminator");
	/* a required line missing, twice, or malformed */
	expect_reject("image 1\nepoch 2311142213\nplatform p\nevent e\nperiod 1\ncpuspeed 0\n"
		      "samples\n", footer0, 2, 71, false, "'tsize'");
	snprintf(h, sizeof(h), "image 2\n%s", good_header);
	expect_reject(h, footer0, 2, 8, false, "more than once");
	expect_reject("image 12g\n", footer0, 2, 6, false, "malformed value of header line 'image'");
	expect_reject("epoch 2313142213\n", footer0, 2, 6, false, "'epoch'");
	expect_reject("period 1x\n", footer0, 2, 7, false, "'period'");
	expect_reject("period 99999999999999999999\n", footer0, 2, 7, false, "too large");
	expect_reject("version 1.01\n", footer0, 2, 8, false, "unsupported");
	expect_reject(" image 1\n", footer0, 2, 0, false, "keyword");
	expect_reject("image\n", footer0, 2, 5, false, "keyword without");
	expect_reject("image  \n", footer0, 2, 7, false, "without value");
	{
		/* a NUL inside a header line */
		static const unsigned char nul[] = "image 1\0\nsamples\n\0\0\0\0\0\0\0";
		struct dcpi_profile p;
		struct format_error err;

		assert_int_equal(dcpi_parse(nul, sizeof(nul) - 1, &p, &err), -EINVAL);
		assert_int_equal(err.offset, 7);
		assert_non_null(strstr(err.reason, "NUL"));
	}
	/* binary part */
	expect_reject(good_header, (uint32_t[]){ 0 }, 1, 0, true, "footer");
	expect_reject(good_header, (uint32_t[]){ 0, 0, 0, 0 }, 4, 4, true, "no addresses");
	expect_reject(good_header, (uint32_t[]){ 0, 3, 1, 1, 0, 0 }, 6, 4, true,
		      "runs past the footer");
	expect_reject(good_header, (uint32_t[]){ 7, 1, 1, 9, 1, 1 }, 6, 12, true,
		      "truncated chunk");
	/* overlapping: chunk [4, 6) then one at 5; decreasing: then at 2 */
	expect_reject(good_header, (uint32_t[]){ 4, 2, 1, 1, 5, 1, 1, 3, 3 }, 9, 16, true,
		      "not after");
	expect_reject(good_header, (uint32_t[]){ 4, 1, 1, 2, 1, 1, 2, 2 }, 8, 12, true,
		      "not after");
	/* adjacent chunks are fine, footer must match */
	expect_reject(good_header, (uint32_t[]){ 4, 1, 1, 5, 1, 0, 2, 1 }, 8, 24, true,
		      "sampled addresses");
	expect_reject(good_header, (uint32_t[]){ 4, 1, 9, 1, 8 }, 5, 16, true, "samples");
	/* a total that does not fit u32 is only valid as UINT32_MAX with "clamped" */
	expect_reject(good_header, (uint32_t[]){ 4, 2, UINT32_MAX, 1, 2, UINT32_MAX }, 6, 20,
		      true, "clamped");
}

/* ---- collector dump ------------------------------------------------------ */

static void test_dump(void **state)
{
	struct fixture *fx = *state;
	char path[256], *out = NULL;
	size_t len = 0, flen;
	unsigned char *b;
	FILE *fp;
	int fd;

	add_sample_at(&fx->m, fx->proc, fx->thread, fx->img, 0x1050, false);
	add_sample_at(&fx->m, fx->proc, fx->thread, fx->img, 0x1052, false);
	assert_int_equal(dcpi_write(&fx->m, &fx->opts), 0);
	profile_path(path, sizeof(path), fx, "work.prof");
	b = read_all(path, &flen);
	assert_true(dcpi_recognize(path, b, flen));
	assert_false(dcpi_recognize(path, (const unsigned char *)"# callgrind", 11));
	assert_false(dcpi_recognize(path, (const unsigned char *)"\0\0\0\0", 4));
	assert_string_equal(dcpi_format.name, "dcpi");

	fp = open_memstream(&out, &len);
	assert_int_equal(dcpi_dump(path, fp, false), 0);
	fclose(fp);
	assert_non_null(strstr(out, "image 20231114221320abcdef\n"));
	assert_non_null(strstr(out, "\nsamples\nchunk offset 0x10 number 3\n"
				    "  0x1050 1\n  0x1051 0\n  0x1052 1\n"
				    "total_offsets 2\ntotal_samples 2\n"));
	free(out);

	out = NULL;
	fp = open_memstream(&out, &len);
	assert_int_equal(dcpi_dump(path, fp, true), 0);
	fclose(fp);
	assert_int_equal(len, 0);
	free(out);

	/* one wrong footer byte: check fails */
	b[flen - 1] ^= 0x40;
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, flen), (ssize_t)flen);
	close(fd);
	fp = fopen("/dev/null", "w");
	assert_int_equal(dcpi_dump(path, fp, true), -EINVAL);
	fclose(fp);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty_model_writes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_sample_exact_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_split, setup, teardown),
		cmocka_unit_test_setup_teardown(test_merge_and_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_address_zero, setup, teardown),
		cmocka_unit_test_setup_teardown(test_file_names, setup, teardown),
		cmocka_unit_test(test_clamp_and_outside),
		cmocka_unit_test_setup_teardown(test_million_addresses, setup, teardown),
		cmocka_unit_test(test_reader_accepts_minimal),
		cmocka_unit_test(test_reader_rejects),
		cmocka_unit_test_setup_teardown(test_dump, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
