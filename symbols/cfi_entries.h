/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CIEs and FDEs of an image's .eh_frame and .debug_frame: each FDE's
 * range of link-time addresses and its instructions, read once, in one
 * pass over the section.  Two users: the unwind table builder interprets
 * the instructions (unwind/cfi_fde.h), and the symbolizer takes an FDE's
 * range as the function of stripped code (symbols/fde_functions.c).
 * The entries point into the section's data: they live as long as the
 * ELF file they were read from.
 *
 * Look-ups by address (cfi_fde_index) need no list: .eh_frame_hdr, which
 * linkers write into every image with .eh_frame, holds the FDEs' starts
 * sorted for a binary search, so one look-up reads one FDE and its CIE.
 * Measured: the lists the user-space unwinder and the symbolizer read
 * whole were 9.6 MiB of a -a run's 57 MiB of peak heap under a build loop,
 * each read again at each interval for the files met anew.
 */
#ifndef COLLECTOR_CFI_ENTRIES_H
#define COLLECTOR_CFI_ENTRIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols/elfinfo.h"

enum cfi_source {
	CFI_EH_FRAME = 0,    /* .eh_frame: wins where both describe a PC */
	CFI_DEBUG_FRAME = 1,
};

/* A CIE: what its FDEs share. */
struct cfi_cie {
	uint64_t off;               /* section offset, for the FDEs' pointer */
	const uint8_t *ins, *ins_end;   /* its initial instructions */
	int64_t daf;                /* data alignment factor */
	uint64_t caf;               /* code alignment factor */
	uint64_t ra;                /* return address column */
	uint8_t fde_enc;            /* the FDEs' address encoding */
	bool fde_aug;               /* 'z': FDEs carry augmentation data */
	bool supported;             /* an augmentation unwind/cfi_fde.c reads */
};

/* 32 bytes (40 with an end and an ins_end): a build's big images list
 * 100 000 FDEs and more, kept for the run. */
struct cfi_fde {
	uint64_t start;            /* link-time addresses covered: */
	uint32_t len;              /* [start, start + len) */
	uint32_t ins_len;
	const uint8_t *ins;        /* its instructions, ins_len bytes */
	uint32_t cie;              /* index in cfi_fdes.cies */
	uint8_t source;            /* enum cfi_source */
};

static inline uint64_t cfi_fde_end(const struct cfi_fde *fde)
{
	return fde->start + fde->len;
}

struct cfi_fdes {
	struct cfi_fde *v;         /* sorted by start, .eh_frame's first */
	size_t n, cap;
	struct cfi_cie *cies;
	size_t n_cies, cap_cies;
};

/* Adds the FDEs of f's section (".eh_frame" or ".debug_frame", as
 * source says) to *out; a section that is missing, empty or compressed
 * adds none.  Returns 0 or -ENOMEM. */
int cfi_fdes_read(struct cfi_fdes *out, const struct elf_file *f, enum cfi_source source);
/* Sorts the FDEs read by start (.eh_frame's first among equal starts), and
 * frees the room the reads left unused. */
void cfi_fdes_sort(struct cfi_fdes *fdes);
void cfi_fdes_free(struct cfi_fdes *fdes);

/* The FDE (of a sorted list) whose range holds addr, or NULL. */
const struct cfi_fde *cfi_fdes_find(const struct cfi_fdes *fdes, uint64_t addr);

/* One FDE found by address with its CIE, as a list of one for
 * cfi_fde_rows (unwind/cfi_fde.h).  It points into itself: not copied. */
struct cfi_fde_one {
	struct cfi_fdes fdes;      /* v = &fde, cies = &cie, one each */
	struct cfi_fde fde;
	struct cfi_cie cie;
};

/* The .eh_frame FDEs of an image, for look-ups by address: through
 * .eh_frame_hdr's search table when the file has one this reads
 * (version 1, rows of two 4-byte offsets from the header, as GNU ld,
 * gold, lld and mold write them), else from the list read whole. */
struct cfi_fde_index {
	const uint8_t *rows;       /* the table; NULL: the list */
	size_t n_rows;
	uint64_t hdr_addr;         /* .eh_frame_hdr's link-time address */
	const uint8_t *eh;         /* .eh_frame's bytes */
	size_t eh_size;
	uint64_t eh_addr;
	unsigned char *ident;      /* the ELF identification, for libdw */
	struct cfi_fdes list;      /* sorted; without a table only */
};

/* Returns 0 or -ENOMEM.  An image without .eh_frame gives an empty index. */
int cfi_fde_index_open(struct cfi_fde_index *x, const struct elf_file *f);
static inline bool cfi_fde_index_empty(const struct cfi_fde_index *x)
{
	return !x->n_rows && !x->list.n;
}
void cfi_fde_index_close(struct cfi_fde_index *x);
/* The FDE whose range holds addr into *one: true, else false. */
bool cfi_fde_index_find(const struct cfi_fde_index *x, uint64_t addr, struct cfi_fde_one *one);
/* The least FDE start above addr; 0 when none. */
uint64_t cfi_fde_index_next_start(const struct cfi_fde_index *x, uint64_t addr);

#endif /* COLLECTOR_CFI_ENTRIES_H */
