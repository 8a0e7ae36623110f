// SPDX-License-Identifier: GPL-2.0
/*
 * Functions of stripped code: where no symbol and no DWARF covers an
 * address, the .eh_frame FDE that contains it stands for its function (the
 * x86-64 ABI asks for one per function, and compilers emit it even in
 * stripped files: unwinding and C++ exceptions need it).  The function is
 * named "IMAGE+0xSTART" (the image's base name and the FDE's first address)
 * and spans the FDE's range, so that samples merge per function instead of
 * making one row per address.
 *
 * The FDEs come from symbols/cfi_entries.c's index (.eh_frame_hdr's
 * table, else the list read once): a look-up is one binary search, and
 * the FDE says where the function ends.  (libdw's dwarf_cfi_addrframe, used here
 * before, replays an FDE's program up to the address, and finding the end
 * that way took one call per row: 58% of the collector's CPU under a
 * build loop, for cc1's long functions.)
 */
#include "symbols/symbolize_internal.h"

#include <inttypes.h>

/* The FDEs of si's .eh_frame, indexed at the first look-up. */
static const struct cfi_fde_index *image_fdes(struct sym_image *si)
{
	if (!si->fdes_read) {
		si->fdes_read = true;
		if (cfi_fde_index_open(&si->fdes, &si->file) != 0)
			sym_check_alloc(NULL);
		/* a list read whole once; look-ups come back to a few pages */
		if (!si->fdes.rows)
			elf_file_release_pages(&si->file);
	}
	return &si->fdes;
}

static const char *image_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * The program's entry function where no FDE covers it: an entry written in
 * assembly without CFI (musl's _start and _start_c's caller, a
 * -nostartfiles program's own entry) is named like an FDE's function,
 * "IMAGE+0xENTRY", and spans from e_entry to the next FDE's start (else to
 * the end of the text segment), so that the tracker finds the stacks that
 * end in it whole.  MODEL_NONE when addr is not in that span.
 */
static uint32_t entry_function(struct symbolizer *s, uint32_t image, struct sym_image *si,
			       uint64_t addr, const char *name_base)
{
	uint64_t entry = si->file.entry, limit, vaddr, memsz;
	char name[512];

	if (!entry || addr < entry)
		return MODEL_NONE;
	limit = cfi_fde_index_next_start(image_fdes(si), entry);
	if (!limit && elf_file_text_segment(&si->file, &vaddr, &memsz) && entry < vaddr + memsz)
		limit = vaddr + memsz;
	if (addr >= limit)
		return MODEL_NONE;
	snprintf(name, sizeof(name), "%s+0x%" PRIx64, name_base, entry);
	return model_intern_function(s->m, image, name, entry, limit - entry, MODEL_NONE, 0);
}

uint32_t sym_fde_function(struct symbolizer *s, uint32_t image, struct sym_image *si,
			  uint64_t addr)
{
	const char *path = s->m->images.items[image].path;
	struct cfi_fde_one fde;
	char name[512];

	if (!cfi_fde_index_find(image_fdes(si), addr, &fde))
		return entry_function(s, image, si, addr, image_basename(path));
	snprintf(name, sizeof(name), "%s+0x%" PRIx64, image_basename(path), fde.fde.start);
	return model_intern_function(s->m, image, name, fde.fde.start, fde.fde.len,
				     MODEL_NONE, 0);
}
