// SPDX-License-Identifier: GPL-2.0
/*
 * The FDEs of a CFI section and a linear interpreter of their instructions
 * (unwind/cfi_fde.h).  Entries are split by libdw's dwarf_next_cfi; the
 * CIE augmentations, the FDEs' address encodings and the instructions are
 * read here.  The initial rules are libdw's for x86-64 (its backend's ABI
 * CFI, see start()), then the CIE's initial instructions.
 */
#include "unwind/cfi_fde.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bytes.h"

/* DW_EH_PE_* pointer encodings (the LSB's .eh_frame format) */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPLY 0x70
#define PE_INDIRECT 0x80
#define PE_PCREL 0x10

/* remember_state nesting: compilers nest one or two */
#define STATE_STACK 8

struct cfi_cie {
	uint64_t off;               /* section offset, for the FDEs' pointer */
	const uint8_t *ins, *ins_end;
	int64_t daf;                /* data alignment factor */
	uint64_t caf;               /* code alignment factor */
	uint64_t ra;                /* return address column */
	uint8_t fde_enc;            /* the FDEs' address encoding */
	bool fde_aug;               /* 'z': FDEs carry augmentation data */
	bool supported;             /* false: its FDEs go through libdw */
};

/* ---- reading ------------------------------------------------------------ */

static bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned int shift = 0; *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

static bool sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	uint64_t r = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (shift < 64)
			r |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		r |= ~(uint64_t)0 << shift;
	*v = (int64_t)r;
	return true;
}

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

/* Room for one more element in *v (n used of *cap). */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? 2 * *cap : 64;
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, c * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = c;
	return 0;
}

static int push_cie(struct cfi_fdes *out, uint64_t off, const Dwarf_CIE *e,
		    enum cfi_source source)
{
	struct cfi_cie *c;

	if (grow((void **)&out->cies, &out->cap_cies, out->n_cies, sizeof(*c)) != 0)
		return -ENOMEM;
	c = &out->cies[out->n_cies++];
	memset(c, 0, sizeof(*c));
	c->off = off;
	c->ins = e->initial_instructions;
	c->ins_end = e->initial_instructions_end;
	c->daf = e->data_alignment_factor;
	c->caf = e->code_alignment_factor;
	c->ra = e->return_address_register;
	read_augmentation(c, e, source);
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
	if (grow((void **)&out->v, &out->cap, out->n, sizeof(*fde)) != 0)
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
		if (!uleb(&p, e->end, &aug) || aug > (uint64_t)(e->end - p))
			return false;
		p += aug;
	}
	if (!range || start + range < start)
		return false;
	fde->start = start;
	fde->end = start + range;
	fde->ins = p;
	fde->ins_end = e->end;
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

void cfi_fdes_sort(struct cfi_fdes *fdes)
{
	if (fdes->n)
		qsort(fdes->v, fdes->n, sizeof(*fdes->v), cmp_fde);
}

void cfi_fdes_free(struct cfi_fdes *fdes)
{
	free(fdes->v);
	free(fdes->cies);
	memset(fdes, 0, sizeof(*fdes));
}

/* ---- interpreting -------------------------------------------------------- */

/* The CFA: undefined, register + offset, or the PLT's expression (rsp + 8,
 * + 8 once rip & 15 >= cfa_off: the threshold). */
enum cfa_how { CFA_UNDEFINED, CFA_REG_OFF, CFA_PLT };

/* The PLT's CFA expression as GCC and binutils write it: breg7 8; breg16
 * 0; lit15; and; litN; ge; lit3; shl; plus.  Any other expression (stack
 * realignment, signal frames) is left to libdw. */
static const uint8_t plt_expr[] = { DW_OP_breg7, 8, DW_OP_breg16, 0, DW_OP_lit15, DW_OP_and,
				    0 /* litN */, DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };
#define PLT_EXPR_LIT 6

struct frame_state {
	uint8_t cfa_how;
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct {
		uint8_t how; /* enum cfi_reg_how */
		int64_t off;
	} reg[CFI_RULE_NREGS];
};

struct interp {
	const struct cfi_cie *cie;
	struct frame_state fs, initial; /* initial: after the CIE's program */
	struct frame_state stack[STATE_STACK];
	int depth;
};

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void set_reg(struct frame_state *fs, uint64_t reg, uint8_t how, int64_t off)
{
	if (reg >= CFI_RULE_NREGS)
		return; /* a register neither unwinder recovers */
	fs->reg[reg].how = how;
	fs->reg[reg].off = off;
}

