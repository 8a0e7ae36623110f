// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind writer and reader.  Models are built here by hand; every file
 * written is read back with our reader, checked byte by byte against the
 * rules of the spec and of the real readers (specs/README.md), and run
 * through the real callgrind_annotate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats/callgrind/callgrind_reader.h"
#include "formats/format.h"
#include "formats/callgrind/callgrind.h"
#include "model/model.h"

/* ---- helpers -------------------------------------------------------------- */

struct tmpdir {
	char path[64];
	struct export_options opts;
};

static void tmpdir_make(struct tmpdir *t)
{
	strcpy(t->path, "/tmp/test_callgrind.XXXXXX");
	assert_non_null(mkdtemp(t->path));
	memset(&t->opts, 0, sizeof(t->opts));
	t->opts.dir = t->path;
	t->opts.quiet = true;
}

static void tmpdir_remove(struct tmpdir *t)
{
	DIR *d = opendir(t->path);
	struct dirent *e;
	char p[512];

	assert_non_null(d);
	if (getenv("CALLGRIND_TEST_KEEP")) { /* for looking at the files */
		fprintf(stderr, "kept %s\n", t->path);
		closedir(d);
		return;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", t->path, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(t->path);
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	buf[len] = 0;
	fclose(f);
	if (n)
		*n = (size_t)len;
	return buf;
}

static void read_ok(const char *path, struct callgrind_profile *p)
{
	struct format_error err;
	int ret = callgrind_read_file(path, p, &err);

	if (ret)
		fail_msg("%s: offset %zu: %s", path, err.offset, err.reason);
}

/* Line-level rules of the spec and of the real readers, on the raw bytes. */
static void check_layout(const char *text)
{
	const char *events = strstr(text, "\nevents: ");
	const char *summary = strstr(text, "\nsummary: ");
	const char *positions = strstr(text, "\npositions: ");
	const char *line, *prev[3] = { "", "", "" };
	size_t fl_seen = 0;

	assert_memory_equal(text, "# callgrind format\nversion: 1\ncreator: ", 39);
	assert_non_null(strstr(text, "\npid: "));
	assert_non_null(strstr(text, "\ncmd: "));
	/* KCachegrind: "\nevents:" within the first 2047 bytes */
	assert_non_null(events);
	assert_true(events + 8 - text <= 2047);
	/* KCachegrind starts a new part at positions:, needs events: before
	 * summary:; callgrind_annotate reads event: and desc: only before
	 * events: */
	assert_non_null(positions);
	assert_true(positions < events);
	assert_non_null(summary);
	assert_true(summary > events);
	for (const char *e = strstr(text, "\nevent: "); e; e = strstr(e + 1, "\nevent: "))
		assert_true(e < events);
	for (const char *d = strstr(text, "\ndesc: "); d; d = strstr(d + 1, "\ndesc: "))
		assert_true(d < events);
	assert_null(strchr(text, '\t'));
	assert_null(strstr(text, "\ncfl="));
	assert_null(strstr(text, "\njump="));
	assert_null(strstr(text, "\njcnd="));
	/* every calls= right after cob=, cfi=, cfn=; fl= before the first fn= */
	for (line = text; *line; line = strchr(line, '\n') + 1) {
		if (!strncmp(line, "fl=", 3))
			fl_seen++;
		if (!strncmp(line, "fn=", 3))
			assert_true(fl_seen > 0);
		if (!strncmp(line, "calls=", 6)) {
			assert_memory_equal(prev[0], "cob=", 4);
			assert_memory_equal(prev[1], "cfi=", 4);
			assert_memory_equal(prev[2], "cfn=", 4);
		}
		if (!strncmp(line, "0x", 2) || line[0] == '+' || line[0] == '-' || line[0] == '*')
			assert_true(fl_seen > 0);
		prev[0] = prev[1];
		prev[1] = prev[2];
		prev[2] = line;
		if (!strchr(line, '\n'))
			break;
	}
	/* totals: is the last line */
	assert_non_null(strstr(text, "\ntotals: "));
	assert_int_equal(strchr(strstr(text, "\ntotals: ") + 1, '\n')[1], 0);
}

/* Sums of the self costs of a function (by name) in a profile. */
static uint64_t self_of(const struct callgrind_profile *p, const char *fn, size_t ev)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < p->n_records; i++) {
		const struct callgrind_record *r = &p->records[i];

		if (r->kind == CALLGRIND_COST && !strcmp(callgrind_name(p, r->function), fn))
			sum += callgrind_record_costs(p, r)[ev];
	}
	return sum;
}

static const struct callgrind_record *find_call(const struct callgrind_profile *p,
						const char *caller, const char *callee, int nth)
{
	for (size_t i = 0; i < p->n_records; i++) {
		const struct callgrind_record *r = &p->records[i];

		if (r->kind == CALLGRIND_CALL && !strcmp(callgrind_name(p, r->function), caller) &&
		    !strcmp(callgrind_name(p, r->called_function), callee) && nth-- == 0)
			return r;
	}
	return NULL;
}

/* ---- a small model -------------------------------------------------------- */

struct fixture {
	struct model m;
	uint32_t exe, lib, kernel, stripped;
	uint32_t f_start, f_main, f_work, f_hot, f_cold, f_sys, f_inl;
	uint32_t file_main, file_lib, file_hdr;
	uint32_t proc, thread;
};

static uint32_t loc(struct fixture *fx, uint32_t image, uint64_t addr, uint32_t fn, uint32_t file,
		    uint32_t line)
{
	return model_intern_location(&fx->m, image, addr, fn, file, line, NULL, 0);
}

static void sample(struct fixture *fx, const uint32_t *frames, uint32_t n, uint32_t n_kernel,
		   uint64_t weight, int times)
{
	uint32_t st = model_intern_stack(&fx->m, frames, n, n_kernel, false);

	for (int i = 0; i < times; i++) {
		struct model_sample *s = model_add_sample(&fx->m);

		s->time_ns = 1000 + fx->m.samples.len;
		s->weight_ns = weight;
		s->process = fx->proc;
		s->thread = fx->thread;
		s->stack = st;
		s->kernel_mode = n_kernel > 0;
	}
}

