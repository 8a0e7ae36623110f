/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unwind tables for the unwinder in BPF (x86-64): the .eh_frame and
 * .debug_frame CFI of one executable segment of an image reduced to a compact
 * table of rows sorted by PC, each holding from its PC up to the next row's:
 *
 *   CFA = rsp + off, or rbp + off (kinds CFI_ROW_RSP, CFI_ROW_RBP); the
 *   return address at CFA - 8; the caller's rbp at CFA + 8 * rbp_off8, or
 *   kept (rbp_off8 == 0);
 *
 * or a special kind: the PLT's CFA expression (rsp + 8, + 8 more once the
 * PC is past byte `plt_threshold` of its 16-byte entry), a signal frame
 * (the kernel's rt_sigframe at rsp: rip, rsp, rbp from its ucontext), the
 * outermost frame (the return address is undefined: the stack's end), or
 * no usable CFI (none at all, or a rule of another shape: the unwinder
 * walks frame pointers there).
 *
 * Rows are as few as the rules allow: neighbours with the same rule are
 * one row, and the alignment padding between two functions (no-ops and
 * int3 that never run, up to 64 bytes) takes the rule of the code before
 * it instead of a row of its own, so that the last row of a function and
 * the first of the next (both "CFA = rsp + 8" nearly always) merge, as in
 * the OpenTelemetry profiler's stack deltas.  Every address that any FDE
 * covers keeps exactly its own rule.
 *
 * PCs are link-time addresses less `base` (the executable segment's start,
 * page-aligned), so they fit 32 bits; `pages` indexes the rows by 4 KiB
 * page of that range, so that a look-up is one index load and a binary
 * search over the few rows of one page (what the BPF program does; see
 * cfi_table_lookup, which does the same in C).
 *
 * Built from the FDEs of .eh_frame and .debug_frame, each run once by
 * unwind/cfi_fde.h (libdw's dwarf_cfi_addrframe for the few it leaves),
 * with the rules reduced by unwind/cfi_rule.h, on an image opened with
 * symbols/elfinfo.h.  The .debug_frame is the file's own, else that of its
 * separate debug file (symbols/debug_files.h finds it): a program built
 * without unwind tables (-fno-asynchronous-unwind-tables) and stripped has
 * its CFI only there.  .eh_frame wins where both describe a PC, as in
 * libdw's unwinder.
 */
#ifndef COLLECTOR_CFI_TABLE_H
#define COLLECTOR_CFI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/elfinfo.h"

enum cfi_row_kind {
	CFI_ROW_NONE = 0,  /* no usable CFI: walk the frame pointer */
	CFI_ROW_RSP = 1,   /* CFA = rsp + cfa_off */
	CFI_ROW_RBP = 2,   /* CFA = rbp + cfa_off */
	CFI_ROW_PLT = 3,   /* CFA = rsp + 8 + ((rip & 15) >= cfa_off ? 8 : 0) */
	CFI_ROW_SIGNAL = 4, /* __restore_rt: registers from the rt_sigframe at rsp */
	CFI_ROW_END = 5,   /* outermost frame: the return address is undefined */
};

/* 8 bytes: a big library's table stays a few hundred KiB. */
struct cfi_row {
	uint32_t pc;       /* link-time address - table base */
	uint16_t cfa_off;  /* RSP, RBP: the offset; PLT: the threshold */
	uint8_t kind;      /* enum cfi_row_kind */
	int8_t rbp_off8;   /* caller's rbp at CFA + 8 * this; 0: rbp kept */
};

/* bytes of text per page index entry (COLLECTOR_UNWIND_PAGE_SHIFT) */
#define CFI_PAGE_SHIFT 8

struct cfi_table {
	uint64_t base;       /* link-time address of pc 0, CFI_PAGE_SHIFT-aligned */
	uint64_t size;       /* bytes covered from base */
	struct cfi_row *rows;
	uint32_t n_rows;
	/* pages[p]: the row that holds at base + (p << CFI_PAGE_SHIFT); the
	 * rows of page p are pages[p] .. pages[p + 1] (n_pages + 1 entries) */
	uint32_t *pages;
	uint32_t n_pages;
	uint32_t n_fdes;     /* FDEs read, for statistics */
	uint32_t n_fdes_libdw; /* ... of which row by row through libdw */
	uint32_t n_padding;  /* gaps between FDEs given the rule before them */
};

/* Builds the table of segment seg of f (one of f->loads, executable), or
 * with seg NULL of f's first executable segment; debug_file is f's
 * separate debug file, or NULL (its .debug_frame is read when f has none).
 * Returns 0, -ENOENT when the image has no executable segment, -ENOMEM,
 * or -E2BIG when it is too large for 32-bit PCs.  An image without CFI
 * gets one CFI_ROW_NONE row. */
int cfi_table_build(struct cfi_table *t, const struct elf_file *f, const struct elf_segment *seg,
		    const struct elf_file *debug_file);
/* The same with flags: CFI_TABLE_KEEP_PADDING, the padding between
 * functions keeps its own CFI_ROW_NONE row (the table before compaction);
 * CFI_TABLE_LIBDW_ROWS, every FDE read row by row through libdw (the
 * builder before the interpreter).  The tests and bench/cfi_rows.c compare
 * with them. */
#define CFI_TABLE_KEEP_PADDING 1u
#define CFI_TABLE_LIBDW_ROWS 2u
int cfi_table_build_flags(struct cfi_table *t, const struct elf_file *f,
			  const struct elf_segment *seg, const struct elf_file *debug_file,
			  unsigned int flags);
void cfi_table_free(struct cfi_table *t);

/* f has a .debug_frame with contents (not the empty one of a stripped
 * file): a separate debug file is looked for only when it has none. */
bool cfi_has_debug_frame(const struct elf_file *f);

/* The row that holds at link-time address addr, or NULL outside the table. */
const struct cfi_row *cfi_table_lookup(const struct cfi_table *t, uint64_t addr);

#endif /* COLLECTOR_CFI_TABLE_H */
