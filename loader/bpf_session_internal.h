/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What loader/bpf_session.c and loader/sample_aggregates.c share: the
 * session itself (the skeleton, its events and ring).  Nothing outside
 * loader/ includes this.
 */
#ifndef COLLECTOR_BPF_SESSION_INTERNAL_H
#define COLLECTOR_BPF_SESSION_INTERNAL_H

#include "loader/bpf_session.h"

struct bpf_object;

struct bpf_session {
	struct sample_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;   /* sampling events: n_events of cap_events */
	int *event_fds;
	int n_events, cap_events;
	int n_cpus;          /* possible CPUs */
	int n_online;        /* online CPUs when sampling started */
	int stats_fd;        /* BPF_ENABLE_STATS, -1 if unavailable */
	struct bpf_session_config cfg;
	uint64_t drain_deadline_ns;  /* CLOCK_MONOTONIC; 0: drain until empty */
	bool backlog;                /* the last drain stopped at its deadline */
	uint32_t drained;            /* records in this drain */
	/* CPU samples summed in the kernel (loader/sample_aggregates.c) */
	uint32_t agg_keys, agg_stacks;  /* entries of each slot's maps */
	uint64_t agg_read_ns;           /* CLOCK_MONOTONIC of the last read */
	uint64_t agg_reads;             /* reads of a slot */
	uint64_t agg_most_keys, agg_most_stacks; /* the fullest read's entries */
	bool no_batch;                  /* no batch map operations: key by key */
	/* the runtimes' walks of samples, by frame kind, loaded when met
	 * (loader/runtime_procs.c): the object loaded again with that
	 * program alone, or the error that stopped it */
	struct sample_bpf *walks[16];
	int walk_err[16];
};

uint64_t bpf_session_monotonic_ns(void);
/* COLLECTOR_VERIFIER_STATS: the verifier's figures of obj's programs
 * that load, printed after the load (end). */
void bpf_session_verifier_stats_begin(struct bpf_object *obj, bool on);
void bpf_session_verifier_stats_end(struct bpf_object *obj);
/* Unloads the runtimes' walks (runtime_procs.c). */
void runtime_walks_close(struct bpf_session *s);
/* Sets the sizes of the aggregation maps before load (sample_aggregates.c). */
void bpf_session_size_aggregates(struct bpf_session *s);
/* With -v: the aggregation maps' sizes and how full they got. */
void bpf_session_report_aggregates(struct bpf_session *s);
/* Reads the CPU samples' sums when due: a second since the last read, or
 * a slot's maps half full.  Returns the sums read, or a negative errno. */
int bpf_session_read_aggregates_if_due(struct bpf_session *s);
/* The off-CPU time up to the last cut of the threads whose stacks went
 * through the ring as a copy, each to on_record as an OFFCPU_DONE record
 * with `more` (loader/offcpu_window.c).  Returns how many, or a negative
 * errno. */
int bpf_session_window_pieces(struct bpf_session *s);
/* --off-cpu: where the scheduler's functions are, for the switch-outs'
 * kernel stacks (bpf/offcpu.bpf.h); left unknown (stacks whole) when the
 * kernel does not say. */
void bpf_session_find_sched_text(struct bpf_session *s);

#endif /* COLLECTOR_BPF_SESSION_INTERNAL_H */
