// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the kernel's image: kallsyms, its restrictions, build-id. */
#include "symtest.h"

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
		cmocka_unit_test(test_kernel_build_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
