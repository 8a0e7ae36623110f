// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the kernel's image: kallsyms, its restrictions, build-id. */
#include "symtest.h"
#include "loader/kernel_names.h"

static void test_kernel(void **state)
{
	char line[512];
	unsigned long long addr = 0, stext = 0, a;
	char type, name[256];
	struct model m;
	struct symbolizer *s;
	uint32_t img, loc;
	FILE *f = fopen("/proc/kallsyms", "r");

	(void)state;
	if (!f)
		skip();
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3)
			continue;
		if (!strcmp(name, "schedule") && (type == 'T' || type == 't'))
			addr = a;
		if (!strcmp(name, "_stext"))
			stext = a;
	}
	fclose(f);
	if (!addr)
		skip(); /* kptr_restrict hides the addresses */

	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_kernel_image(s);
	assert_int_equal(symbolizer_kernel_image(s), img);
	assert_int_equal(m.images.items[img].kind, MODEL_IMAGE_KERNEL);
	assert_string_equal(m.images.items[img].path, "[kernel.kallsyms]");
	assert_true(m.images.items[img].has_symbols);
	assert_true(m.images.items[img].text_start == stext);
	assert_true(m.images.items[img].text_size > 0);
	loc = symbolizer_location(s, img, addr + 1);
	assert_string_equal(loc_function(&m, loc)->name, "schedule");
	assert_true(loc_function(&m, loc)->entry == addr);
	assert_int_equal(loc_function(&m, loc)->image, img);
	assert_true(m.locations.items[loc].addr == addr + 1);
	assert_int_equal(symbolizer_location(s, img, addr), symbolizer_location(s, img, addr));
	symbolizer_free(s);
	model_free(&m);
}

static void test_kernel_restricted(void **state)
{
	char path[] = "/tmp/kallsyms-XXXXXX";
	const char text[] = "0000000000000000 T _stext\n"
			    "0000000000000000 T schedule\n"
			    "0000000000000000 t foo\t[mod]\n";
	struct model m;
	struct symbolizer *s;
	uint32_t img;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_kallsyms_path(s, path);
	img = symbolizer_kernel_image(s);
	assert_false(m.images.items[img].has_symbols);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_KALLSYMS_RESTRICTED), 1);
	assert_null(loc_function(&m, symbolizer_location(s, img, 0xffffffff81000000ULL)));
	symbolizer_free(s);
	model_free(&m);
	unlink(path);
}

static void test_kallsyms_parse(void **state)
{
	const char text[] = "ffffffff81000000 T _stext\n"
			    "ffffffff81000000 t startup_64\n"
			    "ffffffff81001000 T func_a\n"
			    "ffffffff81001000 W func_a_alias\n"
			    "ffffffff81001100 t func_b\n"
			    "ffffffff82000000 D some_data\n"
			    "ffffffff81002000 T _etext\n"
			    "ffffffffc0001000 t mod_func\t[my_mod]\n"
			    "ffffffffc0001010 T mod_func2\t[my_mod]";
	struct kallsyms k;
	struct ksym *e;
	size_t bad;

	(void)state;
	assert_int_equal(kallsyms_parse(&k, text, sizeof(text) - 1, &bad), 0);
	assert_false(k.restricted);
	assert_true(k.stext == 0xffffffff81000000ULL);
	assert_true(k.etext == 0xffffffff81002000ULL);
	e = kallsyms_lookup(&k, 0xffffffff81000fffULL);
	assert_string_equal(e->name, "_stext"); /* T beats t at one address */
	e = kallsyms_lookup(&k, 0xffffffff810010ffULL);
	assert_string_equal(e->name, "func_a");
	assert_string_equal(e->module, "");
	assert_string_equal(kallsyms_lookup(&k, 0xffffffff81001100ULL)->name, "func_b");
	e = kallsyms_lookup(&k, 0xffffffffc000100fULL);
	assert_string_equal(e->name, "mod_func");
	assert_string_equal(e->module, "my_mod");
	assert_string_equal(kallsyms_lookup(&k, 0xffffffffc0001010ULL)->module, "my_mod");
	assert_null(kallsyms_lookup(&k, 0xffffffff80000000ULL));
	assert_null(kallsyms_lookup(&k, 0xffffffffc0001010ULL + 0x100000));
	/* data symbols are not kept */
	for (size_t i = 0; i < k.n; i++)
		assert_string_not_equal(k.syms[i].name, "some_data");
	kallsyms_free(&k);

	assert_int_equal(kallsyms_parse(&k, "ffffffff81000000 T a\nxyz T b\n", 28, &bad), -EINVAL);
	assert_int_equal(bad, 2);
	assert_int_equal(kallsyms_parse(&k, "ffffffff81000000 T\n", 19, &bad), -EINVAL);
	assert_int_equal(bad, 1);
	assert_int_equal(kallsyms_parse(&k, "1 T a\t[mod\n", 11, &bad), -EINVAL);
	assert_int_equal(bad, 1);
}

