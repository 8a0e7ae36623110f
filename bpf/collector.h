/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF programs (the .bpf.c files) and user space (loader/,
 * decode/).
 * Every name is prefixed: vmlinux.h already defines `struct sample` and
 * many other short names.
 */
#ifndef COLLECTOR_BPF_H
#define COLLECTOR_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
typedef __u8 u8;
typedef __s8 s8;
typedef __u16 u16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
#endif

#define COLLECTOR_MAX_STACK_DEPTH 127
#define COLLECTOR_MAX_EVENTS 8     /* events of one run (lib/perf_events.h) */
#define COLLECTOR_COMM_LEN 16
#define COLLECTOR_PATH_LEN 256

enum collector_event_kind {
	COLLECTOR_EV_SAMPLE = 1,
	COLLECTOR_EV_FORK = 2,   /* a new task (process or thread) of a target */
	COLLECTOR_EV_EXEC = 3,
	COLLECTOR_EV_EXIT = 4,   /* a task exited */
	COLLECTOR_EV_SWITCH = 5, /* a target thread went off or on a CPU */
	COLLECTOR_EV_TRACE = 6,  /* entry or exit of a traced function */
	COLLECTOR_EV_SAMPLE_STACK = 7, /* a sample with user registers and stack */
	COLLECTOR_EV_AGG_SAMPLE = 8,   /* a sum aggregated in the kernel by stack,
					* made by the loader from the maps */
	COLLECTOR_EV_UNWIND_MISS = 9,  /* --call-graph cfi: a process needs its tables */
	COLLECTOR_EV_UNWIND_GONE = 10, /* --call-graph cfi: its tables were dropped */
	COLLECTOR_EV_UNWIND_EXEC = 11, /* --call-graph cfi: a process exec'd */
	COLLECTOR_EV_RUNTIME_FRAMES = 12, /* a runtime's frames of a new summed
					   * stack, to be named while their
					   * process lives */
	COLLECTOR_EV_OFFCPU_STACK = 13, /* --off-cpu with cfi: a thread switched out
					 * before its image's table, its user stack
					 * copied (collector_stack_sample_event) */
	COLLECTOR_EV_OFFCPU_DONE = 14,  /* ... and back in: its time out */
	COLLECTOR_EV_COMM = 15,         /* a target thread renamed (a task event,
					 * comm its new name) */
};

/* Every ring-buffer record starts with this. */
struct collector_event_header {
	u32 kind;
	u32 cpu;
	u64 ktime_ns;     /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	u32 tgid;
	u32 tid;
};

/*
 * Frames.  Every frame of a stack is one u64 whose top 4 bits say its kind,
 * so that a frame stays 8 bytes in the ring, in the summed stacks' map and
 * in their hash (a frame of 16 bytes would double the 438 ring bytes of a
 * 47-frame cfi sample and every summed stack's map value):
 *
 *   NATIVE  (0x0)  a user-mode address: x86-64 user space is below 2^47
 *   KERNEL  (0xf)  a kernel address as the kernel gives it (0xffff...)
 *   PYTHON  (0x1)  an interpreter frame: the code object and the offset of
 *                  its current instruction, packed as below
 *   JIT     (0x2)  a native address inside code a runtime generated; the
 *                  BPF programs do not write it (user space tells JIT
 *                  code from an image's by the process's mappings), it is
 *                  the kind the model and the formats give such frames
 *
 * A PYTHON frame: bits 0-43 the code object's address >> 3 (CPython's
 * objects are 8-byte aligned, below 2^47), bits 44-58 the offset of the
 * instruction in 2-byte code units (saturated at 0x7fff), bit 59 ENTRY: the
 * frame is the first of one C call of the evaluator (3.11's is_entry, the
 * frame above a 3.12+ shim frame), so that user space splices each run of
 * Python frames, innermost first and ending at an ENTRY frame, in place of
 * one native frame of the evaluator (_PyEval_EvalFrameDefault): a Python
 * function called back from C sits under the C frames that called it.
 * COLLECTOR_PY_EMPTY_CALL (an ENTRY frame of code 0) is a run of no Python
 * frame: a C call of the evaluator sampled in its entry or exit, before its
 * first frame is pushed or after its last one left (3.12+: a shim frame is
 * the current one), whose native frame stays.
 * The Python frames of a user stack follow its native frames.
 */
