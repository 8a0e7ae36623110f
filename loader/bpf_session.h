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

struct bpf_session;

/* Called for every ring-buffer record, in ring order. */
typedef int (*bpf_record_fn)(void *ctx, const void *data, size_t size);

struct bpf_session_config {
	bool system_wide;
	bool trace_switches;
	unsigned int freq;
	unsigned int ring_bytes;   /* a power of two, at least a page */
	bool dwarf;                /* copy user registers and stack */
	bool cfi;                  /* unwind with tables (loader/unwind_tables.h) */
	unsigned int cfi_rows;     /* rows the tables hold, all images together */
	unsigned int cfi_pages;    /* 4 KiB pages of text they index */
	unsigned int stack_bytes;
	bool verbose;
	bpf_record_fn on_record;
	void *ctx;
};

/* Opens and loads the programs and attaches the task tracepoints.
 * Returns 0 or a negative errno, after naming what failed on stderr. */
int bpf_session_open(struct bpf_session **out, const struct bpf_session_config *cfg);
/* Sets the ctx passed to cfg.on_record. */
void bpf_session_set_context(struct bpf_session *s, void *ctx);
int bpf_session_add_target(struct bpf_session *s, pid_t tgid);
int bpf_session_remove_target(struct bpf_session *s, pid_t tgid);
/* The fd of a map of the sampling object ("targets", "events"), to share
 * with the tracing object. */
int bpf_session_map_fd(struct bpf_session *s, const char *name);
size_t bpf_session_ring_bytes(struct bpf_session *s);
/* Opens one cpu-clock event per online CPU and attaches the sampler. */
int bpf_session_start_sampling(struct bpf_session *s);
/* Detaches the sampler and closes its events; records already in the ring
 * stay there for the final drain. */
void bpf_session_stop_sampling(struct bpf_session *s);
/* Consumes the records in the ring (submitted with or without a wakeup):
 * all of them, or with max_ns > 0 those it gets through in about max_ns,
 * so that a ring filled as fast as it is read does not hold the caller
 * (the run's end, its intervals) for ever.  Returns how many, or a
 * negative errno. */
int bpf_session_drain(struct bpf_session *s, uint64_t max_ns);
/* An fd that epoll reports readable when the ring asks to be drained. */
int bpf_session_epoll_fd(struct bpf_session *s);
/* Counters summed over CPUs. */
int bpf_session_counters(struct bpf_session *s, uint64_t out[COLLECTOR_CNT_MAX]);
/* Samples counted in the kernel's by-instruction aggregate. */
int bpf_session_aggregate_total(struct bpf_session *s, uint64_t *by_ip);
/* Run time of the BPF programs so far (ns), 0 if stats are unavailable. */
uint64_t bpf_session_run_time_ns(struct bpf_session *s);
int bpf_session_online_cpus(struct bpf_session *s);
void bpf_session_close(struct bpf_session *s);

#endif /* COLLECTOR_BPF_SESSION_H */
