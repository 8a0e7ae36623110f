// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind tables of unwind/cfi_table.c against libdw's CFI, at every
 * byte address of .text in libc.so.6, ld.so and the CFI test programs
 * (tests/unwind/chain, with .eh_frame, with .debug_frame only, and with
 * .debug_frame only in its separate debug file); the compacted tables
 * against the uncompacted ones at every address of the segment; the
 * table builder's CFI interpreter against libdw's rules.
 *
 * libdw's rules are evaluated here on their own, with a small DWARF
 * expression machine over made-up registers: the CFA, where the return
 * address is, where rbp is.  The table's row, applied to the same
 * registers as the BPF program applies it, must give the same three
 * addresses; a row may say "no usable CFI" only where libdw's rule really
 * has another shape, and "signal frame" or "outermost" only where libdw's
 * says so.
 */
#include <dwarf.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "unwind/cfi_fde.h"
#include "unwind/cfi_rule.h"
#include "unwind/cfi_table.h"
#include "symbols/debug_files.h"

/* made-up registers: far apart, so that no two rules give one address */
#define FAKE_RSP 0x100000ull
#define FAKE_RBP 0x7000000ull

struct expect {
	bool no_cfi;        /* libdw has no frame here */
	bool outermost;     /* the return address is undefined */
	bool signal;        /* a signal frame whose CFA is read from memory */
	bool representable; /* the shape a row holds */
	uint64_t cfa, ra_at;
	bool rbp_saved;
	uint64_t rbp_at;
};

/* A DWARF expression over rsp, rbp, rip; false for anything else (memory,
 * other registers, other operations). */
static bool eval_ops(const Dwarf_Op *ops, size_t n, uint64_t rip, uint64_t cfa, uint64_t *out)
{
	uint64_t st[16];
	size_t sp = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t a = ops[i].atom;

		if (sp >= 15)
			return false;
		if (a == DW_OP_breg7 || a == DW_OP_breg6 || a == DW_OP_breg16) {
			uint64_t r = a == DW_OP_breg7 ? FAKE_RSP : a == DW_OP_breg6 ? FAKE_RBP : rip;

			st[sp++] = r + ops[i].number;
		} else if (a == DW_OP_bregx && (ops[i].number == 6 || ops[i].number == 7 ||
						ops[i].number == 16)) {
			uint64_t r = ops[i].number == 7 ? FAKE_RSP : ops[i].number == 6 ? FAKE_RBP : rip;

			st[sp++] = r + ops[i].number2;
		} else if (a >= DW_OP_lit0 && a <= DW_OP_lit31) {
			st[sp++] = a - DW_OP_lit0;
		} else if (a == DW_OP_call_frame_cfa) {
			st[sp++] = cfa;
		} else if (a == DW_OP_plus_uconst && sp >= 1) {
			st[sp - 1] += ops[i].number;
		} else if (sp >= 2 && (a == DW_OP_and || a == DW_OP_ge || a == DW_OP_shl ||
				       a == DW_OP_plus)) {
			uint64_t y = st[--sp], x = st[sp - 1];

			st[sp - 1] = a == DW_OP_and ? x & y : a == DW_OP_ge ? (int64_t)x >= (int64_t)y
				   : a == DW_OP_shl ? x << y : x + y;
		} else {
			return false;
		}
	}
	if (sp != 1)
		return false;
	*out = st[0];
	return true;
}

/* Where register regno is saved (an address), per libdw: 1 saved, 0 kept
 * or undefined, -1 another rule. */
static int reg_at(Dwarf_Frame *frame, int regno, uint64_t rip, uint64_t cfa, uint64_t *at,
		  bool *undefined)
{
	Dwarf_Op mem[3], *ops;
	size_t n;

	*undefined = false;
	if (dwarf_frame_register(frame, regno, mem, &ops, &n) != 0)
		return -1;
	if (n == 0) {
		*undefined = ops == mem;
		return 0;
	}
	return eval_ops(ops, n, rip, cfa, at) ? 1 : -1;
}

