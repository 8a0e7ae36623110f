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
 * The FDEs' first addresses come from .eh_frame_hdr's binary search table
 * (sorted by initial location; ld writes it with --eh-frame-hdr, the
 * default on Linux), read once per image into an array of link-time
 * addresses: a look-up is one binary search.  That an FDE covers the
 * address at all, and where it ends, libdw's CFI reader says
 * (dwarf_cfi_addrframe walks the FDE's rows).
 */
#include "symbols/symbolize_internal.h"

#include <inttypes.h>

#include "lib/bytes.h"
#include "lib/sorted.h"

/* DW_EH_PE_* encodings that .eh_frame_hdr uses on x86-64 (GNU ld and lld
 * write exactly these); any other table is left unread. */
#define EH_PE_UDATA4 0x03
#define EH_PE_SDATA4 0x0b
#define EH_PE_FORMAT 0x0f
#define EH_PE_DATAREL_SDATA4 0x3b

/* The first addresses of f's .eh_frame FDEs, sorted, from .eh_frame_hdr's
 * binary search table (malloc'd into *starts; the caller frees it).
 * Returns 0 with *n == 0 when the file has no table this reads, or
 * -ENOMEM. */
static int eh_frame_starts(const struct elf_file *f, uint64_t **starts, size_t *n)
{
	Elf_Scn *scn = elf_file_section(f, ".eh_frame_hdr");
	const unsigned char *p;
	Elf_Data *data;
	GElf_Shdr shdr;
	uint32_t count;

	*starts = NULL;
	*n = 0;
	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
	    !(data = elf_getdata(scn, NULL)) || !data->d_buf || data->d_size < 12)
		return 0;
	p = data->d_buf;
	/* version 1; eh_frame_ptr and fde_count 4 bytes wide; the table's
	 * pairs (initial location, FDE address) relative to the header */
	if (p[0] != 1 || ((p[1] & EH_PE_FORMAT) != EH_PE_UDATA4 &&
			  (p[1] & EH_PE_FORMAT) != EH_PE_SDATA4) ||
	    ((p[2] & EH_PE_FORMAT) != EH_PE_UDATA4 && (p[2] & EH_PE_FORMAT) != EH_PE_SDATA4) ||
	    p[3] != EH_PE_DATAREL_SDATA4)
		return 0;
	count = le32_get(p + 8);
	if (!count || count > (data->d_size - 12) / 8)
		return 0;
	*starts = calloc(count, sizeof(**starts));
	if (!*starts)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++)
		(*starts)[i] = shdr.sh_addr + (int64_t)(int32_t)le32_get(p + 12 + 8 * i);
	*n = count;
	return 0;
}

/* The FDEs' first addresses, sorted, into si->fde_starts; none when the
 * file has no table eh_frame_starts reads. */
static void read_fde_table(struct sym_image *si)
{
	if (eh_frame_starts(&si->file, &si->fde_starts, &si->n_fde_starts) != 0)
		sym_check_alloc(NULL);
}

/* Where the FDE that covers addr ends: its rows, one after the other, up to
 * the next FDE's start. */
static uint64_t fde_end(Dwarf_CFI *cfi, uint64_t addr, uint64_t limit)
{
	Dwarf_Addr start, end = addr;
	Dwarf_Frame *frame;

	/* a function has a few dozen rows; hostile CFI is bounded */
	for (int rows = 0; rows < 4096 && end < limit; rows++) {
		if (dwarf_cfi_addrframe(cfi, end, &frame) != 0)
			break;
		if (dwarf_frame_info(frame, &start, &end, NULL) < 0 || end <= start) {
			free(frame);
			break;
		}
		free(frame);
	}
	return end < limit ? end : limit;
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
	uint64_t entry = si->file.entry, limit = 0, vaddr, memsz;
	char name[512];
	size_t i;

	if (!entry || addr < entry)
		return MODEL_NONE;
	i = sorted_upper_bound(si->fde_starts, si->n_fde_starts, sizeof(uint64_t), 0, entry);
	if (i < si->n_fde_starts)
		limit = si->fde_starts[i];
	else if (elf_file_text_segment(&si->file, &vaddr, &memsz) && entry < vaddr + memsz)
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
	Dwarf_Frame *frame;
	uint64_t start, limit, end;
	char name[512];
	size_t i;

	if (!si->cfi_tried) {
		si->cfi_tried = true;
		si->cfi = dwarf_getcfi_elf(si->file.elf);
		if (si->cfi)
			read_fde_table(si);
	}
	i = sorted_upper_bound(si->fde_starts, si->n_fde_starts, sizeof(uint64_t), 0, addr);
	/* FDEs do not overlap: the one that covers addr, if any, is the last
	 * that starts at or below it */
	if (i == 0 || dwarf_cfi_addrframe(si->cfi, addr, &frame) != 0)
		return entry_function(s, image, si, addr, image_basename(path));
	free(frame);
	start = si->fde_starts[i - 1];
	limit = i < si->n_fde_starts ? si->fde_starts[i] : UINT64_MAX;
	end = fde_end(si->cfi, addr, limit);
	snprintf(name, sizeof(name), "%s+0x%" PRIx64, image_basename(path), start);
	return model_intern_function(s->m, image, name, start, end - start, MODEL_NONE, 0);
}
