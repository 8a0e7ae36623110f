/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the BPF programs share (sample.bpf.c, trace.bpf.c): the process
 * filter, the ring buffer and how records are submitted to it, the record
 * header, and each program's per-CPU counters.
 *
 * Each program is its own object with its own copy of these maps; the
 * loader makes them one where they must be: the tracer's `targets` and
 * `events` are the sampler's (bpf_map__reuse_fd by name), so samples and
 * traced calls share one filter and arrive in one time order.  Their names
 * and types are therefore the same in every program, and defined only here.
 *
 * Before including this header a program defines COUNTERS, the name of its
 * per-CPU counters map (the loader reads it by that name), COUNTERS_MAX, its
 * number of counters, and CNT_WAKEUPS, the counter of forced ring wakeups.
 *
 * Set by the loader through skel->rodata before load: filter_tgids (false:
 * every process) and wakeup_bytes (ring fill past which a submit wakes the
 * reader).
 */
#ifndef COLLECTOR_COMMON_BPF_H
#define COLLECTOR_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "collector.h"

#if !defined(COUNTERS) || !defined(COUNTERS_MAX) || !defined(CNT_WAKEUPS)
#error "define COUNTERS, COUNTERS_MAX and CNT_WAKEUPS before including common.bpf.h"
#endif

#ifndef EEXIST
#define EEXIST 17
#endif

char LICENSE[] SEC("license") = "GPL";

const volatile bool filter_tgids = true;
const volatile u64 wakeup_bytes = 1 << 20;

/* The target processes, by tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, u32);   /* tgid */
	__type(value, u8);
} targets SEC(".maps");

/* Every record, in one time order. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by the loader */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNTERS_MAX);
	__type(key, u32);
	__type(value, u64);
} COUNTERS SEC(".maps");

static __always_inline void count_n(u32 which, u64 n)
{
	u64 *c = bpf_map_lookup_elem(&COUNTERS, &which);

	if (c)
		*c += n;
}

static __always_inline void count(u32 which)
{
	count_n(which, 1);
}

static __always_inline bool target_listed(u32 tgid)
{
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* A process to follow: every one without the filter, else those in
 * targets. */
static __always_inline bool in_targets(u32 tgid)
{
	if (!filter_tgids)
		return true;
	return target_listed(tgid);
}

/* Submit without waking the reader unless the ring fills past a threshold:
 * a wakeup per record costs 2-4 us here. */
static __always_inline u64 submit_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes) {
		count(CNT_WAKEUPS);
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void fill_header(struct collector_event_header *h, u32 kind, u32 tgid,
					u32 tid, u64 ktime_ns)
{
	h->kind = kind;
	h->cpu = bpf_get_smp_processor_id();
	h->ktime_ns = ktime_ns;
	h->tgid = tgid;
	h->tid = tid;
}

#endif /* COLLECTOR_COMMON_BPF_H */
