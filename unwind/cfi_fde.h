/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An FDE's rows in one pass over its instructions (the FDEs themselves:
 * symbols/cfi_entries.h): the table builder's source of rules
 * (unwind/cfi_table.c).  libdw answers one address at a time
 * (dwarf_cfi_addrframe replays the FDE's program from its start up to the
 * address), so walking an FDE row by row through it costs k^2 for k rows;
 * this is linear.
 *
 * The interpreter covers what compilers and assemblers emit for x86-64:
 * the CFA as register + offset or the PLT's expression, registers saved
 * at or equal to CFA + offset, kept, lost, in another register,
 * remember/restore_state.  An FDE with anything else (another DWARF
 * expression, a signal frame's CIE, DW_CFA_set_loc, an augmentation it
 * does not know) is refused with -ENOTSUP and the caller reads that FDE
 * through libdw instead.  Where it
 * answers, the rule is the one cfi_rule_of_frame gives on libdw's frame at
 * every address (tests/unit/test_cfi_table.c checks it at every address).
 */
#ifndef COLLECTOR_CFI_FDE_H
#define COLLECTOR_CFI_FDE_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/cfi_rule.h"
#include "symbols/cfi_entries.h"

/* Called for each row of an FDE: rule holds over [lo, hi). */
typedef int (*cfi_row_fn)(void *arg, uint64_t lo, uint64_t hi, const struct cfi_rule *rule);

/* Runs fde's instructions once, calling emit for each row up to min(end,
 * cfi_fde_end(fde)).  Returns 0, emit's first non-zero return, or -ENOTSUP
 * (before any call) for an FDE the interpreter does not cover. */
int cfi_fde_rows(const struct cfi_fdes *fdes, const struct cfi_fde *fde, uint64_t end,
		 cfi_row_fn emit, void *arg);

#endif /* COLLECTOR_CFI_FDE_H */