/*
 * _start -> main -> work -> hot (libhot.so, PIE library), 70 samples in hot,
 * 20 in work itself, 10 in cold via main, plus 5 in a syscall from hot.
 */
static void fixture_build(struct fixture *fx)
{
	struct model_image exe = { .path = "/usr/bin/demo", .kind = MODEL_IMAGE_ELF,
				   .has_symbols = true };
	struct model_image lib = { .path = "/usr/lib/libhot.so", .kind = MODEL_IMAGE_ELF,
				   .has_symbols = true };
	struct model_image kern = { .path = "[kernel.kallsyms]", .kind = MODEL_IMAGE_KERNEL,
				    .has_symbols = true };
	uint32_t l_start, l_main_work, l_main_cold, l_work_hot, l_work_self, l_hot1, l_hot2;
	uint32_t l_cold, l_hot_sys, l_sys;

	memset(fx, 0, sizeof(*fx));
	model_init(&fx->m);
	fx->m.run.freq_hz = 1000;
	fx->m.run.period_ns = 1000000;
	fx->exe = model_add_image(&fx->m, &exe);
	fx->lib = model_add_image(&fx->m, &lib);
	fx->kernel = model_add_image(&fx->m, &kern);
	fx->file_main = model_intern_file(&fx->m, "/src/demo/main.c");
	fx->file_lib = model_intern_file(&fx->m, "/src/hot/hot.c");
	fx->f_start = model_intern_function(&fx->m, fx->exe, "_start", 0x1040, 0x20, MODEL_NONE, 0);
	fx->f_main = model_intern_function(&fx->m, fx->exe, "main", 0x1140, 0x80, fx->file_main, 20);
	fx->f_work = model_intern_function(&fx->m, fx->exe, "work", 0x1200, 0x40, fx->file_main, 10);
	fx->f_cold = model_intern_function(&fx->m, fx->exe, "cold", 0x1240, 0x40, fx->file_main, 5);
	fx->f_hot = model_intern_function(&fx->m, fx->lib, "hot", 0x2100, 0x100, fx->file_lib, 3);
	fx->f_sys = model_intern_function(&fx->m, fx->kernel, "do_syscall_64",
					  0xffffffff81a00000ULL, 0x100, MODEL_NONE, 0);
	l_start = loc(fx, fx->exe, 0x1050, fx->f_start, MODEL_NONE, 0);
	l_main_work = loc(fx, fx->exe, 0x1160, fx->f_main, fx->file_main, 25);
	l_main_cold = loc(fx, fx->exe, 0x1170, fx->f_main, fx->file_main, 26);
	l_work_hot = loc(fx, fx->exe, 0x1210, fx->f_work, fx->file_main, 12);
	l_work_self = loc(fx, fx->exe, 0x1220, fx->f_work, fx->file_main, 13);
	l_cold = loc(fx, fx->exe, 0x1250, fx->f_cold, fx->file_main, 6);
	l_hot1 = loc(fx, fx->lib, 0x2110, fx->f_hot, fx->file_lib, 4);
	l_hot2 = loc(fx, fx->lib, 0x2120, fx->f_hot, fx->file_lib, 5);
	l_hot_sys = loc(fx, fx->lib, 0x2130, fx->f_hot, fx->file_lib, 6);
	l_sys = loc(fx, fx->kernel, 0xffffffff81a00010ULL, fx->f_sys, MODEL_NONE, 0);

	fx->proc = model_add_process(&fx->m, 4242, 1, 0, "demo", "./demo --fast", "/usr/bin/demo");
	fx->thread = model_add_thread(&fx->m, fx->proc, 4242, "demo");
	{
		uint32_t s1[] = { l_hot1, l_work_hot, l_main_work, l_start };
		uint32_t s2[] = { l_hot2, l_work_hot, l_main_work, l_start };
		uint32_t s3[] = { l_work_self, l_main_work, l_start };
		uint32_t s4[] = { l_cold, l_main_cold, l_start };
		uint32_t s5[] = { l_sys, l_hot_sys, l_work_hot, l_main_work, l_start };

		sample(fx, s1, 4, 0, 1000000, 40);
		sample(fx, s2, 4, 0, 1000000, 30);
		sample(fx, s3, 3, 0, 1000000, 20);
		sample(fx, s4, 3, 0, 1000000, 10);
		sample(fx, s5, 5, 1, 1000000, 5);
	}
}

static void write_and_path(struct fixture *fx, struct tmpdir *t, const char *name, char *path,
			   size_t n)
{
	assert_int_equal(callgrind_write(&fx->m, &t->opts), 0);
	snprintf(path, n, "%s/%s", t->path, name);
	assert_int_equal(access(path, R_OK), 0);
}

/* ---- tests ---------------------------------------------------------------- */

