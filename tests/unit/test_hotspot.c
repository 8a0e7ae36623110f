// SPDX-License-Identifier: GPL-2.0
/*
 * runtimes/jvm/hotspot_names.c and hotspot_walk.c on bytes built here:
 * UNSIGNED5 numbers as JDK 17 (no excluded byte) and JDK 20+ (byte 0
 * excluded) write them, a compressed line number table as
 * CompressedLineNumberWriteStream writes it (short pairs, escaped pairs,
 * end), scope records of the debug info stream chained by their senders,
 * signatures and class names in the perf map's spelling, and the
 * reference walker over a fake code cache (a segment map, an nmethod and
 * the interpreter's blob) and a fake stack: a compiled frame, then an
 * interpreted one, then native code.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bpf/collector.h"
#include "runtimes/jvm/hotspot_names.h"
#include "runtimes/jvm/hotspot_walk.h"

static uint32_t u5(const uint8_t *b, size_t len, uint8_t x, size_t *pos)
{
	uint32_t v = 0;

	assert_true(hotspot_u5_read(b, len, pos, x, &v));
	return v;
}

static void test_unsigned5(void **state)
{
	/* 5, 191, 192, 1000 as JDK 17 writes them (L = 192, H = 64) */
	const uint8_t j17[] = { 0x05, 0xbf, 0xc0, 0x00, 0xe8, 0x0c };
	/* 5, 190, 191, 1000 as JDK 20+ writes them (each byte + 1, L = 191) */
	const uint8_t j21[] = { 0x06, 0xbf, 0xc0, 0x01, 0xe9, 0x0d };
	const uint8_t zero[] = { 0x00 }, cut[] = { 0xe9 };
	size_t pos = 0;
	uint32_t v;
	int32_t s;

	(void)state;
	assert_int_equal(u5(j17, sizeof(j17), 0, &pos), 5);
	assert_int_equal(u5(j17, sizeof(j17), 0, &pos), 191);
	assert_int_equal(u5(j17, sizeof(j17), 0, &pos), 192);
	assert_int_equal(u5(j17, sizeof(j17), 0, &pos), 1000);
	assert_int_equal(pos, sizeof(j17));
	pos = 0;
	assert_int_equal(u5(j21, sizeof(j21), 1, &pos), 5);
	assert_int_equal(u5(j21, sizeof(j21), 1, &pos), 190);
	assert_int_equal(u5(j21, sizeof(j21), 1, &pos), 191);
	assert_int_equal(u5(j21, sizeof(j21), 1, &pos), 1000);
	/* the byte 0 is excluded from 20 on; a number cut short */
	pos = 0;
	assert_false(hotspot_u5_read(zero, 1, &pos, 1, &v));
	pos = 0;
	assert_false(hotspot_u5_read(cut, 1, &pos, 1, &v));
	/* zigzag: 5 is -3, 6 is 3 */
	pos = 0;
	assert_true(hotspot_u5_read_signed((const uint8_t[]){ 5, 6 }, 2, &pos, 0, &s));
	assert_int_equal(s, -3);
	assert_true(hotspot_u5_read_signed((const uint8_t[]){ 5, 6 }, 2, &pos, 0, &s));
	assert_int_equal(s, 3);
}

static void test_line_table(void **state)
{
	/* (bci, line): (0, 10) escaped, (4, 11) and (12, 13) short, (100, 40)
	 * escaped (a bci delta of 88), end; then bytes of what follows */
	const uint8_t t17[] = { 0xff, 0x00, 0x14, 0x21, 0x42, 0xff, 0xb0, 0x36, 0x00, 0x77 };
	const uint8_t t21[] = { 0xff, 0x01, 0x15, 0x21, 0x42, 0xff, 0xb1, 0x37, 0x00, 0x77 };
	const uint32_t bcis[] = { 0, 3, 4, 5, 12, 99, 100, 200 };
	const int32_t lines[] = { 10, 10, 11, 11, 13, 13, 40, 40 };
	size_t used;

	(void)state;
	for (size_t i = 0; i < sizeof(bcis) / sizeof(bcis[0]); i++) {
		assert_int_equal(hotspot_line_for_bci(t17, sizeof(t17), 0, bcis[i], &used), lines[i]);
		assert_int_equal(used, 9);
		assert_int_equal(hotspot_line_for_bci(t21, sizeof(t21), 1, bcis[i], &used), lines[i]);
		assert_int_equal(used, 9);
	}
	/* cut before its end: no length, the lines read so far */
	assert_int_equal(hotspot_line_for_bci(t17, 5, 0, 12, &used), 13);
	assert_int_equal(used, 0);
	/* an empty table has no line */
	assert_int_equal(hotspot_line_for_bci((const uint8_t[]){ 0 }, 1, 0, 3, &used), -1);
}