/* The rule the state gives, as cfi_rule_of_frame reduces libdw's. */
static void rule_of_state(const struct interp *in, struct cfi_rule *r)
{
	const struct frame_state *fs = &in->fs;

	memset(r, 0, sizeof(*r));
	r->kind = CFI_RULE_OTHER;
	if (in->cie->ra >= CFI_RULE_NREGS)
		return;
	r->ra = in->cie->ra;
	if (fs->reg[r->ra].how == CFI_HOW_UNDEFINED) {
		r->kind = CFI_RULE_END;
		return;
	}
	if (fs->cfa_how == CFA_PLT) {
		r->kind = CFI_RULE_PLT;
		r->cfa_off = fs->cfa_off;
	} else if (fs->cfa_how == CFA_REG_OFF && fs->cfa_reg < CFI_RULE_NREGS &&
		   fits_s32(fs->cfa_off)) {
		r->kind = CFI_RULE_REGS;
		r->cfa_reg = fs->cfa_reg;
		r->cfa_off = fs->cfa_off;
	} else {
		return;
	}
	for (int i = 0; i < CFI_RULE_NREGS; i++) {
		r->reg[i].how = fs->reg[i].how;
		if (fs->reg[i].how == CFI_HOW_AT || fs->reg[i].how == CFI_HOW_VALUE) {
			if (fits_s32(fs->reg[i].off))
				r->reg[i].off = fs->reg[i].off;
			else
				r->reg[i].how = CFI_HOW_OTHER;
		}
	}
}

/* Applies the instruction at *pp.  Returns 1 when it moves the location
 * (by *delta bytes), 0 when it changes rules, -ENOTSUP for an instruction
 * this does not cover. */
static int step(struct interp *in, const uint8_t **pp, const uint8_t *end, uint64_t *delta)
{
	const struct cfi_cie *c = in->cie;
	struct frame_state *fs = &in->fs;
	const uint8_t *p = *pp;
	uint8_t op = *p++, low = op & 0x3f;
	uint64_t reg, u;
	size_t n;
	int64_t s;

	*pp = p;
	switch (op >> 6) {
	case 1: /* DW_CFA_advance_loc */
		*delta = low * c->caf;
		return 1;
	case 2: /* DW_CFA_offset */
		if (!uleb(pp, end, &u))
			return -ENOTSUP;
		set_reg(fs, low, CFI_HOW_AT, (int64_t)u * c->daf);
		return 0;
	case 3: /* DW_CFA_restore */
		if (low < CFI_RULE_NREGS)
			fs->reg[low] = in->initial.reg[low];
		return 0;
	}
	switch (op) {
	case DW_CFA_nop:
		break;
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
		n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;
		if ((size_t)(end - p) < n)
			return -ENOTSUP;
		*delta = (n == 1 ? *p : n == 2 ? le16_get(p) : le32_get(p)) * c->caf;
		*pp = p + n;
		return 1;
	case DW_CFA_offset_extended:
	case DW_CFA_val_offset:
		if (!uleb(pp, end, &reg) || !uleb(pp, end, &u))
			return -ENOTSUP;
		set_reg(fs, reg, op == DW_CFA_val_offset ? CFI_HOW_VALUE : CFI_HOW_AT,
			(int64_t)u * c->daf);
		break;
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset_sf:
		if (!uleb(pp, end, &reg) || !sleb(pp, end, &s))
			return -ENOTSUP;
		set_reg(fs, reg, op == DW_CFA_val_offset_sf ? CFI_HOW_VALUE : CFI_HOW_AT,
			s * c->daf);
		break;
	case DW_CFA_GNU_negative_offset_extended:
		if (!uleb(pp, end, &reg) || !uleb(pp, end, &u))
			return -ENOTSUP;
		set_reg(fs, reg, CFI_HOW_AT, -(int64_t)u * c->daf);
		break;
	case DW_CFA_restore_extended:
		if (!uleb(pp, end, &reg))
			return -ENOTSUP;
		if (reg < CFI_RULE_NREGS)
			fs->reg[reg] = in->initial.reg[reg];
		break;
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (!uleb(pp, end, &reg))
			return -ENOTSUP;
		set_reg(fs, reg, op == DW_CFA_undefined ? CFI_HOW_UNDEFINED : CFI_HOW_SAME, 0);
		break;
	case DW_CFA_register:
		if (!uleb(pp, end, &reg) || !uleb(pp, end, &u))
			return -ENOTSUP;
		set_reg(fs, reg, CFI_HOW_OTHER, 0);
		break;
	case DW_CFA_remember_state:
		if (in->depth == STATE_STACK)
			return -ENOTSUP;
		in->stack[in->depth++] = *fs;
		break;
	case DW_CFA_restore_state:
		if (!in->depth)
			return -ENOTSUP;
		*fs = in->stack[--in->depth];
		break;
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		if (!uleb(pp, end, &reg))
			return -ENOTSUP;
		if (op == DW_CFA_def_cfa ? !uleb(pp, end, &u) : !sleb(pp, end, &s))
			return -ENOTSUP;
		fs->cfa_how = CFA_REG_OFF;
		fs->cfa_reg = reg;
		fs->cfa_off = op == DW_CFA_def_cfa ? (int64_t)u : s * c->daf;
		break;
	case DW_CFA_def_cfa_register:
		if (!uleb(pp, end, &reg) || fs->cfa_how != CFA_REG_OFF)
			return -ENOTSUP;
		fs->cfa_reg = reg;
		break;
	case DW_CFA_def_cfa_offset:
		if (!uleb(pp, end, &u) || fs->cfa_how != CFA_REG_OFF)
			return -ENOTSUP;
		fs->cfa_off = (int64_t)u;
		break;
	case DW_CFA_def_cfa_offset_sf:
		if (!sleb(pp, end, &s) || fs->cfa_how != CFA_REG_OFF)
			return -ENOTSUP;
		fs->cfa_off = s * c->daf;
		break;
	case DW_CFA_def_cfa_expression:
		if (!uleb(pp, end, &u) || u != sizeof(plt_expr) || (size_t)(end - *pp) < u)
			return -ENOTSUP;
		for (size_t i = 0; i < sizeof(plt_expr); i++)
			if (i != PLT_EXPR_LIT && (*pp)[i] != plt_expr[i])
				return -ENOTSUP;
		if ((*pp)[PLT_EXPR_LIT] < DW_OP_lit0 || (*pp)[PLT_EXPR_LIT] > DW_OP_lit15)
			return -ENOTSUP;
		fs->cfa_how = CFA_PLT;
		fs->cfa_off = (*pp)[PLT_EXPR_LIT] - DW_OP_lit0;
		*pp += u;
		break;
	case DW_CFA_GNU_args_size:
		if (!uleb(pp, end, &u))
			return -ENOTSUP;
		break;
	default: /* other expressions, set_loc, vendor operations */
		return -ENOTSUP;
	}
	return 0;
}

