// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind tables for the unwinder in BPF: an image's CFI reduced to sorted
 * rows (unwind/cfi_table.h).  The table is built by walking the FDEs in
 * address order, each FDE's instructions run once (unwind/cfi_fde.h),
 * each row's rule reduced by unwind/cfi_rule.h and encoded here; an FDE
 * the interpreter leaves is read row by row through libdw (at each row,
 * dwarf_cfi_addrframe gives the rules and the range over which they hold).
 */
#include "unwind/cfi_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_fde.h"
#include "unwind/cfi_rule.h"

/* A rule as a row (its pc left to the caller): the shapes the BPF
 * unwinder applies, every other one CFI_ROW_NONE (it walks the frame
 * pointer there). */
static struct cfi_row row_of_rule(const struct cfi_rule *rule)
{
	struct cfi_row r = { .kind = CFI_ROW_NONE };
	int64_t rbp_off = rule->reg[CFI_REG_RBP].off;
	uint8_t rbp = rule->reg[CFI_REG_RBP].how;

	if (rule->ra != CFI_REG_RIP)
		return r;
	switch (rule->kind) {
	case CFI_RULE_END:
		r.kind = CFI_ROW_END;
		return r;
	case CFI_RULE_SIGNAL:
		r.kind = CFI_ROW_SIGNAL;
		return r;
	case CFI_RULE_REGS:
	case CFI_RULE_PLT:
		break;
	default:
		return r;
	}
	/* the return address at CFA - 8; rbp kept, or saved at CFA + 8 * n */
	if (rule->reg[CFI_REG_RIP].how != CFI_HOW_AT || rule->reg[CFI_REG_RIP].off != -8)
		return r;
	if (rbp == CFI_HOW_AT) {
		if (rbp_off % 8 || rbp_off / 8 < -128 || rbp_off / 8 > 127 || !rbp_off)
			return r;
		r.rbp_off8 = rbp_off / 8;
	} else if (rbp != CFI_HOW_SAME && rbp != CFI_HOW_UNDEFINED) {
		return r;
	}
	if (rule->kind == CFI_RULE_PLT) {
		r.kind = CFI_ROW_PLT;
		r.cfa_off = rule->cfa_off;
	} else if ((rule->cfa_reg == CFI_REG_RSP || rule->cfa_reg == CFI_REG_RBP) &&
		   rule->cfa_off >= 0 && rule->cfa_off <= UINT16_MAX) {
		r.kind = rule->cfa_reg == CFI_REG_RSP ? CFI_ROW_RSP : CFI_ROW_RBP;
		r.cfa_off = rule->cfa_off;
	} else {
		r.rbp_off8 = 0;
	}
	return r;
}

/* Appends row r at pc, merged with the last row when their rules are
 * equal, replacing it when it starts at the same pc. */
