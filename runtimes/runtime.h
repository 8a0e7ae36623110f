/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A language runtime (CPython, HotSpot, ...): what the engine asks of one,
 * through one table of operations per runtime, listed in
 * runtimes/runtime_registry.c as formats/registry.c lists the formats.  decode/,
 * model/, formats/ and cli/ name no runtime: they reach each through this
 * interface, and a runtime is a folder under runtimes/, a BPF file, a
 * line in the registry, a frame kind in bpf/collector.h and its tests.
 *
 * What a runtime does:
 * - Recognise its processes: mapped() is told each image a process maps
 *   (when its mappings are read) and says whether it is the runtime's;
 *   maps_later() and may_be() say, from an executable's path alone,
 *   whether its process maps the runtime later (a libpython linked,
 *   ld.so run as a command) or may map it, so that the engine reads
 *   such a process's mappings at once and again until the runtime shows.
 * - Give the BPF side what it needs for a process: through the writer in
 *   struct runtime_env (loader/ implements it), never a map of its own.
 * - Name its frames: a frame of its kind (bpf/collector.h, "Frames") is
 *   named by frame_name(), from the live process, cached while it lives,
 *   as one function or as a compiled method with the methods inlined
 *   into it at that point (a location with inlined calls, as DWARF gives
 *   native code's);
 *   notice() reads what a frame names while its process lives, for a
 *   stack decoded later.  A frame it cannot name keeps a location of its
 *   own, keyed by unnamed_key(), and is counted under unnamed_stat.
 * - Place its frames: a runtime whose frames the BPF side puts in place
 *   during the native walk needs nothing more; one whose walk appends
 *   them after the native frames (splices: CPython) has each run of them,
 *   innermost first up to a frame with COLLECTOR_FRAME_RUN_END, put in
 *   place of the native frame replaces() names (its interpreter's
 *   evaluator), and an empty run (COLLECTOR_FRAME_EMPTY_RUN) keeps that
 *   native frame.
 * - Make JIT code nameable: ask_names() is given the processes whose JIT
 *   code is still unnamed before their perf maps are read (the JVM's
 *   attach), none of them walked by a runtime, and owns_jit() says which
 *   of them it would ask.
 * - Report: its kernel-side counters copied into the model's statistics
 *   by counters(), and its part of the summary printed by summary().
 * - Keep its state in the engine's records: what it has of a process in
 *   its word of the process's record (struct proc_ref, lib/proc_ref.h),
 *   what it made of an image in its word of the image's record (struct
 *   runtime_image): it keeps no table keyed by pid or by path; drop() is
 *   told when a process's record goes.
 *
 * Every operation but open and close may be NULL: the runtime has no
 * such part.  The model's statistics of a runtime are named counters
 * (model_named_stat_add()) whose names start with the runtime's name.
 */
#ifndef COLLECTOR_RUNTIMES_RUNTIME_H
#define COLLECTOR_RUNTIMES_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bpf/collector.h"
#include "lib/proc_ref.h"
#include "model/model.h"
#include "symbols/elfinfo.h"

/* Where a runtime's per-process entries for the BPF side go: the loader's
 * map of the runtime's frame kind, by tgid. */
struct runtime_bpf {
	void *ctx;
	int (*set)(void *ctx, unsigned int frame_kind, uint32_t tgid, const void *entry,
		   size_t size);
	void (*forget)(void *ctx, unsigned int frame_kind, uint32_t tgid);
};

/* What a runtime is opened with. */
struct runtime_env {
	/* NULL: nothing is walked (a replay, or the walks turned off): the
	 * runtime still names frames */
	const struct runtime_bpf *bpf;
	struct model *m;          /* the run's statistics go here */
	bool no_ask;              /* ask_names() asks nothing (--no-jvm-attach) */
	/* the frame kinds (a bit each) of runtimes whose frames are not
	 * walked (--no-jvm-walk, a walk left out of the BPF program):
	 * runtimes_open() opens each of them with bpf NULL and no_walk true */
	uint32_t unwalked_kinds;
	bool no_walk;             /* this runtime's frames are not walked */
};

/*
 * An image a process maps, as a runtime is told of it (mapped()): one
 * record per file for the whole run (symbols/symbolize.h, "An image's
 * record"), the file identified and opened once for every reader, with a
 * word of the runtime's own in it, where it keeps what it made of the
 * image (an index of its own plus one, say) for the next process that
 * maps the same file: the image is read once, not once per process or
 * per name.
 */
struct runtime_image {
	uint32_t id;                  /* the model image (MODEL_NONE: none) */
	const char *path;             /* as the process's maps name it */
	uint64_t bias;                /* its load bias in the process */
	const struct elf_file *file;  /* the file, opened once; NULL: unreadable */
	uint32_t *slot;               /* the runtime's word in the record, 0 at
				       * first; NULL: no record */
};

