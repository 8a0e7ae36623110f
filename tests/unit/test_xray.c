// SPDX-License-Identifier: GPL-2.0
/*
 * XRay FDR exporter and reader: byte layout against the spec, writer ->
 * reader round trips, llvm-xray-14 reading what the writer wrote (counts,
 * names, source lines), and the reader against traces LLVM's own runtime
 * wrote (the shared fixture and one made here by build/xray/fdr_v5).
 *
 * Needs build/xray/calls and build/xray/fdr_v5 (mk/xray.mk) and llvm-xray-14.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/format.h"
#include "model/model.h"
#include "formats/xray/xray.h"
#include "formats/xray/xray_format.h"
#include "lib/bytes.h"
#include "formats/xray/xray_reader.h"

#define LLVM_XRAY "llvm-xray-14"
#define CALLS_BIN "build/xray/calls"
#define FDR_V5_BIN "build/xray/fdr_v5"
#define T0_EPOCH 1700000000123456789ull
#define K0 5000000000000ull

/* ---- helpers ----------------------------------------------------------- */

static char *make_tmpdir(void)
{
	char tmpl[] = "/tmp/collector-xray-XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	return strdup(d);
}

static void remove_tree(char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

/* Runs a shell command, returns its exit status and its stdout in *out. */
static int run(const char *cmd, char **out)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	FILE *p = popen(cmd, "r");
	size_t got;
	int st;

	assert_non_null(buf);
	assert_non_null(p);
	while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += got;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	buf[len] = '\0';
	st = pclose(p);
	if (out)
		*out = buf;
	else
		free(buf);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static unsigned char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long sz;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	sz = ftell(f);
	rewind(f);
	buf = malloc(sz ? (size_t)sz : 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)sz, f), (size_t)sz);
	fclose(f);
	*n = (size_t)sz;
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Address and size of a function symbol in an ELF file's .symtab. */
static void elf_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	bool found = false;

	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn)) && !found) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			n = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (n && strcmp(n, name) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				*addr = sym.st_value;
				*size = sym.st_size;
				found = true;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(found);
}

static uint32_t add_elf_image(struct model *m, const char *path)
{
	struct model_image tmpl = { .kind = MODEL_IMAGE_ELF };
	struct stat st;
	char *real = realpath(path, NULL);
	uint32_t img;

	assert_non_null(real);
	assert_int_equal(stat(real, &st), 0);
	tmpl.path = real;
	tmpl.file_size = (uint64_t)st.st_size;
	tmpl.mtime = st.st_mtime;
	img = model_add_image(m, &tmpl);
	free(real);
	return img;
}

static void event(struct model *m, uint32_t thread, uint32_t func, uint8_t kind, uint64_t t,
		  uint16_t cpu, const uint64_t *args, uint8_t n_args)
{
	struct model_trace_event *e = model_add_trace_event(m, args, n_args);

	e->time_ns = T0_EPOCH + t;
	e->ktime_ns = K0 + t;
	e->process = m->threads.items[thread].process;
	e->thread = thread;
	e->func = func;
	e->kind = kind;
	e->cpu = cpu;
}

static int write_model(const struct model *m, const char *dir, uint64_t buffer_size,
		       struct xray_write_stats *st)
{
	struct export_options opts = { .dir = dir, .quiet = true };
	struct xray_write_params params = { .buffer_size = buffer_size };

	return xray_write_ex(m, &opts, &params, st);
}

/* A model of the calls workload: pid 4242, f (traced id 0) and g (1) of
 * build/xray/calls, main thread 4242. */
struct calls_model {
	struct model m;
	uint32_t img, f, g, thread;
	uint64_t f_addr, g_addr;
};

static void calls_model_init(struct calls_model *c)
{
	uint64_t size;
	uint32_t file, fn, p;

	model_init(&c->m);
	c->img = add_elf_image(&c->m, CALLS_BIN);
	file = model_intern_file(&c->m, "tests/xray/calls.c");
	elf_symbol(CALLS_BIN, "f", &c->f_addr, &size);
	fn = model_intern_function(&c->m, c->img, "f", c->f_addr, size, file, 17);
	c->f = model_add_traced_function(&c->m, c->img, c->f_addr, fn);
	elf_symbol(CALLS_BIN, "g", &c->g_addr, &size);
	fn = model_intern_function(&c->m, c->img, "g", c->g_addr, size, file, 11);
	c->g = model_add_traced_function(&c->m, c->img, c->g_addr, fn);
	p = model_add_process(&c->m, 4242, 1, 0, "calls", "calls", CALLS_BIN);
	c->thread = model_add_thread(&c->m, p, 4242, "calls");
}

/* nf calls of f, each calling g ng times; returns the time after them. */
static uint64_t calls_trace(struct calls_model *c, unsigned nf, unsigned ng, uint64_t t)
{
	for (unsigned i = 0; i < nf; i++) {
		event(&c->m, c->thread, c->f, MODEL_TRACE_ENTRY, t += 50, 1, NULL, 0);
		for (unsigned j = 0; j < ng; j++) {
			event(&c->m, c->thread, c->g, MODEL_TRACE_ENTRY, t += 10, 1, NULL, 0);
			event(&c->m, c->thread, c->g, MODEL_TRACE_EXIT, t += 20, 1, NULL, 0);
		}
		event(&c->m, c->thread, c->f, MODEL_TRACE_EXIT, t += 30, 1, NULL, 0);
	}
	return t;
}