static void test_round_trip_fields(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	const struct callgrind_record *r;
	char path[256], *text;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	assert_int_equal(count_files(t.path), 1);
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\npositions: instr line\nevent: Samples : "));
	assert_non_null(strstr(text, "\nevents: Samples Ns\nsummary: 105 105000000\n"));
	assert_non_null(strstr(text, "\ntotals: 105 105000000\n"));
	assert_non_null(strstr(text, "\ncmd: ./demo --fast\n"));
	assert_non_null(strstr(text, "\ndesc: Jumps: "));
	assert_non_null(strstr(text, "\ndesc: CallCounts: "));
	/* addresses in hex with 0x, kernel addresses as they are */
	assert_non_null(strstr(text, "\n0x2110 4 40 40000000\n"));
	assert_non_null(strstr(text, "0xffffffff81a00010 0 5 5000000\n"));
	assert_non_null(strstr(text, "ob=(3) [kernel.kallsyms]\n"));

	read_ok(path, &p);
	assert_true(p.has_format_line);
	assert_int_equal(p.version, 1);
	assert_string_equal(p.creator, "collector " COLLECTOR_VERSION);
	assert_true(p.has_pid);
	assert_int_equal(p.pid, 4242);
	assert_true(p.pos_instr && p.pos_line);
	assert_int_equal(p.n_events, 2);
	assert_string_equal(p.events[0], "Samples");
	assert_string_equal(p.events[1], "Ns");
	assert_non_null(p.event_long[1]);
	assert_int_equal(p.summary[0], 105);
	assert_int_equal(p.totals[1], 105000000);
	assert_int_equal(p.self_sum[0], 105);

	assert_int_equal(self_of(&p, "hot", 0), 70);
	assert_int_equal(self_of(&p, "work", 0), 20);
	assert_int_equal(self_of(&p, "cold", 0), 10);
	assert_int_equal(self_of(&p, "do_syscall_64", 0), 5);
	assert_int_equal(self_of(&p, "main", 0), 0);

	/* main -> work: every sample but cold's passes through it */
	r = find_call(&p, "main", "work", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 95);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 95);
	assert_int_equal(callgrind_record_costs(&p, r)[1], 95000000);
	assert_int_equal(r->addr, 0x1160);
	assert_int_equal(r->line, 25);
	assert_int_equal(r->target_addr, 0x1200); /* callee entry */
	assert_int_equal(r->target_line, 10);
	assert_string_equal(callgrind_name(&p, r->called_file), "/src/demo/main.c");
	/* work -> hot crosses objects: cob= and cfi= name the library */
	r = find_call(&p, "work", "hot", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 75);
	assert_string_equal(callgrind_name(&p, r->called_object), "/usr/lib/libhot.so");
	assert_string_equal(callgrind_name(&p, r->called_file), "/src/hot/hot.c");
	assert_string_equal(callgrind_name(&p, r->object), "/usr/bin/demo");
	/* user -> kernel */
	r = find_call(&p, "hot", "do_syscall_64", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 5);
	assert_int_equal(r->addr, 0x2130);
	assert_string_equal(callgrind_name(&p, r->called_object), "[kernel.kallsyms]");
	assert_string_equal(callgrind_name(&p, r->called_file), "???");
	/* _start has no file: "???" */
	r = find_call(&p, "_start", "main", 0);
	assert_non_null(r);
	assert_string_equal(callgrind_name(&p, r->fn_file), "???");
	assert_int_equal(callgrind_record_costs(&p, r)[0], 105);

	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Runs callgrind_annotate and returns its output. */
static char *annotate(const char *path, const char *opts)
{
	char cmd[512], *out = NULL;
	size_t len = 0, cap = 0;
	FILE *p;
	int c;

	snprintf(cmd, sizeof(cmd), "callgrind_annotate %s %s 2>&1", opts, path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while ((c = fgetc(p)) != EOF) {
		if (len + 2 > cap) {
			cap = cap ? cap * 2 : 4096;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		out[len++] = (char)c;
	}
	out = realloc(out, len + 1);
	out[len] = 0;
	assert_int_equal(pclose(p), 0);
	return out;
}

/* First function line of callgrind_annotate's table: "N (P%)  file:fn ..." */
static void first_function(const char *out, double *perc, char *name, size_t n)
{
	const char *l = strstr(out, "file:function");

	assert_non_null(l);
	l = strchr(l, '\n');
	while (l && (l[1] == '-' || l[1] == '\n'))
		l = strchr(l + 1, '\n');
	assert_non_null(l);
	l++;
	{
		const char *open = strchr(l, '(');
		const char *sp;

		assert_non_null(open);
		*perc = strtod(open + 1, NULL);
		sp = strstr(open, ")  ");
		assert_non_null(sp);
		sp += 3;
		while (*sp == ' ')
			sp++;
		snprintf(name, n, "%.*s", (int)strcspn(sp, " \n"), sp);
	}
}

static void test_callgrind_annotate(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	char path[256], name[128], *out;
	double perc;

	(void)state;
	if (system("command -v callgrind_annotate >/dev/null 2>&1")) {
		skip();
		return;
	}
	fixture_build(&fx);
	tmpdir_make(&t);
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));

	out = annotate(path, "");
	assert_null(strstr(out, "WARNING"));
	assert_non_null(strstr(out, "Events recorded:  Samples Ns"));
	assert_non_null(strstr(out, "./demo --fast (PID 4242)"));
	assert_non_null(strstr(out, "Jumps: no jump="));
	first_function(out, &perc, name, sizeof(name));
	assert_string_equal(name, "/src/hot/hot.c:hot");
	assert_true(perc > 66.0 && perc < 67.0); /* 70 of 105 */
	free(out);

	/* inclusive: _start is the root of every stack */
	out = annotate(path, "--inclusive=yes");
	assert_null(strstr(out, "WARNING"));
	first_function(out, &perc, name, sizeof(name));
	assert_true(perc > 99.9);
	assert_non_null(strstr(out, "105,000,000 (100.0%)  ???:_start"));
	assert_non_null(strstr(out, "95,000,000 (90.48%)  /src/demo/main.c:work"));
	free(out);

	tmpdir_remove(&t);
	model_free(&fx.m);
}

static void test_empty_profile(void **state)
{
	struct model m;
	struct tmpdir t;

	(void)state;
	model_init(&m);
	tmpdir_make(&t);
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	assert_int_equal(count_files(t.path), 0);
	/* a process without samples gets no file either */
	model_add_process(&m, 7, 1, 0, "idle", NULL, NULL);
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	assert_int_equal(count_files(t.path), 0);
	tmpdir_remove(&t);
	model_free(&m);
}

/* One sample at address 0 of an image without symbols, a pid and tid
 * above 65535, no command line (comm is used). */
static void test_one_sample_address_zero(void **state)
{
	struct model m;
	struct tmpdir t;
	struct model_image img = { .path = "/opt/blob.so", .kind = MODEL_IMAGE_ELF };
	struct callgrind_profile p;
	struct model_sample *s;
	uint32_t im, l0, st, proc, th;
	char path[256], *text;

	(void)state;
	model_init(&m);
	tmpdir_make(&t);
	im = model_add_image(&m, &img);
	l0 = model_intern_location(&m, im, 0, MODEL_NONE, MODEL_NONE, 0, NULL, 0);
	st = model_intern_stack(&m, &l0, 1, 0, true);
	proc = model_add_process(&m, 4000000, 1, 0, "blobby", NULL, NULL);
	th = model_add_thread(&m, proc, 4000001, "blobby");
	s = model_add_sample(&m);
	s->process = proc;
	s->thread = th;
	s->stack = st;
	s->weight_ns = 333;
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	snprintf(path, sizeof(path), "%s/callgrind.out.4000000", t.path);
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\ncmd: blobby\n"));
	assert_non_null(strstr(text, "\nfn=(1) [unknown] blob.so\n0x0 0 1 333\n"));
	assert_non_null(strstr(text, "desc: TruncatedStacks: 1 of 1 samples"));
	read_ok(path, &p);
	assert_int_equal(p.pid, 4000000);
	assert_int_equal(p.n_records, 1);
	assert_int_equal(p.records[0].addr, 0);
	assert_string_equal(callgrind_name(&p, p.records[0].object), "/opt/blob.so");
	assert_int_equal(callgrind_record_costs(&p, &p.records[0])[1], 333);
	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&m);
}