enum collector_frame_kind {
	COLLECTOR_FRAME_NATIVE = 0x0,
	COLLECTOR_FRAME_PYTHON = 0x1,
	COLLECTOR_FRAME_JIT = 0x2,
	COLLECTOR_FRAME_JAVA = 0x3,     /* HotSpot's (bpf/hotspot.h) */
	COLLECTOR_FRAME_KERNEL = 0xf,
};

/*
 * A language runtime's frames (one kind each, runtimes/runtime.h): bits
 * 0-58 are the runtime's own.  A runtime whose walk appends its frames
 * after the native ones (CPython) marks with RUN_END (bit 59) the last
 * frame of each run that goes in place of one native frame (the
 * outermost frame of one C call of its evaluator), and a run of no frame
 * is EMPTY_RUN(kind) alone; the other runtimes' frames stand where the
 * walk met them, and bit 59 is theirs too (HotSpot's: bpf/hotspot.h).
 */
#define COLLECTOR_FRAME_RUN_END (1ULL << 59)
#define COLLECTOR_FRAME_EMPTY_RUN(kind) \
	(((u64)(kind) << COLLECTOR_FRAME_KIND_SHIFT) | COLLECTOR_FRAME_RUN_END)

#define COLLECTOR_FRAME_KIND_SHIFT 60
#define COLLECTOR_FRAME_KIND(f) ((u32)((u64)(f) >> COLLECTOR_FRAME_KIND_SHIFT))
#define COLLECTOR_PY_ENTRY COLLECTOR_FRAME_RUN_END
#define COLLECTOR_PY_OFFSET_SHIFT 44
#define COLLECTOR_PY_OFFSET_MAX 0x7fffULL
#define COLLECTOR_PY_FRAME(code, units, entry)                                          \
	(((u64)COLLECTOR_FRAME_PYTHON << COLLECTOR_FRAME_KIND_SHIFT) |                     \
	 ((entry) ? COLLECTOR_PY_ENTRY : 0) |                                              \
	 (((u64)(units) > COLLECTOR_PY_OFFSET_MAX ? COLLECTOR_PY_OFFSET_MAX : (u64)(units)) \
	  << COLLECTOR_PY_OFFSET_SHIFT) |                                                   \
	 (((u64)(code) >> 3) & ((1ULL << COLLECTOR_PY_OFFSET_SHIFT) - 1)))
#define COLLECTOR_PY_CODE(f) (((u64)(f) & ((1ULL << COLLECTOR_PY_OFFSET_SHIFT) - 1)) << 3)
#define COLLECTOR_PY_UNITS(f) \
	(((u64)(f) >> COLLECTOR_PY_OFFSET_SHIFT) & COLLECTOR_PY_OFFSET_MAX)
#define COLLECTOR_PY_IS_ENTRY(f) (((u64)(f) & COLLECTOR_PY_ENTRY) != 0)
#define COLLECTOR_PY_EMPTY_CALL COLLECTOR_FRAME_EMPTY_RUN(COLLECTOR_FRAME_PYTHON)

/*
 * A sample.  Its call stacks travel with it: n_kernel kernel addresses, then
 * n_user user addresses (u64 each, innermost first) follow the record.  No
 * stack-trace map: a map's stack ids collide once it fills (a system-wide
 * run loses most of its stacks within minutes), and reading a stack back
 * costs a system call.
 */
struct collector_sample_event {
	struct collector_event_header hdr;
	u64 ip;           /* the sampled instruction (kernel or user) */
	u64 user_ip;      /* the user-mode PC (saved registers when in kernel) */
	u64 period;       /* sample period, in the event's unit (ns for clocks) */
	u64 cputime_ns;   /* task->se.sum_exec_runtime */
	u16 n_kernel;     /* kernel frames that follow (kernel mode only) */
	u16 n_user;       /* user frames that follow, native then Python (see
			   * Frames; 0: no walk, only user_ip) */
	u8 kernel_mode;
	u8 event;         /* the run's event index: the perf link's BPF cookie */
	u8 user_end;      /* enum collector_user_end */
	u8 pad[1];
	/* u64 frames[n_kernel + n_user] follow */
};

