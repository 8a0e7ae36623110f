// SPDX-License-Identifier: GPL-2.0
/*
 * The CIEs and FDEs of a CFI section (symbols/cfi_entries.h).  Entries are
 * split by libdw's dwarf_next_cfi; the CIE augmentations and the FDEs'
 * address encodings are read here.
 */
#include "symbols/cfi_entries.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/bytes.h"
#include "lib/sorted.h"

/* DW_EH_PE_* pointer encodings (the LSB's .eh_frame format) */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_INDIRECT 0x80
#define PE_PCREL 0x10


/* A pointer encoded with enc at *p (the section's byte at sec, loaded at
 * sec_addr): absolute or pc-relative, fixed-size.  False otherwise. */
static bool read_encoded(const uint8_t **p, const uint8_t *end, uint8_t enc, const uint8_t *sec,
			 uint64_t sec_addr, uint64_t *v)
{
	uint64_t field = sec_addr + (uint64_t)(*p - sec), x;
	size_t size;

	if (enc == PE_OMIT || (enc & PE_INDIRECT) || ((enc & PE_APPLY) && (enc & PE_APPLY) != PE_PCREL))
		return false;
	switch (enc & PE_FORMAT) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		size = 8;
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		size = 4;
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		size = 2;
		break;
	default:
		return false;
	}
	if ((size_t)(end - *p) < size)
		return false;
	x = size == 8 ? le64_get(*p) : size == 4 ? le32_get(*p) : le16_get(*p);
	if ((enc & PE_FORMAT) == DW_EH_PE_sdata4)
		x = (uint64_t)(int64_t)(int32_t)x;
	else if ((enc & PE_FORMAT) == DW_EH_PE_sdata2)
		x = (uint64_t)(int64_t)(int16_t)x;
	*p += size;
	*v = (enc & PE_APPLY) == PE_PCREL ? field + x : x;
	return true;
}

/* The size of a pointer encoded with enc (for the personality routine's,
 * which is skipped); 0 for one it does not know. */
static size_t encoded_size(uint8_t enc)
{
	switch (enc & PE_FORMAT) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	}
	return 0;
}

/* Reads a CIE's augmentation: 'z' first, then R (the FDEs' encoding), P
 * (a personality routine), L (an LSDA encoding); S (a signal frame) and
 * anything else leave the CIE to libdw. */
static void read_augmentation(struct cfi_cie *c, const Dwarf_CIE *e, enum cfi_source source)
{
	const char *a = e->augmentation;
	const uint8_t *p = e->augmentation_data, *end = p + e->augmentation_data_size;

	c->fde_enc = source == CFI_EH_FRAME ? DW_EH_PE_absptr : DW_EH_PE_udata8;
	c->supported = true;
	if (!a[0])
		return;
	if (a[0] != 'z' || !p) {
		c->supported = false;
		return;
	}
	c->fde_aug = true;
	for (a++; *a && c->supported; a++) {
		size_t n;

		switch (*a) {
		case 'R':
			c->supported = p < end;
			if (c->supported)
				c->fde_enc = *p++;
			break;
		case 'L':
			c->supported = p < end;
			p++;
			break;
		case 'P':
			c->supported = p < end && (n = encoded_size(*p)) && (size_t)(end - p) > n;
			p += c->supported ? 1 + n : 0;
			break;
		default:
			c->supported = false;
		}
	}
}

static void fill_cie(struct cfi_cie *c, uint64_t off, const Dwarf_CIE *e,
		     enum cfi_source source)
{
	memset(c, 0, sizeof(*c));
	c->off = off;
	c->ins = e->initial_instructions;
	c->ins_end = e->initial_instructions_end;
	c->daf = e->data_alignment_factor;
	c->caf = e->code_alignment_factor;
	c->ra = e->return_address_register;
	read_augmentation(c, e, source);
}

static int push_cie(struct cfi_fdes *out, uint64_t off, const Dwarf_CIE *e,
		    enum cfi_source source)
{
	if (array_grow((void **)&out->cies, &out->cap_cies, out->n_cies, sizeof(*out->cies), 64) != 0)
		return -ENOMEM;
	fill_cie(&out->cies[out->n_cies++], off, e, source);
	return 0;
}

/* The CIE at section offset off among those of [first, n_cies) (a
 * section's CIEs come in offset order). */
