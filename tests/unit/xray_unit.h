/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the XRay unit tests share (test_xray.c: the writer; test_xray_llvm.c:
 * llvm-xray reading what it wrote; test_xray_reader.c: the reader): a model
 * of build/xray/calls, the record as llvm-xray-14 fdr-dump prints it, and a
 * trace written by LLVM's own runtime (build/xray/fdr_v5).
 *
 * Needs build/xray/calls and build/xray/fdr_v5 (mk/xray.mk) and llvm-xray-14.
 * Include after <cmocka.h>.
 */
#ifndef COLLECTOR_XRAY_UNIT_H
#define COLLECTOR_XRAY_UNIT_H

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/format.h"
#include "model/model.h"
#include "formats/xray/xray.h"
#include "formats/xray/xray_format.h"
#include "formats/xray/xray_reader.h"
#include "lib/bytes.h"
#include "unit_files.h"

#define LLVM_XRAY "llvm-xray-14"
#define CALLS_BIN "build/xray/calls"
#define FDR_V5_BIN "build/xray/fdr_v5"
#define T0_EPOCH 1700000000123456789ull
#define K0 5000000000000ull

static inline char *make_tmpdir(void)
{
	return unit_tmpdir("xray");
}

static inline void remove_tree(char *dir)
{
	unit_rm_rf(dir);
	free(dir);
}

/* Address and size of a function symbol in an ELF file's .symtab. */
static inline void elf_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
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

static inline uint32_t add_elf_image(struct model *m, const char *path)
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

static inline void event(struct model *m, uint32_t thread, uint32_t func, uint8_t kind, uint64_t t,
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

static inline int write_model(const struct model *m, const char *dir, uint64_t buffer_size,
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

static inline void calls_model_init(struct calls_model *c)
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
static inline uint64_t calls_trace(struct calls_model *c, unsigned nf, unsigned ng, uint64_t t)
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
static inline void llvm_line(char *buf, size_t n, const struct xray_record *r)
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
static inline void compare_with_fdr_dump(const char *path, const struct xray_trace *t)
{
	char cmd[1024], line[256], *out, *p, *nl;
	bool padding = false;
	size_t k = 0;

	snprintf(cmd, sizeof(cmd), LLVM_XRAY " fdr-dump '%s'", path);
	assert_int_equal(unit_run(cmd, &out), 0);
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

static inline size_t thread_events(const struct xray_trace *t, int32_t tid, struct fn_event *ev,
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

/* The id llvm-xray gives `name` in an XRay-instrumented binary. */
static inline unsigned xray_function_id(const char *binary, const char *name)
{
	char cmd[512], want[128], *out, *p;
	unsigned id = 0;

	snprintf(cmd, sizeof(cmd), LLVM_XRAY " extract --symbolize '%s'", binary);
	assert_int_equal(unit_run(cmd, &out), 0);
	snprintf(want, sizeof(want), "function-name: %s,", name);
	p = strstr(out, want);
	assert_non_null(p);
	while (p > out && *(p - 1) != '\n')
		p--;
	assert_int_equal(sscanf(p, "- { id: %u,", &id), 1);
	free(out);
	return id;
}

/* Count of a function in `llvm-xray-14 account -format=csv` output, with
 * its debug column (file:line:column) copied to debug. */
static inline long account_count(const char *csv, const char *name, char *debug, size_t n)
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
/* A version-5 trace written by LLVM's runtime (build/xray/fdr_v5) into dir;
 * its path into path[n]. */
static inline void runtime_trace(const char *dir, char *path, size_t n)
{
	char cmd[1024], *out;

	snprintf(cmd, sizeof(cmd),
		 "XRAY_OPTIONS='patch_premain=false xray_mode=xray-fdr xray_logfile_base=%s/fdr-' "
		 FDR_V5_BIN " 2>/dev/null && cd '%s' && ls fdr-*", dir, dir);
	assert_int_equal(unit_run(cmd, &out), 0);
	assert_true(strncmp(out, "fdr-", 4) == 0);
	*strchrnul(out, '\n') = '\0';
	snprintf(path, n, "%s/%s", dir, out);
	free(out);
}

#endif /* COLLECTOR_XRAY_UNIT_H */
