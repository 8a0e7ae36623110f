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
 * agg_store_stack() and agg_add_in() take the maps: the CPU samples'
 * sums (sample_agg.bpf.h) are kept in maps of their own.
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

/* The hash of frames[first..first + n), 0 for no frames (first below 256:
 * frames has 256 slots). */
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

/* Stores frames[first..first + n) (frames has 256 slots, first below 256
 * and n at most COLLECTOR_MAX_STACK_DEPTH), whose hash is h, in the stacks
 * map once; returns h, and in *added whether this call stored it. */
static __always_inline u64 agg_store_stack(void *stacks, const u64 *frames, u32 first, u32 n,
					   u64 h, bool *added)
{
	struct collector_agg_stack *st;
	u32 zero = 0;
	long err;

	*added = false;
	if (!h || bpf_map_lookup_elem(stacks, &h))
		return h;
	st = bpf_map_lookup_elem(&agg_stack_scratch, &zero);
	if (!st)
		return h;
	first &= 255;
	n &= 127;
	st->n = n;
	st->pad = 0;
	/* a kernel read: the source is not checked by the verifier, and
	 * frames + first + n stays inside the caller's scratch */
	if (n)
		bpf_probe_read_kernel(st->frames, n * sizeof(u64), &frames[first]);
	err = bpf_map_update_elem(stacks, &h, st, BPF_NOEXIST);
	if (!err)
		*added = true;
	else if (err != -EEXIST)
		count(COLLECTOR_CNT_AGG_STACKS_FULL);
	return h;
}

static __always_inline u64 agg_put_stack(const u64 *frames, u32 first, u32 n)
{
	bool added;

	return agg_store_stack(&agg_stacks, frames, first, n, agg_stack_hash(frames, first, n),
			       &added);
}

/* Adds (count, weight) to key's sums in the sums map; returns 1 when this
 * call made the entry, else 0. */
static __always_inline int agg_add_in(void *counts, const struct collector_agg_key *key, u64 n,
				      u64 weight)
{
	struct collector_agg_value *v = bpf_map_lookup_elem(counts, key);
	struct collector_agg_value init = { .count = n, .weight = weight };
	long err;

	if (!v) {
		err = bpf_map_update_elem(counts, key, &init, BPF_NOEXIST);
		if (!err)
			return 1;
		if (err != -EEXIST) {
			count(COLLECTOR_CNT_AGG_KEYS_FULL);
			return 0;
		}
		v = bpf_map_lookup_elem(counts, key);
		if (!v)
			return 0;
	}
	__sync_fetch_and_add(&v->count, n);
	__sync_fetch_and_add(&v->weight, weight);
	return 0;
}

static __always_inline void agg_add(const struct collector_agg_key *key, u64 n, u64 weight)
{
	agg_add_in(&agg_counts, key, n, weight);
}

#endif /* COLLECTOR_STACK_AGG_BPF_H */