static long find_cie(const struct cfi_fdes *out, size_t first, uint64_t off)
{
	size_t lo = first, hi = out->n_cies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (out->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < out->n_cies && out->cies[lo].off == off ? (long)lo : -1;
}

static int push_fde(struct cfi_fdes *out, const struct cfi_fde *fde)
{
	if (array_grow((void **)&out->v, &out->cap, out->n, sizeof(*fde), 64) != 0)
		return -ENOMEM;
	out->v[out->n++] = *fde;
	return 0;
}

/* An FDE's range and instructions; false when it cannot be read (then it
 * is not listed: libdw would not read it either, or only through a CIE
 * the interpreter leaves to it, see below). */
static bool read_fde(const struct cfi_cie *c, const Dwarf_FDE *e, const uint8_t *sec,
		     uint64_t sec_addr, struct cfi_fde *fde)
{
	const uint8_t *p = e->start;
	uint64_t start, range, aug;

	if (!read_encoded(&p, e->end, c->fde_enc, sec, sec_addr, &start) ||
	    !read_encoded(&p, e->end, c->fde_enc & PE_FORMAT, sec, sec_addr, &range))
		return false;
	if (c->fde_aug) {
		if (!uleb128_get(&p, e->end, &aug) || aug > (uint64_t)(e->end - p))
			return false;
		p += aug;
	}
	/* (a function of 4 GiB, or 4 GiB of instructions: none is real) */
	if (!range || start + range < start || range > UINT32_MAX ||
	    (uint64_t)(e->end - p) > UINT32_MAX)
		return false;
	fde->start = start;
	fde->len = (uint32_t)range;
	fde->ins = p;
	fde->ins_len = (uint32_t)(e->end - p);
	return true;
}

int cfi_fdes_read(struct cfi_fdes *out, const struct elf_file *f, enum cfi_source source)
{
	Elf_Scn *scn = elf_file_section(f, source == CFI_EH_FRAME ? ".eh_frame" : ".debug_frame");
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry entry;
	size_t first_cie = out->n_cies;
	unsigned char *ident;
	Elf_Data *data;
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
	    (shdr.sh_flags & SHF_COMPRESSED) || !(data = elf_getdata(scn, NULL)) ||
	    !data->d_buf || !(ident = (unsigned char *)elf_getident(f->elf, NULL)))
		return 0;
	while (dwarf_next_cfi(ident, data, source == CFI_EH_FRAME, off, &next, &entry) == 0) {
		struct cfi_fde fde = { .source = source };
		long cie;

		if (dwarf_cfi_cie_p(&entry)) {
			if (push_cie(out, off, &entry.cie, source) != 0)
				return -ENOMEM;
		} else if ((cie = find_cie(out, first_cie, entry.fde.CIE_pointer)) >= 0 &&
			   read_fde(&out->cies[cie], &entry.fde, data->d_buf, shdr.sh_addr, &fde)) {
			fde.cie = cie;
			if (push_fde(out, &fde) != 0)
				return -ENOMEM;
		}
		off = next;
	}
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct cfi_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (int)x->source - (int)y->source;
}

/* *v's capacity cut to its n elements (left as it is when realloc fails). */
static void trim(void **v, size_t *cap, size_t n, size_t size)
{
	void *nv;

	if (!n || n == *cap || !(nv = realloc(*v, n * size)))
		return;
	*v = nv;
	*cap = n;
}

void cfi_fdes_sort(struct cfi_fdes *fdes)
{
	/* the lists are kept (the symbolizer's for the run, the user-space
	 * unwinder's up to 512 files): grown by doubling, a quarter of
	 * them was room never used, 25 MiB of a -a run's first seconds */
	trim((void **)&fdes->v, &fdes->cap, fdes->n, sizeof(*fdes->v));
	trim((void **)&fdes->cies, &fdes->cap_cies, fdes->n_cies, sizeof(*fdes->cies));
	if (fdes->n)
		qsort(fdes->v, fdes->n, sizeof(*fdes->v), cmp_fde);
}

void cfi_fdes_free(struct cfi_fdes *fdes)
{
	free(fdes->v);
	free(fdes->cies);
	memset(fdes, 0, sizeof(*fdes));
}

const struct cfi_fde *cfi_fdes_find(const struct cfi_fdes *fdes, uint64_t addr)
{
	size_t i = sorted_upper_bound(fdes->v, fdes->n, sizeof(*fdes->v),
				      offsetof(struct cfi_fde, start), addr);

	if (i == 0)
		return NULL;
	/* among FDEs of one start, .eh_frame's (sorted first) wins */
	while (i > 1 && fdes->v[i - 2].start == fdes->v[i - 1].start)
		i--;
	return addr < cfi_fde_end(&fdes->v[i - 1]) ? &fdes->v[i - 1] : NULL;
}

/* ---- look-ups by address ------------------------------------------------ */

/* .eh_frame_hdr's table encoding: offsets from the header, 4 bytes each */
#define HDR_TABLE_ENC (DW_EH_PE_datarel | DW_EH_PE_sdata4)

/* The section's bytes when it is one this reads (present, not NOBITS, not
 * compressed), else NULL. */
static Elf_Data *plain_section(const struct elf_file *f, const char *name, GElf_Shdr *shdr)
{
	Elf_Scn *scn = elf_file_section(f, name);
	Elf_Data *data;

	if (!scn || !gelf_getshdr(scn, shdr) || shdr->sh_type == SHT_NOBITS ||
	    (shdr->sh_flags & SHF_COMPRESSED) || !(data = elf_getdata(scn, NULL)) ||
	    !data->d_buf)
		return NULL;
	return data;
}

