/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CFI stack unwinding of user-mode samples (x86-64), for code built without
 * frame pointers.
 *
 * A sample carries the registers CFI needs (ip, sp, and the callee-saved
 * rbp, rbx, r12-r15) and a copy of the top of the user stack from sp.  The
 * unwinder replays the .eh_frame / .debug_frame rules of every frame with
 * libdw's unwinder (dwfl_attach_state and dwfl_getthread_frames), reading
 * memory from the stack copy, or, for the text and data of a mapped ELF
 * image, from the file itself; nothing else is readable.
 *
 * One Dwfl is kept per process (found by the unwinder's word in the
 * caller's record of it, lib/proc_ref.h), built from the mappings the caller passes
 * and rebuilt only when their version changes, so every image is opened and
 * its CFI parsed once per process and not per sample.  The CFI rules of
 * each PC are cached with it (see unwinder_use_rule_cache).
 *
 * Independent of libbpf and of the ring-buffer record layout.
 */
#ifndef COLLECTOR_UNWIND_H
#define COLLECTOR_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/proc_ref.h"

/* The user-mode registers of the sampled thread. */
struct unwind_regs {
	uint64_t ip, sp, bp, bx, r12, r13, r14, r15;
};

/*
 * One mapping of the process.  `path` names the file to open (for instance
 * /proc/PID/map_files/START-END, or /proc/PID/root/PATH): it must be an ELF
 * file for the mapping to be unwound through.  "[vdso]" stands for the
 * kernel's vDSO, which is the same image in every 64-bit process, so the
 * collector's own copy is used.  NULL, "" and any other name (anonymous
 * memory, JIT code, "[stack]") are skipped.  Several mappings of one file
 * (its text, rodata, data segments) are fine: the file is reported once.
 */
struct unwind_mapping {
	uint64_t start, end;  /* runtime addresses [start, end) */
	uint64_t pgoff;       /* file offset of start */
	const char *path;
	/* The file as the process's maps name it (NULL: unknown), and its
	 * device and inode there: once the process has exited, its /proc
	 * paths are gone, and the file is found under this name when it is
	 * the same file here (the same mount namespace). */
	const char *name;
	uint64_t dev, inode;
};

struct unwinder_stats {
	uint64_t unwinds;        /* unwinder_unwind calls that reached the CFI */
	uint64_t complete;       /* ... of which reached the outermost frame */
	uint64_t cached;         /* ... of which walked with cached rules only */
	uint64_t rules;          /* distinct PCs whose CFI was looked up */
	uint64_t rules_from_files; /* ... of which from the file's .eh_frame, without libdw */
	uint64_t dwfl_builds;    /* per-process Dwfl (re)built */
	uint64_t dwfl_evictions; /* dropped to stay under the process limit */
	uint64_t images_failed;  /* mappings whose file could not be used */
	uint64_t frames;         /* frames returned in total */
	uint64_t files_open;     /* files whose FDE list is held now */
};

struct unwinder;

struct unwinder *unwinder_new(void);

/*
 * Unwinds one sample of process p.  maps[0..n_maps) are the process's
 * mappings (any order); `maps_version` must change whenever they change
 * (a counter global to the run is simplest: a reused pid then gets a new
 * version too): the process's Dwfl is rebuilt then, and only then.  The
 * files are opened when the Dwfl is built (see unwinder_prepare), not per
 * sample.  stack[0..stack_len) is the copy of user
 * memory from regs->sp up (a partial copy passes its real length).
 *
 * Writes ips[0] = regs->ip, then one entry per caller: the return address,
 * as a frame-pointer walk gives (the caller resolves return address - 1).
 * A frame that was interrupted by a signal (its callee is a signal
 * trampoline) holds its exact PC, so ips[i] is that PC + 1 to keep the
 * convention.  Returns the number of frames (>= 1 when max_ips >= 1), or a
 * negative errno (-EINVAL: bad arguments, -ENOMEM).
 *
 * *complete is true when the walk ended at the outermost frame (its CFI
 * says the return address is undefined: _start, clone's child, thread
 * start), false when it gave up early: stack copy too short, no CFI for a
 * PC, unreadable memory, garbage, or max_ips reached.
 */
int unwinder_unwind(struct unwinder *u, const struct proc_ref *p, uint64_t maps_version,
		    const struct unwind_mapping *maps, size_t n_maps,
		    const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len,
		    uint64_t *ips, size_t max_ips, bool *complete);

/*
 * Code the unwinder does not walk through: a pc for which stop() says true
 * (a JVM's code cache, whose frames another walker steps) ends the walk at
 * its frame, whose registers unwinder_last_frame() then gives, where
 * libdw would have gone on by frame pointer (wrong through compiled Java
 * code, which keeps none) or stopped.  NULL: none.
 */
typedef bool (*unwind_stop_fn)(void *ctx, pid_t pid, uint64_t pc);
void unwinder_set_stop(struct unwinder *u, unwind_stop_fn stop, void *ctx);

/*
 * The last frame of process p's last unwinder_unwind(): its pc (exact,
 * not + 1) and its sp and rbp as the CFI recovered them (rbp 0 when it
 * did not), so that another walker can go on where this one stopped (a
 * JVM's Java frames, which have no CFI).  false when they are not known.
 */
bool unwinder_last_frame(const struct unwinder *u, const struct proc_ref *p,
			 struct unwind_regs *out);

/*
 * Builds (or keeps) the process's Dwfl for these mappings now, without a
 * sample.  Every image is opened at once and stays open, so call this when
 * the mappings are read, while /proc/PID/map_files still exists: samples
 * of a process that exited before they were unwound still unwind.
 * Returns 0 or a negative errno.
 */
int unwinder_prepare(struct unwinder *u, const struct proc_ref *p, uint64_t maps_version,
		     const struct unwind_mapping *maps, size_t n_maps);

/* The process exited (or exec'd): its Dwfl and entry go, and its word in
 * its record is 0 again. */
void unwinder_forget(struct unwinder *u, const struct proc_ref *p);

/* Closes the files whose .eh_frame no rule was looked up in since the last
 * call, and frees their FDE lists (the rules found stay cached; a new PC
 * opens the file again).  For continuous runs, at each interval's cut:
 * the lists of the images met once (a build's tools at the start) were
 * held for the whole run, the largest part of its heap at its peak
 * (heaptrack: 16 MiB of FDE lists with the symbolizer's). */
void unwinder_release_files(struct unwinder *u);

/*
 * On by default: the CFI of each distinct PC is reduced once to "CFA =
 * register + offset, registers saved at CFA + offset", and frames of that
 * shape are walked without libdw; others (DWARF expressions, signal
 * frames, no CFI) send the sample through libdw.  Off: every sample goes
 * through libdw, which the tests use to check the cache against.
 */
void unwinder_use_rule_cache(struct unwinder *u, bool on);

void unwinder_get_stats(const struct unwinder *u, struct unwinder_stats *out);

void unwinder_free(struct unwinder *u);

#endif /* COLLECTOR_UNWIND_H */
