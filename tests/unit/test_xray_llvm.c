// SPDX-License-Identifier: GPL-2.0
/*
 * XRay FDR writer against llvm-xray-14: the counts `llvm-xray account`
 * finds in what the writer wrote (with the map copied from the traced ELF
 * file, a synthetic map, and the YAML map).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "xray_unit.h"

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
	assert_int_equal(unit_run(cmd, &out), 0);
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
	assert_int_equal(unit_run(cmd, &out), 0);
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
	assert_int_equal(unit_run(cmd, &out), 0);
	assert_int_equal(account_count(out, "f", NULL, 0), 1);
	assert_int_equal(account_count(out, "malloc", NULL, 0), 2);
	free(out);

	snprintf(path, sizeof(path), "%s/xray/calls.4242.map.yaml", dir);
	yaml = (char *)unit_slurp(path, &n);
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
	assert_int_equal(unit_run(cmd, &out), 0);
	snprintf(want, sizeof(want), "@(%llx)", (unsigned long long)c.f_addr);
	assert_int_equal(account_count(out, want, NULL, 0), 3);
	snprintf(want, sizeof(want), "@(%llx)", (unsigned long long)c.g_addr);
	assert_int_equal(account_count(out, want, NULL, 0), 6);
	free(out);
	model_free(&c.m);
	remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_counts_llvm),
		cmocka_unit_test(test_synthetic_map),
		cmocka_unit_test(test_yaml_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
