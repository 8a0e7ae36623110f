// SPDX-License-Identifier: GPL-2.0
/*
 * The one reduction of an address's CFI to a rule (unwind/cfi_rule.h),
 * from libdw's Dwarf_Frame.  The cases follow libdw's own unwinder
 * (frame_unwind.c's handle_cfi), which both cached walks replace.
 */
#include "unwind/cfi_rule.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's rt_sigframe (x86-64), as __restore_rt's CFI describes it:
 * the CFA is the interrupted rsp, read at rsp + 160. */
#define SIGFRAME_RSP 160

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* "register + offset" of a CFA: DW_OP_bregN or DW_OP_bregx. */
static bool breg(const Dwarf_Op *op, uint64_t *reg, int64_t *off)
{
	if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
		*reg = op->atom - DW_OP_breg0;
		*off = (int64_t)op->number;
		return true;
	}
	if (op->atom == DW_OP_bregx) {
		*reg = op->number;
		*off = (int64_t)op->number2;
		return true;
	}
	return false;
}

/* The PLT's CFA: rsp + 8, plus 8 once rip & 15 reaches a threshold (after
 * the entry's push): breg7 8; breg16 0; lit15; and; litN; ge; lit3; shl;
 * plus.  Returns N, or -1 for anything else. */
static int plt_threshold(const Dwarf_Op *ops, size_t n)
{
	static const uint8_t shape[] = { DW_OP_breg7, DW_OP_breg16, DW_OP_lit15, DW_OP_and, 0,
					 DW_OP_ge, DW_OP_lit3, DW_OP_shl, DW_OP_plus };

	if (n != sizeof(shape) || ops[0].number != 8 || ops[1].number != 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (shape[i] && ops[i].atom != shape[i])
			return -1;
	if (ops[4].atom < DW_OP_lit0 || ops[4].atom > DW_OP_lit15)
		return -1;
	return ops[4].atom - DW_OP_lit0;
}

/* How register regno is recovered.  libdw gives offset(N) and
 * val_offset(N) as call_frame_cfa, then plus_uconst N unless N is 0, then
 * stack_value for a value; no operations with ops NULL for same_value,
 * with ops == ops_mem for undefined. */
static void reg_rule(Dwarf_Frame *frame, int regno, struct cfi_rule *r)
{
	Dwarf_Op ops_mem[3], *ops;
	size_t nops, i = 1;
	int64_t off = 0;

	r->reg[regno].how = CFI_HOW_OTHER;
	r->reg[regno].off = 0;
	if (dwarf_frame_register(frame, regno, ops_mem, &ops, &nops) != 0)
		return;
	if (nops == 0) {
		if (ops == NULL)
			r->reg[regno].how = CFI_HOW_SAME;
		else if (ops == ops_mem)
			r->reg[regno].how = CFI_HOW_UNDEFINED;
		return;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return;
	if (i < nops && ops[i].atom == DW_OP_plus_uconst)
		off = (int64_t)ops[i++].number;
	if (i < nops && ops[i].atom == DW_OP_stack_value) {
		r->reg[regno].how = CFI_HOW_VALUE;
		i++;
	} else {
		r->reg[regno].how = CFI_HOW_AT;
	}
	if (i != nops || !fits_s32(off)) {
		r->reg[regno].how = CFI_HOW_OTHER;
		return;
	}
	r->reg[regno].off = off;
}

void cfi_rule_of_frame(Dwarf_Frame *frame, struct cfi_rule *r)
{
	Dwarf_Op ops_mem[3], *ops;
	bool signal = false;
	size_t nops;
	uint64_t reg;
	int64_t off;
	int ra, t;

	memset(r, 0, sizeof(*r));
	r->kind = CFI_RULE_OTHER;
	ra = dwarf_frame_info(frame, NULL, NULL, &signal);
	if (ra < 0 || ra >= CFI_RULE_NREGS)
		return;
	r->ra = ra;
	/* undefined return address: the outermost frame */
	if (dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) == 0 && nops == 0 &&
	    ops == ops_mem) {
		r->kind = CFI_RULE_END;
		return;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) != 0)
		return;
	if (signal) {
		/* its caller is looked up at its exact PC */
		if (nops == 2 && ops[0].atom == DW_OP_breg7 && ops[0].number == SIGFRAME_RSP &&
		    ops[1].atom == DW_OP_deref)
			r->kind = CFI_RULE_SIGNAL;
		return;
	}
	if (nops == 1 && breg(&ops[0], &reg, &off)) {
		if (reg >= CFI_RULE_NREGS || !fits_s32(off))
			return;
		r->kind = CFI_RULE_REGS;
		r->cfa_reg = reg;
		r->cfa_off = off;
	} else if ((t = plt_threshold(ops, nops)) >= 0) {
		r->kind = CFI_RULE_PLT;
		r->cfa_off = t;
	} else {
		return;
	}
	for (int regno = 0; regno < CFI_RULE_NREGS; regno++)
		reg_rule(frame, regno, r);
}

bool cfi_rule_lookup(Dwarf_CFI *eh, uint64_t eh_addr, Dwarf_CFI *debug, uint64_t debug_addr,
		     struct cfi_rule *r, uint64_t range[2])
{
	Dwarf_Frame *frame;
	Dwarf_Addr lo, hi;

	if ((!eh || dwarf_cfi_addrframe(eh, eh_addr, &frame) != 0) &&
	    (!debug || dwarf_cfi_addrframe(debug, debug_addr, &frame) != 0)) {
		memset(r, 0, sizeof(*r));
		r->kind = CFI_RULE_OTHER;
		return false;
	}
	cfi_rule_of_frame(frame, r);
	if (range) {
		if (dwarf_frame_info(frame, &lo, &hi, NULL) < 0)
			lo = hi = 0;
		range[0] = lo;
		range[1] = hi;
	}
	free(frame);
	return true;
}

bool cfi_rule_equal(const struct cfi_rule *a, const struct cfi_rule *b)
{
	if (a->kind != b->kind || a->ra != b->ra || a->cfa_reg != b->cfa_reg ||
	    a->cfa_off != b->cfa_off)
		return false;
	for (int i = 0; i < CFI_RULE_NREGS; i++)
		if (a->reg[i].how != b->reg[i].how || a->reg[i].off != b->reg[i].off)
			return false;
	return true;
}
