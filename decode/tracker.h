/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tracker turns kernel records into the model: it follows processes,
 * threads and their mappings, and resolves each sample's stack into model
 * locations.  It knows the record layouts (bpf/collector.h) but not libbpf:
 * every record carries its own stacks.
 */
#ifndef COLLECTOR_TRACKER_H
#define COLLECTOR_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/model.h"
#include "symbols/symbolize.h"

struct tracker;

struct tracker *tracker_new(struct model *m, struct symbolizer *sym);

/* Registers a process that is already running (-p), with its threads, as
 * of ktime `now`.  Returns 0 or a negative errno (-ESRCH: gone). */
int tracker_add_process(struct tracker *t, pid_t pid, uint64_t now_ktime);

/* The launched command's pid: its records before its first exec are the
 * profiler's own forked copy, not the command, and are left out. */
void tracker_expect_exec(struct tracker *t, pid_t pid);
/* The launched command was let go to exec at ktime. */
void tracker_exec_allowed(struct tracker *t, uint64_t ktime);

/* --call-graph dwarf: unwind stack-copy samples with the CFI of the
 * mapped images.  Call before any record.  0 or -ENOMEM. */
int tracker_enable_unwinding(struct tracker *t);

/* --call-graph cfi: the same for the samples that came before their
 * image's table (stack copies, rare): each process's images are opened
 * at its first such sample, not whenever its mappings are read.  Call
 * before any record.  0 or -ENOMEM. */
int tracker_enable_fallback_unwinding(struct tracker *t);

/* Leaves out the records of one process: the collector's own, which the
 * probe-cost calibration makes a target for a moment. */
void tracker_ignore_process(struct tracker *t, pid_t pid);

/* Handles one ring-buffer record.  Returns 0 (malformed records are counted
 * in the model's stats, never fatal). */
int tracker_handle_record(struct tracker *t, const void *data, size_t size);

/* The window starts: the CPU time the targets of -p used so far (while the
 * probes were attached, say) is not the window's. */
void tracker_begin_window(struct tracker *t);
/* The window ends (sampling stopped): reads the CPU time of the threads
 * still alive, which run on while the last records are drained. */
void tracker_end_window(struct tracker *t);
/* Closes the run: the unwinder's figures into the model, the final CPU
 * time of threads first seen in the last drain (tracker_end_window()),
 * the JIT code still unnamed. */
void tracker_finish(struct tracker *t);

/* When a target process last forked or exec'd, or the command was let go
 * (ktime ns); 0 before any of that. */
uint64_t tracker_last_task_ktime(const struct tracker *t);
/* Samples handled so far. */
uint64_t tracker_sample_count(const struct tracker *t);
/* Target processes (tgids) still alive as far as the records tell. */
size_t tracker_live_processes(const struct tracker *t);
/* CPU time of the target threads during the run (ns), from the cputime
 * they had when first seen and when last seen. */
uint64_t tracker_target_cpu_ns(const struct tracker *t);
/* Continuous runs, between intervals (after model_drop_events(): no event
 * may refer to a process, thread, location or stack then): the processes
 * and threads that have ended leave the model and the tracker, the others
 * are renumbered, the model's code tables (model_forget_code()) and the
 * caches of resolved raw stacks start over, and the symbolizer closes the
 * images no live process maps (symbolizer_forget_code()).  0 or -ENOMEM. */
int tracker_forget_ended(struct tracker *t);
/* Continuous runs, before an interval is written: the JIT code met so far
 * named from the processes' perf maps (otherwise read at a process's exit
 * and at the end of the run). */
void tracker_name_jit_code(struct tracker *t);
/* The live processes whose JIT code met so far is still unnamed (no perf
 * map, or code compiled after it was read) and that no runtime walks, at
 * most max into pids.
 * Returns their number. */
size_t tracker_jit_waiting(struct tracker *t, pid_t *pids, size_t max);

/* The processes whose maps were read right after their exec (before the
 * dynamic loader had mapped their libraries) have them read again, once
 * 20 ms have passed (all: now), while they live: call at every drain, and
 * with all before the kernel's sums are read at the end. */
void tracker_settle_maps(struct tracker *t, uint64_t now_ktime, bool all);

/* The language runtimes (runtimes/runtime.h): each is told of the images
 * every process maps, walks the processes it finds its own, and names
 * their frames of its kind.  Call before any record; rs outlives the
 * tracker. */
struct runtimes;
void tracker_set_runtimes(struct tracker *t, const struct runtimes *rs);
/* --off-cpu: the kernel's scheduler text, two [start, end) ranges (0, 0:
 * none), left out of the top of a switch-out's kernel stack, which then
 * starts where the thread chose to wait, as the stack of a thread found
 * blocked does (bpf/offcpu_window.bpf.h). */
void tracker_set_sched_text(struct tracker *t, const uint64_t ranges[4]);

/* Where a process's maps that can no longer be read (it is gone) are
 * looked for: the unwind service's readings (lib/maps_store.h), or NULL. */
struct maps_store;
void tracker_share_maps(struct tracker *t, struct maps_store *store);
/* The shared store is kept current by the kernel's mmap records (it has
 * the maps of a process gone since): an exec'd process's maps are read
 * at its first sample that needs them, not at its exec (most of a busy
 * machine's processes are never sampled); an interpreter's still at its
 * exec. */
void tracker_defer_maps(struct tracker *t);
/* Processes whose executable maps a runtime later (links libpython) are
 * read again (every 10 ms, for 2 s at most) until it is mapped: call at
 * each drain.  tracker_runtimes_pending() tells whether any is waiting. */
void tracker_runtimes_poll(struct tracker *t, uint64_t now_ktime);
bool tracker_runtimes_pending(const struct tracker *t);

void tracker_free(struct tracker *t);

#endif /* COLLECTOR_TRACKER_H */