/* Functions a frame may stand for (one compiled method and those inlined
 * into it), at most. */
#define RUNTIME_FRAME_MAX_INLINED 16

/* A named frame.  The strings live as long as the runtime instance, or
 * until the record of the frame's process is dropped (drop()). */
struct runtime_frame {
	const char *function;     /* "Kestrel.grind", "long Kestrel.hotMix(long[], int)" */
	const char *file;         /* its source file, or NULL */
	uint32_t first_line;      /* of the function; 0: unknown */
	uint32_t line;            /* of the frame's instruction; 0: unknown */
};

/* The registers a runtime's walk in user space starts from and ends at. */
struct runtime_regs {
	uint64_t ip, sp, bp;
};

/* What summary() prints. */
enum runtime_summary_part {
	RUNTIME_SUMMARY_WALKS,    /* a line or two on how the walks fared */
	RUNTIME_SUMMARY_TABLES,   /* its functions by samples */
	RUNTIME_SUMMARY_TRACE,    /* a note under traced functions of its image */
};

struct runtime_ops {
	const char *name;         /* "python": its statistics' prefix */
	const char *image;        /* the model image its frames go in: "[python]" */
	const char *frame_type;   /* OTLP's profile.frame.type of them: "cpython" */
	bool jit_methods;         /* its frames are methods a JIT compiles (Java's,
				   * not CPython's): folded names end in "_[j]" */
	unsigned int frame_kind;  /* COLLECTOR_FRAME_*, 0 for none (JIT code
				   * named by perf map only) */
	bool splices;             /* frames follow the native ones (see above) */
	const char *unnamed_stat; /* counter of frames that could not be named */

	/* Whether process pid runs the runtime now (its image mapped), no
	 * instance needed.  A -p target that does has the runtime's walks
	 * (of samples, of switch-outs) loaded before sampling; else they are
	 * loaded when the runtime's first process is met.  NULL: never
	 * loaded ahead. */
	bool (*present)(pid_t pid);

	void *(*open)(const struct runtime_env *env);
	void (*close)(void *rt);

	/* 1: img, mapped by process p, is the runtime's and p is
	 * walked; 0: not (or it has one already); a negative errno: it is,
	 * but cannot be walked (-ENOTSUP: a version without layouts, counted
	 * for the summary) */
	int (*mapped)(void *rt, const struct proc_ref *p, const struct runtime_image *img);
	bool (*maps_later)(void *rt, const char *exe);
	bool (*may_be)(void *rt, const char *exe);
	bool (*known)(const void *rt, const struct proc_ref *p); /* has had frames walked */
	bool (*has)(const void *rt, const struct proc_ref *p);   /* is being walked */
	size_t (*live)(const void *rt);            /* processes being walked */
	void (*forget)(void *rt, const struct proc_ref *p);      /* exited or exec'd */
	/* the engine drops the record of a process forgotten (a continuous
	 * run's, gone an interval ago) whose word for this runtime is word:
	 * what the runtime kept of it (its names) goes */
	void (*drop)(void *rt, uint32_t word);

	/* out[0..max) the frame's functions, innermost first: one, or a
	 * compiled frame's inlined methods then the method compiled
	 * (out[n - 1]); returns n >= 1, or a negative errno when the frame
	 * cannot be named (its code freed, its process gone).  Also asked
	 * of a native pc in the runtime's own code (owns_pc(): a JVM's
	 * stubs), whose name it may know */
	int (*frame_name)(void *rt, const struct proc_ref *p, uint64_t frame,
			  struct runtime_frame *out, uint32_t max);
	void (*notice)(void *rt, const struct proc_ref *p, uint64_t frame);
	uint64_t (*unnamed_key)(uint64_t frame);
	/* whether native frame at addr (named name, or NULL) of process pid
	 * is one activation of the interpreter its runs go in place of */
	bool (*replaces)(const void *rt, const struct proc_ref *p, uint64_t addr,
			 const char *name);

	/* A stack unwound in user space from a copy (a sample before its
	 * image's unwind table, a thread found blocked when the run began):
	 * owns_pc() says whether pc of process pid is in the runtime's own
	 * code (a JVM's code cache), where the native unwinder stops; then
	 * walk_copy() walks its frames from regs (first: regs are the
	 * interrupted ones, not a caller's), reading stack[0..stack_len),
	 * the copy from stack_sp, or else the live process, into
	 * frames[0..max) (the frame at regs->ip first, frames of its kind
	 * or native pcs of its stubs), and leaves regs at the first frame
	 * outside its code, *left true, for the native walk to go on from
	 * (false: it stopped).  Returns the frames written. */
	bool (*owns_pc)(const void *rt, const struct proc_ref *p, uint64_t pc);
	int (*walk_copy)(void *rt, const struct proc_ref *p, struct runtime_regs *regs,
			 bool first, const uint8_t *stack, uint64_t stack_sp, size_t stack_len,
			 uint64_t *frames, uint32_t max, bool *left);