static void libdw_rules(Dwarf_CFI *eh, Dwarf_CFI *debug, uint64_t addr, struct expect *e)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t n;
	bool signal = false, undef;
	int ra, rbp;

	memset(e, 0, sizeof(*e));
	if ((!eh || dwarf_cfi_addrframe(eh, addr, &frame) != 0) &&
	    (!debug || dwarf_cfi_addrframe(debug, addr, &frame) != 0)) {
		e->no_cfi = true;
		return;
	}
	ra = dwarf_frame_info(frame, NULL, NULL, &signal);
	assert_int_equal(ra, 16);
	if (reg_at(frame, 16, addr, 0, &e->ra_at, &undef) == 0 && undef) {
		e->outermost = true;
		goto out;
	}
	assert_int_equal(dwarf_frame_cfa(frame, &ops, &n), 0);
	if (signal) {
		e->signal = n >= 1 && ops[n - 1].atom == DW_OP_deref;
		goto out;
	}
	if (!eval_ops(ops, n, addr, 0, &e->cfa))
		goto out;
	if (reg_at(frame, 16, addr, e->cfa, &e->ra_at, &undef) != 1 || e->ra_at != e->cfa - 8)
		goto out;
	rbp = reg_at(frame, 6, addr, e->cfa, &e->rbp_at, &undef);
	if (rbp < 0)
		goto out;
	e->rbp_saved = rbp == 1;
	if (e->rbp_saved && (e->rbp_at % 8 != e->cfa % 8 || e->rbp_at == e->cfa ||
			     e->rbp_at + 1024 < e->cfa || e->rbp_at > e->cfa + 1016))
		goto out;
	/* a CFA from rsp or rbp plus at most 64 KiB, or the PLT's */
	e->representable = (e->cfa >= FAKE_RSP && e->cfa - FAKE_RSP <= 65535 + 16) ||
			   (e->cfa >= FAKE_RBP && e->cfa - FAKE_RBP <= 65535);
out:
	free(frame);
}

/* The row applied as the BPF program applies it. */
static uint64_t row_cfa(const struct cfi_row *r, uint64_t rip)
{
	switch (r->kind) {
	case CFI_ROW_RSP:
		return FAKE_RSP + r->cfa_off;
	case CFI_ROW_RBP:
		return FAKE_RBP + r->cfa_off;
	case CFI_ROW_PLT:
		return FAKE_RSP + 8 + ((rip & 15) >= r->cfa_off ? 8 : 0);
	}
	return 0;
}

struct tally {
	uint64_t addrs, none, none_with_cfi, signal, outermost, plt;
	/* the outermost frame where there is no CFI: the entry point's
	 * code (ld.so's), addresses lo to hi */
	uint64_t entry, entry_lo, entry_hi;
};

static void check_addr(const struct cfi_table *t, Dwarf_CFI *eh, Dwarf_CFI *debug, uint64_t a,
		       struct tally *n)
{
	const struct cfi_row *r = cfi_table_lookup(t, a);
	struct expect e;

	libdw_rules(eh, debug, a, &e);
	assert_non_null(r);
	n->addrs++;
	if (r->kind == CFI_ROW_NONE) {
		n->none++;
		if (e.representable)
			fail_msg("0x%lx: libdw has a CFA %#lx rule, the table none", (long)a,
				 (long)e.cfa);
		n->none_with_cfi += !e.no_cfi;
		return;
	}
	if (r->kind == CFI_ROW_END && e.no_cfi) {
		if (!n->entry++)
			n->entry_lo = a;
		n->entry_hi = a;
		return;
	}
	assert_false(e.no_cfi);
	if (r->kind == CFI_ROW_END) {
		assert_true(e.outermost);
		n->outermost++;
		return;
	}
	assert_false(e.outermost);
	if (r->kind == CFI_ROW_SIGNAL) {
		assert_true(e.signal);
		n->signal++;
		return;
	}
	assert_false(e.signal);
	if (!e.representable)
		fail_msg("0x%lx: a row of kind %u, but libdw's rule has another shape (CFA %#lx)",
			 (long)a, r->kind, (long)e.cfa);
	n->plt += r->kind == CFI_ROW_PLT;
	if (row_cfa(r, a) != e.cfa)
		fail_msg("0x%lx: CFA %#lx in the table, %#lx by libdw (kind %u off %u)", (long)a,
			 (long)row_cfa(r, a), (long)e.cfa, r->kind, r->cfa_off);
	assert_int_equal(e.rbp_saved, r->rbp_off8 != 0);
	if (e.rbp_saved)
		assert_int_equal(e.rbp_at, e.cfa + 8 * (int64_t)r->rbp_off8);
}

