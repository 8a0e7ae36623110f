/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HotSpot in the cfi walk: the JVMs' records (bpf/hotspot.h: the record,
 * the walk step for step, the frames emitted), and the room a step
 * works in.  The step itself is hotspot_walk.bpf.h's, called by the
 * JVM's walk (unwind_walk.bpf.h's unwind_frame_java()) for each frame
 * whose pc is in a JVM's code cache, so that Java frames stand in place
 * among the native ones and the native walk goes on where the Java frames
 * end (call_stub, in libjvm.so, down to the thread's start).  That walk
 * is sample_java for samples and offcpu_java for switch-outs, programs
 * reached by tail call where the native walk meets a JVM's code, loaded
 * when the run meets its first JVM.
 *
 * Included by unwind.bpf.h, before struct cfi_walk, which holds the
 * scratch.
 */
#ifndef COLLECTOR_HOTSPOT_BPF_H
#define COLLECTOR_HOTSPOT_BPF_H

#include "hotspot.h"

/* Whether the native walk stops at a JVM's code for the JVM's programs
 * (sample_java, offcpu_java: the only ones that walk its frames; false:
 * --no-jvm-walk, the code cache is a frame like any other). */
const volatile bool hand_off_java = false;

/* The JVMs walked, by tgid, written by the loader through the JVM
 * runtime (runtimes/jvm/, loader/runtime_procs.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	/* written when a JVM is met, any time in a run: not preallocated
	 * (255 KiB at every start) */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u32);
	__type(value, struct collector_hotspot_proc);
} hotspot_procs SEC(".maps");

/* A frame's registers as a step goes from callee to caller. */
struct hs_regs {
	u64 pc, sp, fp;
};

/* What a step reads, in map memory: more than the BPF stack holds. */
struct hotspot_scratch {
	u8 blob[COLLECTOR_HOTSPOT_BLOB_READ]; /* the blob's head */
	u64 words[16];    /* an interpreted frame's slots, fp - 64 on */
	u8 code[8];       /* the code at a first frame's pc */
	u64 name8;        /* the first 8 bytes of the blob's name */
	u64 r13;          /* the interrupted r13: the interpreter's bcp */
	u8 in_java;       /* the last frame stepped was a Java one */
	u8 pad[7];
	struct hs_regs regs; /* the step's registers */
	u64 orig_pc;      /* a deoptimized frame's pc, as saved */
};

#endif /* COLLECTOR_HOTSPOT_BPF_H */
