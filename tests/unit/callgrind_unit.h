/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the Callgrind unit tests share (test_callgrind.c: the writer's
 * files; test_callgrind_traced.c: traced calls, order and scale;
 * test_callgrind_reader.c: the reader): temporary output directories, the
 * line rules every file must follow, lookups in a profile read back, the
 * hand-built model, and callgrind_annotate's view of a file.
 * Include after <cmocka.h>.
 */
#ifndef COLLECTOR_CALLGRIND_UNIT_H
#define COLLECTOR_CALLGRIND_UNIT_H

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
#include "unit_files.h"

/* ---- helpers -------------------------------------------------------------- */

struct tmpdir {
	char path[64];
	struct export_options opts;
};

static inline void tmpdir_make(struct tmpdir *t)
{
	strcpy(t->path, "/tmp/test_callgrind.XXXXXX");
	assert_non_null(mkdtemp(t->path));
	memset(&t->opts, 0, sizeof(t->opts));
	t->opts.dir = t->path;
	t->opts.quiet = true;
}

static inline void tmpdir_remove(struct tmpdir *t)
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

static inline int count_files(const char *dir)
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

static inline char *slurp(const char *path, size_t *n)
{
	size_t len;
	char *buf = (char *)unit_slurp(path, &len);

	if (n)
		*n = len;
	return buf;
}

static inline void read_ok(const char *path, struct callgrind_profile *p)
{
	struct format_error err;
	int ret = callgrind_read_file(path, p, &err);

	if (ret)
		fail_msg("%s: offset %zu: %s", path, err.offset, err.reason);
}

/* Line-level rules of the spec and of the real readers, on the raw bytes. */
static inline void check_layout(const char *text)
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
static inline uint64_t self_of(const struct callgrind_profile *p, const char *fn, size_t ev)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < p->n_records; i++) {
		const struct callgrind_record *r = &p->records[i];

		if (r->kind == CALLGRIND_COST && !strcmp(callgrind_name(p, r->function), fn))
			sum += callgrind_record_costs(p, r)[ev];
	}
	return sum;
}

static inline const struct callgrind_record *find_call(const struct callgrind_profile *p,
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

static inline uint32_t loc(struct fixture *fx, uint32_t image, uint64_t addr, uint32_t fn, uint32_t file,
			   uint32_t line)
{
	return model_intern_location(&fx->m, image, addr, fn, file, line, NULL, 0);
}

static inline void sample(struct fixture *fx, const uint32_t *frames, uint32_t n, uint32_t n_kernel,
			  uint64_t weight, int times)
{
	uint32_t st = model_intern_stack(&fx->m, frames, n, n_kernel, false);

	for (int i = 0; i < times; i++) {
		struct model_sample *s = model_add_sample(&fx->m);

		s->time_ns = 1000 + fx->m.samples.len;
		s->weight = weight;
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
static inline void fixture_build(struct fixture *fx)
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

static inline void write_and_path(struct fixture *fx, struct tmpdir *t, const char *name, char *path,
				  size_t n)
{
	assert_int_equal(callgrind_write(&fx->m, &t->opts), 0);
	snprintf(path, n, "%s/%s", t->path, name);
	assert_int_equal(access(path, R_OK), 0);
}

/* ---- tests ---------------------------------------------------------------- */

/* Runs callgrind_annotate and returns its output. */
static inline char *annotate(const char *path, const char *opts)
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
static inline void first_function(const char *out, double *perc, char *name, size_t n)
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

static inline void trace_event(struct fixture *fx, uint32_t tf, int kind, uint64_t t)
{
	struct model_trace_event *e = model_add_trace_event(&fx->m, NULL, 0);

	e->time_ns = t;
	e->process = fx->proc;
	e->thread = fx->thread;
	e->func = tf;
	e->kind = (uint8_t)kind;
}

#endif /* COLLECTOR_CALLGRIND_UNIT_H */
