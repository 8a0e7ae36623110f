/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker's own parts, shared by its files and by no one else:
 *
 *   tracker.c          life cycle, record dispatch (malformed records,
 *                      records to leave out), switches, traced calls
 *   tracker_tasks.c    processes, threads and their mappings (from fork,
 *                      exec and exit records, and from /proc), and the
 *                      mappings handed to the unwinder
 *   tracker_stacks.c   samples: their user and kernel stacks into model
 *                      stacks, through caches keyed by the raw frames
 *   tracker_cputime.c  the targets' CPU time over the window
 *   tracker_forget.c   continuous runs: forgetting what has ended
 *   tracker_jit.c      JIT code: per-process "[jit]" images named from
 *                      the processes' perf maps
 *   tracker_runtimes.c the language runtimes' processes found, their
 *                      frames named (and CPython's spliced into the
 *                      native stacks), through runtimes/runtime.h
 *
 * Every record carries its own stacks; nothing here knows libbpf.
 */
#ifndef COLLECTOR_TRACKER_INTERNAL_H
#define COLLECTOR_TRACKER_INTERNAL_H

#include "bpf/collector.h"
#include "decode/tracker.h"
#include "lib/idmap.h"
#include "lib/stackcache.h"
#include "runtimes/runtime.h"
#include "unwind/unwind.h"

/* A resolved part of a stack (user or kernel), shared through the caches. */
struct stack_part {
	uint32_t first;      /* index in tracker.pool */
	uint32_t n;
	bool truncated;
};

struct proc_state {
	uint64_t maps_read_ktime; /* when the maps in use were read */
	uint64_t exec_ktime;      /* its exec, 0 when none was seen */
	/* /proc/PID/exe's file when its exec's record was decoded (0, 0:
	 * not read): another one later means the process has exec'd again,
	 * its next exec record not decoded yet */
	uint64_t exe_dev, exe_ino;
	bool alive;
	/* --call-graph dwarf: the mappings as the unwinder sees them */
	uint64_t maps_version;
	struct unwind_mapping *umaps;
	size_t n_umaps;
	bool umaps_stale;    /* cfi: made again from the maps at the next copy */
	bool maps_deferred;  /* maps read at its first sample (trk_defer_maps()) */
	uint32_t jit;        /* index in tracker.jits, UINT32_MAX: none */
	/* each runtime's word in the process's record (runtimes/runtime.h,
	 * struct proc_ref): what it has of this process, found without
	 * a table of its own; kept after the exit, for stacks decoded later */
	struct runtime_words runtime_words;
	uint32_t unwind_word;   /* the unwinder's word (its Dwfl of the process) */
};

/* Model process `process` as the unwinder is told of it. */
static inline struct proc_ref trk_unwind_ref(struct tracker *t, uint32_t process);

/* A process's JIT code: its "[jit]" image, its perf map (opened while the
 * process is alive, -1 until then) and the locations still unnamed. */
struct jit_state {
	uint32_t image;
	pid_t pid;
	int fd;
	MODEL_VEC(uint32_t) pending;
};

/* A process whose executable maps a runtime later (links libpython), the
 * runtime not yet mapped (tracker_runtimes.c): since when. */
struct runtime_pending {
	uint32_t process;
	uint64_t since;
};

struct thread_state {
	uint64_t first_cputime;
	bool first_known;
	bool last_read;    /* final CPU time read at the end of the window */
};

struct early_maps {
	pid_t pid;
	uint64_t exec_ktime;
};

struct offcpu_pending {
	pid_t tid;
	uint32_t seq;
	/* the sum it makes, but for its time: kernel then user frames follow */
	struct collector_agg_sample_event *sum;
};

struct tracker {
	struct model *m;
	struct symbolizer *sym;
	uint64_t sched_text[4];         /* tracker_set_sched_text() */
	struct maps_store *shared_maps; /* readings of maps by others, or NULL */