/* A record as `llvm-xray-14 fdr-dump` prints it. */
static void llvm_line(char *buf, size_t n, const struct xray_record *r)
{
	static const char *const fn[] = { "Function Enter", "Function Exit", "Function Tail Exit",
					  "Function Enter With Arg" };

	switch (r->type) {
	case XRAY_REC_FUNCTION:
		snprintf(buf, n, "<%s: #%u delta = +%u>", fn[r->action & 3], r->func_id, r->delta);
		break;
	case XRAY_MD_BUFFER_EXTENTS:
		snprintf(buf, n, "<Buffer: size = %llu bytes>", (unsigned long long)r->value);
		break;
	case XRAY_MD_NEW_BUFFER:
		snprintf(buf, n, "<Thread ID: %d>", r->value32);
		break;
	case XRAY_MD_WALLTIME:
		snprintf(buf, n, "<Wall Time: seconds = %llu.%06u>", (unsigned long long)r->value,
			 r->micros);
		break;
	case XRAY_MD_PID:
		snprintf(buf, n, "<PID: %d>", r->value32);
		break;
	case XRAY_MD_NEW_CPU_ID:
		snprintf(buf, n, "<CPU: id = %u, tsc = %llu>", r->cpu, (unsigned long long)r->value);
		break;
	case XRAY_MD_TSC_WRAP:
		snprintf(buf, n, "<TSC Wrap: base = %llu>", (unsigned long long)r->value);
		break;
	case XRAY_MD_CALL_ARGUMENT:
		snprintf(buf, n, "<Call Argument: data = %llu (hex = 0x%llx)>",
			 (unsigned long long)r->value, (unsigned long long)r->value);
		break;
	case XRAY_MD_END_OF_BUFFER:
		snprintf(buf, n, "<End of Buffer>");
		break;
	default:
		snprintf(buf, n, "<unexpected record type %u>", r->type);
	}
}

/*
 * Checks that the reader sees, record for record, what `llvm-xray-14
 * fdr-dump` prints.  In version 1 fdr-dump also prints the zero padding
 * after an EndOfBuffer as function records #0, which the reader skips.
 */
static void compare_with_fdr_dump(const char *path, const struct xray_trace *t)
{
	char cmd[512], line[256], *out, *p, *nl;
	bool padding = false;
	size_t k = 0;

	snprintf(cmd, sizeof(cmd), LLVM_XRAY " fdr-dump '%s'", path);
	assert_int_equal(run(cmd, &out), 0);
	for (p = out; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (*p == '\0')
			continue;
		if (padding && strncmp(p, "<Thread ID:", 11) != 0) {
			assert_string_equal(p, "<Function Enter: #0 delta = +0>");
			continue;
		}
		padding = false;
		if (k >= t->n_records)
			fail_msg("fdr-dump has more records than the reader: %s", p);
		llvm_line(line, sizeof(line), &t->records[k]);
		if (strcmp(line, p) != 0)
			fail_msg("record %zu at offset %llu: reader %s, fdr-dump %s", k,
				 (unsigned long long)t->records[k].offset, line, p);
		if (t->records[k].type == XRAY_MD_END_OF_BUFFER)
			padding = true;
		k++;
	}
	assert_int_equal(k, t->n_records);
	free(out);
}

/* Expanded function events of one thread, as the reader rebuilds them. */
struct fn_event {
	uint8_t action;
	uint32_t id;
	uint64_t tsc;
	uint16_t cpu;
	uint64_t args[MODEL_MAX_ARGS];
	unsigned n_args;
};

static size_t thread_events(const struct xray_trace *t, int32_t tid, struct fn_event *ev,
			    size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_records; i++) {
		const struct xray_record *r = &t->records[i];

		if (r->tid != tid)
			continue;
		if (r->type == XRAY_REC_FUNCTION) {
			assert_true(n < max);
			ev[n++] = (struct fn_event){ .action = r->action, .id = r->func_id,
						     .tsc = r->tsc, .cpu = r->cpu };
		} else if (r->type == XRAY_MD_CALL_ARGUMENT) {
			assert_true(n > 0 && ev[n - 1].n_args < MODEL_MAX_ARGS);
			ev[n - 1].args[ev[n - 1].n_args++] = r->value;
		}
	}
	return n;
}

/* ---- tests ------------------------------------------------------------- */

/* Every byte of a small trace against the spec (and the README's facts). */
static void test_layout_against_spec(void **state)
{
	struct calls_model c;
	char *dir = make_tmpdir(), path[512];
	unsigned char *b;
	uint64_t t_entry = 1000, epoch = T0_EPOCH + t_entry;
	size_t n;
	uint32_t thread;

	(void)state;
	calls_model_init(&c);
	thread = model_add_thread(&c.m, c.m.threads.items[c.thread].process, 70000, "calls");
	event(&c.m, thread, c.f, MODEL_TRACE_ENTRY, t_entry, 3, NULL, 0);
	event(&c.m, thread, c.f, MODEL_TRACE_EXIT, t_entry + 500, 3, NULL, 0);
	assert_int_equal(write_model(&c.m, dir, 4096, NULL), 0);
	snprintf(path, sizeof(path), "%s/xray/calls.4242.xray", dir);
	b = slurp(path, &n);
	assert_int_equal(n, XRAY_HEADER_SIZE + 4096);
	/* header */
	assert_int_equal(le16_get(b), 1);
	assert_int_equal(le16_get(b + 2), 1);
	assert_int_equal(le32_get(b + 4), 3); /* constant and nonstop tsc */
	assert_int_equal(le64_get(b + 8), 1000000000);
	assert_int_equal(le64_get(b + 16), 4096);
	assert_int_equal(le64_get(b + 24), 0);
	/* NewBuffer: kind 0, the tid as 32 bits (70000 > 65535) */
	assert_int_equal(b[32], 0x01);
	assert_int_equal(le32_get(b + 33), 70000);
	for (int i = 37; i < 48; i++)
		assert_int_equal(b[i], 0);
	/* WallTimeMarker: kind 4, u64 seconds, u32 microseconds */
	assert_int_equal(b[48], (4 << 1) | 1);
	assert_int_equal(le64_get(b + 49), epoch / 1000000000);
	assert_int_equal(le32_get(b + 57), epoch % 1000000000 / 1000);
	/* NewCPUId: kind 2, u16 cpu, u64 absolute tsc */
	assert_int_equal(b[64], (2 << 1) | 1);
	assert_int_equal(le16_get(b + 65), 3);
	assert_int_equal(le64_get(b + 67), K0 + t_entry);
	/* f has the higher address of f and g in calls: id 2; entry then exit */
	assert_true(c.f_addr > c.g_addr);
	assert_int_equal(le32_get(b + 80), (2 << 4) | (XRAY_FN_ENTER << 1));
	assert_int_equal(le32_get(b + 84), 0);
	assert_int_equal(le32_get(b + 88), (2 << 4) | (XRAY_FN_EXIT << 1));
	assert_int_equal(le32_get(b + 92), 500);
	/* EndOfBuffer, then zeros to the buffer size */
	assert_int_equal(b[96], (1 << 1) | 1);
	for (size_t i = 97; i < n; i++)
		assert_int_equal(b[i], 0);
	free(b);
	model_free(&c.m);
	remove_tree(dir);
}