/*
 * Aggregation by stack in the kernel (bpf/stack_agg.bpf.h): each stack is
 * stored once in a map keyed by a 64-bit hash of its frames (0: no
 * frames), and the sums are kept by (process, thread, event, kernel stack,
 * user stack).  The loader reads them at the end and at each interval cut
 * and hands each sum on as a COLLECTOR_EV_AGG_SAMPLE record.
 */
struct collector_agg_stack {
	u32 n;            /* frames, innermost first */
	u32 pad;
	u64 frames[COLLECTOR_MAX_STACK_DEPTH];
};

struct collector_agg_key {
	u32 tgid;
	u32 tid;
	u32 event;        /* the run's event index */
	u32 user_end;     /* enum collector_user_end of the user stack (off-cpu: 0) */
	u64 kernel_stack; /* hash, 0: none */
	u64 user_stack;   /* hash, 0: none */
};

struct collector_agg_value {
	u64 count;        /* occurrences (off-cpu: blocked intervals) */
	u64 weight;       /* their sum in the event's unit (off-cpu: ns) */
};

/*
 * CPU samples summed in the kernel by stack (bpf/sample_agg.bpf.h) go to
 * one of two slots, each a sums map and a stacks map: the program adds to
 * the slot sample_agg_slot names, counting itself in that slot's in-flight
 * counter while it does; the loader flips the slot, waits for the old
 * slot's in-flight counters to drop to 0, then reads and empties its maps,
 * which no program touches any more.  The fill counters (per CPU, by
 * slot) count the entries each slot's maps took since it was emptied.
 */
enum collector_sample_agg_fill {
	COLLECTOR_AGG_FILL_KEYS = 0,
	COLLECTOR_AGG_FILL_STACKS = 1,
	COLLECTOR_AGG_FILL_MAX = 2,
};

/* A sum as a record: sample.period is the weight, sample.event the event,
 * sample.n_kernel and n_user the frames that follow (as a sample's). */
struct collector_agg_sample_event {
	struct collector_sample_event sample;
	u64 count;
	/* u64 frames[sample.n_kernel + sample.n_user] follow */
};

/*
 * --off-cpu with cfi: the time out of a thread whose switch-out came before
 * its image's table.  Its stacks went to user space at the switch-out
 * (COLLECTOR_EV_OFFCPU_STACK, the kernel frames and a copy of the top of
 * the user stack to unwind there, as a sample's before its table), its
 * time comes at the switch-in: the off-CPU sum of that one interval, never
 * summed in the kernel.  hdr is the switch-in's.
 */
struct collector_offcpu_done_event {
	struct collector_event_header hdr;
	u64 out_ns;       /* time out; 0: shorter than --off-cpu-min, not counted */
	u32 seq;          /* the OFFCPU_STACK's */
	u32 more;         /* 1: the time out up to a cut (an interval's end),
			   * the thread still out: more of it comes */
};

/* What bpf/offcpu_window.bpf.h's iterator does to each target thread. */
enum collector_window_op {
	COLLECTOR_WINDOW_START = 1, /* switched out since before the run: its
				     * stacks taken, its time counted from the
				     * run's start */
	COLLECTOR_WINDOW_CUT = 2,   /* still out: its time up to the cut counted,
				     * the rest from the cut on */
};

/* How a sample's user walk ended. */
enum collector_user_end {
	COLLECTOR_END_BY_ROOT = 0,  /* frame pointers: complete if it ends in a thread's start */
	COLLECTOR_END_TRUNCATED = 1, /* cfi: stopped early */
	COLLECTOR_END_COMPLETE = 2, /* cfi: the outermost frame's CFI says it has no caller */
};

