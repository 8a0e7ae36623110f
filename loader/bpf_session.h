/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF side of a run: skeleton, perf events, ring buffer, kernel maps.
 * With loader/uprobes.c, the only code that talks to libbpf (make layering).
 */
#ifndef COLLECTOR_BPF_SESSION_H
#define COLLECTOR_BPF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/collector.h"
#include "lib/perf_events.h"
#include "loader/knobs.h"

struct bpf_session;

/* Called for every ring-buffer record, in ring order. */
typedef int (*bpf_record_fn)(void *ctx, const void *data, size_t size);

struct bpf_session_config {
	bool system_wide;
	bool trace_switches;
	/* the perf events sampled, each attached with its index as the
	 * sample program's BPF cookie (the record's event field) */
	const struct perf_event_request *events;
	int n_events;
	/* --off-cpu: time switched out, summed in the kernel by stack as
	 * event off_cpu_event; shorter than off_cpu_min_ns only counted */
	bool off_cpu;
	uint64_t off_cpu_min_ns;
	int off_cpu_event;
	unsigned int ring_bytes;   /* a power of two, at least a page */
	bool dwarf;                /* copy user registers and stack */
	bool cfi;                  /* unwind with tables (loader/unwind_tables.h) */
	/* the runtimes' frame kinds (a bit each, COLLECTOR_FRAME_*) whose
	 * walks are loaded when their first process is met (runtime_procs.h) */
	uint32_t walk_kinds;
	/* ... those loaded at the start, before sampling: a -p target runs
	 * the runtime now (runtimes_walks_needed()) */
	uint32_t ahead_walk_kinds;
	unsigned int cfi_rows;     /* rows (and page index entries) the tables may grow to */
	unsigned int stack_bytes;
	/* CPU samples summed in the kernel by stack (bpf/sample_agg.bpf.h),
	 * no ring record each: read at least every second by
	 * bpf_session_drain(), and by bpf_session_read_aggregates() */
	bool aggregate_samples;
	bool verbose;
	struct bpf_knobs knobs;    /* the tests' overrides (loader/knobs.h) */
	bpf_record_fn on_record;
	void *ctx;
};

/* Opens and loads the programs and attaches the task tracepoints.
 * Returns 0 or a negative errno, after naming what failed on stderr. */
int bpf_session_open(struct bpf_session **out, const struct bpf_session_config *cfg);
/* Sets the ctx passed to cfg.on_record. */
void bpf_session_set_context(struct bpf_session *s, void *ctx);
int bpf_session_add_target(struct bpf_session *s, pid_t tgid);
/* tgid is the launched command, held before its exec: its samples until
 * then are the profiler's own forked copy's (cfi copies none of their
 * stacks for user space). */
void bpf_session_hold_target(struct bpf_session *s, pid_t tgid);
int bpf_session_remove_target(struct bpf_session *s, pid_t tgid);
/* The fd of a map of the sampling object ("targets", "events"), to share
 * with the tracing object. */
int bpf_session_map_fd(struct bpf_session *s, const char *name);
/* The mappings the program learned (bpf/unwind_learn.bpf.h) are dropped:
 * an image's rows are about to be given to another. */
void bpf_session_next_unwind_epoch(struct bpf_session *s);
size_t bpf_session_ring_bytes(struct bpf_session *s);
/* The knobs the session was opened with (loader/knobs.h), for the tracer. */
const struct bpf_knobs *bpf_session_knobs(const struct bpf_session *s);
/* Whether this machine can open event e (perf_event_open on the calling
 * thread, disabled, closed at once): 0, or the negative errno (-ENOENT,
 * -EOPNOTSUPP: no such event here, as for a hardware event without a PMU).
 * Needs no BPF. */
