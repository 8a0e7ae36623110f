/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPU samples summed in the kernel by whole stack, when no format the run
 * writes needs its samples one by one in time order: the sampling program
 * then writes no ring record, it adds 1 and the sample's period to the sum
 * of (process, thread, event, how the user walk ended, kernel stack, user
 * stack), each stack stored once by hash (stack_agg.bpf.h).
 *
 * Two slots of maps (bpf/collector.h says how the loader and the program
 * share them): the loader empties a slot no program is adding to, so no
 * add falls between its read and its delete, and no sum names a stack
 * emptied before it was read.  Every insertion a full map refuses is
 * counted (COLLECTOR_CNT_AGG_KEYS_FULL, _STACKS_FULL); every sample summed
 * is counted (COLLECTOR_CNT_AGG_SAMPLES), in place of ip_counts.
 *
 * sample_agg_add() is a global function: the verifier checks it once, on
 * its own, not again for each of the (many, in cfi mode) states of the
 * sampling program that reach its call.
 *
 * Included by sample.bpf.c after struct sample_scratch and
 * stack_agg.bpf.h.
 */
#ifndef COLLECTOR_SAMPLE_AGG_BPF_H
#define COLLECTOR_SAMPLE_AGG_BPF_H

/* Set by the loader through skel->rodata before load. */
const volatile bool aggregate_samples = false;
/* Set by the loader through skel->bss: the slot the program adds to. */
u32 sample_agg_slot = 0;

/* Sizes: set by the loader (loader/bpf_session.c: agg_map_sizes()). */
struct sample_counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct collector_agg_key);
	__type(value, struct collector_agg_value);
};

struct sample_stacks_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);
	__type(value, struct collector_agg_stack);
};

/* Preallocated, as agg_counts and agg_stacks (stack_agg.bpf.h says why). */
struct sample_counts_map sample_counts0 SEC(".maps");
struct sample_counts_map sample_counts1 SEC(".maps");
struct sample_stacks_map sample_stacks0 SEC(".maps");
struct sample_stacks_map sample_stacks1 SEC(".maps");

/* Per CPU, by slot: programs adding to the slot right now. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, u64);
} sample_agg_inflight SEC(".maps");

/* Per CPU, by slot * COLLECTOR_AGG_FILL_MAX + enum collector_sample_agg_fill:
 * entries the slot's maps took since the loader emptied them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * COLLECTOR_AGG_FILL_MAX);
	__type(key, u32);
	__type(value, u64);
} sample_agg_fill SEC(".maps");

static __always_inline void agg_fill_add(u32 slot, u32 what)
{
	u32 k = slot * COLLECTOR_AGG_FILL_MAX + what;
	u64 *c = bpf_map_lookup_elem(&sample_agg_fill, &k);

	if (c)
		*c += 1;
}

/* The free slots of sc->frames (kernel and user frames use at most
 * 2 * 127 of its 256): where a stack of one frame is put together. */
#define AGG_KERNEL_IP_SLOT 254
#define AGG_USER_IP_SLOT 255

/* The hash of sc->frames[first..first + n): a global function too.  Inline,
 * its loop's every exit (one per stack depth) was verified again with all
 * that follows: the program passed the verifier's million instructions. */
__attribute__((noinline)) u64 sample_stack_hash(struct sample_scratch *sc, u32 first, u32 n)
{
	if (!sc)
		return 0;
	return agg_stack_hash(sc->frames, first & 255, n & 127);
}

static __always_inline void sample_agg_into(void *counts, void *stacks, struct sample_scratch *sc,
					    u32 slot)
{
	struct collector_sample_event *e = &sc->e;
	u32 nk = e->n_kernel & 127, nu = e->n_user & 127, kfirst = 0, ufirst = nk;
	struct collector_agg_key key = {};
	bool added;

	/* what the stream's decoder falls back on: the sampled instruction
	 * for a failed kernel walk, the user PC for a user walk of none */
	if (e->kernel_mode && !nk) {
		sc->frames[AGG_KERNEL_IP_SLOT] = e->ip;
		kfirst = AGG_KERNEL_IP_SLOT;
		nk = 1;
	}
	if (!nu && e->user_ip) {
		sc->frames[AGG_USER_IP_SLOT] = e->user_ip;
		ufirst = AGG_USER_IP_SLOT;
		nu = 1;
	}
	key.tgid = e->hdr.tgid;
	key.tid = e->hdr.tid;
	key.event = e->event;
	key.user_end = e->user_end;
	key.kernel_stack = agg_store_stack(stacks, sc->frames, kfirst, nk,
					   sample_stack_hash(sc, kfirst, nk), &added);
	if (added)
		agg_fill_add(slot, COLLECTOR_AGG_FILL_STACKS);
	key.user_stack = agg_store_stack(stacks, sc->frames, ufirst, nu,
					 sample_stack_hash(sc, ufirst, nu), &added);
	if (added) {
		agg_fill_add(slot, COLLECTOR_AGG_FILL_STACKS);
		runtime_frames_notice(sc, ufirst, nu, e->hdr.tgid, e->hdr.tid);
	}
	if (agg_add_in(counts, &key, 1, e->period))
		agg_fill_add(slot, COLLECTOR_AGG_FILL_KEYS);
	count(COLLECTOR_CNT_AGG_SAMPLES);
}

/* Adds the sample in sc (its record filled, n_kernel and n_user set, the
 * frames in sc->frames) to the sums of the current slot. */
__attribute__((noinline)) int sample_agg_add(struct sample_scratch *sc)
{
	u32 slot;
	u64 *inflight;

	if (!sc)
		return 0;
	slot = *(volatile u32 *)&sample_agg_slot & 1;
	inflight = bpf_map_lookup_elem(&sample_agg_inflight, &slot);
	if (!inflight)
		return 0;
	/* Counted in before the slot is read again, both sides with full
	 * barriers (an atomic add here, the loader's after its flip): either
	 * the loader sees this program in flight and waits for it, or this
	 * program sees the flip and moves to the new slot. */
	__sync_fetch_and_add(inflight, 1);
	if ((*(volatile u32 *)&sample_agg_slot & 1) != slot) {
		__sync_fetch_and_sub(inflight, 1);
		slot ^= 1;
		inflight = bpf_map_lookup_elem(&sample_agg_inflight, &slot);
		if (!inflight)
			return 0;
		__sync_fetch_and_add(inflight, 1);
	}
	if (slot)
		sample_agg_into(&sample_counts1, &sample_stacks1, sc, 1);
	else
		sample_agg_into(&sample_counts0, &sample_stacks0, sc, 0);
	__sync_fetch_and_sub(inflight, 1);
	return 0;
}

#endif /* COLLECTOR_SAMPLE_AGG_BPF_H */