/* Recursion: f -> f -> f.  The edge f -> f is one per stack. */
static void test_recursion_once_per_stack(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	const struct callgrind_record *r;
	uint32_t f, l_rec, l_leaf, l_main;
	char path[256];

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	f = model_intern_function(&fx.m, fx.exe, "fib", 0x1300, 0x40, fx.file_main, 40);
	l_rec = loc(&fx, fx.exe, 0x1310, f, fx.file_main, 42);
	l_leaf = loc(&fx, fx.exe, 0x1320, f, fx.file_main, 43);
	l_main = loc(&fx, fx.exe, 0x1180, fx.f_main, fx.file_main, 27);
	{
		uint32_t deep[] = { l_leaf, l_rec, l_rec, l_rec, l_main };

		sample(&fx, deep, 5, 0, 1000, 8);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	read_ok(path, &p);
	r = find_call(&p, "fib", "fib", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 8);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 8);
	assert_int_equal(callgrind_record_costs(&p, r)[1], 8000);
	assert_null(find_call(&p, "fib", "fib", 1));
	r = find_call(&p, "main", "fib", 0);
	assert_non_null(r);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 8);
	assert_int_equal(self_of(&p, "fib", 0), 8);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Inlined code: fi= names the inlined function's file; the cost stays with
 * the out-of-line function. */