/*
 * Runs instructions [p, end) from location *loc; with emit, calls it for
 * each row that ends before `limit`.  Returns 0, emit's error, or -ENOTSUP
 * for an instruction this does not cover.
 */
static int run(struct interp *in, const uint8_t *p, const uint8_t *end, uint64_t *loc,
	       uint64_t limit, cfi_row_fn emit, void *arg)
{
	while (p < end && *loc < limit) {
		uint64_t delta = 0, to;
		struct cfi_rule rule;
		int ret = step(in, &p, end, &delta);

		if (ret <= 0) {
			if (ret < 0)
				return ret;
			continue;
		}
		if (!delta)
			continue;
		to = *loc + delta < limit && *loc + delta > *loc ? *loc + delta : limit;
		if (emit) {
			rule_of_state(in, &rule);
			if ((ret = emit(arg, *loc, to, &rule)) != 0)
				return ret;
		}
		*loc = to;
	}
	return 0;
}

/* Starts the interpreter with the CIE's rules. */
static int start(struct interp *in, const struct cfi_cie *c)
{
	uint64_t loc = 0;
	int err;

	memset(in, 0, sizeof(*in));
	in->cie = c;
	/* libdw's x86-64 ABI defaults (backends/x86_64_cfi.c, 0.188): rax,
	 * not rbx (its comment says rbx), rbp, r12-r15 and rip kept, rsp the
	 * CFA, every other register lost */
	for (int r = CFI_REG_R12; r <= CFI_REG_RIP; r++)
		in->fs.reg[r].how = CFI_HOW_SAME;
	in->fs.reg[0].how = CFI_HOW_SAME;
	in->fs.reg[CFI_REG_RBP].how = CFI_HOW_SAME;
	in->fs.reg[CFI_REG_RSP].how = CFI_HOW_VALUE;
	/* the CIE's instructions do not move the location */
	err = run(in, c->ins, c->ins_end, &loc, 1, NULL, NULL);
	if (err || loc != 0 || in->depth)
		return -ENOTSUP;
	in->initial = in->fs;
	return 0;
}

int cfi_fde_rows(const struct cfi_fdes *fdes, const struct cfi_fde *fde, uint64_t end,
		 cfi_row_fn emit, void *arg)
{
	const struct cfi_cie *c = &fdes->cies[fde->cie];
	uint64_t limit = end < fde->end ? end : fde->end, loc;
	struct interp in;
	struct cfi_rule rule;
	int err;

	if (!c->supported || fde->start >= limit)
		return -ENOTSUP;
	/* a dry run first: an FDE is either read here whole or by libdw */
	for (int pass = 0; pass < 2; pass++) {
		if ((err = start(&in, c)) != 0)
			return err;
		loc = fde->start;
		err = run(&in, fde->ins, fde->ins_end, &loc, limit, pass ? emit : NULL, arg);
		if (err)
			return err;
	}
	if (loc >= limit)
		return 0;
	rule_of_state(&in, &rule);
	return emit(arg, loc, limit, &rule);
}