	struct idmap pid_to_process;    /* tgid -> current model process */
	struct idmap tid_to_thread;     /* tid -> current model thread */
	struct stackcache part_cache;   /* (process or KERNEL_DOMAIN, raw frames) -> part */
	struct idmap stack_cache;       /* (user part << 32 | kernel part) -> model stack */
	MODEL_VEC(struct stack_part) parts;
	MODEL_VEC(uint32_t) pool;
	MODEL_VEC(struct proc_state) procs;     /* by model process id */
	MODEL_VEC(struct thread_state) threads; /* by model thread id */
	MODEL_VEC(struct jit_state) jits;
	uint32_t unknown_image;
	uint32_t empty_part;            /* the part of samples with no user stack */
	pid_t awaiting_exec;            /* launched, not exec'd yet */
	uint64_t exec_allowed_ktime;    /* when it was let go */
	pid_t ignored_tgid;             /* the collector itself */
	struct unwinder *unwinder;      /* --call-graph dwarf (and cfi), else NULL */
	bool unwind_lazy;               /* cfi: images opened at a first stack copy */
	bool map_files_usable;          /* /proc/PID/map_files opened once: trk_map_files() */
	bool maps_lazy;                 /* an exec's maps read at its first sample */
	const struct runtimes *runtimes; /* the caller's, or NULL: no runtime's frames */
	uint32_t runtime_image[16];     /* per frame kind: "[python]", MODEL_NONE until needed */
	MODEL_VEC(struct runtime_pending) runtime_pending;
	uint64_t maps_version;          /* bumped whenever mappings change */
	uint64_t unwind_ns, unwinds;    /* time spent unwinding */
	uint64_t stack_record_bytes;    /* ring bytes of stack-copy samples */
	uint64_t samples;
	uint64_t forgotten_cpu_ns;      /* CPU time of the threads forgotten */
	uint64_t last_task_ktime;       /* last fork, exec or new process */
	/* processes whose maps were read right after their exec, before the
	 * dynamic loader mapped their libraries: read again once settled */
	MODEL_VEC(struct early_maps) early_maps;
	/* off-CPU stacks unwound here, waiting for their time out */
	MODEL_VEC(struct offcpu_pending) offcpu_pending;
	size_t live;
};

static inline uint64_t trk_epoch_of(const struct tracker *t, uint64_t ktime)
{
	return ktime + t->m->run.ktime_to_epoch_ns;
}

/* tracker_tasks.c */
/* The model thread of a record's (tgid, tid), described from /proc (with
 * its process) when first met. */
uint32_t trk_thread(struct tracker *t, pid_t tgid, pid_t tid, uint64_t ktime);
/* Reads the process's mappings (again) as they are at now_ktime or later
 * (the unwind service's reading when it made one since): new executable
 * mappings go into the model, and to the unwinder when there is one (with
 * cfi, marked stale: see below). */
void trk_load_maps(struct tracker *t, uint32_t process, uint64_t now_ktime);
/* cfi: the unwinder's mappings of the process made again from the shared
 * store when its maps were read since they were made (before a copy is
 * unwound: most processes of a busy machine never have one). */
void trk_refresh_unwind_maps(struct tracker *t, uint32_t process);
/* The process's maps in use were read right after its exec, within
 * MAPS_SETTLE_NS (the dynamic loader may not have mapped its libraries
 * then): tracker_tasks.c. */
bool trk_maps_early(const struct tracker *t, uint32_t process);
/* Whether process (of an exec seen) still runs the image of that exec:
 * false once it has exec'd again (a shell script exec'ing java), whose
 * maps read now would be the next image's under this one's name. */
bool trk_exec_current(const struct tracker *t, uint32_t process);
void trk_handle_fork(struct tracker *t, const struct collector_task_event *e);
/* e is size bytes: a collector_exec_event when it holds its arguments. */
void trk_handle_exec(struct tracker *t, const struct collector_task_event *e, size_t size);
void trk_handle_exit(struct tracker *t, const struct collector_task_event *e);
/* A thread renamed: its name from now on (a thread has one name, its
 * last: a JVM's threads are named just after they start); one not met
 * yet is left to be named from /proc when it is. */
void trk_handle_comm(struct tracker *t, const struct collector_task_event *e);
/* Frees what the tracker keeps of a process (its unwinder mappings). */
void trk_free_proc_state(struct proc_state *ps);

/* tracker_stacks.c */
/* A frame-pointer sample: the user frames follow the kernel ones. */
void trk_handle_sample(struct tracker *t, const struct collector_sample_event *e);
void trk_handle_agg_sample(struct tracker *t, const struct collector_agg_sample_event *ae);
/* --call-graph dwarf: a sample with registers and a copy of the stack. */
void trk_handle_stack_sample(struct tracker *t, const struct collector_stack_sample_event *se);
/* The user frames of a record with registers and a stack copy, unwound
 * into ips (COLLECTOR_MAX_STACK_DEPTH): how many (0 for a kernel thread,
 * else at least the PC); *complete when the walk reached the outermost
 * frame. */
