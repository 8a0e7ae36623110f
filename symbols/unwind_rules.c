// SPDX-License-Identifier: GPL-2.0
/*
 * The rule cache: the CFI of each distinct PC reduced once to "CFA =
 * register + offset, registers saved at CFA + offset" (struct frame_rule,
 * symbols/unwind_internal.h), and the walk that applies those rules as
 * libdw's unwinder would, without libdw.  A frame of another shape sends
 * the whole sample to libdw.
 */
#include "symbols/unwind_internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Reads a CFA rule of the shape "register + offset". */
static bool simple_cfa(Dwarf_Frame *frame, struct frame_rule *r)
{
	Dwarf_Op *ops;
	size_t nops;
	uint64_t reg;
	int64_t off;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return false;
	}
	if (reg >= FRAME_NREGS || !fits_s32(off))
		return false;
	r->cfa_reg = reg;
	r->cfa_off = off;
	return true;
}

/* Reduces the CFI of one PC to a frame_rule; false when it has another
 * shape.  The cases follow libdw's handle_cfi, which the walk replaces. */
static bool simple_rule(Dwarf_Frame *frame, struct frame_rule *r)
{
	bool signal = false;
	int ra = dwarf_frame_info(frame, NULL, NULL, &signal);

	/* a signal frame's caller is looked up at its exact PC: libdw's job */
	if (ra < 0 || ra >= FRAME_NREGS || signal || !simple_cfa(frame, r))
		return false;
	r->ra = ra;
	r->outermost = false;
	r->same = 0;
	r->n_saved = 0;
	for (int regno = 0; regno < FRAME_NREGS; regno++) {
		Dwarf_Op ops_mem[3], *ops;
		size_t nops, i = 1;
		int64_t off = 0;
		bool value = false;

		/* an error leaves the register unset, as in libdw */
		if (dwarf_frame_register(frame, regno, ops_mem, &ops, &nops) != 0)
			continue;
		if (nops == 0) {
			/* ops_mem: undefined; NULL: same value; else invalid */
			if (ops == NULL)
				r->same |= 1u << regno;
			if (regno == ra && ops == ops_mem)
				r->outermost = true;
			continue;
		}
		/* offset(N) and val_offset(N) come as call_frame_cfa, then
		 * plus_uconst N unless N is 0, then stack_value for a value */
		if (ops[0].atom != DW_OP_call_frame_cfa)
			return false;
		if (i < nops && ops[i].atom == DW_OP_plus_uconst)
			off = (int64_t)ops[i++].number;
		if (i < nops && ops[i].atom == DW_OP_stack_value) {
			value = true;
			i++;
		}
		if (i != nops || !fits_s32(off) || r->n_saved == RULE_MAX_SAVED)
			return false;
		r->saved[r->n_saved].off = off;
		r->saved[r->n_saved].reg = regno;
		r->saved[r->n_saved].value = value;
		r->n_saved++;
	}
	return true;
}

/* The rule for `pc`, from the first CFI that covers it, .eh_frame then
 * .debug_frame, as libdw's unwinder looks them up. */
static void compute_rule(Dwfl *dwfl, uint64_t pc, struct frame_rule *r)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);

	r->pc = pc;
	r->kind = RULE_LIBDW;
	if (!mod)
		return; /* no module: libdw tries the frame-pointer chain */
	for (int pass = 0; pass < 2; pass++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = pass == 0 ? dwfl_module_eh_cfi(mod, &bias)
					   : dwfl_module_dwarf_cfi(mod, &bias);
		Dwarf_Frame *frame;

		if (!cfi || pc < bias || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
			continue;
		if (simple_rule(frame, r))
			r->kind = RULE_SIMPLE;
		free(frame);
		return;
	}
}

/* The cached rule for `pc`, computed on first use; NULL without memory. */
static const struct frame_rule *get_rule(struct unwinder *u, struct unwind_proc *p, uint64_t pc)
{
	uint64_t h = pc_hash(&pc);
	struct frame_rule *r = rule_cache_find_hashed(&p->rules, h, &pc);

	if (r)
		return r;
	if (p->rules.len >= RULES_MAX)
		rule_cache_clear(&p->rules); /* full: start over rather than keep growing */
	r = rule_cache_insert_hashed(&p->rules, h);
	if (!r)
		return NULL;
	compute_rule(p->dwfl, pc, r);
	u->stats.rules++;
	return r;
}

/* memory_read, with the common case (the stack copy) inline */
static inline bool read_word(struct unwind_proc *p, uint64_t addr, Dwarf_Word *out)
{
	uint64_t off = addr - p->regs->sp;

	if (addr >= p->regs->sp && p->stack_len >= sizeof(*out) &&
	    off <= p->stack_len - sizeof(*out)) {
		memcpy(out, p->stack + off, sizeof(*out));
		return true;
	}
	return unw_memory_read(p->dwfl, addr, out, p);
}

/* A frame needs libdw when its rule is RULE_LIBDW, or without memory. */
size_t unw_walk_rules(struct unwinder *u, struct unwind_proc *p, bool *complete)
{
	const struct unwind_regs *in = p->regs;
	uint64_t reg[FRAME_NREGS] = { 0 };
	uint32_t valid;
	uint64_t lookup = in->ip;
	size_t n = 0;

	/* what set_initial_registers gives libdw; the PC is not register 16 */
	reg[DWARF_RBX] = in->bx;
	reg[DWARF_RBP] = in->bp;
	reg[DWARF_RSP] = in->sp;
	reg[DWARF_R12] = in->r12;
	reg[DWARF_R13] = in->r13;
	reg[DWARF_R14] = in->r14;
	reg[DWARF_R15] = in->r15;
	valid = 1u << DWARF_RBX | 1u << DWARF_RBP | 1u << DWARF_RSP | 1u << DWARF_R12 |
		1u << DWARF_R13 | 1u << DWARF_R14 | 1u << DWARF_R15;
	p->ips[n++] = in->ip;
	for (;;) {
		const struct frame_rule *r = get_rule(u, p, lookup);
		bool cfa_ok;
		uint64_t cfa;

		if (!r || r->kind != RULE_SIMPLE)
			return 0;
		if (r->outermost) {
			*complete = true;
			break;
		}
		/* the CFA is computed from the callee's registers before any
		 * changes; then each register is either kept, or recovered
		 * from the CFA, or unset */
		cfa_ok = valid & 1u << r->cfa_reg;
		cfa = reg[r->cfa_reg] + (int64_t)r->cfa_off;
		valid &= r->same;
		for (size_t i = 0; i < r->n_saved && cfa_ok; i++) {
			uint64_t addr = cfa + (int64_t)r->saved[i].off;
			unsigned int k = r->saved[i].reg;
			Dwarf_Word w;

			if (r->saved[i].value) {
				reg[k] = addr;
			} else if (read_word(p, addr, &w)) {
				reg[k] = w;
			} else {
				continue;
			}
			valid |= 1u << k;
		}
		/* an unreadable return address, or 0 (libdw's end marker),
		 * ends the walk short of the outermost frame */
		if (!(valid & 1u << r->ra) || reg[r->ra] == 0)
			break;
		if (n >= p->max_ips)
			break;
		p->ips[n++] = reg[r->ra];
		/* a return address: the call may be its function's last
		 * instruction, so its CFI is the one at pc - 1 */
		lookup = reg[r->ra] - 1;
	}
	return n;
}