/* The table of path (with its separate debug file df, if not NULL)
 * against libdw's CFI of the same files. */
static void check_image_with(const char *path, const struct elf_file *df, bool want_plt)
{
	struct elf_file f;
	struct cfi_table t;
	struct tally n = { 0 };
	Dwarf_CFI *eh, *debug = NULL;
	Elf_Scn *text;
	GElf_Shdr sh;
	Dwarf *dw;

	assert_int_equal(elf_file_open(&f, path), 0);
	/* the table before compaction: test_compaction compares the two */
	assert_int_equal(cfi_table_build_flags(&t, &f, NULL, df, CFI_TABLE_KEEP_PADDING), 0);
	text = elf_file_section(&f, ".text");
	assert_non_null(text);
	assert_non_null(gelf_getshdr(text, &sh));
	/* libdw, opened on its own */
	eh = dwarf_getcfi_elf(f.elf);
	dw = dwarf_begin_elf(df ? df->elf : f.elf, DWARF_C_READ, NULL);
	if (dw)
		debug = dwarf_getcfi(dw);
	assert_true(eh || debug);
	for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a++)
		check_addr(&t, eh, debug, a, &n);
	/* and the PLT, where the image has one */
	text = elf_file_section(&f, ".plt");
	if (text && gelf_getshdr(text, &sh))
		for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a++)
			check_addr(&t, eh, debug, a, &n);
	print_message("%s: %u rows, %lu addresses, %lu without a row (%lu of them with CFI of "
		      "another shape), %lu signal, %lu outermost, %lu PLT\n",
		      path, t.n_rows, (unsigned long)n.addrs, (unsigned long)n.none,
		      (unsigned long)n.none_with_cfi, (unsigned long)n.signal,
		      (unsigned long)n.outermost, (unsigned long)n.plt);
	/* outermost without CFI: only from the entry point on, up to the
	 * next function (ld.so's RTLD_START is 61 bytes) */
	if (n.entry) {
		assert_int_equal(n.entry_lo, f.entry);
		assert_true(n.entry_hi - n.entry_lo < 256);
		assert_int_equal(n.entry, n.entry_hi - n.entry_lo + 1);
	}
	/* the table must say something: most of the code has rows (the
	 * padding between a small program's functions is a tenth of it) */
	assert_true(n.none * 4 < n.addrs);
	if (want_plt)
		assert_true(n.plt > 0);
	if (eh)
		dwarf_cfi_end(eh);
	if (dw)
		dwarf_end(dw);
	cfi_table_free(&t);
	elf_file_close(&f);
}

static void check_image(const char *path, bool want_plt)
{
	check_image_with(path, NULL, want_plt);
}

static void test_libc(void **state)
{
	(void)state;
	check_image("/lib/x86_64-linux-gnu/libc.so.6", true);
}

static void test_ld_so(void **state)
{
	(void)state;
	check_image("/lib64/ld-linux-x86-64.so.2", false);
}

static void test_program_eh_frame(void **state)
{
	(void)state;
	check_image("build/unwind/chain-eh", true);
}

static void test_program_debug_frame(void **state)
{
	(void)state;
	check_image("build/unwind/chain-debug", true);
}

/* The share of .text's addresses the table of path (with debug file df)
 * has no row for. */
static double share_without_rows(const char *path, const struct elf_file *df)
{
	struct elf_file f;
	struct cfi_table t;
	Elf_Scn *text;
	GElf_Shdr sh;
	uint64_t none = 0;

	assert_int_equal(elf_file_open(&f, path), 0);
	assert_int_equal(cfi_table_build(&t, &f, NULL, df), 0);
	text = elf_file_section(&f, ".text");
	assert_non_null(text);
	assert_non_null(gelf_getshdr(text, &sh));
	for (uint64_t a = sh.sh_addr; a < sh.sh_addr + sh.sh_size; a++)
		none += cfi_table_lookup(&t, a)->kind == CFI_ROW_NONE;
	cfi_table_free(&t);
	elf_file_close(&f);
	return (double)none / sh.sh_size;
}

/*
 * A program built without unwind tables, its debug info split off into
 * chain-split.debug (objcopy --only-keep-debug, --strip-debug,
 * --add-gnu-debuglink): its CFI is only in the debug file, found by the
 * debuglink beside it and by build-id under a debug root made here.
 */