static void check_sig(const char *sig, const char *params, const char *ret)
{
	char p[256], r[64];

	assert_int_equal(hotspot_signature_external(sig, strlen(sig), p, sizeof(p), r, sizeof(r)),
			 0);
	assert_string_equal(p, params);
	assert_string_equal(r, ret);
}

static void test_signatures(void **state)
{
	const char *bad[] = { "(Ljava/lang/String)V", "J", "(Q)V", "(I", "(I)", "(I)VV", "([)V" };
	char p[256], r[64], c[64];

	(void)state;
	check_sig("(J[JI)J", "long, long[], int", "long");
	check_sig("([Ljava/lang/String;)V", "java.lang.String[]", "void");
	check_sig("(Ljava/util/Map$Entry;[[DZ)Ljava/lang/Object;",
		  "java.util.Map$Entry, double[][], boolean", "java.lang.Object");
	check_sig("()V", "", "void");
	check_sig("(BCFS)[[B", "byte, char, float, short", "byte[][]");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(hotspot_signature_external(bad[i], strlen(bad[i]), p, sizeof(p), r,
							    sizeof(r)),
				 -EINVAL);
	assert_int_equal(hotspot_signature_external("(JJJJ)V", 7, p, 8, r, sizeof(r)),
			 -ENAMETOOLONG);
	hotspot_class_external("com/x/Y$Z", 9, c, sizeof(c));
	assert_string_equal(c, "com.x.Y$Z");
	hotspot_class_external("Foo$$Lambda+0x0000000800c03000", 30, c, sizeof(c));
	assert_string_equal(c, "Foo$$Lambda/0x0000000800c03000");
}

static void test_scopes(void **state)
{
	/* JDK 17: record A at 1 (no sender, method 2, bci 5); record B at 4
	 * (sender A, method 3, bci 300: 301 in two bytes) */
	const uint8_t s17[] = { 0x00, 0x00, 0x02, 0x06, 0x01, 0x03, 0xed, 0x01 };
	/* the same as JDK 21 writes it */
	const uint8_t s21[] = { 0x00, 0x01, 0x03, 0x07, 0x02, 0x04, 0xee, 0x02 };
	uint32_t sender, index;
	int32_t bci;

	(void)state;
	assert_true(hotspot_scope_decode(s17, sizeof(s17), 4, 0, &sender, &index, &bci));
	assert_int_equal(sender, 1);
	assert_int_equal(index, 3);
	assert_int_equal(bci, 300);
	assert_true(hotspot_scope_decode(s17, sizeof(s17), sender, 0, &sender, &index, &bci));
	assert_int_equal(sender, 0);
	assert_int_equal(index, 2);
	assert_int_equal(bci, 5);
	assert_true(hotspot_scope_decode(s21, sizeof(s21), 4, 1, &sender, &index, &bci));
	assert_int_equal(sender, 1);
	assert_int_equal(index, 3);
	assert_int_equal(bci, 300);
	assert_false(hotspot_scope_decode(s17, 6, 4, 0, &sender, &index, &bci));
}

/* ---- the walker over fake memory ----------------------------------------------- */

struct region {
	uint64_t addr;
	uint8_t bytes[0x1000];
};

/* code cache (2 pages), segment map, names, Method/ConstMethod, stack */
static struct region mem[] = {
	{ 0x100000, { 0 } }, { 0x101000, { 0 } }, { 0x300000, { 0 } }, { 0x400000, { 0 } },
	{ 0x500000, { 0 } }, { 0x600000, { 0 } }, { 0x7000, { 0 } },
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t size)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++)
		if (addr >= mem[i].addr && addr + size <= mem[i].addr + sizeof(mem[i].bytes)) {
			memcpy(buf, mem[i].bytes + (addr - mem[i].addr), size);
			return 0;
		}
	return -EFAULT;
}

static void put64(uint64_t addr, uint64_t v)
{
	for (size_t i = 0; i < sizeof(mem) / sizeof(mem[0]); i++)
		if (addr >= mem[i].addr && addr + 8 <= mem[i].addr + sizeof(mem[i].bytes)) {
			memcpy(mem[i].bytes + (addr - mem[i].addr), &v, 8);
			return;
		}
	fail();
}

/* A blob at block seg0 of n segments (128 bytes each), its head as the
 * record below lays it out. */
static void put_blob(uint64_t seg0, unsigned n, uint64_t name, int32_t frame_size,
		     uint64_t code_begin, uint64_t code_end)
{
	uint64_t blob = 0x100000 + (seg0 << 7) + 16;

	for (unsigned i = 0; i < n; i++)
		mem[2].bytes[seg0 + i] = (uint8_t)i;
	put64(blob + 8, name);
	put64(blob + 16, (uint32_t)frame_size);
	put64(blob + 24, code_begin);
	put64(blob + 32, code_end);
	put64(blob + 40, 77); /* compile id */
}