static int add_row(struct cfi_table *t, size_t *cap, uint32_t pc, struct cfi_row r)
{
	struct cfi_row *last = t->n_rows ? &t->rows[t->n_rows - 1] : NULL;

	r.pc = pc;
	if (last && last->kind == r.kind && last->cfa_off == r.cfa_off &&
	    last->rbp_off8 == r.rbp_off8)
		return 0;
	if (last && last->pc == pc) {
		*last = r;
		return 0;
	}
	if (t->n_rows == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		struct cfi_row *rows = realloc(t->rows, c * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		t->rows = rows;
		*cap = c;
	}
	t->rows[t->n_rows++] = r;
	return 0;
}

/* The rows of the FDE at start through libdw up to its end, one per range
 * of equal rules (each a replay of the FDE's program up to it); returns
 * where its rules end (start when there are none). */
static uint64_t add_fde_libdw(struct cfi_table *t, size_t *cap, Dwarf_CFI *eh, Dwarf_CFI *debug,
			      uint64_t start, uint64_t end, int *err)
{
	uint64_t pc = start;

	/* a function has a few dozen rows; hostile CFI is bounded */
	for (int rows = 0; rows < 65536 && pc < end && !*err; rows++) {
		struct cfi_rule rule;
		uint64_t range[2];

		if (!cfi_rule_lookup(eh, pc, debug, pc, &rule, range) || range[1] <= pc)
			break;
		*err = add_row(t, cap, pc - t->base, row_of_rule(&rule));
		pc = range[1] < end ? range[1] : end;
	}
	return pc;
}

struct row_sink {
	struct cfi_table *t;
	size_t *cap;
};

static int emit_row(void *arg, uint64_t lo, uint64_t hi, const struct cfi_rule *rule)
{
	struct row_sink *sink = arg;

	(void)hi;
	return add_row(sink->t, sink->cap, lo - sink->t->base, row_of_rule(rule));
}

/* The FDEs of f's .eh_frame and of df's .debug_frame, sorted. */
static int read_fdes(struct cfi_fdes *fdes, const struct elf_file *f, const struct elf_file *df)
{
	int err = cfi_fdes_read(fdes, f, CFI_EH_FRAME);

	if (!err && df)
		err = cfi_fdes_read(fdes, df, CFI_DEBUG_FRAME);
	cfi_fdes_sort(fdes);
	return err;
}

/* Alignment padding between two functions is at most this long (GCC
 * aligns functions to 16 bytes, hot ones and some assembly to 32 or 64). */
#define MAX_PADDING 64

/* The length of the x86-64 no-op at p (nop, nopw/nopl with any operand,
 * their 0x66 and cs prefixes, int3), or 0 when p holds anything else. */
static size_t nop_length(const uint8_t *p, size_t n)
{
	size_t i = 0, len;
	uint8_t modrm, mod, rm;

	if (n && p[0] == 0xcc)
		return 1;
	while (i < n && (p[i] == 0x66 || p[i] == 0x2e))
		i++;
	if (i < n && p[i] == 0x90)
		return i + 1;
	if (i + 3 > n || p[i] != 0x0f || p[i + 1] != 0x1f)
		return 0;
	modrm = p[i + 2];
	mod = modrm >> 6;
	rm = modrm & 7;
	if ((modrm >> 3) & 7)
		return 0; /* 0f 1f /0 only */
	len = i + 3;
	if (mod != 3 && rm == 4) {
		if (len >= n)
			return 0;
		if (mod == 0 && (p[len] & 7) == 5)
			len += 4; /* sib without base: disp32 */
		len++;
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		len += 4;
	return len <= n ? len : 0;
}

/* Whether [lo, hi) of f is alignment padding (no-ops and int3 only, in
 * the file's bytes): code that never runs, so no sample is there and no
 * caller's return address points into it. */
static bool is_padding(const struct elf_file *f, uint64_t lo, uint64_t hi)
{
	uint64_t off, last;
	const uint8_t *p;
	size_t n, len;

	if (hi - lo > MAX_PADDING || !elf_file_vaddr_to_offset(f, lo, &off) ||
	    !elf_file_vaddr_to_offset(f, hi - 1, &last) || last - off != hi - 1 - lo ||
	    last >= f->size)
		return false;
	p = (const uint8_t *)f->map + off;
	for (n = hi - lo; n; p += len, n -= len)
		if (!(len = nop_length(p, n)))
			return false;
	return true;
}

/*
 * The rows of [lo, hi), code no FDE covers: no rule (frame-pointer
 * steps), but from the image's entry point on the outermost frame.  The
 * entry is where the kernel starts a process, and ld.so's (RTLD_START:
 * _start and _dl_start_user, assembly) has no CFI: every stack of a
 * process's start, in _dl_start and what it calls, ended there
 * truncated, a process's first samples on a busy machine.
 */
static int add_gap(struct cfi_table *t, size_t *cap, const struct elf_file *f, uint64_t lo,
		   uint64_t hi)
{
	int err = add_row(t, cap, lo - t->base, (struct cfi_row){ .kind = CFI_ROW_NONE });

	if (!err && f->entry >= lo && f->entry < hi)
		err = add_row(t, cap, f->entry - t->base, (struct cfi_row){ .kind = CFI_ROW_END });
	return err;
}

/* The FDEs built between two releases of the file's pages (read back
 * from the page cache when needed again): the padding check reads the
 * code between functions, and in address order it came to read every page
 * of the text into the collector's resident set.  Measured with a
 * throwaway program building one table: libLLVM's peak RSS 67.7 MiB
 * (49 MiB of .text, 4.9 of .eh_frame) before, 15.1 after; cc1's 29.9
 * before, 10.2 after; the build times the same (88 and 55 ms before, 79
 * and 41 after). */
#define RELEASE_EVERY_FDES 2048

/*
 * The rows of every FDE in address order, CFI_ROW_NONE between them.
 * Each FDE's instructions are run once (unwind/cfi_fde.h); the few the
 * interpreter leaves (DWARF expressions: the PLT, signal frames) are read
 * row by row through libdw.
 */
static int build_rows(struct cfi_table *t, const struct elf_file *f, const struct elf_file *df,
		      Dwarf_CFI *eh, Dwarf_CFI *debug, unsigned int flags)
{
	struct cfi_fdes fdes = { 0 };
	uint64_t pc = t->base, end = t->base + t->size;
	size_t cap = 0;
	struct row_sink sink = { t, &cap };
	int err;

	err = add_row(t, &cap, 0, (struct cfi_row){ .kind = CFI_ROW_NONE });
	if (!err && (eh || debug))
		err = read_fdes(&fdes, f, debug ? df : NULL);
	for (size_t i = 0; i < fdes.n && !err; i++) {
		const struct cfi_fde *fde = &fdes.v[i];
		uint64_t s = fde->start, stop = cfi_fde_end(fde) < end ? cfi_fde_end(fde) : end, next;

		if (s < pc || s >= end)
			continue; /* inside the last FDE, or outside the segment */
		/* compacted as the OpenTelemetry profiler's stack deltas are:
		 * the padding between two functions takes the rule before it,
		 * so that the rows on either side merge when equal */
		if (s > pc && !(pc > t->base && !(flags & CFI_TABLE_KEEP_PADDING) &&
				is_padding(f, pc, s)))
			err = add_gap(t, &cap, f, pc, s);
		else if (s > pc)
			t->n_padding++;
		if (err)
			break;
		err = flags & CFI_TABLE_LIBDW_ROWS ? -ENOTSUP
						   : cfi_fde_rows(&fdes, fde, end, emit_row, &sink);
		if (err == -ENOTSUP) {
			err = 0;
			next = add_fde_libdw(t, &cap, eh, debug, s, stop, &err);
			t->n_fdes_libdw++;
		} else {
			next = stop;
		}
		if (++t->n_fdes % RELEASE_EVERY_FDES == 0) {
			elf_file_release_pages((struct elf_file *)f);
			if (df && df != f)
				elf_file_release_pages((struct elf_file *)df);
		}
		pc = next > s ? next : s;
		if (next == s)
			err = err ? err : add_row(t, &cap, s - t->base,
						  (struct cfi_row){ .kind = CFI_ROW_NONE });
	}
	if (!err && pc < end)
		err = add_gap(t, &cap, f, pc, end);
	cfi_fdes_free(&fdes);
	return err;
}

static int build_pages(struct cfi_table *t)
{
	uint32_t r = 0;

	t->n_pages = (t->size + (1u << CFI_PAGE_SHIFT) - 1) >> CFI_PAGE_SHIFT;
	t->pages = calloc(t->n_pages + 1, sizeof(*t->pages));
	if (!t->pages)
		return -ENOMEM;
	for (uint32_t p = 0; p < t->n_pages; p++) {
		uint64_t at = (uint64_t)p << CFI_PAGE_SHIFT;

		while (r + 1 < t->n_rows && t->rows[r + 1].pc <= at)
			r++;
		t->pages[p] = r;
	}
	t->pages[t->n_pages] = t->n_rows - 1;
	return 0;
}

bool cfi_has_debug_frame(const struct elf_file *f)
{
	Elf_Scn *scn = elf_file_section(f, ".debug_frame");
	GElf_Shdr shdr;

	return scn && gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_PROGBITS && shdr.sh_size;
}

/* The file whose .debug_frame is read: f's own, else its debug file's;
 * NULL when neither has one (libdw is not started on it then: on a big
 * debug file, dwarf_begin_elf decompresses every debug section). */
static const struct elf_file *debug_frame_file(const struct elf_file *f,
					       const struct elf_file *debug_file)
{
	if (cfi_has_debug_frame(f))
		return f;
	return debug_file && cfi_has_debug_frame(debug_file) ? debug_file : NULL;
}

int cfi_table_build(struct cfi_table *t, const struct elf_file *f, const struct elf_segment *seg,
		    const struct elf_file *debug_file)
{
	return cfi_table_build_flags(t, f, seg, debug_file, 0);
}

int cfi_table_build_flags(struct cfi_table *t, const struct elf_file *f,
			  const struct elf_segment *seg, const struct elf_file *debug_file,
			  unsigned int flags)
{
	const struct elf_file *df = debug_frame_file(f, debug_file);
	Dwarf_CFI *eh, *debug = NULL;
	uint64_t vaddr, memsz;
	Dwarf *dw = NULL;
	int err;

	memset(t, 0, sizeof(*t));
	if (seg) {
		vaddr = seg->vaddr;
		memsz = seg->memsz;
	} else if (!elf_file_text_segment(f, &vaddr, &memsz)) {
		return -ENOENT;
	}
	if (!memsz)
		return -ENOENT;
	t->base = vaddr & ~((1ull << CFI_PAGE_SHIFT) - 1);
	t->size = vaddr + memsz - t->base;
	if (t->size > UINT32_MAX)
		return -E2BIG;
	eh = dwarf_getcfi_elf(f->elf);
	if (df)
		dw = dwarf_begin_elf(df->elf, DWARF_C_READ, NULL);
	if (dw)
		debug = dwarf_getcfi(dw);
	err = build_rows(t, f, df, eh, debug, flags);
	if (!err)
		err = build_pages(t);
	if (eh)
		dwarf_cfi_end(eh);
	if (dw)
		dwarf_end(dw);
	if (err)
		cfi_table_free(t);
	return err;
}

void cfi_table_free(struct cfi_table *t)
{
	free(t->rows);
	free(t->pages);
	memset(t, 0, sizeof(*t));
}

const struct cfi_row *cfi_table_lookup(const struct cfi_table *t, uint64_t addr)
{
	uint64_t off = addr - t->base;
	uint32_t lo, hi, page;

	if (addr < t->base || off >= t->size || !t->n_rows)
		return NULL;
	page = off >> CFI_PAGE_SHIFT;
	lo = t->pages[page];
	hi = t->pages[page + 1];
	/* the last row of lo..hi that starts at or below off */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if (t->rows[mid].pc <= off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return &t->rows[lo];
}