int trk_unwind_copy(struct tracker *t, uint32_t process,
		    const struct collector_stack_sample_event *se, uint64_t *ips, bool *complete);

/* tracker_offcpu.c */
/* --off-cpu with cfi: the stacks of a thread switched out before its
 * image's table, unwound now (its process lives), kept until its time out
 * comes with its switch-in. */
void trk_handle_offcpu_stack(struct tracker *t, const struct collector_stack_sample_event *se);
/* ... and that time: one off-CPU sum of the stacks kept. */
void trk_handle_offcpu_done(struct tracker *t, const struct collector_offcpu_done_event *d);
void trk_offcpu_free(struct tracker *t);

/* tracker_jit.c */
/* The "[jit]" image of the process's anonymous executable memory (its
 * addresses are runtime addresses), made on first use. */
uint32_t trk_jit_image(struct tracker *t, uint32_t process);
/* A new location in JIT image `image`: named when the map is read. */
void trk_jit_location(struct tracker *t, uint32_t image, uint32_t loc);
/* Names the pending JIT locations of process pid (every process for -1)
 * from their perf maps. */
void trk_jit_resolve(struct tracker *t, pid_t pid);
/* Continuous runs: the JIT state of a process that has ended and been
 * named is let go (its map's descriptor closed). */
void trk_jit_forget(struct tracker *t, uint32_t jit);
void trk_jit_free(struct tracker *t);

/* tracker_runtimes.c */
/* The unwinder (when there is one) told where the runtimes' code is. */
void trk_runtimes_hook_unwinder(struct tracker *t);
/* The process's mappings were read: is one of its images a runtime's? */
void trk_runtimes_maps_loaded(struct tracker *t, uint32_t process);
/* Process pid exec'd or exited: no runtime walks it any more. */
void trk_runtimes_gone(struct tracker *t, uint32_t process);
/* The native frames of a user stack of process: those before the first
 * frame of a runtime whose frames follow the native ones (*spliced: that
 * runtime, else NULL and all n). */
uint32_t trk_runtimes_native_frames(struct tracker *t, uint32_t process, const uint64_t *frames,
				    uint32_t n, const struct runtime **spliced);
/* Whether frame is a runtime's that walks process (else native, or
 * data a frame-pointer walk took for a return address). */
bool trk_runtime_frame(struct tracker *t, uint32_t process, uint64_t frame);
/* A native pc in a runtime's own code (a JVM's stubs) named by it, or
 * MODEL_NONE. */
uint32_t trk_runtime_native_location(struct tracker *t, uint32_t process, uint64_t pc);
/* The location of such a frame, named by its runtime. */
uint32_t trk_runtime_location(struct tracker *t, uint32_t process, uint64_t frame);
/* locs[0..n_native) the locations of native frames ips[0..n_native)
 * (room for COLLECTOR_MAX_STACK_DEPTH): runtime r's frames rf[0..n_rf)
 * spliced in; returns how many locations locs holds then. */
uint32_t trk_runtimes_splice(struct tracker *t, uint32_t process, const struct runtime *r,
			     const uint64_t *ips, const uint64_t *rf, uint32_t n_rf,
			     uint32_t *locs, uint32_t n_native);
void trk_handle_runtime_frames(struct tracker *t, const struct collector_runtime_frames_event *e);
/* Runtimes' frames (of any kind among frames[0..n)) of process pid read
 * now, while it lives: the names are kept for when their stack is
 * decoded. */
void trk_runtimes_notice(struct tracker *t, uint32_t process, const uint64_t *frames, uint32_t n);
/* Runtime r as told of model process `process` (its record's word). */
struct proc_ref trk_runtime_proc(struct tracker *t, const struct runtime *r, uint32_t process);
/* The runtime whose own code pc of model process `process` is in, or NULL. */
const struct runtime *trk_runtime_owning_pc(struct tracker *t, uint32_t process, uint64_t pc);

/* Whether a kernel address is the scheduler's (tracker_set_sched_text()). */
bool trk_in_sched_text(const struct tracker *t, uint64_t addr);

static inline struct proc_ref trk_unwind_ref(struct tracker *t, uint32_t process)
{
	return (struct proc_ref){ t->m->processes.items[process].pid,
				  &t->procs.items[process].unwind_word };
}

#endif /* COLLECTOR_TRACKER_INTERNAL_H */