static void test_program_split_debug(void **state)
{
	static const char prog[] = "build/unwind/chain-split";
	struct elf_file f, df;
	char root[] = "/tmp/cfi-debug-root-XXXXXX", dir[4096], link[4096], target[4096];
	char *found;

	(void)state;
	assert_int_equal(elf_file_open(&f, prog), 0);
	assert_false(cfi_has_debug_frame(&f));
	/* by .gnu_debuglink, beside the file */
	found = debug_file_find(&f, prog, "", "/nonexistent", &df);
	assert_non_null(found);
	assert_true(cfi_has_debug_frame(&df));
	free(found);
	/* without the debug file, most of .text has no rows; with it, the
	 * rows are libdw's */
	assert_true(share_without_rows(prog, NULL) > 0.5);
	assert_true(share_without_rows(prog, &df) < 0.25);
	check_image_with(prog, &df, true);
	elf_file_close(&df);

	/* by build-id under a debug root */
	assert_true(f.build_id_len >= 2);
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/.build-id", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/%02x", f.build_id[0]);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(link, sizeof(link), "%s/", dir);
	for (size_t i = 1; i < f.build_id_len; i++)
		snprintf(link + strlen(link), sizeof(link) - strlen(link), "%02x", f.build_id[i]);
	strcat(link, ".debug");
	assert_non_null(realpath("build/unwind/chain-split.debug", target));
	assert_int_equal(symlink(target, link), 0);
	/* a name whose debuglink leads nowhere: only the build-id finds it */
	found = debug_file_find(&f, "/nonexistent/chain-split", "", root, &df);
	unlink(link);
	rmdir(dir);
	*strrchr(dir, '/') = '\0';
	rmdir(dir);
	rmdir(root);
	assert_non_null(found);
	assert_true(strstr(found, "/.build-id/") != NULL);
	assert_true(share_without_rows(prog, &df) < 0.25);
	free(found);
	elf_file_close(&df);
	elf_file_close(&f);
}

/* libc's __restore_rt is a signal frame, and _start (of a program, of
 * ld.so) the outermost frame. */
static void test_special_rows(void **state)
{
	struct elf_file f;
	struct cfi_table t;
	Elf_Scn *scn;
	uint64_t start = 0;
	bool found_signal = false;

	(void)state;
	assert_int_equal(elf_file_open(&f, "/lib/x86_64-linux-gnu/libc.so.6"), 0);
	assert_int_equal(cfi_table_build(&t, &f, NULL, NULL), 0);
	for (uint32_t i = 0; i < t.n_rows; i++)
		found_signal |= t.rows[i].kind == CFI_ROW_SIGNAL;
	assert_true(found_signal);
	cfi_table_free(&t);
	elf_file_close(&f);

	assert_int_equal(elf_file_open(&f, "build/unwind/chain-eh"), 0);
	assert_int_equal(cfi_table_build(&t, &f, NULL, NULL), 0);
	scn = elf_file_symbols(&f, SHT_SYMTAB);
	assert_non_null(scn);
	{
		struct symtab st;
		struct symtab_entry *e;

		assert_int_equal(symtab_build(&st, &f, scn), 0);
		e = symtab_find_unique(&st, "_start");
		assert_non_null(e);
		start = e->addr;
		symtab_free(&st);
	}
	assert_int_equal(cfi_table_lookup(&t, start + 4)->kind, CFI_ROW_END);
	assert_null(cfi_table_lookup(&t, t.base + t.size));
	cfi_table_free(&t);
	elf_file_close(&f);

	/* ld.so's entry (its _start, assembly without CFI), and the return
	 * address of its call of _dl_start: the outermost frame */
	assert_int_equal(elf_file_open(&f, "/lib64/ld-linux-x86-64.so.2"), 0);
	assert_int_equal(cfi_table_build(&t, &f, NULL, NULL), 0);
	assert_true(f.entry >= t.base && f.entry < t.base + t.size);
	assert_int_equal(cfi_table_lookup(&t, f.entry)->kind, CFI_ROW_END);
	assert_int_equal(cfi_table_lookup(&t, f.entry + 8)->kind, CFI_ROW_END);
	cfi_table_free(&t);
	elf_file_close(&f);
}

/* An image, its separate debug file if any, and libdw's CFI of both. */
struct image_cfi {
	struct elf_file f, df;
	bool has_df;
	Dwarf *dw;
	Dwarf_CFI *eh, *debug;
};

