// SPDX-License-Identifier: GPL-2.0
/*
 * runtimes/python/python_code.c: the location table as CPython encodes it
 * (the tables and their lines by code unit written by CPython 3.11 and
 * 3.14 themselves, co_linetable and co_lines(), for one function with a
 * multi-line expression, a comprehension, blank lines and, in 3.14, units
 * of no location; 3.12's for a function of the same kinds, whose source is
 * below), and a code object read from memory laid out as 3.11's
 * and as 3.12's (this process read through process_vm_readv, as a target
 * is): its qualified name in ASCII and in UCS-2, its file, first line and
 * table, and whether the object at its address is still that one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "runtimes/python/python_code.h"

/* CPython 3.11.2: f's co_linetable, and co_lines() by code unit */
static const uint8_t table311[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88,
	0x31, 0x82, 0x75, 0x80, 0x75, 0xf0, 0x02, 0x01, 0x0d, 0x20, 0xf0, 0x00, 0x01, 0x0d, 0x20,
	0xdd, 0x16, 0x1b, 0x98, 0x41, 0x91, 0x68, 0x94, 0x68, 0xf0, 0x03, 0x01, 0x0d, 0x20, 0xf1,
	0x00, 0x01, 0x0d, 0x20, 0xf4, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01, 0x88, 0x01, 0xf0, 0x06,
	0x00, 0x0d, 0x11, 0x88, 0x01, 0xf0, 0x08, 0x00, 0x0d, 0x0e, 0xd8, 0x0c, 0x0d, 0xf0, 0x03,
	0x01, 0x0c, 0x0f, 0xf0, 0x00, 0x01, 0x05, 0x0f,
};
static const uint32_t lines311[] = {
	1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5,
	5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 7, 7, 11, 12, 11, 11,
};

/* CPython 3.14.10: the same function */
static const uint8_t table314[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x8d, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08, 0x88, 0x31, 0x84,
	0x75, 0xe4, 0x16, 0x1b, 0x98, 0x41, 0x94, 0x68, 0xf3, 0x03, 0x01, 0x0d, 0x20, 0xd9, 0x16,
	0x1e, 0x90, 0x11, 0xf0, 0x03, 0x00, 0x0e, 0x0f, 0x8f, 0x55, 0x88, 0x55, 0xd9, 0x16, 0x1e,
	0xf0, 0x03, 0x00, 0x09, 0x0a, 0xf0, 0x00, 0x01, 0x0d, 0x20, 0xf0, 0x0e, 0x00, 0x0d, 0x0e,
	0xd8, 0x0c, 0x0d, 0xf0, 0x03, 0x01, 0x0c, 0x0f, 0xf0, 0x00, 0x01, 0x05, 0x0f, 0xf0, 0x09,
	0x00, 0x0d, 0x11, 0x88, 0x01, 0xf0, 0x08, 0x00, 0x0d, 0x0e, 0xd8, 0x0c, 0x0d, 0xf0, 0x03,
	0x01, 0x0c, 0x0f, 0xf0, 0x00, 0x01, 0x05, 0x0f, 0xf9, 0xf2, 0x0f, 0x01, 0x0d, 0x20,
};
static const uint32_t lines314[] = {
	1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 4, 4, 4, 5,
	5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 4, 4, 11, 12, 11, 11, 7, 7, 11, 12, 11, 11, 0, 0, 4,
	4, 4,
};

/* CPython 3.12.0 (built from its sources): co_linetable and co_lines() by
 * code unit of this f, its comprehension inlined (PEP 709), two units of no
 * location (its exception handler):
 *   def f(x):
 *       y = [i * 2
 *            for i in range(x)
 *            if i % 3]
 *
 *       total = 0
 *       for v in y:
 *           total += (v +
 *                     1)
 *       return total
 */
static const uint8_t table312[] = {
	0x80, 0x00, 0xe4, 0x12, 0x17, 0x98, 0x01, 0x93, 0x28, 0xf6, 0x03, 0x02, 0x09, 0x13, 0xd8,
	0x0d, 0x0e, 0xd8, 0x0c, 0x0d, 0x90, 0x01, 0x8a, 0x45, 0xf0, 0x05, 0x00, 0x0a, 0x0b, 0x88,
	0x51, 0x8b, 0x15, 0xf0, 0x00, 0x02, 0x09, 0x13, 0x80, 0x41, 0xf0, 0x00, 0x02, 0x09, 0x13,
	0xf0, 0x08, 0x00, 0x0d, 0x0e, 0x80, 0x45, 0xd8, 0x0d, 0x0e, 0xf2, 0x00, 0x02, 0x05, 0x15,
	0x88, 0x01, 0xd8, 0x08, 0x0d, 0x90, 0x21, 0xd8, 0x12, 0x13, 0xf1, 0x03, 0x01, 0x13, 0x14,
	0xf1, 0x00, 0x01, 0x09, 0x15, 0x89, 0x05, 0xf0, 0x03, 0x02, 0x05, 0x15, 0xf0, 0x06, 0x00,
	0x0c, 0x11, 0x80, 0x4c, 0xf9, 0xf2, 0x11, 0x02, 0x09, 0x13,
};
static const uint32_t lines312[] = {
	1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 3, 4, 4, 4, 4, 4, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 6, 6, 7, 7, 7, 7, 7, 8, 8, 9, 8, 8, 8, 8, 8, 8, 7, 10, 10, 0, 0, 2, 2, 2,
};