/* The user registers x86-64 CFI unwinding needs. */
struct collector_user_regs {
	u64 ip, sp, bp, bx, r12, r13, r14, r15;
};

#define COLLECTOR_MAX_STACK_COPY 65536 /* bytes of user stack, at most */

/* --call-graph dwarf: the sample (n_user = 0), the user registers, its
 * n_kernel kernel frames, then stack_len bytes of the user stack from sp (a
 * copy that reaches an unmapped page is shorter than asked). */
struct collector_stack_sample_event {
	struct collector_sample_event sample;
	struct collector_user_regs regs;
	u32 stack_len;
	u32 seq;          /* OFFCPU_STACK: its number, which its OFFCPU_DONE
			   * gives (0 in a sample's) */
	/* u64 kernel_frames[sample.n_kernel], then u8 stack[stack_len] */
};

struct collector_task_event {
	struct collector_event_header hdr;
	u32 parent_tgid;  /* FORK: the parent's tgid */
	u32 child_tid;    /* FORK: the new task; its tgid is child_tgid */
	u32 child_tgid;
	s32 exit_code;    /* EXIT */
	u64 cputime_ns;   /* EXIT: final sum_exec_runtime */
	u8 group_dead;    /* EXIT: the last thread of the process */
	u8 pad[7];
	char comm[COLLECTOR_COMM_LEN];
	char filename[COLLECTOR_PATH_LEN]; /* EXEC */
};

/* COLLECTOR_EV_EXEC: the task event, then the new image's arguments as the
 * kernel laid them out for it (each ending in a NUL), args_len bytes of
 * them, args_cut when there were more: read in the exec's program rather
 * than from /proc/PID/cmdline when the record is decoded (a -a run's execs
 * wait up to half a second, and a shell's tools are gone by then; the
 * reading was 6% of the collector's CPU under a build loop).  The record
 * is as long as its arguments. */
#define COLLECTOR_ARGS_LEN 4096
struct collector_exec_event {
	struct collector_task_event task;
	u32 args_len;
	u32 args_cut;
	char args[COLLECTOR_ARGS_LEN];
};

struct collector_switch_event {
	struct collector_event_header hdr;
	u64 cputime_ns;
	u64 user_ip;      /* where the thread stopped in user mode (off) */
	u8 off;           /* 1: switched out, 0: switched in */
	u8 pad[7];
};

#define COLLECTOR_MAX_ARGS 6
#define COLLECTOR_TRACE_DEPTH 64   /* traced calls nested per thread */
#define COLLECTOR_HIST_BUCKETS 64

enum collector_trace_kind {
	COLLECTOR_TRACE_ENTRY = 0,
	COLLECTOR_TRACE_EXIT = 1,
};

/* An exit record stops after n_args; an entry carries n_args arguments. */
struct collector_trace_event {
	struct collector_event_header hdr;
	u32 func;         /* the probe's cookie: the loader's traced-function id */
	u8 kind;          /* enum collector_trace_kind */
	u8 n_args;
	u16 pad;
	u64 args[COLLECTOR_MAX_ARGS];
};

#define COLLECTOR_TRACE_EXIT_SIZE 32 /* offsetof(struct collector_trace_event, args) */

/* The cookie of the probes the loader puts on its own function to measure
 * the probe cost: no traced function has it. */
#define COLLECTOR_CALIBRATION_COOKIE 0xfffffff0u

#define COLLECTOR_TRACE_SLOTS 16   /* functions aggregated in a thread's own storage */

struct collector_func_stats {
	u64 calls;
	u64 total_ns;
	u64 self_ns;
	u64 hist[COLLECTOR_HIST_BUCKETS]; /* calls by floor(log2(ns)) */
};

/* A thread's aggregates of one function, kept in the thread's storage: no
 * hash lookup per call.  Merged into func_stats when the thread exits or
 * the run ends. */
struct collector_trace_slot {
	u32 func_plus_1;  /* 0: free */
	u32 pad;
	struct collector_func_stats stats;
};

