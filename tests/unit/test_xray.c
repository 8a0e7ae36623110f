// SPDX-License-Identifier: GPL-2.0
/*
 * XRay FDR writer: every byte of a small trace against the spec, writer ->
 * reader round trips, lost events resynchronized, nothing written for a
 * model without traced calls.  (llvm-xray reading the writer's files:
 * test_xray_llvm.c; the reader: test_xray_reader.c.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "xray_unit.h"

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
	b = unit_slurp(path, &n);
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
	yaml = (char *)unit_slurp(path, &n);
	yaml = realloc(yaml, n + 1);
	yaml[n] = '\0';
	assert_non_null(strstr(yaml, "1 exits closed whose exit was lost, 2 exits without an "
				     "entry dropped"));
	free(yaml);

	snprintf(cmd, sizeof(cmd),
		 LLVM_XRAY " account -format=csv -m '%s/xray/calls.4242.map.elf' "
		 "'%s/xray/calls.4242.xray'", dir, dir);
	assert_int_equal(unit_run(cmd, &out), 0);
	assert_int_equal(account_count(out, "f", NULL, 0), 3);
	assert_int_equal(account_count(out, "g", NULL, 0), 7);
	free(out);
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
	assert_false(unit_exists(path));
	assert_int_equal(xray_write(&c.m, &(struct export_options){ .dir = dir, .quiet = true }),
			 0);
	assert_false(unit_exists(path));
	model_free(&c.m);
	remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_against_spec),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_lost_events),
		cmocka_unit_test(test_empty_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