static void check_table(const uint8_t *t, size_t len, const uint32_t *lines, uint32_t n)
{
	for (uint32_t u = 0; u < n; u++)
		assert_int_equal(python_code_line(t, len, 1, u), lines[u]);
	/* past the table, and a table cut short: no line, no read past it */
	assert_int_equal(python_code_line(t, len, 1, n + 5), 0);
	for (size_t cut = 0; cut < len; cut++)
		(void)python_code_line(t, cut, 1, n - 1);
}

static void test_linetable(void **state)
{
	(void)state;
	check_table(table311, sizeof(table311), lines311, sizeof(lines311) / sizeof(lines311[0]));
	check_table(table312, sizeof(table312), lines312, sizeof(lines312) / sizeof(lines312[0]));
	check_table(table314, sizeof(table314), lines314, sizeof(lines314) / sizeof(lines314[0]));
	/* a byte that starts no entry: a table misread, no line */
	assert_int_equal(python_code_line((const uint8_t[]){ 0x01, 0x02 }, 2, 1, 0), 0);
}

/* A str object as layout l lays it out: compact (bit 5), kind (bits 2-4),
 * ASCII (bit 6); data right after the PyASCIIObject (48 bytes in 3.11, 40
 * from 3.12: wstr went), or after the PyCompactUnicodeObject (72, 56) when
 * not ASCII. */
static void make_str(const struct python_layout *l, uint8_t *obj, const char *ascii,
		     const uint16_t *ucs2, size_t n)
{
	uint32_t state = 1u << 5 | (ucs2 ? 2u : 1u) << 2 | (ucs2 ? 0 : 1u << 6);
	uint64_t len = n;

	memset(obj, 0, 160);
	memcpy(obj + l->str_length, &len, 8);
	memcpy(obj + l->str_state, &state, 4);
	if (ucs2)
		memcpy(obj + l->str_compact_data, ucs2, n * 2);
	else
		memcpy(obj + l->str_ascii_data, ascii, n);
}

/* A code object laid out as CPython 3.<minor>'s, read back. */
static void check_code_object(uint32_t minor)
{
	static uint8_t code[256], qual[160], file[160], bytes[64];
	const struct python_layout *l = python_layout_of(minor);
	struct python_code c;
	uint64_t p, size = sizeof(table311) < 32 ? sizeof(table311) : 32;
	int32_t first = 7;
	/* "Kestrel.grïnd" in UCS-2 */
	const uint16_t name[] = { 'K', 'e', 's', 't', 'r', 'e', 'l', '.', 'g', 'r', 0xef, 'n', 'd' };

	assert_non_null(l);
	assert_true(l->walk.code_units <= sizeof(code));
	make_str(l, qual, NULL, name, sizeof(name) / sizeof(name[0]));
	make_str(l, file, "/srv/app/kestrel.py", NULL, strlen("/srv/app/kestrel.py"));
	memset(bytes, 0, sizeof(bytes));
	memcpy(bytes + l->bytes_size, &size, 8);
	memcpy(bytes + l->bytes_data, table311, size);
	memset(code, 0, sizeof(code));
	p = (uintptr_t)qual;
	memcpy(code + l->co_qualname, &p, 8);
	p = (uintptr_t)file;
	memcpy(code + l->co_filename, &p, 8);
	p = (uintptr_t)bytes;
	memcpy(code + l->co_linetable, &p, 8);
	memcpy(code + l->co_firstlineno, &first, 4);

	assert_int_equal(python_code_read(getpid(), l, (uintptr_t)code, &c), 0);
	assert_string_equal(c.qualname, "Kestrel.gr\xc3\xafnd");
	assert_string_equal(c.filename, "/srv/app/kestrel.py");
	assert_int_equal(c.first_line, 7);
	assert_int_equal(c.linetable_len, size);
	assert_memory_equal(c.linetable, table311, size);
	/* still the same code object; then another made at its address
	 * (another name), then the first line changed: another */
	assert_int_equal(python_code_same(getpid(), l, (uintptr_t)code, &c), 1);
	p = (uintptr_t)file;
	memcpy(code + l->co_qualname, &p, 8);
	assert_int_equal(python_code_same(getpid(), l, (uintptr_t)code, &c), 0);
	p = (uintptr_t)qual;
	memcpy(code + l->co_qualname, &p, 8);
	assert_int_equal(python_code_same(getpid(), l, (uintptr_t)code, &c), 1);
	first = 8;
	memcpy(code + l->co_firstlineno, &first, 4);
	assert_int_equal(python_code_same(getpid(), l, (uintptr_t)code, &c), 0);
	first = 7;
	memcpy(code + l->co_firstlineno, &first, 4);
	/* gone: unreadable */
	assert_int_equal(python_code_same(getpid(), l, 8, &c), -EFAULT);
	python_code_free(&c);

	/* what is no str: not compact */
	file[l->str_state] = 0;
	assert_int_equal(python_code_read(getpid(), l, (uintptr_t)code, &c), -EINVAL);
	assert_null(c.qualname);
	/* an address that is not mapped */
	assert_int_equal(python_code_read(getpid(), l, 8, &c), -EFAULT);
}

static void test_code_object(void **state)
{
	(void)state;
	check_code_object(11);
	check_code_object(12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linetable),
		cmocka_unit_test(test_code_object),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