int bpf_session_probe_event(const struct perf_event_request *e);
/* Opens the events and attaches the sampler: each event on every online
 * CPU for a system-wide run (or with no tgids), else on every thread of
 * each of the n_tgids processes, inherited by the tasks they create after.
 * Returns 0 or a negative errno, after naming what failed on stderr. */
int bpf_session_start_sampling(struct bpf_session *s, const pid_t *tgids, int n_tgids);
/* --off-cpu: time switched out before ktime_ns (CLOCK_MONOTONIC) is not
 * counted; start_sampling sets it to its own time. */
void bpf_session_offcpu_since(struct bpf_session *s, uint64_t ktime_ns);
/* --off-cpu's window (bpf/offcpu_window.bpf.h; loader/offcpu_window.c).
 * window_start, once sched_switch is attached and the targets are known:
 * the target threads out since before the run are counted from its
 * start, by their stacks where they wait (sent through the ring).
 * window_cut: every target thread still out has its time up to ktime_ns
 * counted (in the kernel's sums, or through the ring for a copied stack),
 * the rest from ktime_ns on; at the run's end, with until set, no switch-in
 * counts past ktime_ns.  Each returns 0, or a negative errno after saying
 * what failed; without --off-cpu they do nothing. */
int bpf_session_window_start(struct bpf_session *s);
/* --off-cpu: the kernel's scheduler text, [start, end) of .sched.text and
 * of the lock slow paths' text; zeros when unknown. */
void bpf_session_sched_text(struct bpf_session *s, uint64_t ranges[4]);
int bpf_session_window_cut(struct bpf_session *s, uint64_t ktime_ns, bool until);
/* Detaches the sampler and closes its events; records already in the ring
 * stay there for the final drain. */
void bpf_session_stop_sampling(struct bpf_session *s);
/* Consumes the records in the ring (submitted with or without a wakeup),
 * and with cfg.aggregate_samples the kernel's sums when they are due:
 * all of them, or with max_ns > 0 those it gets through in about max_ns,
 * so that a ring filled as fast as it is read does not hold the caller
 * (the run's end, its intervals) for ever.  Returns how many, or a
 * negative errno. */
int bpf_session_drain(struct bpf_session *s, uint64_t max_ns);
/* Whether the last drain stopped at max_ns with records still waiting. */
bool bpf_session_backlog(const struct bpf_session *s);
/* An fd that epoll reports readable when the ring asks to be drained. */
int bpf_session_epoll_fd(struct bpf_session *s);
/* Counters summed over CPUs. */
int bpf_session_counters(struct bpf_session *s, uint64_t out[COLLECTOR_CNT_MAX]);
/* Sample records lost (ring full), by event index, summed over CPUs. */
int bpf_session_lost_by_event(struct bpf_session *s, uint64_t out[COLLECTOR_MAX_EVENTS]);
/* Samples counted in the kernel's by-instruction aggregate. */
int bpf_session_aggregate_total(struct bpf_session *s, uint64_t *by_ip);
/* Hands every sum aggregated in the kernel by stack (--off-cpu, and the
 * CPU samples with cfg.aggregate_samples) to cfg.on_record as a
 * COLLECTOR_EV_AGG_SAMPLE record stamped now, and takes it out of the map
 * (the next read has what came after).  Off-CPU stacks stay stored; the
 * CPU samples' stacks go with their sums.  Returns the number of sums, or
 * a negative errno. */
int bpf_session_read_aggregates(struct bpf_session *s);
/* Run time of the BPF programs so far (ns), 0 if stats are unavailable. */
uint64_t bpf_session_run_time_ns(struct bpf_session *s);
int bpf_session_online_cpus(struct bpf_session *s);
/* How many times the sampling program ran (its bpf_stats run count; 0
 * when the kernel keeps no statistics): samples of targets and, for -a,
 * of everything else. */
uint64_t bpf_session_sampler_runs(struct bpf_session *s);
void bpf_session_close(struct bpf_session *s);

#endif /* COLLECTOR_BPF_SESSION_H */
