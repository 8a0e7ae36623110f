/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kernel side counted, into the model: the sampler's and the
 * tracer's per-CPU counters (events lost by cause, and statistics), and the
 * per-thread, per-function call aggregates of traced functions.
 */
#ifndef COLLECTOR_KERNEL_COUNTERS_H
#define COLLECTOR_KERNEL_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "bpf/collector.h"
#include "model/model.h"
#include "runtimes/runtime.h"

/* The sampler's counters (enum collector_counter), summed over CPUs; the
 * runtimes' by each of rs (NULL: every registered one). */
void decode_sampler_counters(struct model *m, const struct runtimes *rs,
			     const uint64_t c[COLLECTOR_CNT_MAX]);
/* --call-graph cfi: the tables' figures, for the summary with -v. */
struct decode_cfi_figures {
	uint64_t images, rows;   /* tables built and loaded */
	uint64_t index_entries;  /* their page indexes, 8 bytes each like a row */
	uint64_t build_ns;       /* time to build and load them */
	uint64_t map_bytes;      /* the kernel's arrays */
	uint64_t loader_bytes;   /* the tables' thread's caches, at most */
	uint64_t images_evicted, rows_evicted; /* space given to others */
	uint64_t images_no_space; /* no table: no space left */
	uint64_t debug_files;    /* images with CFI from a separate debug file */
	uint64_t built;          /* tables built from an image's CFI */
	uint64_t cache_hits;     /* read from the cache on disk instead */
	uint64_t cache_refused;  /* files there that did not validate (rebuilt) */
	/* mapping tables written from tables built or cached: at exec, at
	 * a first request */
	uint64_t served_exec, served_first;
	/* /proc/PID/maps read by the tracker and the service, and readings
	 * one took from the other (lib/maps_store.h) */
	uint64_t maps_read, maps_reused, maps_followed;
	uint64_t mmap_records, mmap_records_lost; /* lib/mmap_records.h */
	uint64_t open_failed; /* images not opened when met (tried again) */
};
void decode_cfi_tables(struct model *m, const struct decode_cfi_figures *f);
/* The tracer's counters (enum collector_trace_counter). */
void decode_trace_counters(struct model *m, const uint64_t c[COLLECTOR_TCNT_MAX]);
/* Samples the kernel counted by instruction, plus those that did not fit
 * its map: every sample it saw.  Returns that total. */
uint64_t decode_kernel_samples(struct model *m, uint64_t by_ip, uint64_t not_counted);
/* The uprobes' attach: functions skipped, time taken; and the probe cost
 * per call measured at start (ns, negative when not measured). */
void decode_trace_attach(struct model *m, size_t skipped, double attach_seconds,
			 double probe_overhead_ns);
/* One (thread, function) aggregate; ctx is the struct model.  Records of
 * the collector's own calibration calls are left out. */
void decode_func_stats(void *ctx, const struct collector_func_key *key,
		       const struct collector_func_stats *fs);

#endif /* COLLECTOR_KERNEL_COUNTERS_H */
