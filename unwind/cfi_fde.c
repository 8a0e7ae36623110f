// SPDX-License-Identifier: GPL-2.0
/*
 * A linear interpreter of an FDE's instructions (unwind/cfi_fde.h).  The
 * initial rules are libdw's for x86-64 (its backend's ABI CFI, see
 * start()), then the CIE's initial instructions.  The entries themselves
 * are read by symbols/cfi_entries.c.
 */
#include "unwind/cfi_fde.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bytes.h"

/* remember_state nesting: compilers nest one or two */
#define STATE_STACK 8

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
		if (!uleb128_get(pp, end, &u))
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
		if (!uleb128_get(pp, end, &reg) || !uleb128_get(pp, end, &u))
			return -ENOTSUP;
		set_reg(fs, reg, op == DW_CFA_val_offset ? CFI_HOW_VALUE : CFI_HOW_AT,
			(int64_t)u * c->daf);
		break;
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset_sf:
		if (!uleb128_get(pp, end, &reg) || !sleb128_get(pp, end, &s))
			return -ENOTSUP;
		set_reg(fs, reg, op == DW_CFA_val_offset_sf ? CFI_HOW_VALUE : CFI_HOW_AT,
			s * c->daf);
		break;
	case DW_CFA_GNU_negative_offset_extended:
		if (!uleb128_get(pp, end, &reg) || !uleb128_get(pp, end, &u))
			return -ENOTSUP;
		set_reg(fs, reg, CFI_HOW_AT, -(int64_t)u * c->daf);
		break;
	case DW_CFA_restore_extended:
		if (!uleb128_get(pp, end, &reg))
			return -ENOTSUP;
		if (reg < CFI_RULE_NREGS)
			fs->reg[reg] = in->initial.reg[reg];
		break;
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (!uleb128_get(pp, end, &reg))
			return -ENOTSUP;
		set_reg(fs, reg, op == DW_CFA_undefined ? CFI_HOW_UNDEFINED : CFI_HOW_SAME, 0);
		break;
	case DW_CFA_register:
		if (!uleb128_get(pp, end, &reg) || !uleb128_get(pp, end, &u))
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
		if (!uleb128_get(pp, end, &reg))
			return -ENOTSUP;
		if (op == DW_CFA_def_cfa ? !uleb128_get(pp, end, &u) : !sleb128_get(pp, end, &s))
			return -ENOTSUP;
		fs->cfa_how = CFA_REG_OFF;
		fs->cfa_reg = reg;
		fs->cfa_off = op == DW_CFA_def_cfa ? (int64_t)u : s * c->daf;
		break;
	case DW_CFA_def_cfa_register:
		if (!uleb128_get(pp, end, &reg) || fs->cfa_how != CFA_REG_OFF)
			return -ENOTSUP;
		fs->cfa_reg = reg;
		break;
	case DW_CFA_def_cfa_offset:
		if (!uleb128_get(pp, end, &u) || fs->cfa_how != CFA_REG_OFF)
			return -ENOTSUP;
		fs->cfa_off = (int64_t)u;
		break;
	case DW_CFA_def_cfa_offset_sf:
		if (!sleb128_get(pp, end, &s) || fs->cfa_how != CFA_REG_OFF)
			return -ENOTSUP;
		fs->cfa_off = s * c->daf;
		break;
	case DW_CFA_def_cfa_expression:
		if (!uleb128_get(pp, end, &u) || u != sizeof(plt_expr) || (size_t)(end - *pp) < u)
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
		if (!uleb128_get(pp, end, &u))
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
	uint64_t fde_end = cfi_fde_end(fde), limit = end < fde_end ? end : fde_end, loc;
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
		err = run(&in, fde->ins, fde->ins + fde->ins_len, &loc, limit, pass ? emit : NULL,
			  arg);
		if (err)
			return err;
	}
	if (loc >= limit)
		return 0;
	rule_of_state(&in, &rule);
	return emit(arg, loc, limit, &rule);
}