/* Writer -> reader: TSC wrap, CPU migration, arguments, several buffers, an
 * empty thread, a tid above 65535; and fdr-dump reads the same records. */
static void test_round_trip(void **state)
{
	struct calls_model c;
	struct xray_write_stats st;
	struct format_error err;
	struct xray_trace t;
	struct fn_event *ev;
	char *dir = make_tmpdir(), path[512];
	uint32_t big, empty, small, proc;
	const uint64_t args[2] = { 42, UINT64_MAX - 1 };
	uint64_t tt = 0;
	size_t n, k;

	(void)state;
	calls_model_init(&c);
	proc = c.m.threads.items[c.thread].process;
	big = model_add_thread(&c.m, proc, 100001, "worker");
	empty = model_add_thread(&c.m, proc, 100002, "idle");
	small = c.thread;
	/* big: f(42, -2) -> g migrating from CPU 0 to 5, a 5 s gap, then 60 f/g pairs */
	event(&c.m, big, c.f, MODEL_TRACE_ENTRY, tt += 10, 0, args, 2);
	event(&c.m, small, c.g, MODEL_TRACE_ENTRY, tt += 1, 2, NULL, 0);
	event(&c.m, big, c.g, MODEL_TRACE_ENTRY, tt += 10, 0, NULL, 0);
	event(&c.m, big, c.g, MODEL_TRACE_EXIT, tt += 10, 5, NULL, 0);
	event(&c.m, small, c.g, MODEL_TRACE_EXIT, tt += 1, 2, NULL, 0);
	event(&c.m, big, c.f, MODEL_TRACE_EXIT, tt += 5000000000ull, 5, NULL, 0);
	for (int i = 0; i < 60; i++) {
		event(&c.m, big, c.f, MODEL_TRACE_ENTRY, tt += 7, 5, args, 1);
		event(&c.m, big, c.g, MODEL_TRACE_ENTRY, tt += 7, 5, NULL, 0);
		event(&c.m, big, c.g, MODEL_TRACE_EXIT, tt += 7, 5, NULL, 0);
		event(&c.m, big, c.f, MODEL_TRACE_EXIT, tt += 7, 5, NULL, 0);
	}
	assert_int_equal(write_model(&c.m, dir, 256, &st), 0);
	assert_int_equal(st.tsc_wraps, 1);
	assert_int_equal(st.cpu_changes, 1);
	assert_int_equal(st.exits_synthesized + st.exits_dropped + st.time_clamped, 0);
	assert_true(st.buffers > 3);

	snprintf(path, sizeof(path), "%s/xray/calls.4242.xray", dir);
	assert_int_equal(xray_read_file(path, &t, &err), 0);
	assert_int_equal(t.header.version, 1);
	assert_int_equal(t.header.buffer_size, 256);
	assert_int_equal(t.summary.buffers, st.buffers);
	assert_int_equal(t.summary.function_records, st.function_records);
	for (size_t i = 0; i < t.n_records; i++)
		assert_int_not_equal(t.records[i].tid, 100002); /* the empty thread */
	(void)empty;

	/* each thread's events come back in order, with tsc, cpu, id and args */
	ev = calloc(c.m.trace.len, sizeof(*ev));
	assert_non_null(ev);
	for (int pass = 0; pass < 2; pass++) {
		uint32_t thread = pass ? small : big;
		int32_t tid = c.m.threads.items[thread].tid;

		n = thread_events(&t, tid, ev, c.m.trace.len);
		k = 0;
		for (size_t i = 0; i < c.m.trace.len; i++) {
			const struct model_trace_event *e = &c.m.trace.items[i];

			if (e->thread != thread)
				continue;
			assert_true(k < n);
			assert_int_equal(ev[k].tsc, e->ktime_ns);
			assert_int_equal(ev[k].cpu, e->cpu);
			assert_int_equal(ev[k].id, e->func == c.g ? 1 : 2);
			if (e->kind == MODEL_TRACE_EXIT) {
				assert_int_equal(ev[k].action, XRAY_FN_EXIT);
			} else {
				assert_int_equal(ev[k].action,
						 e->n_args ? XRAY_FN_ENTER_ARGS : XRAY_FN_ENTER);
				assert_int_equal(ev[k].n_args, e->n_args);
				for (unsigned a = 0; a < e->n_args; a++)
					assert_int_equal(ev[k].args[a], args[a]);
			}
			k++;
		}
		assert_int_equal(k, n);
	}
	compare_with_fdr_dump(path, &t);
	free(ev);
	xray_trace_free(&t);
	model_free(&c.m);
	remove_tree(dir);
}

/* Count of a function in `llvm-xray-14 account -format=csv` output, with
 * its debug column (file:line:column) copied to debug. */
