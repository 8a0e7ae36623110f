/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwinder's own parts, shared by its files and by no one else:
 *
 *   unwind.c        processes (one Dwfl each, rebuilt when the mappings
 *                   change, the least recently used dropped past a limit)
 *                   and the walk of a sample: cached rules, else libdw
 *   unwind_dwfl.c   the libdw session of a process: its images reported
 *                   to a Dwfl, memory reads, the thread callbacks
 *   unwind_rules.c  the rule cache: the CFI of each PC reduced once to a
 *                   rule, and the walk that applies the rules
 */
#ifndef COLLECTOR_UNWIND_INTERNAL_H
#define COLLECTOR_UNWIND_INTERNAL_H

#include <elfutils/libdwfl.h>

#include "lib/hashtab.h"
#include "lib/idmap.h"
#include "unwind/cfi_rule.h"
#include "symbols/elfinfo.h"
#include "unwind/unwind.h"

/* Live Dwfls kept at once: each holds its images open, so a system-wide run
 * over thousands of processes must not keep them all. */
#define UNWIND_MAX_PROCS 256

/* Outermost-frame answers remembered per process: walks nearly always end
 * at the same few PCs (_start, clone3), so this saves a CFI lookup. */
#define OUTERMOST_CACHE 16

/* Registers 0-16 (rax ... r15 and the return address column): the ones
 * libdw's x86-64 unwinder tracks, so the cached walk tracks the same. */
#define FRAME_NREGS CFI_RULE_NREGS

/* Cached frame rules per process: a table (lib/hashtab.h) that grows up to
 * this many rules and is then emptied when it fills (a program has that
 * many distinct sampled PCs only when it is huge, or when garbage is
 * unwound): 3/4 of 1 << 15 slots of 89 bytes, 2.9 MB at most. */
#define RULES_MAX 24576

/* Registers of a simple frame recovered from the CFA: the return address,
 * the stack pointer and the six callee-saved registers at most, in
 * compiled code; more sends the frame to libdw. */
#define RULE_MAX_SAVED 8

enum rule_kind {
	RULE_SIMPLE, /* CFA = register + offset, registers as below */
	RULE_LIBDW,  /* no CFI, a DWARF expression, a signal frame: libdw walks */
};

/*
 * The rule of one PC (unwind/cfi_rule.h, reduced once per distinct PC)
 * in the shape nearly all compiled code has, so that a frame costs a hash
 * lookup and a few reads instead of a CFI evaluation: the cached walk
 * applies it as libdw's unwinder would (frame_unwind.c's handle_cfi: same
 * registers, same outcome for unset ones).  Anything of another shape is
 * RULE_LIBDW and the whole sample goes through libdw.
 */
struct frame_rule {
	uint64_t pc;         /* runtime address the CFI was looked up at */
	int32_t cfa_off;
	uint32_t same;       /* registers that keep the callee's value */
	uint8_t kind;        /* enum rule_kind */
	uint8_t cfa_reg;
	uint8_t ra;          /* return address column */
	bool outermost;      /* CFI says the return address is undefined */
	uint8_t n_saved;
	struct {
		int32_t off;
		uint8_t reg;
		bool value;  /* the register is CFA + off, not saved there */
	} saved[RULE_MAX_SAVED]; /* every other register is unset */
};

static inline uint64_t frame_rule_hash(const struct frame_rule *r)
{
	/* the high bits mixed in too: PCs of several images share low bits */
	return hash_mix64(r->pc);
}

static inline uint64_t pc_hash(const uint64_t *pc)
{
	return hash_mix64(*pc);
}

static inline bool frame_rule_match(const struct frame_rule *r, const uint64_t *pc)
{
	return r->pc == *pc;
}

HASHTAB_DEFINE(rule_cache, struct frame_rule, uint64_t, frame_rule_hash, pc_hash, frame_rule_match)

struct unwind_proc {
	pid_t pid;
	uint64_t maps_version;
	uint64_t last_use;
	Dwfl *dwfl;              /* NULL when evicted or never built */
	bool attached;           /* dwfl_attach_state succeeded */
	struct unwinder *u;

	/* the sample being unwound */
	const struct unwind_regs *regs;
	const uint8_t *stack;
	size_t stack_len;
	uint64_t *ips;
	size_t max_ips, n;
	bool full;
	uint64_t last_lookup_pc; /* PC whose CFI gives the last frame's caller */

	/* frame rules by PC, valid for the current Dwfl */
	struct rule_cache rules;

	/* is_outermost() by PC, valid for the current Dwfl; pc 0 = empty */
	struct {
		uint64_t pc;
		bool outermost;
	} outermost_cache[OUTERMOST_CACHE];
};

struct unwinder {
	struct idmap by_pid;     /* pid -> index in procs */
	struct unwind_proc **procs;
	size_t n_procs, cap_procs;
	size_t live;             /* procs with a Dwfl */
	uint64_t clock;          /* for least-recently-used eviction */
	int vdso_fd;             /* memfd holding our vDSO, -1 if none, -2 untried */
	struct elf_file vdso;    /* its image, when vdso_fd >= 0 */
	bool no_rule_cache;      /* every sample through libdw (for checking) */
	struct unwinder_stats stats;
};

/* unwind_dwfl.c */
/* Builds p->dwfl from the process's mappings (every image opened now) and
 * attaches the thread state.  0 or a negative errno; p->attached says
 * whether samples can be unwound. */
int unw_build_dwfl(struct unwinder *u, struct unwind_proc *p,
		   const struct unwind_mapping *maps, size_t n_maps);
/* Dwfl's memory_read: the stack copy, else the file of a mapped image. */
bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg);

/* unwind_rules.c */
/* The rule of the first CFI that covers pc in dwfl's modules, .eh_frame
 * then .debug_frame, as libdw's unwinder looks them up; false where none
 * does. */
bool unw_cfi_rule(Dwfl *dwfl, uint64_t pc, struct cfi_rule *rule);
/* Walks p's sample with cached rules.  Returns the number of frames in
 * p->ips, with *complete set as the libdw walk would set it, or 0 when a
 * frame needs libdw (then the whole sample goes through libdw). */
size_t unw_walk_rules(struct unwinder *u, struct unwind_proc *p, bool *complete);

#endif /* COLLECTOR_UNWIND_INTERNAL_H */
