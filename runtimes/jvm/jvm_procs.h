/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The HotSpot JVMs whose Java frames the BPF walker emits (bpf/hotspot.h),
 * and their frames named: what runtimes/jvm/jvm_ops.c puts behind the
 * runtimes' interface (runtimes/runtime.h).
 *
 * - Finding them: jvm_procs_image() is told each image a process maps;
 *   a libjvm.so that exports vmStructs is HotSpot's.  Its layout is read
 *   once a process (hotspot_structs.h), and the walker's record
 *   (struct collector_hotspot_proc) is filled and given to the BPF side
 *   through struct runtime_bpf, by frame kind COLLECTOR_FRAME_JAVA.  A JVM
 *   met before its code cache and its interpreter exist (a `collector --
 *   java` run meets libjvm.so at the launcher's dlopen) is "waiting": 0,
 *   the layout kept, and the record filled when the image is told again
 *   (the engine reads such a process's mappings again, see
 *   jvm_procs_maps_later()); so is one whose tables do not read yet (met
 *   in the middle of its dlopen, before ld.so relocated libjvm.so), for
 *   half a second.  A JVM the walk does not know (its vmStructs lack a
 *   field: -EPROTO; before 17) is "unsupported": -ENOTSUP, the
 *   reason kept for the summary, and its JIT code is named as before, by
 *   the perf map its attach is asked for.
 * - Naming frames: an INTERP frame is its Method* (hotspot_names.h) at the
 *   line of its bci; a COMPILED frame's pc is looked up in the code cache
 *   (the segment map, hotspot_walk.h), the nmethod's compile id checked
 *   against the frame's (another one there: the code was freed and its
 *   space reused, -ESTALE) and its scopes at that pc become the frame's
 *   methods, innermost first.  Each frame is named once per process and
 *   kept (by its 64-bit value: pc, compile id and top bit, or Method* and
 *   bci), and the names stay after the process exits or its pid is taken
 *   by another (the strings live as long as the table).
 */
#ifndef COLLECTOR_JVM_PROCS_H
#define COLLECTOR_JVM_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/hotspot.h"
#include "runtimes/jvm/hotspot_structs.h"
#include "runtimes/runtime.h"

struct jvm_procs;

/* bpf may be NULL: nothing is walked, frames are still named. */
struct jvm_procs *jvm_procs_new(const struct runtime_bpf *bpf);
void jvm_procs_free(struct jvm_procs *jp);

/* Image img of process pid (runtimes/runtime.h; its vmStructs symbols
 * read once a file, in its record): 1 when it is
 * HotSpot's libjvm.so and the process is walked from now on; 0 when it is
 * not one, or the process is walked already or known unsupported, or its
 * code cache is not set up yet (then jvm_procs_waiting() is true); a
 * negative errno: -ENOTSUP for a JVM the walk does not know (the reason
 * in the stats), or what the set() of the BPF side returned, or -ESRCH,
 * -EFAULT when the process did not read. */
int jvm_procs_image(struct jvm_procs *jp, const struct proc_ref *p,
		    const struct runtime_image *img);
/* Process pid as walked with layout l and record rec (what
 * jvm_procs_image() does once both are read; the tests' way in).  1, or
 * a negative errno. */
int jvm_procs_add(struct jvm_procs *jp, const struct proc_ref *p, const struct hotspot_layout *l,
		  const struct collector_hotspot_proc *rec);

/* Whether the image at path is a JVM's libjvm.so (by its name). */
bool jvm_procs_is_libjvm(const char *path);
/* Whether an executable at path maps libjvm.so after its exec, so that
 * its process's mappings are read again until the JVM is walked: the java
 * launcher (basename "java"), ld.so run as a command (build/jdks/run.sh's
 * JDKs), or, whatever its path, a process whose libjvm.so was met before
 * its code cache was set up: the last one jvm_procs_image() met so (the
 * engine asks right after telling the process's images, decode/
 * tracker_runtimes.c's find_runtime()). */
bool jvm_procs_maps_later(struct jvm_procs *jp, const char *path);
/* The executables of the first kind: whether path is a java launcher or
 * ld.so (no state). */
bool jvm_procs_is_launcher(const char *path);
/* Whether process pid's libjvm.so was met before its code cache was set up
 * and the process is not walked yet. */
bool jvm_procs_waiting(const struct jvm_procs *jp, const struct proc_ref *p);

bool jvm_procs_known(const struct jvm_procs *jp, const struct proc_ref *p);  /* walked, or was */
bool jvm_procs_has(const struct jvm_procs *jp, const struct proc_ref *p);    /* walked now */
/* Whether the BPF side walks process pid (a table opened without one,
 * --no-jvm-walk, names frames but walks none: the attach names its JIT
 * code then). */
bool jvm_procs_in_bpf(const struct jvm_procs *jp, const struct proc_ref *p);
size_t jvm_procs_live(const struct jvm_procs *jp);
/* Process pid exited or exec'd: its entry of the BPF side goes; the names
 * of its frames stay (sums decoded at the end of a run name them). */
void jvm_procs_forget(struct jvm_procs *jp, const struct proc_ref *p);
/* Process record word `word` dropped (runtimes/runtime.h, drop()): its
 * names and frames go, its entry to be reused. */
void jvm_procs_drop(struct jvm_procs *jp, uint32_t word);

/* JAVA frame `frame` of process pid named into out[0..max), innermost
 * first (runtime_frame_ops.frame_name's contract): n >= 1, or a negative
 * errno: -ESTALE (the code freed, its space reused), -ENOENT (no method at
 * that pc), -ESRCH (a process never walked, or gone before the frame was
 * named), -EFAULT, -EINVAL. */
int jvm_procs_frame(struct jvm_procs *jp, const struct proc_ref *p, uint64_t frame,
		    struct runtime_frame *out,
		    uint32_t max);

/* A stack copy's Java frames (runtime_ops.owns_pc and walk_copy): whether
 * pc of process pid (walked, or known) is in its code cache, and its
 * frames walked in user space (hotspot_walk.h, the BPF walk's steps) from
 * regs, reading the copy stack[0..stack_len) from stack_sp, else the live
 * process.  Returns the frames written into frames[0..max); *left and regs
 * as walk_copy's contract says. */
bool jvm_procs_owns_pc(const struct jvm_procs *jp, const struct proc_ref *p, uint64_t pc);
int jvm_procs_walk_copy(const struct jvm_procs *jp, const struct proc_ref *p,
			struct runtime_regs *regs,
			bool first, const uint8_t *stack, uint64_t stack_sp, size_t stack_len,
			uint64_t *frames, uint32_t max, bool *left);

#define JVM_PROCS_RELEASES 4

struct jvm_procs_stats {
	uint32_t walked;         /* JVMs walked */
	uint32_t unsupported;    /* JVMs the walk does not know */
	char last_reason[192];   /* why, of the last one */
	/* the releases walked, "17.0.15", at most JVM_PROCS_RELEASES */
	char releases[JVM_PROCS_RELEASES][24];
	uint32_t n_releases;
	uint64_t frames_named, frames_failed; /* distinct frames */
	uint32_t images_read;    /* libjvm.so files read for their vmStructs */
};
const struct jvm_procs_stats *jvm_procs_stats(const struct jvm_procs *jp);

#endif /* COLLECTOR_JVM_PROCS_H */
