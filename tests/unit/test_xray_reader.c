// SPDX-License-Identifier: GPL-2.0
/*
 * XRay FDR reader: a trace LLVM's own runtime wrote here (build/xray/fdr_v5)
 * record for record against llvm-xray-14 fdr-dump, malformed traces each
 * rejected with its offset and reason, truncations and byte flips of real
 * traces never crashing it, and `collector dump`'s hooks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "xray_unit.h"

/*
 * Each record's absolute TSC, CPU, thread and process as the reader
 * rebuilds them: a function record's TSC is the last NewCPUId's or
 * TSCWrap's plus the deltas since, on that CPU; thread and process are
 * those of its buffer's NewBuffer and latest PID record.
 */
static void check_reconstruction(const struct xray_trace *t)
{
	uint64_t base = 0;
	int32_t tid = 0, pid = 0;
	uint16_t cpu = 0;
	size_t functions = 0;

	for (size_t i = 0; i < t->n_records; i++) {
		const struct xray_record *r = &t->records[i];

		switch (r->type) {
		case XRAY_MD_NEW_BUFFER:
			tid = r->value32;
			pid = 0;
			break;
		case XRAY_MD_PID:
			pid = r->value32;
			break;
		case XRAY_MD_NEW_CPU_ID:
			cpu = r->cpu;
			base = r->value;
			assert_true(r->tsc == base);
			break;
		case XRAY_MD_TSC_WRAP:
			base = r->value;
			break;
		case XRAY_REC_FUNCTION:
			base += r->delta;
			assert_true(r->tsc == base);
			assert_int_equal(r->cpu, cpu);
			functions++;
			break;
		}
		assert_int_equal(r->tid, tid);
		assert_int_equal(r->pid, pid);
	}
	assert_true(functions > 0);
}

/* A version-5 trace written here by LLVM's runtime (build/xray/fdr_v5):
 * record for record what llvm-xray-14 fdr-dump reads, and the calls the
 * program makes. */
static void test_reader_llvm_runtime(void **state)
{
	struct format_error err;
	struct xray_trace t;
	char *dir = make_tmpdir(), path[600];
	unsigned leaf, mid, top, enters[3] = { 0 }, args = 0, pids = 0;
	pid_t tids[2] = { 0, 0 };

	(void)state;
	runtime_trace(dir, path, sizeof(path));
	if (xray_read_file(path, &t, &err) != 0)
		fail_msg("%s: offset %llu: %s", path, (unsigned long long)err.offset, err.reason);
	assert_int_equal(t.header.version, 5);
	assert_int_equal(t.header.buffer_size, 16384); /* fdr_v5's buffer_size= */
	compare_with_fdr_dump(path, &t);
	check_reconstruction(&t);

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
	data = unit_slurp(path, &n);
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
	char *dir = make_tmpdir(), path[512], runtime[600];
	const char *files[2];
	unsigned seed = 12345;

	(void)state;
	calls_model_init(&c);
	calls_trace(&c, 10, 3, 0);
	assert_int_equal(write_model(&c.m, dir, 256, NULL), 0);
	snprintf(path, sizeof(path), "%s/xray/calls.4242.xray", dir);
	files[0] = path;
	runtime_trace(dir, runtime, sizeof(runtime));
	files[1] = runtime;
	for (int f = 0; f < 2; f++) {
		unsigned char *data, *copy;
		size_t n;

		data = unit_slurp(files[f], &n);
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
	char *dir = make_tmpdir(), path[512], bad[600], runtime[600], *text;
	unsigned char head[64];
	FILE *out;
	size_t n;

	(void)state;
	calls_model_init(&c);
	calls_trace(&c, 2, 1, 0);
	assert_int_equal(write_model(&c.m, dir, 0, NULL), 0);
	snprintf(path, sizeof(path), "%s/xray/calls.4242.xray", dir);
	runtime_trace(dir, runtime, sizeof(runtime));

	text = (char *)unit_slurp(path, &n);
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
	assert_int_equal(xray_dump(runtime, out, true), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_llvm_runtime),
		cmocka_unit_test(test_reader_rejects_malformed),
		cmocka_unit_test(test_reader_v1_without_buffer_size),
		cmocka_unit_test(test_reader_survives_mutations),
		cmocka_unit_test(test_dump_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