static void test_inlined_file(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	struct model_inline inl;
	uint32_t hdr, sq, l_inl, l_main;
	char path[256], *text, *out;
	bool found = false;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	hdr = model_intern_file(&fx.m, "/src/demo/sq.h");
	sq = model_intern_function(&fx.m, fx.exe, "square", 0, 0, hdr, 2);
	inl = (struct model_inline){ sq, fx.file_main, 30 };
	l_inl = model_intern_location(&fx.m, fx.exe, 0x1190, fx.f_main, hdr, 3, &inl, 1);
	l_main = loc(&fx, fx.exe, 0x1050, fx.f_start, MODEL_NONE, 0);
	{
		uint32_t s[] = { l_inl, l_main };

		sample(&fx, s, 2, 0, 1000, 3);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\nfi=(3) /src/demo/sq.h\n"));
	read_ok(path, &p);
	for (size_t i = 0; i < p.n_records; i++) {
		const struct callgrind_record *r = &p.records[i];

		if (r->kind == CALLGRIND_COST && r->addr == 0x1190) {
			assert_string_equal(callgrind_name(&p, r->function), "main");
			assert_string_equal(callgrind_name(&p, r->fn_file), "/src/demo/main.c");
			assert_string_equal(callgrind_name(&p, r->file), "/src/demo/sq.h");
			assert_int_equal(r->line, 3);
			assert_int_equal(callgrind_record_costs(&p, r)[0], 3);
			found = true;
		}
	}
	assert_true(found);
	/* callgrind_annotate attributes it to sq.h:main, without warnings */
	if (!system("command -v callgrind_annotate >/dev/null 2>&1")) {
		out = annotate(path, "");
		assert_null(strstr(out, "WARNING"));
		assert_non_null(strstr(out, "/src/demo/sq.h:main"));
		free(out);
	}
	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Unsymbolized frames of one image are one node: no self-call. */
static void test_unknown_group(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	struct model_image img = { .path = "/opt/stripped.so", .kind = MODEL_IMAGE_ELF };
	uint32_t im, a, b, c, l_main;
	char path[256];

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	im = model_add_image(&fx.m, &img);
	a = loc(&fx, im, 0x500, MODEL_NONE, MODEL_NONE, 0);
	b = loc(&fx, im, 0x900, MODEL_NONE, MODEL_NONE, 0);
	c = loc(&fx, im, 0x700, MODEL_NONE, MODEL_NONE, 0);
	l_main = loc(&fx, fx.exe, 0x1180, fx.f_main, fx.file_main, 27);
	{
		uint32_t s1[] = { a, b, c, l_main };
		uint32_t s2[] = { b, c, l_main };

		sample(&fx, s1, 4, 0, 10, 2);
		sample(&fx, s2, 3, 0, 10, 1);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	read_ok(path, &p);
	assert_null(find_call(&p, "[unknown] stripped.so", "[unknown] stripped.so", 0));
	assert_non_null(find_call(&p, "main", "[unknown] stripped.so", 0));
	assert_int_equal(find_call(&p, "main", "[unknown] stripped.so", 0)->calls, 3);
	assert_int_equal(self_of(&p, "[unknown] stripped.so", 0), 3);
	for (size_t i = 0; i < p.n_records; i++)
		if (p.records[i].kind == CALLGRIND_COST &&
		    !strcmp(callgrind_name(&p, p.records[i].function), "[unknown] stripped.so"))
			assert_true(p.records[i].addr == 0x500 || p.records[i].addr == 0x900);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Two static functions of one name in one object without debug info would
 * merge in both readers: the second gets its address. */
static void test_homonyms(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	uint32_t h1, h2, l1, l2, l_main;
	char path[256];

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	h1 = model_intern_function(&fx.m, fx.exe, "helper", 0x3000, 0x10, MODEL_NONE, 0);
	h2 = model_intern_function(&fx.m, fx.exe, "helper", 0x3100, 0x10, MODEL_NONE, 0);
	l1 = loc(&fx, fx.exe, 0x3004, h1, MODEL_NONE, 0);
	l2 = loc(&fx, fx.exe, 0x3104, h2, MODEL_NONE, 0);
	l_main = loc(&fx, fx.exe, 0x1180, fx.f_main, fx.file_main, 27);
	{
		uint32_t s1[] = { l1, l_main };
		uint32_t s2[] = { l2, l_main };

		sample(&fx, s1, 2, 0, 1, 4);
		sample(&fx, s2, 2, 0, 1, 6);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	read_ok(path, &p);
	assert_int_equal(self_of(&p, "helper", 0), 4);
	assert_int_equal(self_of(&p, "helper [0x3100]", 0), 6);
	assert_int_equal(find_call(&p, "main", "helper [0x3100]", 0)->calls, 6);
	assert_int_equal(find_call(&p, "main", "helper", 0)->calls, 4);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Exec generations, lost events and truncated stacks. */
static void test_generations_and_desc(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	uint32_t gen1, l;
	struct model_sample *s;
	char path[256];
	size_t lost = 0;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	model_count_lost(&fx.m, "ringbuf_full", 17);
	model_count_lost(&fx.m, "stack_unwind", 3);
	gen1 = model_add_process(&fx.m, 4242, 1, 1, "newimg", "/bin/newimg -x", "/bin/newimg");
	l = loc(&fx, fx.exe, 0x1220, fx.f_work, fx.file_main, 13);
	s = model_add_sample(&fx.m);
	s->process = gen1;
	s->stack = model_intern_stack(&fx.m, &l, 1, 0, true);
	s->weight_ns = 5;
	write_and_path(&fx, &t, "callgrind.out.4242.1", path, sizeof(path));
	assert_int_equal(count_files(t.path), 2);
	read_ok(path, &p);
	assert_string_equal(p.cmd, "/bin/newimg -x");
	for (size_t i = 0; i < p.n_desc; i++) {
		if (!strcmp(p.desc[i].type, "Lost")) {
			lost++;
			assert_true(!strcmp(p.desc[i].value, "17 events (ringbuf_full)") ||
				    !strcmp(p.desc[i].value, "3 events (stack_unwind)"));
		}
		if (!strcmp(p.desc[i].type, "TruncatedStacks"))
			assert_memory_equal(p.desc[i].value, "1 of 1 samples", 14);
		if (!strcmp(p.desc[i].type, "Exec"))
			assert_memory_equal(p.desc[i].value, "image 1 of pid 4242", 19);
		/* desc types fit the grammar's Name */
		for (const char *c = p.desc[i].type; *c; c++)
			assert_true((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
				    (*c >= '0' && *c <= '9'));
	}
	assert_int_equal(lost, 2);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

static void trace_event(struct fixture *fx, uint32_t tf, int kind, uint64_t t)
{
	struct model_trace_event *e = model_add_trace_event(&fx->m, NULL, 0);

	e->time_ns = t;
	e->process = fx->proc;
	e->thread = fx->thread;
	e->func = tf;
	e->kind = (uint8_t)kind;
}

/* A huge command line and many lost causes: events: stays within
 * KCachegrind's first 2047 bytes, what does not fit becomes comments. */
static void test_long_header(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	char path[256], *text, *cmd, cause[32];
	size_t lost = 0;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	cmd = malloc(5001);
	assert_non_null(cmd);
	memset(cmd, 'a', 5000);
	cmd[5000] = 0;
	cmd[10] = '\n'; /* must not break the line */
	free(fx.m.processes.items[fx.proc].cmdline);
	fx.m.processes.items[fx.proc].cmdline = cmd;
	for (int i = 0; i < 40; i++) {
		snprintf(cause, sizeof(cause), "cause_%02d", i);
		model_count_lost(&fx.m, cause, (uint64_t)i + 1);
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\n# cmd (complete): aaaaaaaaaa aaa"));
	assert_non_null(strstr(text, "\n# desc: Lost: 40 events (cause_39)\n"));
	read_ok(path, &p);
	assert_int_equal(strlen(p.cmd), 512 + 3);
	for (size_t i = 0; i < p.n_desc; i++)
		lost += !strcmp(p.desc[i].type, "Lost");
	assert_true(lost > 0 && lost < 40);
	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Traced work and hot: exact call counts and a TracedNs column. */
static void test_traced(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	const struct callgrind_record *r;
	uint32_t tf_work, tf_hot;
	uint64_t now = 1000000;
	char path[256], *text, *out;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	tf_work = model_add_traced_function(&fx.m, fx.exe, 0x1200, fx.f_work);
	tf_hot = model_add_traced_function(&fx.m, fx.lib, 0x2100, fx.f_hot);
	/* 1000 calls of work, each calling hot twice (300 ns each); work
	 * lasts 1000 ns */
	for (int i = 0; i < 1000; i++) {
		trace_event(&fx, tf_work, MODEL_TRACE_ENTRY, now);
		trace_event(&fx, tf_hot, MODEL_TRACE_ENTRY, now + 100);
		trace_event(&fx, tf_hot, MODEL_TRACE_EXIT, now + 400);
		trace_event(&fx, tf_hot, MODEL_TRACE_ENTRY, now + 500);
		trace_event(&fx, tf_hot, MODEL_TRACE_EXIT, now + 800);
		trace_event(&fx, tf_work, MODEL_TRACE_EXIT, now + 1000);
		now += 2000;
	}
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	text = slurp(path, NULL);
	check_layout(text);
	assert_non_null(strstr(text, "\nevents: Samples Ns TracedNs\n"));
	assert_non_null(strstr(text, "\nsummary: 105 105000000 1000000\n"));
	read_ok(path, &p);
	assert_int_equal(p.n_events, 3);
	/* work -> hot: from the nesting, exact; sampled costs kept */
	r = find_call(&p, "work", "hot", 0);
	assert_non_null(r);
	assert_null(find_call(&p, "work", "hot", 1));
	assert_int_equal(r->calls, 2000);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 75);
	assert_int_equal(callgrind_record_costs(&p, r)[2], 600000);
	/* main -> work: no traced parent, but the samples show one caller */
	r = find_call(&p, "main", "work", 0);
	assert_non_null(r);
	assert_int_equal(r->calls, 1000);
	assert_int_equal(callgrind_record_costs(&p, r)[0], 95);
	assert_int_equal(callgrind_record_costs(&p, r)[2], 1000000);
	/* self traced time at the entry addresses */
	assert_int_equal(self_of(&p, "work", 2), 400000);
	assert_int_equal(self_of(&p, "hot", 2), 600000);
	assert_int_equal(self_of(&p, "hot", 0), 70);
	/* untraced edges keep sample counts */
	assert_int_equal(find_call(&p, "_start", "main", 0)->calls, 105);
	assert_int_equal(find_call(&p, "_start", "main", 0)->kind, CALLGRIND_CALL);
	assert_int_equal(callgrind_record_costs(&p, find_call(&p, "_start", "main", 0))[2], 0);
	if (!system("command -v callgrind_annotate >/dev/null 2>&1")) {
		out = annotate(path, "--inclusive=yes --sort=TracedNs");
		assert_null(strstr(out, "WARNING"));
		assert_non_null(strstr(out, "1,000,000 (100.0%)  /src/demo/main.c:work"));
		free(out);
	}
	callgrind_profile_free(&p);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Kernel aggregates only (no event stream): counts without nesting. */
static void test_traced_func_stats_only(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	struct callgrind_profile p;
	struct model_func_stats *fs;
	uint32_t tf;
	char path[256];

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	tf = model_add_traced_function(&fx.m, fx.lib, 0x2100, fx.f_hot);
	fs = model_add_func_stats(&fx.m);
	fs->func = tf;
	fs->process = fx.proc;
	fs->thread = fx.thread;
	fs->calls = 12345;
	fs->total_ns = 999;
	fs->self_ns = 999;
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	read_ok(path, &p);
	assert_int_equal(find_call(&p, "work", "hot", 0)->calls, 12345);
	assert_int_equal(callgrind_record_costs(&p, find_call(&p, "work", "hot", 0))[2], 999);
	assert_int_equal(self_of(&p, "hot", 2), 999);
	assert_int_equal(p.totals[2], 999);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* 10^6 distinct addresses write and read back in seconds. */
static void test_million_addresses(void **state)
{
	struct model m;
	struct tmpdir t;
	struct model_image img = { .path = "/usr/bin/big", .kind = MODEL_IMAGE_ELF,
				   .has_symbols = true };
	struct callgrind_profile p;
	uint32_t im, fn, caller, l_call, proc, th, file;
	char path[256];
	struct timespec t0, t1;
	const uint32_t n = 1000000;

	(void)state;
	model_init(&m);
	tmpdir_make(&t);
	im = model_add_image(&m, &img);
	file = model_intern_file(&m, "big.c");
	fn = model_intern_function(&m, im, "big", 0x100000, 0x1000000, file, 1);
	caller = model_intern_function(&m, im, "main", 0x1000, 0x100, file, 100);
	l_call = model_intern_location(&m, im, 0x1010, caller, file, 101, NULL, 0);
	proc = model_add_process(&m, 99, 1, 0, "big", "big", NULL);
	th = model_add_thread(&m, proc, 99, "big");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t fr[2];
		struct model_sample *s;

		fr[0] = model_intern_location(&m, im, 0x100000 + (uint64_t)i * 4, fn, file,
					      1 + i / 16, NULL, 0);
		fr[1] = l_call;
		s = model_add_sample(&m);
		s->process = proc;
		s->thread = th;
		s->stack = model_intern_stack(&m, fr, 2, 0, false);
		s->weight_ns = 1000;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* generous for ASan builds */
	assert_true((t1.tv_sec - t0.tv_sec) < 20);
	snprintf(path, sizeof(path), "%s/callgrind.out.99", t.path);
	read_ok(path, &p);
	assert_int_equal(p.n_records, n + 1);
	assert_int_equal(p.totals[0], n);
	assert_int_equal(find_call(&p, "main", "big", 0)->calls, n);
	assert_int_equal(p.records[n - 1].addr, 0x100000 + (uint64_t)(n - 1) * 4);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&m);
}

/*
 * The body's order with many items per function, created in scrambled
 * order: one fn= block per function, blocks by function id (the model's,
 * here the names' order), and in a block the lines by address, then self
 * cost before calls, calls by callee.  Functions with many lines and with
 * few are sorted by different code paths.
 */
static void test_body_order(void **state)
{
	struct model m;
	struct tmpdir t;
	struct model_image img = { .path = "/usr/bin/order", .kind = MODEL_IMAGE_ELF,
				   .has_symbols = true };
	struct callgrind_profile p;
	uint32_t im, file, proc, th, fns[60], locs[2030];
	char path[256], seen[60] = { 0 };
	uint64_t seed = 0x243f6a8885a308d3ULL, self = 0;
	size_t n_locs = 0;
	int last_fn = -1;

	(void)state;
	model_init(&m);
	tmpdir_make(&t);
	im = model_add_image(&m, &img);
	file = model_intern_file(&m, "order.c");
	for (int i = 0; i < 60; i++) {
		char name[16];

		snprintf(name, sizeof(name), "f%02d", i);
		fns[i] = model_intern_function(&m, im, name, 0x10000 + (uint64_t)i * 0x1000, 0x1000,
					       file, (uint32_t)(i * 100 + 1));
	}
	/* 40 lines in each of f00..f49, 3 in f50..f59, made in scrambled order */
	for (uint32_t k = 0; k < 2000; k++) {
		uint32_t idx = (k * 7919) % 2000, f = idx % 50, off = idx / 50;

		locs[n_locs++] = model_intern_location(&m, im, 0x10000 + (uint64_t)f * 0x1000 +
						       0x800 - off * 8, fns[f], file,
						       f * 100 + 50 - off, NULL, 0);
	}
	for (uint32_t k = 0; k < 30; k++) {
		uint32_t f = 50 + (k * 7) % 10, off = k / 10;

		locs[n_locs++] = model_intern_location(&m, im, 0x10000 + (uint64_t)f * 0x1000 +
						       0x100 - off * 4, fns[f], file,
						       f * 100 + 9 - off, NULL, 0);
	}
	proc = model_add_process(&m, 77, 1, 0, "order", "order", NULL);
	th = model_add_thread(&m, proc, 77, "order");
	for (int i = 0; i < 3000; i++) {
		uint32_t fr[6];
		struct model_sample *s;

		for (int d = 0; d < 6; d++) {
			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			fr[d] = locs[seed % n_locs];
		}
		s = model_add_sample(&m);
		s->process = proc;
		s->thread = th;
		s->stack = model_intern_stack(&m, fr, 6, 0, false);
		s->weight_ns = 1000;
	}
	assert_int_equal(callgrind_write(&m, &t.opts), 0);
	snprintf(path, sizeof(path), "%s/callgrind.out.77", t.path);
	read_ok(path, &p);
	for (size_t i = 0; i < p.n_records; i++) {
		const struct callgrind_record *r = &p.records[i], *q = i ? r - 1 : NULL;
		int fn = atoi(callgrind_name(&p, r->function) + 1);

		if (r->kind == CALLGRIND_COST)
			self += callgrind_record_costs(&p, r)[0];
		if (fn != last_fn) {
			/* a new block: each function once, in id order */
			assert_false(seen[fn]);
			assert_true(fn > last_fn);
			seen[fn] = 1;
			last_fn = fn;
			continue;
		}
		assert_true(q->addr <= r->addr);
		if (q->addr < r->addr)
			continue;
		assert_false(q->kind == CALLGRIND_CALL && r->kind == CALLGRIND_COST);
		if (q->kind == CALLGRIND_CALL && r->kind == CALLGRIND_CALL)
			assert_true(strcmp(callgrind_name(&p, q->called_function),
					   callgrind_name(&p, r->called_function)) < 0);
	}
	assert_int_equal(self, 3000);
	assert_int_equal(p.totals[0], 3000);
	callgrind_profile_free(&p);
	tmpdir_remove(&t);
	model_free(&m);
}

/* ---- reader: rejection of malformed input --------------------------------- */

struct bad_case {
	const char *text;
	size_t offset;
	const char *reason;
};

static void test_reader_rejects(void **state)
{
	static const char head[] = "# callgrind format\nversion: 1\npositions: instr line\n"
				   "events: A B\n";
	static const struct bad_case cases[] = {
		{ "# callgrind format\nversion: 2\nevents: A\n", 19, "version 2" },
		{ "# callgrind format\ncreator: x\nversion: 1\nevents: A\n", 30, "version: must" },
		{ "# callgrind format\ncmd: x\n", 26, "no events: line" },
		{ "# callgrind format\nsummary: 1\nevents: A\n", 19, "summary: before events:" },
		{ "# callgrind format\nevents: A 3B\n", 29, "not a Name" },
		{ "# callgrind format\nevents:\tA\n", 26, "tab" },
		{ "# callgrind format\nbogus: 1\nevents: A\n", 19, "unknown header" },
		/* head is 64 bytes, "fl=a.c\n" 7, "fn=f\n" 5 */
		{ "%sfl=a.c\n0x10 1 5\n", 71, "before any fn=" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5 6 7\n", 87, "more costs" },
		{ "%sfl=a.c\nfn=(3)\n", 74, "undefined compressed" },
		{ "%sfl=(1) a.c\nfl=(1) b.c\n", 78, "redefined" },
		{ "%sfl=a.c\nfn=f\ncfn=g\ncalls=1 0x10 1\nfn=h\n", 97, "not followed" },
		{ "%sfl=a.c\nfn=f\ncfn=g\ncalls=1 0x10 1\n", 82, "end of the file" },
		{ "%sfl=a.c\nfn=f\ncalls=1 0x10 1\n 1 2\n", 76, "without cfn=" },
		{ "%sfl=a.c\nfn=f\n0x10 1 99999999999999999999\n", 83, "exceeds 64 bits" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\n-0x20 1 5\n", 85, "leaves the 64-bit range" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\ntotals: 6\n", 85, "totals: A is 6" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\nsummary: 1\n", 85, "summary: after body" },
		{ "%sfl=a.c\nfn=f\n0x1g 1 5\n", 79, "unexpected character" },
		{ "%sfl=a.c\nfn=f\nevents: C\n", 76, "second events:" },
		{ "%sfl=a.c\nfn=f\nwhat\n", 76, "unknown line" },
		{ "%sfi=x.c\n", 64, "fi=/fe= before" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\r\n", 84, "carriage return" },
		{ "%sfl=a.c\nfn=f\n0x10 1 5\nsummary: 1\n", 85, "summary: after body" },
	};
	char buf[4096];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct callgrind_profile p;
		struct format_error err;
		int ret;

		assert_int_equal(strlen(head), 64);
		snprintf(buf, sizeof(buf), cases[i].text, head);
		ret = callgrind_parse(buf, strlen(buf), &p, &err);
		if (ret != -EINVAL || !strstr(err.reason, cases[i].reason) ||
		    err.offset != cases[i].offset)
			fail_msg("case %zu: ret %d offset %zu (want %zu) reason '%s' (want '%s')", i,
				 ret, err.offset, cases[i].offset, err.reason, cases[i].reason);
	}
	/* events: beyond KCachegrind's 2047-byte window */
	{
		struct callgrind_profile p;
		struct format_error err;
		size_t n = 0;

		n += (size_t)snprintf(buf, sizeof(buf), "# callgrind format\n");
		for (int i = 0; i < 30; i++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "desc: Pad: %070d\n", i);
		snprintf(buf + n, sizeof(buf) - n, "events: A\n");
		assert_int_equal(callgrind_parse(buf, strlen(buf), &p, &err), -EINVAL);
		assert_int_equal(err.offset, n);
		assert_non_null(strstr(err.reason, "2047"));
	}
}

/* Relative subpositions, compression, cfi= defaults, as the spec shows. */
static void test_reader_spec_example(void **state)
{
	static const char text[] =
		"# callgrind format\n"
		"positions: instr line\n"
		"events: ticks\n"
		"fn=func\n"
		"0x80001234 90 1\n"
		"+3 * 5\n"
		"+1 +1 6\n"
		"fl=(1) file1.c\n"
		"fn=(1) main\n"
		"0x10 16 20\n"
		"cfn=(2) func1\n"
		"calls=1 0x50 50\n"
		"* * 400\n"
		"cfi=(2) file2.c\n"
		"cfn=(3) func2\n"
		"calls=3 0x20 20\n"
		"+2 * 400\n";
	struct callgrind_profile p;
	struct format_error err;

	(void)state;
	assert_int_equal(callgrind_parse(text, strlen(text), &p, &err), 0);
	assert_int_equal(p.n_records, 6);
	assert_int_equal(p.records[1].addr, 0x80001237);
	assert_int_equal(p.records[1].line, 90);
	assert_int_equal(p.records[2].addr, 0x80001238);
	assert_int_equal(p.records[2].line, 91);
	assert_int_equal(callgrind_record_costs(&p, &p.records[2])[0], 6);
	assert_int_equal(p.records[4].kind, CALLGRIND_CALL);
	assert_string_equal(callgrind_name(&p, p.records[4].called_file), "file1.c");
	assert_int_equal(p.records[4].addr, 0x10);
	assert_int_equal(p.records[4].target_addr, 0x50);
	assert_string_equal(callgrind_name(&p, p.records[5].called_file), "file2.c");
	assert_string_equal(callgrind_name(&p, p.records[5].called_function), "func2");
	assert_int_equal(p.records[5].calls, 3);
	assert_int_equal(p.records[5].addr, 0x12);
	assert_int_equal(p.self_sum[0], 32);
	callgrind_profile_free(&p);
}

/* A file written by Valgrind's own Callgrind, if valgrind is here. */
static void test_reader_valgrind_file(void **state)
{
	char dir[64] = "/tmp/test_callgrind_vg.XXXXXX", cmd[512], path[128];
	struct callgrind_profile p;
	bool main_seen = false;

	(void)state;
	if (system("command -v valgrind >/dev/null 2>&1")) {
		skip();
		return;
	}
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/callgrind.out.vg", dir);
	snprintf(cmd, sizeof(cmd),
		 "valgrind -q --tool=callgrind --dump-instr=yes --collect-jumps=yes "
		 "--callgrind-out-file=%s /bin/true >/dev/null 2>&1", path);
	if (system(cmd) || access(path, R_OK)) {
		unlink(path);
		rmdir(dir);
		skip();
		return;
	}
	read_ok(path, &p);
	assert_true(p.has_format_line);
	assert_string_equal(p.events[0], "Ir");
	assert_true(p.n_jumps > 0);
	assert_non_null(p.totals);
	assert_int_equal(p.totals[0], p.self_sum[0]);
	for (size_t i = 0; i < p.n_records; i++)
		if (!strcmp(callgrind_name(&p, p.records[i].function), "(below main)"))
			main_seen = true;
	assert_true(main_seen);
	/* dump recognizes and checks it */
	{
		char head[64];
		FILE *f = fopen(path, "rb");
		size_t n;

		assert_non_null(f);
		n = fread(head, 1, sizeof(head), f);
		fclose(f);
		assert_true(callgrind_recognize(path, (unsigned char *)head, n));
		assert_int_equal(callgrind_dump(path, stdout, true), 0);
	}
	callgrind_profile_free(&p);
	unlink(path);
	rmdir(dir);
}

static void test_dump(void **state)
{
	struct fixture fx;
	struct tmpdir t;
	char path[256], *text, *dumped;
	FILE *out;
	size_t n;

	(void)state;
	fixture_build(&fx);
	tmpdir_make(&t);
	write_and_path(&fx, &t, "callgrind.out.4242", path, sizeof(path));
	text = slurp(path, &n);
	assert_true(callgrind_recognize(path, (unsigned char *)text, n));
	assert_false(callgrind_recognize(path, (unsigned char *)"\x7f" "ELF", 4));
	assert_false(callgrind_recognize(path, (unsigned char *)"hello\nworld\n", 12));
	assert_true(callgrind_recognize(path, (unsigned char *)"cmd: x\nevents: Ir\n", 18));
	/* check: nothing printed */
	out = tmpfile();
	assert_int_equal(callgrind_dump(path, out, true), 0);
	assert_int_equal(ftell(out), 0);
	/* dump: header then records */
	assert_int_equal(callgrind_dump(path, out, false), 0);
	n = (size_t)ftell(out);
	rewind(out);
	dumped = malloc(n + 1);
	assert_int_equal(fread(dumped, 1, n, out), n);
	dumped[n] = 0;
	fclose(out);
	assert_non_null(strstr(dumped, "pid: 4242\n"));
	assert_non_null(strstr(dumped, "event 0: Samples : "));
	assert_non_null(strstr(dumped, "cost ob=/usr/lib/libhot.so fl=/src/hot/hot.c fn=hot "
					"instr=0x2110 line=4 Samples=40 Ns=40000000\n"));
	assert_non_null(strstr(dumped, "-> cob=/usr/lib/libhot.so cfi=/src/hot/hot.c cfn=hot "
					"calls=75"));
	assert_true(strstr(dumped, "records: ") > strstr(dumped, "totals: "));
	/* a corrupted file: offset and reason on stderr, non-zero */
	{
		FILE *f = fopen(path, "r+b");

		assert_non_null(f);
		fseek(f, (long)(strstr(text, "\nfn=") - text) + 1, SEEK_SET);
		fputs("xx", f);
		fclose(f);
		assert_int_equal(callgrind_dump(path, stdout, true), -EINVAL);
	}
	free(dumped);
	free(text);
	tmpdir_remove(&t);
	model_free(&fx.m);
}

/* Write errors are reported (ENOSPC through /dev/full is not possible with
 * rename, so use a directory that does not exist). */
static void test_write_error(void **state)
{
	struct fixture fx;
	struct export_options opts = { .dir = "/nonexistent/dir/for/callgrind", .quiet = true };

	(void)state;
	fixture_build(&fx);
	assert_true(callgrind_write(&fx.m, &opts) < 0);
	model_free(&fx.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_fields),
		cmocka_unit_test(test_callgrind_annotate),
		cmocka_unit_test(test_empty_profile),
		cmocka_unit_test(test_one_sample_address_zero),
		cmocka_unit_test(test_recursion_once_per_stack),
		cmocka_unit_test(test_inlined_file),
		cmocka_unit_test(test_unknown_group),
		cmocka_unit_test(test_homonyms),
		cmocka_unit_test(test_generations_and_desc),
		cmocka_unit_test(test_long_header),
		cmocka_unit_test(test_traced),
		cmocka_unit_test(test_traced_func_stats_only),
		cmocka_unit_test(test_million_addresses),
		cmocka_unit_test(test_body_order),
		cmocka_unit_test(test_reader_rejects),
		cmocka_unit_test(test_reader_spec_example),
		cmocka_unit_test(test_reader_valgrind_file),
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