/* Per-thread shadow stack of traced calls, for self time and to survive
 * exits without entries and entries without exits (longjmp, tail calls,
 * attach in mid-call), and the thread's aggregates of up to
 * COLLECTOR_TRACE_SLOTS functions (slot func % SLOTS; a function whose slot
 * is taken goes to func_stats).  Each call keeps its stack pointer at entry:
 * the frames of the real stack tell which shadow entries are gone. */
struct collector_shadow_stack {
	u32 depth;        /* at most COLLECTOR_TRACE_DEPTH */
	u32 func[COLLECTOR_TRACE_DEPTH];
	u64 sp[COLLECTOR_TRACE_DEPTH];
	u64 start_ns[COLLECTOR_TRACE_DEPTH];
	u64 child_ns[COLLECTOR_TRACE_DEPTH];
	struct collector_trace_slot slot[COLLECTOR_TRACE_SLOTS];
};

/* --trace py:GLOB (bpf/trace_python.bpf.h): a Python function as the
 * interpreter's function__entry and __return probes name it, the key of
 * the map that gives it its traced-function id (file and name NUL-padded:
 * compared whole, so exact).  Not the probes' line: it is the line being
 * run, which differs between a function's entry and its returns. */
#define COLLECTOR_PY_FILE_LEN 256
#define COLLECTOR_PY_NAME_LEN 64
#define COLLECTOR_PY_GLOB_LEN 64
#define COLLECTOR_PY_MAX_FUNCS 4096
#define COLLECTOR_PY_NO_MATCH 0xffffffffu
struct collector_py_key {
	char file[COLLECTOR_PY_FILE_LEN];
	char name[COLLECTOR_PY_NAME_LEN];
};

struct collector_func_key {
	u32 tgid;
	u32 tid;
	u32 func;
	u32 pad;
};

enum collector_trace_counter {
	COLLECTOR_TCNT_ENTRIES = 0,       /* unused: the aggregates count calls */
	COLLECTOR_TCNT_EXITS,             /* unused */
	COLLECTOR_TCNT_RB_FULL_ENTRY,     /* ring full: entry record lost */
	COLLECTOR_TCNT_RB_FULL_EXIT,      /* ring full: exit record lost */
	COLLECTOR_TCNT_EXIT_NO_ENTRY,     /* exit with no matching entry: ignored */
	COLLECTOR_TCNT_FRAMES_DROPPED,    /* entries whose exit never came */
	COLLECTOR_TCNT_DEPTH_OVERFLOW,    /* deeper than COLLECTOR_TRACE_DEPTH */
	COLLECTOR_TCNT_STATS_FULL,        /* the per-function map was full */
	COLLECTOR_TCNT_SHADOW_FULL,       /* no shadow stack for a thread */
	COLLECTOR_TCNT_WAKEUPS,
	COLLECTOR_TCNT_SLOT_TAKEN,        /* calls aggregated in func_stats directly */
	COLLECTOR_TCNT_CLAIM_FULL,        /* a thread's slots could not be claimed */
	COLLECTOR_TCNT_MAX,
};

/* Aggregation keys (kernel maps). */
struct collector_ip_key {
	u32 tgid;
	u32 tid;
	u64 ip;
};