	bool (*owns_jit)(const void *rt, const struct proc_ref *p);
	void (*ask_names)(void *rt, const pid_t *pids, size_t n);

	void (*counters)(struct model *m, const uint64_t *kernel_counters);
	void (*summary)(FILE *out, const struct model *m, enum runtime_summary_part part,
			const void *rt);
};

/* The runtimes of a run: each registered runtime opened, and the frame
 * kinds' owners. */
#define RUNTIMES_MAX 8
struct runtime {
	const struct runtime_ops *ops;
	void *rt;
};
struct runtimes {
	struct runtime items[RUNTIMES_MAX];
	size_t n;
	struct runtime *by_kind[16];  /* frame kind -> its runtime, or NULL */
};

/* The registered runtimes (runtimes/runtime_registry.c), NULL-terminated. */
extern const struct runtime_ops *const runtime_registry[];

/* The frame kinds (a bit each) whose BPF walks a run's off-CPU programs
 * carry: every runtime's when any (-a, -- COMMAND: a runtime may start
 * later), else those a target of pids[0..n) runs now, and those that
 * cannot tell. */
uint32_t runtimes_walks_needed(const struct runtime_ops *const *list, const pid_t *pids, size_t n,
			       bool any);

/* The frame kind (a bit) of list's runtime called name, or 0. */
uint32_t runtimes_kind_named(const struct runtime_ops *const *list, const char *name);

/* Opens each runtime of list (NULL-terminated; runtime_registry for a
 * run).  0, or -ENOMEM (nothing left open). */
int runtimes_open(struct runtimes *rs, const struct runtime_ops *const *list,
		  const struct runtime_env *env);
void runtimes_close(struct runtimes *rs);

/* The runtime whose frames are of kind (a frame's top bits), or NULL. */
static inline const struct runtime *runtimes_of_kind(const struct runtimes *rs,
						     unsigned int kind)
{
	return rs && kind < 16 ? rs->by_kind[kind] : NULL;
}

/* Whether any runtime may be (or map) the runtime of an executable. */
bool runtimes_may_be(const struct runtimes *rs, const char *exe);
/* The frame kinds (a bit each) of the runtimes that may be exe's. */
uint32_t runtimes_kinds_of_exe(const struct runtimes *rs, const char *exe);
/* Processes being walked by any runtime. */
size_t runtimes_live(const struct runtimes *rs);
/* A process's record: a word for each runtime, by its place in the run's
 * list (the slot of the proc_ref it is told of the process with). */
struct runtime_words {
	uint32_t w[RUNTIMES_MAX];
};

/* Process pid (its record words) as runtime r of rs is told of it. */
static inline struct proc_ref runtime_proc_of(const struct runtimes *rs,
						  const struct runtime *r, pid_t pid,
						  struct runtime_words *words)
{
	return (struct proc_ref){ pid, &words->w[r - rs->items] };
}

/* Process pid (record words) exited or exec'd: every runtime forgets it. */
void runtimes_forget(const struct runtimes *rs, pid_t pid, struct runtime_words *words);
/* A process's record dropped (forgotten, long gone): each runtime drops
 * what it kept of it. */
void runtimes_drop(const struct runtimes *rs, const struct runtime_words *words);
/* The runtime whose own code pc of process pid is in (owns_pc()), or NULL. */
const struct runtime *runtimes_owning_pc(const struct runtimes *rs, pid_t pid,
					 struct runtime_words *words, uint64_t pc);
/* Whether some runtime asks process pid for its JIT code's names. */
bool runtimes_own_jit(const struct runtimes *rs, pid_t pid, struct runtime_words *words);
/* Whether some runtime walks process pid (has()). */
bool runtimes_walk(const struct runtimes *rs, pid_t pid, struct runtime_words *words);
/* The processes with unnamed JIT code, given to each runtime that asks. */
void runtimes_ask_names(const struct runtimes *rs, const pid_t *pids, size_t n);
/* Each runtime's kernel-side counters (COLLECTOR_CNT_*) into the model.
 * rs NULL: every registered runtime's (a replay). */
void runtimes_counters(const struct runtimes *rs, struct model *m,
		       const uint64_t *kernel_counters);
/* Each runtime's part of the summary.  rs NULL: every registered
 * runtime's, from the model alone (a summary of a saved run). */
void runtimes_summary(FILE *out, const struct model *m, enum runtime_summary_part part,
		      const struct runtimes *rs);

#endif /* COLLECTOR_RUNTIMES_RUNTIME_H */