static void image_open(struct image_cfi *im, const char *path, const char *debug_path)
{
	memset(im, 0, sizeof(*im));
	assert_int_equal(elf_file_open(&im->f, path), 0);
	im->has_df = debug_path != NULL;
	if (im->has_df)
		assert_int_equal(elf_file_open(&im->df, debug_path), 0);
	im->eh = dwarf_getcfi_elf(im->f.elf);
	im->dw = dwarf_begin_elf(im->has_df ? im->df.elf : im->f.elf, DWARF_C_READ, NULL);
	if (im->dw)
		im->debug = dwarf_getcfi(im->dw);
}

static void image_close(struct image_cfi *im)
{
	if (im->eh)
		dwarf_cfi_end(im->eh);
	if (im->dw)
		dwarf_end(im->dw);
	if (im->has_df)
		elf_file_close(&im->df);
	elf_file_close(&im->f);
}

/* ---- compaction ---------------------------------------------------------- */

static bool same_row(const struct cfi_row *a, const struct cfi_row *b)
{
	return a->kind == b->kind && a->cfa_off == b->cfa_off && a->rbp_off8 == b->rbp_off8;
}

/* pages[p] is the last row that starts at or below page p's first byte. */
static void check_pages(const struct cfi_table *t)
{
	assert_int_equal(t->n_pages, (t->size + (1u << CFI_PAGE_SHIFT) - 1) >> CFI_PAGE_SHIFT);
	assert_int_equal(t->rows[0].pc, 0);
	for (uint32_t p = 0; p < t->n_pages; p++) {
		uint32_t r = t->pages[p];
		uint64_t at = (uint64_t)p << CFI_PAGE_SHIFT;

		assert_true(r < t->n_rows);
		assert_true(t->rows[r].pc <= at);
		assert_true(r + 1 == t->n_rows || t->rows[r + 1].pc > at);
		assert_true(t->pages[p + 1] >= r);
	}
	assert_int_equal(t->pages[t->n_pages], t->n_rows - 1);
	for (uint32_t r = 1; r < t->n_rows; r++) {
		assert_true(t->rows[r].pc > t->rows[r - 1].pc);
		assert_false(same_row(&t->rows[r], &t->rows[r - 1]));
	}
}

/* A byte that alignment padding holds: nop (90), nopw/nopl (66, 2e, 0f
 * 1f and their operand bytes), int3 (cc). */
static bool padding_byte(uint8_t b)
{
	return b == 0x90 || b == 0xcc || b == 0x66 || b == 0x2e || b == 0x0f || b == 0x1f ||
	       b == 0x00 || b == 0x40 || b == 0x44 || b == 0x80 || b == 0x84;
}

/*
 * The compacted table of path gives the uncompacted table's answer (kind,
 * cfa_off, rbp_off8) at every address of its executable segment, except
 * in the padding between functions: there no CFI covers the address
 * (libdw finds none), the file holds padding bytes, and the compacted row
 * is the one of the last address before the gap.  The uncompacted table is
 * itself checked against libdw at every address of .text and .plt
 * (check_image_with).
 */
static void check_compaction(const char *path, const char *debug_path, double max_share)
{
	struct image_cfi im;
	struct cfi_table t, t0;
	struct cfi_row last = { .kind = 0xff };
	uint64_t padding = 0;
	const uint8_t *bytes;

	image_open(&im, path, debug_path);
	bytes = im.f.map;
	assert_int_equal(cfi_table_build(&t, &im.f, NULL, im.has_df ? &im.df : NULL), 0);
	assert_int_equal(cfi_table_build_flags(&t0, &im.f, NULL, im.has_df ? &im.df : NULL,
					       CFI_TABLE_KEEP_PADDING), 0);
	check_pages(&t);
	check_pages(&t0);
	assert_int_equal(t.base, t0.base);
	assert_int_equal(t.size, t0.size);
	for (uint64_t a = t.base; a < t.base + t.size; a++) {
		const struct cfi_row *r = cfi_table_lookup(&t, a), *r0 = cfi_table_lookup(&t0, a);
		struct cfi_rule rule;
		uint64_t off;

		assert_non_null(r);
		assert_non_null(r0);
		if (same_row(r, r0)) {
			if (r0->kind != CFI_ROW_NONE)
				last = *r0;
			continue;
		}
		if (r0->kind != CFI_ROW_NONE || cfi_rule_lookup(im.eh, a, im.debug, a, &rule, NULL))
			fail_msg("%s %#lx: compacted kind %u off %u rbp %d, uncompacted kind %u off "
				 "%u rbp %d", path, (long)a, r->kind, r->cfa_off, r->rbp_off8,
				 r0->kind, r0->cfa_off, r0->rbp_off8);
		assert_true(same_row(r, &last));
		assert_true(elf_file_vaddr_to_offset(&im.f, a, &off));
		if (!padding_byte(bytes[off]))
			fail_msg("%s %#lx: byte %#x taken for padding", path, (long)a, bytes[off]);
		padding++;
	}
	print_message("%s: %u rows -> %u compacted (%u gaps of padding, %lu bytes); %u -> %u "
		      "bytes with the page index\n", path, t0.n_rows, t.n_rows, t.n_padding,
		      (unsigned long)padding, t0.n_rows * 8 + (t0.n_pages + 1) * 4,
		      t.n_rows * 8 + (t.n_pages + 1) * 4);
	assert_true(padding > 0);
	assert_true(t.n_rows < t0.n_rows * max_share);
	cfi_table_free(&t);
	cfi_table_free(&t0);
	image_close(&im);
}