/* Sorted runs, as /proc/kallsyms has them (the core kernel, then each
 * module), and no order at all: the same table either way. */
static void test_kallsyms_runs(void **state)
{
	enum { N = 3000 };
	static char text[N * 48];
	struct kallsyms k;
	size_t len = 0, bad;
	unsigned seed = 7;

	(void)state;
	for (int order = 0; order < 3; order++) {
		len = 0;
		for (int i = 0; i < N; i++) {
			/* 0: in order; 1: three runs (i rotated); 2: shuffled */
			int j = order == 0 ? i : order == 1 ? (i + N / 3) % N
							    : (int)((seed = seed * 1103515245u + 12345u) % N);

			len += (size_t)sprintf(text + len, "%016llx %c f%d\n",
					       0xffffffff81000000ULL + 16ULL * (unsigned)(j / 2),
					       j % 2 ? 't' : 'T', j);
		}
		assert_int_equal(kallsyms_parse(&k, text, len, &bad), 0);
		for (size_t i = 1; i < k.n; i++)
			assert_true(k.syms[i - 1].addr < k.syms[i].addr);
		if (order < 2) {
			assert_int_equal(k.n, N / 2);
			for (int a = 0; a < N / 2; a++) {
				char want[16];

				snprintf(want, sizeof(want), "f%d", 2 * a); /* T beats t */
				assert_string_equal(kallsyms_lookup(&k, 0xffffffff81000000ULL +
								    16ULL * (unsigned)a + 3)->name,
						    want);
			}
		}
		kallsyms_free(&k);
	}
}

static void test_kallsyms_parse_named(void **state)
{
	char name[64];
	uint64_t entry = 0;

	(void)state;
	assert_true(kallsyms_parse_named("vfs_read+0x2f/0x1a0", 0xffffffff8100102fULL, name,
					 sizeof(name), &entry));
	assert_string_equal(name, "vfs_read");
	assert_true(entry == 0xffffffff81001000ULL);
	assert_true(kallsyms_parse_named("nf_hook_slow+0x0/0xb0 [nf_tables]", 0xffffffffc0001000ULL,
					 name, sizeof(name), &entry));
	assert_string_equal(name, "nf_hook_slow");
	assert_true(entry == 0xffffffffc0001000ULL);
	/* not named: the bare address; malformed; too long for name */
	assert_false(kallsyms_parse_named("0xffffffffc0201000", 1, name, sizeof(name), &entry));
	assert_false(kallsyms_parse_named("+0x1/0x2", 1, name, sizeof(name), &entry));
	assert_false(kallsyms_parse_named("f+0x/0x2", 1, name, sizeof(name), &entry));
	assert_false(kallsyms_parse_named("f+0x10/0x20", 0xf, name, sizeof(name), &entry));
	assert_false(kallsyms_parse_named("abcdef+0x1/0x2", 2, name, 4, &entry));
}

/* A namer that knows one function, "schedule" at 0x1000 (64 bytes). */
static int fake_name(void *ctx, uint64_t addr, char *text, size_t size)
{
	++*(int *)ctx;
	if (addr >= 0x1000 && addr < 0x1040)
		snprintf(text, size, "schedule+0x%llx/0x40", (unsigned long long)(addr - 0x1000));
	else
		snprintf(text, size, "0x%llx", (unsigned long long)addr);
	return 0;
}

static int fake_text(void *ctx, uint64_t *start, uint64_t *end)
{
	(void)ctx;
	*start = 0x1000;
	*end = 0x9000;
	return 0;
}

static int no_text(void *ctx, uint64_t *start, uint64_t *end)
{
	(void)ctx;
	(void)start;
	(void)end;
	return -EPERM;
}

static void test_kernel_namer(void **state)
{
	char path[] = "/tmp/kallsyms-XXXXXX";
	const char text[] = "0000000000002000 T _stext\n0000000000002008 T from_file\n"
			    "0000000000003000 T _etext\n";
	struct kernel_namer namer = { fake_name, fake_text, NULL };
	struct model m;
	struct symbolizer *s;
	uint32_t img, loc;
	int calls = 0, fd;

	(void)state;
	namer.ctx = &calls;
	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_kallsyms_path(s, "/nonexistent/kallsyms");
	symbolizer_set_kernel_namer(s, &namer);
	img = symbolizer_kernel_image(s);
	assert_true(m.images.items[img].has_symbols);
	assert_true(m.images.items[img].text_start == 0x1000);
	assert_true(m.images.items[img].text_size == 0x8000);
	loc = symbolizer_location(s, img, 0x1010);
	assert_string_equal(loc_function(&m, loc)->name, "schedule");
	assert_true(loc_function(&m, loc)->entry == 0x1000);
	/* the same function for another address of it; nothing for none */
	assert_int_equal(m.locations.items[symbolizer_location(s, img, 0x1020)].function,
			 m.locations.items[loc].function);
	assert_int_equal(m.locations.items[symbolizer_location(s, img, 0x5000)].function,
			 MODEL_NONE);
	assert_int_equal(calls, 3);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_KALLSYMS_UNREADABLE), 0);
	symbolizer_free(s);
	model_free(&m);

	/* a namer that cannot be used: kallsyms is read */
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	namer.text = no_text;
	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_kallsyms_path(s, path);
	symbolizer_set_kernel_namer(s, &namer);
	img = symbolizer_kernel_image(s);
	assert_true(m.images.items[img].text_start == 0x2000);
	loc = symbolizer_location(s, img, 0x2010);
	assert_string_equal(loc_function(&m, loc)->name, "from_file");
	symbolizer_free(s);
	model_free(&m);
	unlink(path);
}

