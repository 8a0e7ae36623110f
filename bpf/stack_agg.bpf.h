/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Aggregation by stack in the kernel, for any event: a stack is stored once
 * in agg_stacks under a 64-bit hash of its frames (inserted with
 * BPF_NOEXIST: the first copy stays), and the sums in agg_counts by
 * struct collector_agg_key (process, thread, event index, kernel and user
 * stack hashes).  Every insertion a full map refuses is counted
 * (COLLECTOR_CNT_AGG_STACKS_FULL, _KEYS_FULL).  The loader reads both maps
 * (loader/bpf_session.c: bpf_session_read_aggregates()).
 *
 * Both maps are preallocated: without, an insertion from the scheduler's
 * tracepoint failed now and then (a run of 50 blocked intervals lost 2
 * stacks), the allocator's per-CPU cache being empty there.
 *
 * Included by a program that defines struct sample_scratch (its frames[]
 * are where stacks are walked into) and count() (common.bpf.h).
 */
#ifndef COLLECTOR_STACK_AGG_BPF_H
#define COLLECTOR_STACK_AGG_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);    /* resized by the loader */
	__type(key, u64);
	__type(value, struct collector_agg_stack);
} agg_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);   /* resized by the loader */
	__type(key, struct collector_agg_key);
	__type(value, struct collector_agg_value);
} agg_counts SEC(".maps");

/* Where a stack is put together before it is stored: too big for the BPF
 * stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct collector_agg_stack);
} agg_stack_scratch SEC(".maps");

/* The hash of frames[first..first + n), 0 for no frames. */
static __always_inline u64 agg_stack_hash(const u64 *frames, u32 first, u32 n)
{
	u64 h = 0x9e3779b97f4a7c15ULL ^ n;

	if (!n)
		return 0;
	for (u32 i = 0; i < COLLECTOR_MAX_STACK_DEPTH; i++) {
		if (i >= n)
			break;
		h = (h ^ frames[(first + i) & 255]) * 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	return h ? h : 1;
}

/* Stores frames[first..first + n) (frames has 256 slots, first and n at
 * most COLLECTOR_MAX_STACK_DEPTH) once; returns its hash. */
static __always_inline u64 agg_put_stack(const u64 *frames, u32 first, u32 n)
{
	u64 h = agg_stack_hash(frames, first, n);
	struct collector_agg_stack *st;
	u32 zero = 0;
	long err;

	if (!h || bpf_map_lookup_elem(&agg_stacks, &h))
		return h;
	st = bpf_map_lookup_elem(&agg_stack_scratch, &zero);
	if (!st)
		return h;
	first &= 127;
	n &= 127;
	st->n = n;
	st->pad = 0;
	if (n)
		bpf_probe_read_kernel(st->frames, n * sizeof(u64), &frames[first]);
	err = bpf_map_update_elem(&agg_stacks, &h, st, BPF_NOEXIST);
	if (err && err != -EEXIST)
		count(COLLECTOR_CNT_AGG_STACKS_FULL);
	return h;
}

/* Adds (count, weight) to key's sums. */
static __always_inline void agg_add(const struct collector_agg_key *key, u64 n, u64 weight)
{
	struct collector_agg_value *v = bpf_map_lookup_elem(&agg_counts, key);
	struct collector_agg_value init = { .count = n, .weight = weight };
	long err;

	if (!v) {
		err = bpf_map_update_elem(&agg_counts, key, &init, BPF_NOEXIST);
		if (!err)
			return;
		if (err != -EEXIST) {
			count(COLLECTOR_CNT_AGG_KEYS_FULL);
			return;
		}
		v = bpf_map_lookup_elem(&agg_counts, key);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->count, n);
	__sync_fetch_and_add(&v->weight, weight);
}

#endif /* COLLECTOR_STACK_AGG_BPF_H */
