/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reduction of an address's CFI (x86-64) to the rule an unwinder
 * applies: the CFA as register + offset (or the PLT's CFA expression), and
 * for each of the registers 0-16 (rax ... r15 and the return address
 * column, the ones libdw's x86-64 unwinder tracks) whether the caller's
 * value is kept, lost, saved at CFA + offset or equal to CFA + offset;
 * or a signal frame (the kernel's rt_sigframe at rsp), or the outermost
 * frame (the return address is undefined), or a shape no cached walk
 * replays (a DWARF expression, another return address column).
 *
 * Both unwinders use it: the table builder for the BPF unwinder
 * (unwind/cfi_table.c encodes a rule as an 8-byte row, cfi_row_of_rule)
 * and the user-space unwinder's rule cache (unwind/unwind_rules.c).  The
 * rules come from libdw (cfi_rule_of_frame on a Dwarf_Frame) or from the
 * table builder's own pass over an FDE's instructions (cfi_fde.h), which
 * must give the same rule at every address.
 */
#ifndef COLLECTOR_CFI_RULE_H
#define COLLECTOR_CFI_RULE_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

/* x86-64 DWARF register numbers (System V psABI, figure 3.36). */
enum {
	CFI_REG_RBX = 3,
	CFI_REG_RBP = 6,
	CFI_REG_RSP = 7,
	CFI_REG_R12 = 12,
	CFI_REG_R13 = 13,
	CFI_REG_R14 = 14,
	CFI_REG_R15 = 15,
	CFI_REG_RIP = 16,
};

#define CFI_RULE_NREGS 17

enum cfi_rule_kind {
	CFI_RULE_OTHER = 0, /* no CFI, or a shape neither unwinder replays */
	CFI_RULE_REGS,      /* CFA = cfa_reg + cfa_off, registers as in reg[] */
	CFI_RULE_PLT,       /* CFA = rsp + 8, + 8 once (rip & 15) >= cfa_off */
	CFI_RULE_SIGNAL,    /* __restore_rt: the CFA read at rsp + 160 */
	CFI_RULE_END,       /* outermost: the return address is undefined */
};

/* How a register of the caller is recovered. */
enum cfi_reg_how {
	CFI_HOW_UNDEFINED = 0, /* lost (unset) */
	CFI_HOW_SAME,          /* the callee's value */
	CFI_HOW_AT,            /* saved at CFA + off */
	CFI_HOW_VALUE,         /* is CFA + off */
	CFI_HOW_OTHER,         /* an expression, another register */
};

struct cfi_rule {
	uint8_t kind;      /* enum cfi_rule_kind */
	uint8_t ra;        /* return address column (REGS, PLT, END) */
	uint8_t cfa_reg;   /* REGS */
	int32_t cfa_off;   /* REGS: the offset; PLT: the threshold */
	struct {
		uint8_t how; /* enum cfi_reg_how */
		int32_t off;
	} reg[CFI_RULE_NREGS]; /* REGS and PLT */
};

/* The rule of a frame libdw computed (dwarf_cfi_addrframe). */
void cfi_rule_of_frame(Dwarf_Frame *frame, struct cfi_rule *r);

/* The rule at addr: .eh_frame's (eh), else .debug_frame's (debug), either
 * may be NULL; addresses are each CFI's own (link-time less its bias).
 * Returns false, with r->kind CFI_RULE_OTHER, where neither covers it.
 * When range is not NULL, [range[0], range[1]) is where the CFI gives the
 * same rule (one row of its FDE). */
bool cfi_rule_lookup(Dwarf_CFI *eh, uint64_t eh_addr, Dwarf_CFI *debug, uint64_t debug_addr,
		     struct cfi_rule *r, uint64_t range[2]);

/* Whether two rules recover every register the same way. */
bool cfi_rule_equal(const struct cfi_rule *a, const struct cfi_rule *b);

#endif /* COLLECTOR_CFI_RULE_H */