static void test_compaction(void **state)
{
	(void)state;
	/* libc and ld.so: 15-18% fewer rows on Debian 12 */
	check_compaction("/lib/x86_64-linux-gnu/libc.so.6", NULL, 0.9);
	check_compaction("/lib64/ld-linux-x86-64.so.2", NULL, 0.9);
	/* built for the tests: 121 -> 82 rows */
	check_compaction("build/unwind/chain-eh", NULL, 0.8);
	check_compaction("build/unwind/chain-split", "build/unwind/chain-split.debug", 0.8);
}

/* ---- the interpreter's rules against libdw's ---------------------------- */

struct rule_check {
	Dwarf_CFI *eh, *debug;
	uint64_t addrs, rows;
};

static const char *const kind_names[] = { "other", "regs", "plt", "signal", "end" };

static int check_rows(void *arg, uint64_t lo, uint64_t hi, const struct cfi_rule *rule)
{
	struct rule_check *c = arg;

	assert_true(lo < hi);
	c->rows++;
	for (uint64_t a = lo; a < hi; a++) {
		struct cfi_rule want;

		assert_true(cfi_rule_lookup(c->eh, a, c->debug, a, &want, NULL));
		if (!cfi_rule_equal(rule, &want)) {
			int i = 0;

			while (i < CFI_RULE_NREGS && rule->reg[i].how == want.reg[i].how &&
			       rule->reg[i].off == want.reg[i].off)
				i++;
			fail_msg("%#lx: the interpreter's rule (%s, CFA r%u%+d) is not libdw's (%s, "
				 "CFA r%u%+d); first register that differs: %d (%u %+d, libdw %u %+d)",
				 (long)a, kind_names[rule->kind], rule->cfa_reg, rule->cfa_off,
				 kind_names[want.kind], want.cfa_reg, want.cfa_off, i,
				 i < CFI_RULE_NREGS ? rule->reg[i].how : 0,
				 i < CFI_RULE_NREGS ? rule->reg[i].off : 0,
				 i < CFI_RULE_NREGS ? want.reg[i].how : 0,
				 i < CFI_RULE_NREGS ? want.reg[i].off : 0);
		}
		c->addrs++;
	}
	return 0;
}

/* The table built by the interpreter is, row for row, the one built by
 * reading every FDE row by row through libdw. */
static void check_same_tables(const struct image_cfi *im)
{
	const struct elf_file *df = im->has_df ? &im->df : NULL;
	struct cfi_table a, b;

	assert_int_equal(cfi_table_build_flags(&a, &im->f, NULL, df, CFI_TABLE_KEEP_PADDING), 0);
	assert_int_equal(cfi_table_build_flags(&b, &im->f, NULL, df,
					       CFI_TABLE_KEEP_PADDING | CFI_TABLE_LIBDW_ROWS), 0);
	assert_int_equal(a.n_rows, b.n_rows);
	assert_int_equal(a.n_pages, b.n_pages);
	assert_true(a.n_fdes_libdw < b.n_fdes_libdw);
	assert_int_equal(b.n_fdes_libdw, b.n_fdes);
	assert_memory_equal(a.rows, b.rows, a.n_rows * sizeof(*a.rows));
	assert_memory_equal(a.pages, b.pages, (a.n_pages + 1) * sizeof(*a.pages));
	cfi_table_free(&a);
	cfi_table_free(&b);
}