static void test_walk(void **state)
{
	struct collector_hotspot_proc p = {
		.codecache_low = 0x100000, .codecache_high = 0x102000,
		.interp_begin = 0x100900, .interp_end = 0x100c00,
		.heaps = { { 0x100000, 0x102000, 0x300000 } }, .n_heaps = 1,
		.segment_shift = 7, .heapblock_size = 16, .blob_name = 8, .blob_frame_size = 16,
		.blob_frame_complete = 20, .blob_frame_complete_width = 4, .blob_code_begin = 24,
		.blob_code_end = 32, .nm_compile_id = 40, .nm_deopt_handler = 48,
		.nm_orig_pc_offset = 56, .method_constmethod = 8, .cmethod_size = 48,
		.interp_sender_sp = -1, .interp_method = -3, .interp_bcp = -8, .interp_locals = -7,
	};
	struct hotspot_regs r = { .pc = 0x100200, .sp = 0x7000, .fp = 0x1234, .r13 = 0 };
	struct hotspot_walk_frame f[8];
	uint64_t blob;
	size_t n;

	(void)state;
	memset(mem[2].bytes, 0xff, sizeof(mem[2].bytes));
	memcpy(mem[3].bytes, "nmethod", 8);
	memcpy(mem[3].bytes + 16, "Interpreter", 12);
	put_blob(0, 16, 0x400000, 4, 0x100100, 0x100400);      /* nmethod, 4 words */
	put_blob(16, 8, 0x400010, 0, 0x100900, 0x100c00);      /* the interpreter */
	assert_int_equal(hotspot_find_blob(&p, 0x100200, fake_read, NULL, &blob), 0);
	assert_int_equal(blob, 0x100010);
	assert_int_equal(hotspot_find_blob(&p, 0x100950, fake_read, NULL, &blob), 0);
	assert_int_equal(blob, 0x100810);
	assert_int_equal(hotspot_find_blob(&p, 0x101000, fake_read, NULL, &blob), -ENOENT);
	/* the compiled frame: return address into the interpreter, its fp */
	put64(0x7018, 0x100950);
	put64(0x7010, 0x7100);
	/* the interpreted frame at fp 0x7100: Method*, bcp 7 into the code */
	put64(0x500008, 0x600000);
	put64(0x7100 - 3 * 8, 0x500000);
	put64(0x7100 - 8 * 8, 0x600000 + 48 + 7);
	put64(0x7100 - 1 * 8, 0x7200);
	put64(0x7100, 0x7300);
	put64(0x7108, 0xdead000);
	assert_int_equal(hotspot_walk(&p, &r, true, fake_read, NULL, f, 8, &n), HOTSPOT_WALK_LEFT);
	assert_int_equal(n, 2);
	assert_int_equal(COLLECTOR_FRAME_KIND(f[0].frame), COLLECTOR_FRAME_JAVA);
	assert_false(COLLECTOR_HS_IS_INTERP(f[0].frame));
	assert_true(COLLECTOR_HS_IS_TOP(f[0].frame));
	assert_int_equal(COLLECTOR_HS_PC(f[0].frame), 0x100200);
	assert_int_equal(COLLECTOR_HS_ID(f[0].frame), 77);
	assert_int_equal(f[0].blob, 0x100010);
	assert_true(COLLECTOR_HS_IS_INTERP(f[1].frame));
	assert_int_equal(COLLECTOR_HS_METHOD(f[1].frame), 0x500000);
	assert_int_equal(COLLECTOR_HS_BCI(f[1].frame), 7);
	assert_int_equal(r.pc, 0xdead000);
	assert_int_equal(r.sp, 0x7200);
	assert_int_equal(r.fp, 0x7300);
	/* in its epilogue (at "pop rbp"): the frame is 2 words, not 4 */
	mem[0].bytes[0x300] = 0x5d;
	put64(0x7008, 0x100950);
	put64(0x7000, 0x7100);
	r = (struct hotspot_regs){ .pc = 0x100300, .sp = 0x7000, .fp = 0x1234 };
	assert_int_equal(hotspot_walk(&p, &r, true, fake_read, NULL, f, 8, &n), HOTSPOT_WALK_LEFT);
	assert_int_equal(n, 2);
	assert_int_equal(COLLECTOR_HS_BCI(f[1].frame), 7);
	/* outside the code cache: not the walker's */
	r.pc = 0x9000;
	assert_int_equal(hotspot_walk(&p, &r, true, fake_read, NULL, f, 8, &n),
			 HOTSPOT_WALK_NOT_MINE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unsigned5),
		cmocka_unit_test(test_line_table),
		cmocka_unit_test(test_signatures),
		cmocka_unit_test(test_scopes),
		cmocka_unit_test(test_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
