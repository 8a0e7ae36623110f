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
 *   unwind_files.c  those rules from the files' .eh_frame, without libdw
 */
#ifndef COLLECTOR_UNWIND_INTERNAL_H
#define COLLECTOR_UNWIND_INTERNAL_H

#include <elfutils/libdwfl.h>

#include "lib/hashmix.h"
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

/* Cached frame rules, one table for every process (lib/hashtab.h): rules
 * are the files', keyed by file and offset, so the processes of one program
 * share them.  It grows up to this many rules and is then emptied when it
 * fills (that many distinct sampled PCs come from huge programs, or
 * garbage unwound): 3/4 of 1 << 16 slots of 96 bytes, 6 MB at most. */
#define RULES_MAX 49152

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
	uint64_t key;        /* rule_key(): the file and the offset in it */
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
	/* the high bits (the file) mixed in too */
	return hash_mix64(r->key);
}

static inline uint64_t rule_key_hash(const uint64_t *key)
{
	return hash_mix64(*key);
}

static inline bool frame_rule_match(const struct frame_rule *r, const uint64_t *key)
{
	return r->key == *key;
}

HASHTAB_DEFINE(rule_cache, struct frame_rule, uint64_t, frame_rule_hash, rule_key_hash,
	       frame_rule_match)

/* A mapped file, as stat() says it is: a file rebuilt under the same inode
 * (a build's output, deleted and written again) is another file. */
struct file_id {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	uint32_t number;     /* the file's number in rule keys, from 1 */
};

static inline uint64_t file_id_hash_key(const struct file_id *f)
{
	return hash_finish(hash_word(hash_word(hash_word(hash_word(0, f->dev), f->ino), f->size),
				     (uint64_t)f->mtime_ns));
}

static inline uint64_t file_id_hash(const struct file_id *f)
{
	return file_id_hash_key(f);
}

static inline bool file_id_match(const struct file_id *a, const struct file_id *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}

HASHTAB_DEFINE(file_ids, struct file_id, struct file_id, file_id_hash, file_id_hash_key,
	       file_id_match)

/* The file number of the vDSO (the same image in every process). */
#define FILE_NUMBER_VDSO 1
/* Not known yet, or no file whose rules can be shared. */
#define FILE_NUMBER_UNKNOWN 0
#define FILE_NUMBER_NONE UINT32_MAX
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
	/* the last frame's pc, sp and rbp (0: not known), for
	 * unwinder_last_frame() */
	uint64_t last_pc, last_sp, last_bp;

	/* the mappings of the sample being unwound, and the file number of
	 * each (FILE_NUMBER_UNKNOWN until a frame needs it), valid for
	 * maps_wanted */
	const struct unwind_mapping *maps;
	size_t n_maps;
	uint64_t maps_wanted;
	uint32_t *file_numbers;
	const char **file_paths; /* the path each file number was found by */
	size_t n_file_numbers;
	uint64_t file_numbers_version;
	struct frame_rule scratch; /* the rule of a PC in no shared file */
	int dwfl_err;              /* this sample's attempt at a Dwfl failed */

	/* is_outermost() by PC, valid for the current Dwfl; pc 0 = empty */
	struct {
		uint64_t pc;
		bool outermost;
	} outermost_cache[OUTERMOST_CACHE];
};

struct unwinder {
	struct unwind_proc **procs;
	size_t n_procs, cap_procs;
	size_t live;             /* procs with a Dwfl */
	uint64_t clock;          /* for least-recently-used eviction */
	int vdso_fd;             /* memfd holding our vDSO, -1 if none, -2 untried */
	struct elf_file vdso;    /* its image, when vdso_fd >= 0 */
	bool no_rule_cache;      /* every sample through libdw (for checking) */
	struct rule_cache rules; /* every process's, keyed by file and offset */
	struct file_ids files;   /* the files those keys number */
	uint32_t n_files;
	struct rule_file **rule_files; /* by number: unwind_files.c */
	size_t n_rule_files;
	struct unwinder_stats stats;
	unwind_stop_fn stop;     /* where a walk ends for another to go on */
	void *stop_ctx;
};

/* unwind.c */
/* p's Dwfl for the mappings of the sample being unwound, built now if it
 * is not yet: the cached walk needs it only for a rule not cached or a
 * read outside the stack copy.  0 or a negative errno. */
int unw_need_dwfl(struct unwinder *u, struct unwind_proc *p);

/* Whether the separate debug file of build-id id[0..len) (where libdw
 * looks for it by default) has a .debug_frame: the one part of it that
 * libdw's unwinder is given (unwind_dwfl.c). */
bool unw_debug_file_has_debug_frame(const uint8_t *id, size_t len);

/* unwind_files.c */
struct rule_file;
/* The rule at file offset off of the file of number (>
 * FILE_NUMBER_VDSO), which path opens, from its .eh_frame without libdw:
 * FILE_RULE_FOUND with it in *rule; FILE_RULE_NONE where the file has no
 * FDE for that code (ld.so's _start, code written in assembler without
 * CFI) and neither it nor its debug file has a .debug_frame; FILE_RULE_UNKNOWN where this cannot answer (an FDE the
 * interpreter leaves to libdw, a file it cannot read). */
enum file_rule { FILE_RULE_FOUND, FILE_RULE_NONE, FILE_RULE_UNKNOWN };
enum file_rule unw_file_rule(struct unwinder *u, uint32_t number, const char *path, uint64_t off,
			     struct cfi_rule *rule);
/* The 8 bytes at file offset off of the file of number (> FILE_NUMBER_VDSO),
 * when a PT_LOAD segment holds them there; false otherwise. */
bool unw_file_word(struct unwinder *u, uint32_t number, const char *path, uint64_t off,
		   uint64_t *out);
void unw_files_free(struct unwinder *u);
/* How many files' FDE lists are held. */
uint64_t unw_files_open(const struct unwinder *u);

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