/* Per-CPU counters: every event the kernel side could not deliver. */
enum collector_counter {
	COLLECTOR_CNT_RB_FULL_SAMPLE = 0, /* ring full: sample record lost */
	COLLECTOR_CNT_RB_FULL_TASK,       /* ring full: fork/exec/exit record lost */
	COLLECTOR_CNT_RB_FULL_SWITCH,     /* ring full: switch record lost */
	COLLECTOR_CNT_KSTACK_FAIL,        /* kernel stack walk failed */
	COLLECTOR_CNT_AGG_FULL,           /* ip_counts was full: a sample not counted there */
	COLLECTOR_CNT_TARGETS_FULL,       /* a child could not be followed */
	COLLECTOR_CNT_WAKEUPS,            /* forced ring wakeups */
	COLLECTOR_CNT_STACK_COPY_SHORT,   /* user stack copy ended early */
	COLLECTOR_CNT_NO_USER_REGS,       /* no user registers (kernel thread) */
	COLLECTOR_CNT_SKIPPED_BUSY,       /* sample skipped: the sampler's CPU share was used */
	COLLECTOR_CNT_AGG_STACKS_FULL,    /* agg_stacks was full: a stack not stored */
	COLLECTOR_CNT_AGG_KEYS_FULL,      /* agg_counts was full: a sum not counted */
	COLLECTOR_CNT_OFFCPU_SHORT,       /* switched out for less than --off-cpu-min */
	COLLECTOR_CNT_OFFCPU_NO_STATE,    /* no slot for a thread's switch-out state */
	COLLECTOR_CNT_CFI_FP_FRAMES,      /* cfi: frames stepped by frame pointer (no table) */
	COLLECTOR_CNT_CFI_NO_TABLES,      /* cfi: samples before their image's table (the
					   * sampler copies their stack for user space) */
	COLLECTOR_CNT_CFI_OUTSIDE,        /* cfi: walks stopped outside every mapping */
	COLLECTOR_CNT_CFI_COMPLETE,       /* cfi: walks that reached the outermost frame */
	COLLECTOR_CNT_AGG_SAMPLES,        /* samples taken (summed, or streamed), unless by ip_counts */
	COLLECTOR_CNT_PY_WALKS,           /* Python walks (samples of a known interpreter) */
	COLLECTOR_CNT_PY_NO_THREAD,       /* ... the thread has no thread state (yet) */
	COLLECTOR_CNT_PY_READ_FAILED,     /* ... stopped: a read failed, or a frame
					   * without code or looping on itself */
	COLLECTOR_CNT_PY_TOO_DEEP,        /* ... stopped: no room left in the stack */
	COLLECTOR_CNT_CFI_LEARNED,        /* cfi: mappings the program found in the
					   * kernel's VMA tree itself */
	COLLECTOR_CNT_WINDOW_BLOCKED,     /* --off-cpu: threads found out when the run
					   * started, their stacks taken */
	COLLECTOR_CNT_WINDOW_NO_USER,     /* ... with their kernel stack only (the ring
					   * full, or the user stack unreadable) */
	COLLECTOR_CNT_WINDOW_WOKE,        /* ... that ran while their stacks were taken:
					   * the time before they woke is not counted */
	COLLECTOR_CNT_WINDOW_CUT,         /* blocks counted up to a cut or the end */
	COLLECTOR_CNT_HS_WALKS,           /* HotSpot: hand-overs to the Java walker
					   * (bpf/hotspot.bpf.h) */
	COLLECTOR_CNT_HS_FRAMES,          /* ... Java frames (and stubs) it stepped */
	COLLECTOR_CNT_HS_NO_BLOB,         /* ... stopped: no code blob holds the pc */
	COLLECTOR_CNT_HS_BAD_FRAME,       /* ... stopped: a read failed, or the stack
					   * did not grow */
	COLLECTOR_CNT_HS_LIMIT,           /* ... stopped: COLLECTOR_HOTSPOT_MAX_FRAMES */
	COLLECTOR_CNT_RUNTIME_UNLOADED,   /* samples and switch-outs (--off-cpu) that met
					   * a runtime before its walk's program was
					   * loaded: taken without its frames */
	COLLECTOR_CNT_HS_FACTS_HIT,       /* JVM walks: return addresses' code blobs
					   * from the cache (hotspot_blob_facts) */
	COLLECTOR_CNT_HS_FACTS_STALE,     /* ... whose blob was gone: dropped, read */
	COLLECTOR_CNT_MAX,
};

/*
 * --call-graph cfi: the unwind tables in BPF maps (unwind/cfi_table.h
 * describes the rows; the kinds and the layout are the same).  Rows of
 * every image are in one space of row indexes (kept in chunks, below), and
 * a page index per image, in the same space, gives the rows of each
 * 1 << COLLECTOR_UNWIND_PAGE_SHIFT bytes of its text.
 */
