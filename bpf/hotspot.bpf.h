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

/* What a step needs of a blob, from its head (bpf/hotspot.h, step 3). */
struct hs_blob_facts {
	u64 blob;
	u64 name8;          /* the first 8 bytes of its name: its kind */
	u64 check;          /* what tells it still stands at blob: its compile
			     * id (an nmethod's: unique in the JVM's life), else
			     * its name pointer */
	u64 deopt_handler;  /* an nmethod's */
	u64 code_begin, code_end;
	s32 frame_size;
	s32 compile_id;
	s32 orig_pc_offset;
	u32 pad;
};

struct hs_blob_key {
	u32 tgid;
	u32 pad;
	u64 pc;
};

/*
 * The facts of the blob of a return address in a JVM's code, by process
 * and pc, kept by the JVM's programs: most return addresses come again
 * sample after sample (a call site's), and their blob costs the segment
 * map's hops, the blob's head (128-192 bytes) and its name otherwise.  A
 * hit reads one word of the blob to check that it still stands there
 * (code freed and another blob put in its place: the entry is dropped).
 * The walks' own: the loader gives the object loaded at the start one
 * entry, and the JVM's walks (loaded when met) theirs.  Not for first
 * frames: an interrupted pc is any instruction, and its frame may be
 * partial (the code at pc read).
 */
#define HS_BLOB_FACTS_ENTRIES 8192
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, HS_BLOB_FACTS_ENTRIES);
	__type(key, struct hs_blob_key);
	__type(value, struct hs_blob_facts);
} hotspot_blob_facts SEC(".maps");

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
	struct hs_blob_facts facts; /* the frame's blob */
	struct hs_blob_key key;     /* its pc's in hotspot_blob_facts */
};

#endif /* COLLECTOR_HOTSPOT_BPF_H */
