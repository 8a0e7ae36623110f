// SPDX-License-Identifier: GPL-2.0
/* Function names: C++ and Rust (legacy and v0) symbols are shown
 * demangled, with the symbol kept as the linkage name; --no-demangle and
 * C names keep the symbol as it is. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "symbols/symbolize.h"

struct fixture {
	struct model m;
	struct symbolizer *s;
	uint32_t img;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct model_image tmpl = { .path = "/usr/lib/libexample.so" };

	model_init(&f->m);
	f->s = symbolizer_new(&f->m);
	f->img = model_add_image(&f->m, &tmpl);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	symbolizer_free(f->s);
	model_free(&f->m);
	free(f);
	return 0;
}

static const struct model_function *intern(struct fixture *f, const char *sym, uint64_t entry)
{
	uint32_t id = symbolizer_function(f->s, f->img, sym, entry, 16, MODEL_NONE, 0);

	assert_true(id < f->m.functions.len);
	return &f->m.functions.items[id];
}

static void test_cxx(void **state)
{
	struct fixture *f = *state;
	const struct model_function *fn = intern(f, "_ZN2v84base7ieee7543sinEd", 0x1000);

	assert_string_equal(fn->name, "v8::base::ieee754::sin(double)");
	assert_string_equal(fn->linkage_name, "_ZN2v84base7ieee7543sinEd");
	fn = intern(f, "_ZNK6shapes7PolygonIdE9perimeterEi", 0x2000);
	assert_string_equal(fn->name, "shapes::Polygon<double>::perimeter(int) const");
	/* the same symbol again is the same function */
	assert_int_equal(symbolizer_function(f->s, f->img, "_ZN2v84base7ieee7543sinEd", 0x1000, 16,
					     MODEL_NONE, 0), 0);
	assert_int_equal(f->m.functions.len, 2);
}

static void test_rust(void **state)
{
	struct fixture *f = *state;
	const struct model_function *fn;

	/* legacy: the hash suffix is dropped, as rustfilt and perf do */
	fn = intern(f, "_ZN3std2rt10lang_start17h0123456789abcdefE", 0x1000);
	assert_string_equal(fn->name, "std::rt::lang_start");
	fn = intern(f, "_RNvCs1234_7mycrate3foo", 0x2000);
	assert_string_equal(fn->name, "mycrate::foo");
	assert_string_equal(fn->linkage_name, "_RNvCs1234_7mycrate3foo");
}

static void test_plain_and_bad(void **state)
{
	struct fixture *f = *state;
	const struct model_function *fn;

	fn = intern(f, "main", 0x1000);
	assert_string_equal(fn->name, "main");
	assert_null(fn->linkage_name);
	/* looks mangled, is not: kept as it is */
	fn = intern(f, "_Zfoo", 0x2000);
	assert_string_equal(fn->name, "_Zfoo");
	assert_null(fn->linkage_name);
}

static void test_no_demangle(void **state)
{
	struct fixture *f = *state;
	const struct model_function *fn;

	symbolizer_set_demangle(f->s, false);
	fn = intern(f, "_ZN2v84base7ieee7543sinEd", 0x1000);
	assert_string_equal(fn->name, "_ZN2v84base7ieee7543sinEd");
	assert_null(fn->linkage_name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_cxx, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rust, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plain_and_bad, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_demangle, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