enum collector_unwind_kind {
	COLLECTOR_ROW_NONE = 0,   /* no usable CFI: a frame-pointer step */
	COLLECTOR_ROW_RSP = 1,    /* CFA = rsp + cfa_off */
	COLLECTOR_ROW_RBP = 2,    /* CFA = rbp + cfa_off */
	COLLECTOR_ROW_PLT = 3,    /* CFA = rsp + 8 + ((pc & 15) >= cfa_off ? 8 : 0) */
	COLLECTOR_ROW_SIGNAL = 4, /* the kernel's rt_sigframe at rsp */
	COLLECTOR_ROW_END = 5,    /* outermost frame */
};

struct collector_unwind_row {
	u32 pc;           /* offset from the image's table base */
	u16 cfa_off;
	u8 kind;          /* enum collector_unwind_kind */
	s8 rbp_off8;      /* caller's rbp at CFA + 8 * this; 0: kept */
};

/* The rows are kept in chunks of this many (2 MiB each), arrays held by
 * an array of maps: the loader adds chunks as the run's images need them,
 * up to COLLECTOR_UNWIND_MAX_CHUNKS (128 MiB).  Row i is entry
 * i % CHUNK_ROWS of chunk i / CHUNK_ROWS; an image's rows may span two. */
#define COLLECTOR_UNWIND_CHUNK_SHIFT 18
#define COLLECTOR_UNWIND_CHUNK_ROWS (1u << COLLECTOR_UNWIND_CHUNK_SHIFT)
#define COLLECTOR_UNWIND_MAX_CHUNKS 64

/* An image's page index, in the rows' space right after its rows (an
 * entry takes a row's 8 bytes): entry p holds the rows that hold in page p
 * of its text, first to last, absolute indexes.  Pages of 256 bytes, not
 * 4 KiB: cc1's 430 000 rows are 70 to a 4 KiB page, a search of 5.4
 * probes over 3.4 cache lines a frame, against 1.7 probes over 0.8 lines
 * at 256 bytes.  Timed in the program under a build loop, a frame's row
 * look-up went from 380 to 300 ns (a walk of 21 frames: 4% less); its
 * index grows from 1/512 of its text to 1/32, 19% of its rows' bytes. */
#define COLLECTOR_UNWIND_PAGE_SHIFT 8

struct collector_unwind_page {
	u32 first, last;
};

/* Executable mappings per process the unwinder knows (sorted by start). */
#define COLLECTOR_UNWIND_MAX_MAPS 128

struct collector_unwind_map {
	u64 start, end;   /* runtime addresses [start, end) */
	u64 base;         /* runtime address of the table's pc 0 */
	u32 first_page;   /* its page index, in the rows' space;
			   * COLLECTOR_UNWIND_PENDING (with n_pages 0): its
			   * image's table is being built */
	u32 n_pages;      /* 0: no table (JIT code, an image without one) */
};

/* The first_page of a mapping whose table is not built yet: its samples
 * are copied for user space (--call-graph dwarf's record), not walked
 * through by frame pointer. */
#define COLLECTOR_UNWIND_PENDING 0xffffffffu

struct collector_unwind_proc {
	u32 n_maps;
	u32 pad;
	struct collector_unwind_map maps[COLLECTOR_UNWIND_MAX_MAPS];
};

/*
 * The tables of the images, by file, for the program to find a process's
 * mappings itself (bpf/unwind_learn.bpf.h) before user space has written
 * them: the first samples of a new process on a busy machine are walked,
 * not copied for user space.  The key is the file as the kernel's VMA
 * holds it: its superblock's device in the kernel's encoding (major << 20
 * | minor, the numbers /proc/PID/maps prints) and its inode; the vDSO's is
 * COLLECTOR_UNWIND_VDSO_DEV, inode 0.
 */
struct collector_unwind_image_key {
	u64 dev, ino;
};

#define COLLECTOR_UNWIND_VDSO_DEV 0xffffffffffffffffULL
#define COLLECTOR_UNWIND_IMAGE_SEGS 4

/* An executable segment with a table: a mapping at file offset pgoff,
 * start <= pgoff < end, has its table's pc 0 at runtime address
 * vm_start - pgoff + delta. */