/* Every FDE the interpreter reads gives, at every address it covers, the
 * rule libdw's frame there reduces to (all 17 registers); the ones it
 * leaves to libdw are few (the PLT's and signal frames' expressions). */
static void check_interpreter(const char *path, const char *debug_path)
{
	struct image_cfi im;
	struct cfi_fdes fdes = { 0 };
	struct rule_check c = { 0 };
	size_t refused = 0;

	image_open(&im, path, debug_path);
	assert_int_equal(cfi_fdes_read(&fdes, &im.f, CFI_EH_FRAME), 0);
	assert_int_equal(cfi_fdes_read(&fdes, im.has_df ? &im.df : &im.f, CFI_DEBUG_FRAME), 0);
	cfi_fdes_sort(&fdes);
	c.eh = im.eh;
	c.debug = im.debug;
	assert_true(fdes.n > 0);
	for (size_t i = 0; i < fdes.n; i++) {
		int err = cfi_fde_rows(&fdes, &fdes.v[i], UINT64_MAX, check_rows, &c);

		if (err == -ENOTSUP)
			refused++;
		else
			assert_int_equal(err, 0);
	}
	print_message("%s: %zu FDEs, %zu left to libdw, %lu rows, %lu addresses checked\n", path,
		      fdes.n, refused, (unsigned long)c.rows, (unsigned long)c.addrs);
	assert_true(refused * 20 < fdes.n);
	assert_true(c.addrs > 0);
	check_same_tables(&im);
	cfi_fdes_free(&fdes);
	image_close(&im);
}

static void test_interpreter(void **state)
{
	(void)state;
	check_interpreter("/lib/x86_64-linux-gnu/libc.so.6", NULL);
	check_interpreter("/lib64/ld-linux-x86-64.so.2", NULL);
	check_interpreter("build/unwind/chain-eh", NULL);
	check_interpreter("build/unwind/chain-debug", NULL);
	check_interpreter("build/unwind/chain-split", "build/unwind/chain-split.debug");
}

/* The pages of [p, p + len) present in this process's page tables. */
static size_t pages_present(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095, end = (uintptr_t)p + len;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	uint64_t v;

	assert_true(fd >= 0);
	for (; a < end; a += 4096)
		if (pread(fd, &v, sizeof(v), (off_t)(a / 4096 * sizeof(v))) == sizeof(v))
			n += (v >> 63) & 1;
	close(fd);
	return n;
}

/* Building a big program's table (GCC's cc1: 20 MiB of text, 2.3 MiB of
 * .eh_frame) leaves few of its pages in the resident set: the padding
 * check between functions reads the text, every page of it before the
 * builder released pages as it went (22 MiB present after the build). */
static void test_build_releases_pages(void **state)
{
	char path[4096] = "";
	struct elf_file f;
	struct cfi_table t;
	FILE *p = popen("${CC:-cc} -print-prog-name=cc1 2>/dev/null", "r");
	size_t present;

	(void)state;
	if (p) {
		if (!fgets(path, sizeof(path), p))
			path[0] = '\0';
		pclose(p);
	}
	path[strcspn(path, "\n")] = '\0';
	if (path[0] != '/' || elf_file_open(&f, path) != 0) {
		fprintf(stderr, "skipped: no cc1 (gcc's compiler proper) found\n");
		skip();
	}
	assert_int_equal(cfi_table_build(&t, &f, NULL, NULL), 0);
	assert_true(t.n_fdes > 4096);
	present = pages_present(f.map, f.size);
	fprintf(stderr, "%s: %u FDEs, %zu KiB of %zu KiB present after the build\n", path,
		t.n_fdes, present * 4, f.size / 1024);
	assert_true(present * 4096 < 8u << 20);
	cfi_table_free(&t);
	elf_file_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_ld_so),
		cmocka_unit_test(test_program_eh_frame),
		cmocka_unit_test(test_program_debug_frame),
		cmocka_unit_test(test_program_split_debug),
		cmocka_unit_test(test_special_rows),
		cmocka_unit_test(test_interpreter),
		cmocka_unit_test(test_compaction),
		cmocka_unit_test(test_build_releases_pages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
