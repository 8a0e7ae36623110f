/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HotSpot (JDK 17, 21, 25 on x86_64), walked in BPF with no JVM flag: the
 * per-process record the walker reads and the frames it emits.  Plain C
 * types, for the BPF programs and user space alike.  User space fills the
 * record from the JVM's own vmStructs tables (runtimes/jvm/
 * hotspot_structs.h: hotspot_proc_fill()) and names the frames
 * (runtimes/jvm/hotspot_names.h); runtimes/jvm/hotspot_walk.c is the walk
 * below done in user space, step for step, which the BPF side mirrors.
 *
 * THE WALK.  State: pc, sp, fp (fp = rbp), and, for the first frame only,
 * r13 (the interpreter's live bytecode pointer).  The native walker (CFI or
 * frame pointers) hands over whenever pc is inside [codecache_low,
 * codecache_high); the JVM walker hands back when pc leaves it.  At most
 * COLLECTOR_HOTSPOT_MAX_FRAMES frames per hand-over, each step:
 *
 *  1. Heap.  pc in [codecache_low, codecache_high), else hand back ("not
 *     mine": native code, libjvm.so, a thread start).  The heap i of
 *     heaps[0..n_heaps) with heaps[i].low <= pc < heaps[i].high (a loop of
 *     COLLECTOR_HOTSPOT_MAX_HEAPS); none: stop (a hole between heaps).
 *  2. Blob.  seg = (pc - low) >> segment_shift; loop at most
 *     COLLECTOR_HOTSPOT_SEGMAP_HOPS times: b = segmap[seg] (one byte read);
 *     b == 0xff: stop (free segment); b == 0: found; else seg -= b.  Not
 *     found within the bound: stop.  blob = low + (seg << segment_shift) +
 *     heapblock_size (the HeapBlock header precedes the CodeBlob).
 *  3. Read the blob's head (COLLECTOR_HOTSPOT_BLOB_READ bytes, one read
 *     into a per-CPU scratch buffer: more than the BPF stack holds; on a
 *     failed read, half as much, down to 128): name pointer at
 *     blob_name; frame_size (int, words) at blob_frame_size;
 *     frame_complete_offset (int, or int16_t when
 *     blob_frame_complete_width is 2: JDK 25) at blob_frame_complete; code begin at
 *     blob_code_begin (a pointer, or with COLLECTOR_HS_BLOB_OFFSETS an int
 *     offset from the blob), code end likewise; compile id (int) at
 *     nm_compile_id; deopt handler at nm_deopt_handler (pointer, or int
 *     offset with BLOB_OFFSETS); orig pc offset (int) at nm_orig_pc_offset.
 *     Then 8 bytes of the name: the kind (COLLECTOR_HS_NAME_*).
 *  4. Step by kind:
 *     - INTERPRETER (pc in [interp_begin, interp_end), or name
 *       "Interpreter"): sane only if sp <= fp < sp + 64 KiB.  Read the
 *       words fp + 8 * (interp_bcp .. interp_return) (one read of 10
 *       words).  Method* = fp[interp_method]; bcp = first frame ? r13 :
 *       fp[interp_bcp] (the slot is written at calls only); ConstMethod* =
 *       Method[method_constmethod]; bci = bcp - (ConstMethod +
 *       cmethod_size) when that is in [0, 0xffff), else the slot's bcp
 *       tried the same way, else bci 0x7fff (unknown).  Emit
 *       COLLECTOR_HS_INTERP(Method*, bci).  Next: pc = fp[+1], sp =
 *       fp[interp_sender_sp] (the caller's sp before the callee extended
 *       it: what a compiled caller's frame_size counts from), fp = fp[0].
 *     - NMETHOD (name "nmethod"): a compiled Java method (C1 or C2).
 *       If pc == deopt handler: pc = *(sp + orig_pc_offset) (the frame was
 *       deoptimized; its true pc saved in the frame).  Emit
 *       COLLECTOR_HS_COMPILED(pc, compile id, top): top when this is the
 *       first frame (pc is not a return address).  A compiled frame is
 *       frame_size words from sp: the return address at the top, the
 *       caller's rbp pushed below it (C1 and C2 keep no frame pointer in
 *       rbp; it is a general register).  The first frame may be partial,
 *       told by the code bytes at pc (8 bytes read):
 *         prologue (pc < code_begin + frame_complete_offset): "push rbp"
 *           (55) at pc, or after the stack bang at pc (89 84 24 d32, 55):
 *           nothing pushed, csp = sp + 8; the byte before pc is 55: rbp
 *           pushed, csp = sp + 16; else the frame is whole;
 *         epilogue: "pop rbp" (5d) at pc: csp = sp + 16; "ret" (c3) or the
 *           return's safepoint poll after pop rbp (cmp rsp,[r15+d]: 49 3b
 *           67 / 49 3b a7; ja: 0f 87): csp = sp + 8;
 *         else csp = sp + 8 * frame_size.
 *       Next: pc = *(csp - 8), sp = csp, fp = *(csp - 16), but for csp =
 *       sp + 8 (rbp not pushed yet, or popped already: it is the caller's).
 *     - NATIVE_NMETHOD (name "native nmethod": a native Java method's
 *       wrapper, which calls the C function): the same as an nmethod (its
 *       frame_size is right; user space names it by its method, bci -1).
 *     - any other blob (stubs, adapters, runtime stubs, "StubRoutines",
 *       "vtable chunks", method handle adapters): emit the pc as a NATIVE
 *       frame (user space names it by its blob name, as the perf map does).
 *       frame_size > 0 (runtime stubs, safepoint/deopt blobs): as a
 *       compiled frame.  frame_size 0: an rbp frame (pc = fp[1], sp = fp +
 *       16, fp = fp[0]) when sp <= fp < sp + 64 KiB and the frame is not
 *       the first or the blob is "StubRoutines..." (call_stub, arraycopy:
 *       enter()/leave()); a first frame in another (adapters, vtable
 *       stubs, which push nothing): the return address at sp (pc = *sp,
 *       sp += 8, fp stays); else stop.
 *  5. Sanity before the next step: the new sp > old sp (stacks grow down;
 *     equal or lower: stop, a loop), pc != 0.
 *
 * Loops: heaps (COLLECTOR_HOTSPOT_MAX_HEAPS = 4), segment map hops
 * (COLLECTOR_HOTSPOT_SEGMAP_HOPS = 32: the map of JDK 9+ holds distances of
 * up to 254 segments a byte, so 32 hops find the start of a blob of up to
 * 8128 segments, 1 MiB at 128-byte segments), frames per hand-over
 * (COLLECTOR_HOTSPOT_MAX_FRAMES = 32; a hand-over happens at each return
 * into the code cache).  Reads per frame: 1 segmap byte per hop, the blob
 * head, its name, and 1-3 stack words.
 *
 * FRAMES EMITTED.  Kind COLLECTOR_FRAME_JAVA (0x3) in the top 4 bits
 * (bpf/collector.h's scheme), bit 59 says which:
 *   INTERP   (bit 59 = 1): bits 0-43 Method* >> 3 (metaspace, 8-aligned,
 *            below 2^47), bits 44-58 the bci (saturated at 0x7fff).
 *   COMPILED (bit 59 = 0): bits 0-46 the pc (return address, or the
 *            interrupted pc when TOP), bit 58 TOP, bits 47-57 the nmethod's
 *            compile id & 0x7ff: user space finds the nmethod from the pc
 *            (the same segment map walk) and checks the id, then expands
 *            the pc into its inlined frames from the nmethod's scopes
 *            (hotspot_names.h: PcDesc + debug info), innermost first.
 * Both are named while the process lives (Method* and nmethods are freed
 * when classes unload or code is flushed).
 */
#ifndef COLLECTOR_BPF_HOTSPOT_H
#define COLLECTOR_BPF_HOTSPOT_H

#include "collector.h"

#define COLLECTOR_HOTSPOT_MAX_HEAPS 4
#define COLLECTOR_HOTSPOT_SEGMAP_HOPS 32
#define COLLECTOR_HOTSPOT_MAX_FRAMES 32
/* bytes of a blob's head the walker reads at once (every offset below it) */
#define COLLECTOR_HOTSPOT_BLOB_READ 384

#define COLLECTOR_HS_INTERP_BIT (1ULL << 59)
#define COLLECTOR_HS_TOP_BIT (1ULL << 58)
#define COLLECTOR_HS_BCI_SHIFT 44
#define COLLECTOR_HS_BCI_MAX 0x7fffULL
#define COLLECTOR_HS_ID_SHIFT 47
#define COLLECTOR_HS_ID_MASK 0x7ffULL
#define COLLECTOR_HS_PC_MASK ((1ULL << 47) - 1)

#define COLLECTOR_HS_INTERP(method, bci)                                                 \
	(((__u64)COLLECTOR_FRAME_JAVA << 60) | COLLECTOR_HS_INTERP_BIT |                 \
	 (((__u64)(bci) > COLLECTOR_HS_BCI_MAX ? COLLECTOR_HS_BCI_MAX : (__u64)(bci))     \
	  << COLLECTOR_HS_BCI_SHIFT) |                                                    \
	 (((__u64)(method) >> 3) & ((1ULL << COLLECTOR_HS_BCI_SHIFT) - 1)))
#define COLLECTOR_HS_COMPILED(pc, compile_id, top)                                       \
	(((__u64)COLLECTOR_FRAME_JAVA << 60) | ((top) ? COLLECTOR_HS_TOP_BIT : 0) |      \
	 (((__u64)(compile_id) & COLLECTOR_HS_ID_MASK) << COLLECTOR_HS_ID_SHIFT) |        \
	 ((__u64)(pc) & COLLECTOR_HS_PC_MASK))
#define COLLECTOR_HS_IS_INTERP(f) (((__u64)(f) & COLLECTOR_HS_INTERP_BIT) != 0)
#define COLLECTOR_HS_METHOD(f) (((__u64)(f) & ((1ULL << COLLECTOR_HS_BCI_SHIFT) - 1)) << 3)
#define COLLECTOR_HS_BCI(f) (((__u64)(f) >> COLLECTOR_HS_BCI_SHIFT) & COLLECTOR_HS_BCI_MAX)
#define COLLECTOR_HS_PC(f) ((__u64)(f) & COLLECTOR_HS_PC_MASK)
#define COLLECTOR_HS_ID(f) (((__u64)(f) >> COLLECTOR_HS_ID_SHIFT) & COLLECTOR_HS_ID_MASK)
#define COLLECTOR_HS_IS_TOP(f) (((__u64)(f) & COLLECTOR_HS_TOP_BIT) != 0)

/* A blob's kind by the first 8 bytes of its name, little-endian. */
#define COLLECTOR_HS_NAME_NMETHOD 0x00646f6874656d6eULL        /* "nmethod\0" */
#define COLLECTOR_HS_NAME_NATIVE_NMETHOD 0x6e2065766974616eULL /* "native n" */
#define COLLECTOR_HS_NAME_INTERPRETER 0x6572707265746e49ULL    /* "Interpre" */

enum collector_hotspot_flags {
	/* 23+: CodeBlob's code begin/end and nmethod's deopt handler are int
	 * offsets from the blob, not pointers */
	COLLECTOR_HS_BLOB_OFFSETS = 1,
};

struct collector_hotspot_heap {
	__u64 low, high;   /* the heap's reserved code range */
	__u64 segmap;      /* its segment map: one byte per segment */
};

/* The per-process record (one per JVM, by tgid). */
struct collector_hotspot_proc {
	__u64 codecache_low, codecache_high; /* all heaps lie within */
	__u64 interp_begin, interp_end;      /* the template interpreter's code */
	struct collector_hotspot_heap heaps[COLLECTOR_HOTSPOT_MAX_HEAPS];
	__u32 n_heaps;
	__u32 flags;              /* enum collector_hotspot_flags */
	__u8 segment_shift;       /* log2 of CodeCacheSegmentSize */
	__u8 major;               /* JDK feature release */
	__u16 heapblock_size;     /* HeapBlock header before each CodeBlob */
	/* CodeBlob / nmethod fields, bytes from the blob (< BLOB_READ) */
	__u16 blob_name, blob_frame_size, blob_frame_complete;
	__u16 blob_code_begin, blob_code_end;
	__u16 nm_compile_id, nm_deopt_handler, nm_orig_pc_offset;
	__u8 blob_frame_complete_width; /* 4, or 2 (25: int16_t) */
	__u8 pad1;
	/* interpreted frames */
	__u16 method_constmethod; /* Method::_constMethod */
	__u16 cmethod_size;       /* sizeof(ConstMethod): bytecodes follow */
	__s8 interp_sender_sp, interp_method, interp_bcp, interp_locals; /* words from fp */
	/* bytes of a blob's head the walker reads: past its last field
	 * above, rounded up to 64 (<= COLLECTOR_HOTSPOT_BLOB_READ) */
	__u16 blob_read_len;
	__u16 pad2[3];
};

#endif /* COLLECTOR_BPF_HOTSPOT_H */