struct collector_unwind_image_seg {
	u64 start, end;
	__s64 delta;
	u32 first_page, n_pages;
};

/* An image with n_segs 0 has no table (frame-pointer steps there). */
struct collector_unwind_image {
	u32 n_segs;
	u32 pad;
	struct collector_unwind_image_seg segs[COLLECTOR_UNWIND_IMAGE_SEGS];
};

/* The mappings the program found itself, per process (the mapping
 * table user space writes comes first); valid while epoch is the
 * program's unwind_epoch, which the loader moves on when it evicts an
 * image. */
#define COLLECTOR_UNWIND_LEARNED 16

struct collector_unwind_learned {
	u32 epoch;
	u32 n;
	struct collector_unwind_map maps[COLLECTOR_UNWIND_LEARNED];
};

/* A record of the ring unwind_requests: COLLECTOR_EV_UNWIND_MISS, process
 * hdr.tgid needs tables, the image that holds pc first (the PC it was
 * sampled at, or where its walk left the known mappings); or
 * COLLECTOR_EV_UNWIND_GONE, its mapping table was dropped (exec, exit),
 * pc 0; or COLLECTOR_EV_UNWIND_EXEC, it exec'd (after the GONE of its old
 * image, if it had a table): its tables are wanted before its first
 * sample, pc 0. */
struct collector_unwind_request {
	struct collector_event_header hdr;
	u64 pc;
};

/*
 * CPython (bpf/python.bpf.h, runtimes/python/): where a process's
 * interpreter keeps its threads and frames, written to python_procs by
 * tgid when user space finds an image exporting _PyRuntime among the
 * process's mappings.  Offsets are in bytes.
 */
enum collector_python_flags {
	/* 3.11/3.12: the thread state's cframe holds current_frame; 3.13+: the
	 * thread state holds it */
	COLLECTOR_PY_VIA_CFRAME = 1,
	/* 3.11: the frame's is_entry byte marks an evaluator entry; 3.12+: the
	 * frame after an owner == FRAME_OWNED_BY_CSTACK shim frame is one */
	COLLECTOR_PY_IS_ENTRY_BYTE = 2,
	/* 3.13+: f_executable may be no code object: its type is checked */
	COLLECTOR_PY_CHECK_CODE_TYPE = 4,
};

struct collector_python_proc {
	u64 interp_head;   /* address of _PyRuntime.interpreters.head */
	u32 version;       /* Py_Version: 0x030b02f0 is 3.11.2 final */
	u16 flags;         /* enum collector_python_flags */
	u16 threads_head;  /* PyInterpreterState: threads.head */
	u16 tstate_next;   /* PyThreadState: next */
	u16 tstate_thread_id; /* PyThreadState: thread_id (pthread_self()) */
	u16 tstate_frame;  /* PyThreadState: cframe, or current_frame (3.13+) */
	u16 cframe_frame;  /* _PyCFrame: current_frame */
	u16 frame_code;    /* _PyInterpreterFrame: f_code / f_executable */
	u16 frame_previous;
	u16 frame_instr;   /* prev_instr (3.11, 3.12) / instr_ptr (3.13+) */
	u16 frame_entry;   /* is_entry (3.11) */
	u16 frame_owner;   /* owner */
	u16 code_units;    /* PyCodeObject: co_code_adaptive, the first code unit */
	u16 owner_cstack;  /* the owner value of a C-stack shim frame (3.12+) */
	u16 instr_next;    /* 1: instr_ptr is the next instruction (3.13+) */
	u16 pad[3];
};

/* COLLECTOR_EV_RUNTIME_FRAMES: the user frames of a stack just summed in
 * the kernel for the first time, with frames of a language runtime (its
 * last ones, Python's): user space reads what they name (a code object)
 * while the process lives (the sums are read later, maybe after it
 * exited). */
struct collector_runtime_frames_event {
	struct collector_event_header hdr;
	u32 n;            /* frames that follow, native then Python */
	u32 pad;
	u64 frames[COLLECTOR_MAX_STACK_DEPTH];
};

#endif /* COLLECTOR_BPF_H */