static long account_count(const char *csv, const char *name, char *debug, size_t n)
{
	char want[128];
	const char *line;

	snprintf(want, sizeof(want), ",\"%s\"\n", name);
	for (line = csv; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line + 1) : strlen(line);
		const char *q;
		long count;

		if (len < strlen(want) || strncmp(line + len - strlen(want), want, strlen(want)))
			continue;
		if (sscanf(line, "%*d,%ld,", &count) != 1)
			return -1;
		/* ...,sum,"debug","name" */
		q = line + len - strlen(want);
		if (debug) {
			const char *open = q - 1;

			while (open > line && *(open - 1) != '"')
				open--;
			snprintf(debug, n, "%.*s", (int)(q - 1 - open), open);
		}
		return count;
	}
	return -1;
}

/* f called 1000 times, g 100 000 times from f: llvm-xray counts exactly that,
 * under the names and source lines of build/xray/calls. */
static void check_known_counts(uint64_t buffer_size)
{
	struct calls_model c;
	struct xray_write_stats st;
	char *dir = make_tmpdir(), cmd[1024], debug[256], *out;
	long enter_g = 0, exit_g = 0, enter_f = 0, exit_f = 0;

	calls_model_init(&c);
	calls_trace(&c, 1000, 100, 0);
	assert_int_equal(write_model(&c.m, dir, buffer_size, &st), 0);
	assert_int_equal(st.synthetic_maps, 0);

	snprintf(cmd, sizeof(cmd), LLVM_XRAY " fdr-dump '%s/xray/calls.4242.xray'", dir);
	assert_int_equal(run(cmd, &out), 0);
	/* line by line: strstr over megabytes is quadratic under ASan */
	for (char *p = out; *p; p++) {
		if (p != out && p[-1] != '\n')
			continue;
		if (!strncmp(p, "<Function Enter: #1 ", 20))
			enter_g++;
		else if (!strncmp(p, "<Function Exit: #1 ", 19))
			exit_g++;
		else if (!strncmp(p, "<Function Enter: #2 ", 20))
			enter_f++;
		else if (!strncmp(p, "<Function Exit: #2 ", 19))
			exit_f++;
	}
	free(out);
	assert_int_equal(enter_g, 100000);
	assert_int_equal(exit_g, 100000);
	assert_int_equal(enter_f, 1000);
	assert_int_equal(exit_f, 1000);

	snprintf(cmd, sizeof(cmd),
		 LLVM_XRAY " account -format=csv -m '%s/xray/calls.4242.map.elf' "
		 "'%s/xray/calls.4242.xray'", dir, dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_int_equal(account_count(out, "f", debug, sizeof(debug)), 1000);
	assert_string_equal(debug, "calls.c:17:1");
	assert_int_equal(account_count(out, "g", debug, sizeof(debug)), 100000);
	assert_string_equal(debug, "calls.c:12:1");
	free(out);
	model_free(&c.m);
	remove_tree(dir);
}

static void test_known_counts_llvm(void **state)
{
	(void)state;
	check_known_counts(0);
	/* 4 KiB buffers: hundreds per thread, all within one second of wall time */
	check_known_counts(4096);
}

/* Lost events: exits of calls whose entries were lost are dropped, calls
 * whose exits were lost are closed; llvm-xray account works without -k. */
static void test_lost_events(void **state)
{
	struct calls_model c;
	struct xray_write_stats st;
	struct format_error err;
	struct xray_trace t;
	char *dir = make_tmpdir(), cmd[1024], path[512], *out, *yaml;
	uint64_t tt = 0;
	size_t n;
	int depth = 0;

	(void)state;
	calls_model_init(&c);
	model_count_lost(&c.m, "ringbuf_full", 3);
	event(&c.m, c.thread, c.g, MODEL_TRACE_EXIT, tt += 10, 0, NULL, 0); /* entry lost */
	event(&c.m, c.thread, c.f, MODEL_TRACE_ENTRY, tt += 10, 0, NULL, 0);
	event(&c.m, c.thread, c.g, MODEL_TRACE_ENTRY, tt += 10, 0, NULL, 0);
	/* g's exit lost */
	event(&c.m, c.thread, c.f, MODEL_TRACE_EXIT, tt += 10, 0, NULL, 0);
	event(&c.m, c.thread, c.f, MODEL_TRACE_EXIT, tt += 10, 0, NULL, 0); /* entry lost */
	tt = calls_trace(&c, 2, 3, tt);
	assert_int_equal(write_model(&c.m, dir, 0, &st), 0);
	assert_int_equal(st.exits_synthesized, 1);
	assert_int_equal(st.exits_dropped, 2);

	snprintf(path, sizeof(path), "%s/xray/calls.4242.xray", dir);
	assert_int_equal(xray_read_file(path, &t, &err), 0);
	n = 0;
	for (size_t i = 0; i < t.n_records; i++) {
		if (t.records[i].type != XRAY_REC_FUNCTION)
			continue;
		depth += t.records[i].action == XRAY_FN_EXIT ? -1 : 1;
		assert_true(depth >= 0);
		n++;
	}
	assert_int_equal(depth, 0);
	assert_int_equal(n, 4 + 2 * 2 + 2 * 3 * 2);
	xray_trace_free(&t);

	snprintf(path, sizeof(path), "%s/xray/calls.4242.map.yaml", dir);
	yaml = (char *)slurp(path, &n);
	yaml = realloc(yaml, n + 1);
	yaml[n] = '\0';
	assert_non_null(strstr(yaml, "1 exits closed whose exit was lost, 2 exits without an "
				     "entry dropped"));
	free(yaml);

	snprintf(cmd, sizeof(cmd),
		 LLVM_XRAY " account -format=csv -m '%s/xray/calls.4242.map.elf' "
		 "'%s/xray/calls.4242.xray'", dir, dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_int_equal(account_count(out, "f", NULL, 0), 3);
	assert_int_equal(account_count(out, "g", NULL, 0), 7);
	free(out);
	model_free(&c.m);
	remove_tree(dir);
}

/* Functions of two files in one process: a synthetic map that still names them. */
static void test_synthetic_map(void **state)
{
	struct model_image libc = { .path = "/nonexistent/libc.so.6", .kind = MODEL_IMAGE_ELF };
	struct calls_model c;
	struct xray_write_stats st;
	char *dir = make_tmpdir(), cmd[1024], path[512], *out, *yaml;
	uint32_t img, fn, tf;
	size_t n;

	(void)state;
	calls_model_init(&c);
	img = model_add_image(&c.m, &libc);
	fn = model_intern_function(&c.m, img, "malloc", 0x9a0f0, 400, MODEL_NONE, 0);
	tf = model_add_traced_function(&c.m, img, 0x9a0f0, fn);
	event(&c.m, c.thread, c.f, MODEL_TRACE_ENTRY, 10, 0, NULL, 0);
	event(&c.m, c.thread, tf, MODEL_TRACE_ENTRY, 20, 0, NULL, 0);
	event(&c.m, c.thread, tf, MODEL_TRACE_EXIT, 30, 0, NULL, 0);
	event(&c.m, c.thread, tf, MODEL_TRACE_ENTRY, 40, 0, NULL, 0);
	event(&c.m, c.thread, tf, MODEL_TRACE_EXIT, 50, 0, NULL, 0);
	event(&c.m, c.thread, c.f, MODEL_TRACE_EXIT, 60, 0, NULL, 0);
	assert_int_equal(write_model(&c.m, dir, 0, &st), 0);
	assert_int_equal(st.synthetic_maps, 1);

	snprintf(cmd, sizeof(cmd),
		 LLVM_XRAY " account -format=csv -m '%s/xray/calls.4242.map.elf' "
		 "'%s/xray/calls.4242.xray'", dir, dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_int_equal(account_count(out, "f", NULL, 0), 1);
	assert_int_equal(account_count(out, "malloc", NULL, 0), 2);
	free(out);

	snprintf(path, sizeof(path), "%s/xray/calls.4242.map.yaml", dir);
	yaml = (char *)slurp(path, &n);
	yaml = realloc(yaml, n + 1);
	yaml[n] = '\0';
	assert_non_null(strstr(yaml, "synthetic ELF (the traced functions are in several files)"));
	assert_non_null(strstr(yaml, "source files and lines are lost"));
	assert_non_null(strstr(yaml, "function-name: 'malloc'"));
	assert_non_null(strstr(yaml, "malloc+0x9a0f0 in /nonexistent/libc.so.6"));
	free(yaml);
	model_free(&c.m);
	remove_tree(dir);
}

/* llvm-xray accepts the YAML map: ids resolve to the functions' addresses. */
static void test_yaml_map(void **state)
{
	struct calls_model c;
	char *dir = make_tmpdir(), cmd[1024], want[64], *out;

	(void)state;
	calls_model_init(&c);
	calls_trace(&c, 3, 2, 0);
	assert_int_equal(write_model(&c.m, dir, 0, NULL), 0);
	snprintf(cmd, sizeof(cmd),
		 LLVM_XRAY " account -format=csv -m '%s/xray/calls.4242.map.yaml' "
		 "'%s/xray/calls.4242.xray'", dir, dir);
	assert_int_equal(run(cmd, &out), 0);
	snprintf(want, sizeof(want), "@(%llx)", (unsigned long long)c.f_addr);
	assert_int_equal(account_count(out, want, NULL, 0), 3);
	snprintf(want, sizeof(want), "@(%llx)", (unsigned long long)c.g_addr);
	assert_int_equal(account_count(out, want, NULL, 0), 6);
	free(out);
	model_free(&c.m);
	remove_tree(dir);
}

static const char *fixtures(void)
{
	const char *env = getenv("COLLECTOR_FIXTURES");

	return env && *env ? env : "../shared/fixtures";
}

/* The trace LLVM 14's runtime wrote (shared fixture), against its fdr-dump. */
static void test_reader_llvm_fixture(void **state)
{
	struct format_error err;
	struct xray_trace t;
	char path[512], *expected, *p, *nl, line[256];
	size_t n, k = 0;

	(void)state;
	snprintf(path, sizeof(path), "%s/xray/llvm14-runtime-fdr-v5.xray", fixtures());
	if (xray_read_file(path, &t, &err) != 0)
		fail_msg("%s: offset %llu: %s", path, (unsigned long long)err.offset, err.reason);
	assert_int_equal(t.header.version, 5);
	assert_int_equal(t.header.cycle_frequency, 1000000000);
	assert_int_equal(t.header.buffer_size, 16384);
	/* against the fdr-dump text stored beside it */
	snprintf(path, sizeof(path), "%s/xray/llvm14-runtime-fdr-v5.fdr-dump.txt", fixtures());
	expected = (char *)slurp(path, &n);
	expected = realloc(expected, n + 1);
	expected[n] = '\0';
	for (p = expected; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (*p == '\0')
			continue;
		assert_true(k < t.n_records);
		llvm_line(line, sizeof(line), &t.records[k++]);
		assert_string_equal(line, p);
	}
	assert_int_equal(k, t.n_records);
	/* top(10) -> mid x10 -> leaf x40: ids 3, 2, 1 */
	{
		size_t enters[4] = { 0 };

		for (size_t i = 0; i < t.n_records; i++)
			if (t.records[i].type == XRAY_REC_FUNCTION &&
			    t.records[i].action == XRAY_FN_ENTER && t.records[i].func_id < 4)
				enters[t.records[i].func_id]++;
		assert_int_equal(enters[3], 1);
		assert_int_equal(enters[2], 10);
		assert_int_equal(enters[1], 40);
	}
	/* absolute TSCs: the CPU record's plus the deltas */
	assert_int_equal(t.records[4].type, XRAY_MD_NEW_CPU_ID);
	assert_int_equal(t.records[4].tsc, 1795322125156824578ull);
	assert_int_equal(t.records[5].tsc, 1795322125156824578ull);
	assert_int_equal(t.records[6].tsc, 1795322125156824578ull + 2154);
	assert_int_equal(t.records[6].tid, 10868);
	assert_int_equal(t.records[6].pid, 10868);
	free(expected);
	xray_trace_free(&t);
}

/* The id llvm-xray gives `name` in an XRay-instrumented binary. */
static unsigned xray_function_id(const char *binary, const char *name)
{
	char cmd[512], want[128], *out, *p;
	unsigned id = 0;

	snprintf(cmd, sizeof(cmd), LLVM_XRAY " extract --symbolize '%s'", binary);
	assert_int_equal(run(cmd, &out), 0);
	snprintf(want, sizeof(want), "function-name: %s,", name);
	p = strstr(out, want);
	assert_non_null(p);
	while (p > out && *(p - 1) != '\n')
		p--;
	assert_int_equal(sscanf(p, "- { id: %u,", &id), 1);
	free(out);
	return id;
}

/* A version-5 trace written here by LLVM's runtime (build/xray/fdr_v5). */
static void test_reader_llvm_runtime(void **state)
{
	struct format_error err;
	struct xray_trace t;
	char *dir = make_tmpdir(), cmd[1024], path[600], *out;
	unsigned leaf, mid, top, enters[3] = { 0 }, args = 0, pids = 0;
	pid_t tids[2] = { 0, 0 };

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "XRAY_OPTIONS='patch_premain=false xray_mode=xray-fdr xray_logfile_base=%s/fdr-' " FDR_V5_BIN
		 " 2>/dev/null && ls '%s'", dir, dir);
	assert_int_equal(run(cmd, &out), 0);
	assert_true(strncmp(out, "fdr-", 4) == 0);
	*strchrnul(out, '\n') = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, out);
	free(out);
	if (xray_read_file(path, &t, &err) != 0)
		fail_msg("%s: offset %llu: %s", path, (unsigned long long)err.offset, err.reason);
	assert_int_equal(t.header.version, 5);
	compare_with_fdr_dump(path, &t);

	leaf = xray_function_id(FDR_V5_BIN, "leaf");
	mid = xray_function_id(FDR_V5_BIN, "mid");
	top = xray_function_id(FDR_V5_BIN, "top");
	for (size_t i = 0; i < t.n_records; i++) {
		const struct xray_record *r = &t.records[i];

		if (r->type == XRAY_MD_PID)
			pids++;
		if (r->type == XRAY_MD_CALL_ARGUMENT)
			args++;
		if (r->type == XRAY_MD_NEW_BUFFER && tids[0] != r->value32)
			tids[tids[0] ? 1 : 0] = r->value32;
		if (r->type != XRAY_REC_FUNCTION || r->action == XRAY_FN_EXIT)
			continue;
		enters[0] += r->func_id == top;
		enters[1] += r->func_id == mid;
		enters[2] += r->func_id == leaf && r->action == XRAY_FN_ENTER_ARGS;
	}
	/* main calls top 3 times, a thread once; top -> mid x4 -> leaf x5 */
	assert_int_equal(enters[0], 4);
	assert_int_equal(enters[1], 16);
	assert_int_equal(enters[2], 80);
	assert_int_equal(args, 80);
	assert_true(pids >= 2);
	assert_true(tids[0] != 0 && tids[1] != 0 && tids[0] != tids[1]);
	xray_trace_free(&t);
	remove_tree(dir);
}

/* ---- malformed input --------------------------------------------------- */

struct builder {
	unsigned char b[512];
	size_t n;
};

static void b_header(struct builder *b, uint16_t version, uint16_t type, uint64_t bufsize)
{
	memset(b, 0, sizeof(*b));
	memcpy(b->b, &version, 2);
	memcpy(b->b + 2, &type, 2);
	b->b[4] = 3;
	memcpy(b->b + 16, &bufsize, 8);
	b->n = XRAY_HEADER_SIZE;
}

static void b_md(struct builder *b, unsigned kind, const void *data, size_t n)
{
	b->b[b->n] = (unsigned char)((kind << 1) | 1);
	if (n)
		memcpy(b->b + b->n + 1, data, n);
	b->n += XRAY_METADATA_RECORD_SIZE;
}

static void b_fn(struct builder *b, unsigned action, uint32_t id, uint32_t delta)
{
	uint32_t w = (id << 4) | (action << 1);

	memcpy(b->b + b->n, &w, 4);
	memcpy(b->b + b->n + 4, &delta, 4);
	b->n += 8;
}

static void b_buffer_start(struct builder *b, int32_t tid)
{
	unsigned char cpu[10] = { 0 };

	b_md(b, XRAY_MD_NEW_BUFFER, &tid, 4);
	b_md(b, XRAY_MD_WALLTIME, NULL, 0);
	b_md(b, XRAY_MD_NEW_CPU_ID, cpu, sizeof(cpu));
}

static void expect_reject(const struct builder *b, uint64_t offset, const char *reason)
{
	struct format_error err = { 0 };
	struct xray_trace t;

	if (xray_read_memory(b->b, b->n, &t, &err) != -EINVAL) {
		xray_trace_free(&t);
		fail_msg("accepted, expected rejection at %llu: %s", (unsigned long long)offset,
			 reason);
	}
	assert_int_equal(err.offset, offset);
	if (!strstr(err.reason, reason))
		fail_msg("reason '%s' lacks '%s'", err.reason, reason);
}

static void test_reader_rejects_malformed(void **state)
{
	struct builder b;
	struct format_error err;
	struct xray_trace t;
	int32_t size;
	uint64_t u64;

	(void)state;
	b_header(&b, 1, 1, 0);
	b.n = 20;
	expect_reject(&b, 0, "shorter than the 32-byte header");
	b_header(&b, 6, 1, 0);
	expect_reject(&b, 0, "version 6");
	b_header(&b, 0, 1, 0);
	expect_reject(&b, 0, "version 0");
	b_header(&b, 1, 0, 0);
	expect_reject(&b, 2, "not FDR");

	/* a valid minimal v1 trace, then variations */
	b_header(&b, 1, 1, 0);
	b_buffer_start(&b, 7);
	b_fn(&b, XRAY_FN_ENTER, 1, 5);
	b_md(&b, XRAY_MD_END_OF_BUFFER, NULL, 0);
	assert_int_equal(xray_read_memory(b.b, b.n, &t, &err), 0);
	assert_int_equal(t.summary.function_records, 1);
	xray_trace_free(&t);

	b.n -= 4; /* the EndOfBuffer cut short */
	expect_reject(&b, 32 + 48 + 8, "metadata record truncated");
	b_header(&b, 1, 1, 0);
	b_buffer_start(&b, 7);
	b_fn(&b, XRAY_FN_ENTER, 1, 5);
	b.n -= 3;
	expect_reject(&b, 80, "function record truncated");
	b_header(&b, 1, 1, 0);
	b_fn(&b, XRAY_FN_ENTER, 1, 5);
	expect_reject(&b, 32, "outside a buffer");
	b_header(&b, 1, 1, 0);
	b_md(&b, XRAY_MD_NEW_BUFFER, NULL, 0);
	b_fn(&b, XRAY_FN_ENTER, 1, 5);
	expect_reject(&b, 48, "before any NewCPUId");
	b_header(&b, 1, 1, 0);
	b_buffer_start(&b, 7);
	b_md(&b, 12, NULL, 0);
	expect_reject(&b, 80, "unknown metadata record kind 12");
	b_header(&b, 1, 1, 0);
	b_buffer_start(&b, 7);
	b_fn(&b, 5, 1, 0);
	expect_reject(&b, 80, "unknown action 5");
	b_header(&b, 1, 1, 0);
	b_buffer_start(&b, 7);
	u64 = 1;
	b_md(&b, XRAY_MD_CALL_ARGUMENT, &u64, 8);
	expect_reject(&b, 80, "CallArgument record not after a function");
	b_header(&b, 1, 1, 0);
	b_buffer_start(&b, 7);
	size = 100;
	b_md(&b, XRAY_MD_CUSTOM_EVENT, &size, 4);
	expect_reject(&b, 81, "runs past the end of the file");
	size = -1;
	b.n -= 16;
	b_md(&b, XRAY_MD_CUSTOM_EVENT, &size, 4);
	expect_reject(&b, 81, "negative size");

	/* version 5: extents bound the buffer, EndOfBuffer does not exist */
	b_header(&b, 5, 1, 0);
	u64 = 1000;
	b_md(&b, XRAY_MD_BUFFER_EXTENTS, &u64, 8);
	expect_reject(&b, 33, "runs past the end of the file");
	b_header(&b, 5, 1, 0);
	u64 = 52; /* ends inside the function record after the 48 bytes of start */
	b_md(&b, XRAY_MD_BUFFER_EXTENTS, &u64, 8);
	b_buffer_start(&b, 7);
	b_fn(&b, XRAY_FN_ENTER, 1, 5);
	expect_reject(&b, 96, "crosses the end of its buffer");
	b_header(&b, 5, 1, 0);
	u64 = 64;
	b_md(&b, XRAY_MD_BUFFER_EXTENTS, &u64, 8);
	b_buffer_start(&b, 7);
	b_md(&b, XRAY_MD_END_OF_BUFFER, NULL, 0);
	expect_reject(&b, 96, "EndOfBuffer record in a version 5 trace");
	/* ...and bytes after a spent buffer are skipped, as llvm-xray does */
	b_header(&b, 5, 1, 0);
	u64 = 56;
	b_md(&b, XRAY_MD_BUFFER_EXTENTS, &u64, 8);
	b_buffer_start(&b, 7);
	b_fn(&b, XRAY_FN_ENTER, 1, 5);
	memset(b.b + b.n, 0xee, 24);
	b.n += 24;
	assert_int_equal(xray_read_memory(b.b, b.n, &t, &err), 0);
	assert_int_equal(t.summary.function_records, 1);
	assert_int_equal(t.summary.skipped_bytes, 24);
	xray_trace_free(&t);
}

/* Version 1 without a buffer size: after EndOfBuffer the records up to the
 * next NewBuffer are ignored, as llvm-xray does. */
static void test_reader_v1_without_buffer_size(void **state)
{
	struct calls_model c;
	struct format_error err;
	struct xray_trace a, b;
	char *dir = make_tmpdir(), path[512];
	unsigned char *data;
	size_t n;
	uint64_t zero = 0;

	(void)state;
	calls_model_init(&c);
	calls_trace(&c, 20, 3, 0);
	assert_int_equal(write_model(&c.m, dir, 256, NULL), 0);
	snprintf(path, sizeof(path), "%s/xray/calls.4242.xray", dir);
	data = slurp(path, &n);
	assert_int_equal(xray_read_memory(data, n, &a, &err), 0);
	memcpy(data + 16, &zero, 8);
	assert_int_equal(xray_read_memory(data, n, &b, &err), 0);
	assert_true(a.summary.buffers > 2);
	assert_int_equal(a.n_records, b.n_records);
	for (size_t i = 0; i < a.n_records; i++) {
		assert_int_equal(a.records[i].offset, b.records[i].offset);
		assert_int_equal(a.records[i].tsc, b.records[i].tsc);
	}
	xray_trace_free(&a);
	xray_trace_free(&b);
	free(data);
	model_free(&c.m);
	remove_tree(dir);
}

/* Truncations and byte flips of real traces: rejected or read, never a crash
 * (ASan and UBSan watch). */
static void test_reader_survives_mutations(void **state)
{
	struct format_error err;
	struct xray_trace t;
	struct calls_model c;
	char *dir = make_tmpdir(), path[512];
	const char *files[2];
	unsigned seed = 12345;

	(void)state;
	calls_model_init(&c);
	calls_trace(&c, 10, 3, 0);
	assert_int_equal(write_model(&c.m, dir, 256, NULL), 0);
	snprintf(path, sizeof(path), "%s/xray/calls.4242.xray", dir);
	files[0] = path;
	files[1] = "../shared/fixtures/xray/llvm14-runtime-fdr-v5.xray";
	for (int f = 0; f < 2; f++) {
		char fixture[512];
		unsigned char *data, *copy;
		size_t n;

		if (f == 1) {
			snprintf(fixture, sizeof(fixture), "%s/xray/llvm14-runtime-fdr-v5.xray",
				 fixtures());
			files[1] = fixture;
		}
		data = slurp(files[f], &n);
		copy = malloc(n);
		assert_non_null(copy);
		for (size_t len = 0; len <= n; len++) {
			memcpy(copy, data, len);
			if (xray_read_memory(copy, len, &t, &err) == 0)
				xray_trace_free(&t);
		}
		for (int i = 0; i < 3000; i++) {
			memcpy(copy, data, n);
			for (int k = 0; k < 4; k++) {
				seed = seed * 1103515245 + 12345;
				copy[(seed >> 8) % n] = (unsigned char)(seed >> 20);
			}
			if (xray_read_memory(copy, n, &t, &err) == 0)
				xray_trace_free(&t);
			else
				assert_true(err.offset <= n);
		}
		free(copy);
		free(data);
	}
	model_free(&c.m);
	remove_tree(dir);
}

/* collector dump: recognize, dump, check */
static void test_dump_format(void **state)
{
	struct calls_model c;
	char *dir = make_tmpdir(), path[512], bad[600], fixture[512], *text;
	unsigned char head[64];
	FILE *out;
	size_t n;

	(void)state;
	calls_model_init(&c);
	calls_trace(&c, 2, 1, 0);
	assert_int_equal(write_model(&c.m, dir, 0, NULL), 0);
	snprintf(path, sizeof(path), "%s/xray/calls.4242.xray", dir);
	snprintf(fixture, sizeof(fixture), "%s/xray/llvm14-runtime-fdr-v5.xray", fixtures());

	text = (char *)slurp(path, &n);
	memcpy(head, text, sizeof(head));
	free(text);
	assert_true(xray_recognize(path, head, sizeof(head)));
	assert_false(xray_recognize(path, head, 16));
	head[2] = 0; /* type 0: not FDR */
	assert_false(xray_recognize(path, head, sizeof(head)));
	assert_false(xray_recognize(path, (const unsigned char *)"\177ELF\2\1\1\0"
						"\0\0\0\0\0\0\0\0\3\0>\0\1\0\0\0\0\0\0\0\0\0\0\0", 32));

	out = tmpfile();
	assert_non_null(out);
	assert_int_equal(xray_dump(path, out, false), 0);
	n = (size_t)ftell(out);
	rewind(out);
	text = calloc(1, n + 1);
	assert_int_equal(fread(text, 1, n, out), n);
	fclose(out);
	assert_non_null(strstr(text, "XRay FDR trace version 1, type 1, constant_tsc 1, "
				     "nonstop_tsc 1, cycle_frequency 1000000000"));
	assert_non_null(strstr(text, "0x00000020 NewBuffer tid=4242\n"));
	assert_non_null(strstr(text, "Function Enter id=2 delta=+0 tsc=5000000000050 cpu=1\n"));
	if (!strstr(text, "summary: 12 records, 8 function records, 1 buffers"))
		fail_msg("dump text without the expected summary:\n%s", text);
	free(text);

	out = tmpfile();
	assert_int_equal(xray_dump(path, out, true), 0);
	assert_int_equal(ftell(out), 0);
	assert_int_equal(xray_dump(fixture, out, true), 0);
	assert_int_equal(ftell(out), 0);
	fclose(out);

	/* a malformed file: error with the offset, nothing on out */
	snprintf(bad, sizeof(bad), "%s/bad.xray", dir);
	out = fopen(bad, "wb");
	assert_non_null(out);
	assert_int_equal(fwrite("\1\0\1\0\3\0\0\0", 1, 8, out), 8);
	fclose(out);
	out = tmpfile();
	assert_int_equal(xray_dump(bad, out, false), -EINVAL);
	assert_int_equal(ftell(out), 0);
	fclose(out);
	model_free(&c.m);
	remove_tree(dir);
}

/* Nothing traced: nothing written. */
static void test_empty_model(void **state)
{
	struct calls_model c;
	char *dir = make_tmpdir(), path[512];

	(void)state;
	calls_model_init(&c);
	assert_int_equal(write_model(&c.m, dir, 0, NULL), 0);
	snprintf(path, sizeof(path), "%s/xray", dir);
	assert_false(exists(path));
	assert_int_equal(xray_write(&c.m, &(struct export_options){ .dir = dir, .quiet = true }),
			 0);
	assert_false(exists(path));
	model_free(&c.m);
	remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_against_spec),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_known_counts_llvm),
		cmocka_unit_test(test_lost_events),
		cmocka_unit_test(test_synthetic_map),
		cmocka_unit_test(test_yaml_map),
		cmocka_unit_test(test_reader_llvm_fixture),
		cmocka_unit_test(test_reader_llvm_runtime),
		cmocka_unit_test(test_reader_rejects_malformed),
		cmocka_unit_test(test_reader_v1_without_buffer_size),
		cmocka_unit_test(test_reader_survives_mutations),
		cmocka_unit_test(test_dump_format),
		cmocka_unit_test(test_empty_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