/* The namer is given up for the file only when one interval names more
 * addresses than the file costs to read (KERNEL_NAMER_MAX, 20 000): the
 * same count spread over intervals keeps the namer, and kallsyms unread. */
static void test_kernel_namer_per_interval(void **state)
{
	char path[] = "/tmp/kallsyms-XXXXXX";
	const char text[] = "0000000000001000 T _stext\n0000000000001010 T from_file\n"
			    "0000000000900000 T _etext\n";
	struct kernel_namer namer = { fake_name, fake_text, NULL };
	bool in_use[1] = { true };
	struct model m;
	struct symbolizer *s;
	uint32_t img, loc;
	int calls = 0, fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	namer.ctx = &calls;
	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_kallsyms_path(s, path);
	symbolizer_set_kernel_namer(s, &namer);
	img = symbolizer_kernel_image(s);
	/* 30 000 new addresses over three intervals: the namer names each */
	for (int cut = 0; cut < 3; cut++) {
		for (uint64_t a = 0; a < 10000; a++)
			symbolizer_location(s, img, 0x10000 + 10000 * cut + a);
		symbolizer_forget_code(s, in_use, 1);
	}
	assert_int_equal(calls, 30000);
	loc = symbolizer_location(s, img, 0x1010);
	assert_string_equal(loc_function(&m, loc)->name, "schedule");
	/* 20 001 in one interval: the file from then on */
	symbolizer_forget_code(s, in_use, 1);
	calls = 0;
	for (uint64_t a = 0; a < 20001; a++)
		symbolizer_location(s, img, 0x100000 + a);
	assert_int_equal(calls, 20000);
	/* an address not resolved before (0x1010 is in the location cache) */
	loc = symbolizer_location(s, img, 0x1030);
	assert_string_equal(loc_function(&m, loc)->name, "from_file");
	assert_int_equal(calls, 20000);
	symbolizer_free(s);
	model_free(&m);
	unlink(path);
}

/* The kernel's own names (loader/kernel_names.c) against /proc/kallsyms. */
static void test_kernel_names_bpf(void **state)
{
	char line[512], text[512], name[512];
	unsigned long long addr = 0, a;
	uint64_t entry, start, end;
	char type, sym[256];
	struct kernel_names *k;
	FILE *f = fopen("/proc/kallsyms", "r");

	(void)state;
	if (!f)
		skip();
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, "schedule"))
			addr = a;
	fclose(f);
	k = kernel_names_new();
	assert_non_null(k);
	if (!addr || kernel_names_text(k, &start, &end) != 0) {
		kernel_names_free(k);
		skip(); /* no addresses to compare with, or no BPF here */
	}
	assert_true(start < end);
	assert_int_equal(kernel_names_lookup(k, addr + 3, text, sizeof(text)), 0);
	assert_true(kallsyms_parse_named(text, addr + 3, name, sizeof(name), &entry));
	assert_string_equal(name, "schedule");
	assert_true(entry == addr);
	kernel_names_free(k);
}

static void test_kernel_build_id(void **state)
{
	/* one 4-aligned note: namesz 4 "GNU\0", descsz 3, type 3 */
	const unsigned char notes[] = {
		4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0, 0xab, 0xcd, 0xef, 0,
	};
	char out[41];

	(void)state;
	assert_int_equal(kallsyms_notes_build_id(notes, sizeof(notes), out, sizeof(out)), 3);
	assert_string_equal(out, "abcdef");
	/* truncated: nothing */
	assert_int_equal(kallsyms_notes_build_id(notes, sizeof(notes) - 2, out, sizeof(out)), 0);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_kernel_restricted),
		cmocka_unit_test(test_kallsyms_parse),
		cmocka_unit_test(test_kallsyms_runs),
		cmocka_unit_test(test_kallsyms_parse_named),
		cmocka_unit_test(test_kernel_namer),
		cmocka_unit_test(test_kernel_namer_per_interval),
		cmocka_unit_test(test_kernel_names_bpf),
		cmocka_unit_test(test_kernel_build_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