/* x's table from .eh_frame_hdr; false when the file has none this reads. */
static bool open_table(struct cfi_fde_index *x, const struct elf_file *f)
{
	GElf_Shdr hs, es;
	Elf_Data *hd = plain_section(f, ".eh_frame_hdr", &hs);
	Elf_Data *ed = plain_section(f, ".eh_frame", &es);
	const uint8_t *p, *q, *end;
	uint64_t eh_ptr, count;

	if (!hd || !ed || !x->ident || hd->d_size < 4)
		return false;
	p = hd->d_buf;
	end = p + hd->d_size;
	q = p + 4;
	/* version 1; then .eh_frame's address, the row count, the rows */
	if (p[0] != 1 || p[3] != HDR_TABLE_ENC ||
	    !read_encoded(&q, end, p[1], p, hs.sh_addr, &eh_ptr) ||
	    !read_encoded(&q, end, p[2], p, hs.sh_addr, &count) || count > (size_t)(end - q) / 8)
		return false;
	x->rows = q;
	x->n_rows = count;
	x->hdr_addr = hs.sh_addr;
	x->eh = ed->d_buf;
	x->eh_size = ed->d_size;
	x->eh_addr = es.sh_addr;
	return true;
}

int cfi_fde_index_open(struct cfi_fde_index *x, const struct elf_file *f)
{
	int err;

	memset(x, 0, sizeof(*x));
	x->ident = (unsigned char *)elf_getident(f->elf, NULL);
	if (open_table(x, f))
		return 0;
	err = cfi_fdes_read(&x->list, f, CFI_EH_FRAME);
	if (err) {
		cfi_fdes_free(&x->list);
		return err;
	}
	cfi_fdes_sort(&x->list);
	return 0;
}

void cfi_fde_index_close(struct cfi_fde_index *x)
{
	cfi_fdes_free(&x->list);
	memset(x, 0, sizeof(*x));
}

/* The link-time address a row's offset k (0: its start, 4: its FDE) gives. */
static uint64_t row_addr(const struct cfi_fde_index *x, size_t i, size_t k)
{
	return x->hdr_addr + (uint64_t)(int64_t)(int32_t)le32_get(x->rows + 8 * i + k);
}

/* How many rows start at or below addr (the rows are sorted by start). */
static size_t rows_upto(const struct cfi_fde_index *x, uint64_t addr)
{
	size_t lo = 0, hi = x->n_rows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (row_addr(x, mid, 0) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void one_init(struct cfi_fde_one *one)
{
	memset(&one->fdes, 0, sizeof(one->fdes));
	one->fdes.v = &one->fde;
	one->fdes.n = one->fdes.cap = 1;
	one->fdes.cies = &one->cie;
	one->fdes.n_cies = one->fdes.cap_cies = 1;
	one->fde.cie = 0;
}

/* The FDE at .eh_frame offset off and its CIE into *one. */
static bool read_fde_at(const struct cfi_fde_index *x, uint64_t off, struct cfi_fde_one *one)
{
	Elf_Data data = { .d_buf = (void *)x->eh, .d_size = x->eh_size, .d_type = ELF_T_BYTE };
	Dwarf_CFI_Entry fde, cie;
	Dwarf_Off next;

	if (off >= x->eh_size || dwarf_next_cfi(x->ident, &data, true, off, &next, &fde) != 0 ||
	    dwarf_cfi_cie_p(&fde) ||
	    dwarf_next_cfi(x->ident, &data, true, fde.fde.CIE_pointer, &next, &cie) != 0 ||
	    !dwarf_cfi_cie_p(&cie))
		return false;
	one_init(one);
	fill_cie(&one->cie, fde.fde.CIE_pointer, &cie.cie, CFI_EH_FRAME);
	one->fde.source = CFI_EH_FRAME;
	return read_fde(&one->cie, &fde.fde, x->eh, x->eh_addr, &one->fde);
}

bool cfi_fde_index_find(const struct cfi_fde_index *x, uint64_t addr, struct cfi_fde_one *one)
{
	const struct cfi_fde *fde;
	size_t i;

	if (!x->rows) {
		if (!(fde = cfi_fdes_find(&x->list, addr)))
			return false;
		one_init(one);
		one->fde = *fde;
		one->fde.cie = 0;
		one->cie = x->list.cies[fde->cie];
		return true;
	}
	i = rows_upto(x, addr);
	return i && read_fde_at(x, row_addr(x, i - 1, 4) - x->eh_addr, one) &&
	       addr >= one->fde.start && addr < cfi_fde_end(&one->fde);
}

uint64_t cfi_fde_index_next_start(const struct cfi_fde_index *x, uint64_t addr)
{
	size_t i;

	if (!x->rows) {
		i = SORTED_UPPER_BOUND(x->list.v, x->list.n, start, addr);
		return i < x->list.n ? x->list.v[i].start : 0;
	}
	i = rows_upto(x, addr);
	return i < x->n_rows ? row_addr(x, i, 0) : 0;
}
