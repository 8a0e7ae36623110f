// SPDX-License-Identifier: GPL-2.0
/*
 * The sums the BPF programs keep by stack, read out of the kernel's maps
 * and handed to on_record as COLLECTOR_EV_AGG_SAMPLE records: the off-CPU
 * time (bpf/offcpu.bpf.h) and the CPU samples (bpf/sample_agg.bpf.h).
 *
 * The CPU samples' maps come in two slots (bpf/collector.h): a read flips
 * the slot the program adds to, waits until no program is still adding to
 * the old one, and then reads and empties the old slot's sums and stacks.
 * No add can fall between a sum's read and its delete, and no sum can name
 * a stack emptied before it was read: the counts are exact, every sample
 * the program summed is delivered once, or was counted as refused by a
 * full map.
 */
#include "loader/bpf_session_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample.skel.h"

/* A slot is read at least this often, and sooner once its maps are half
 * full (checked at every drain: the drain loop wakes every 100 to 500 ms). */
#define AGG_READ_NS 1000000000ULL
#define AGG_FILL_PERCENT 50
/* A rate for an event sampled every N events (not at a frequency): what
 * it can reach is unknown, this is a guess at its busiest. */
#define AGG_COUNT_EVENT_HZ 10000
#define AGG_MIN_ENTRIES 1024u
#define AGG_MAX_KEYS (1u << 18)     /* about 100 bytes each */
#define AGG_MAX_STACKS (1u << 13)   /* about 1 KiB each */

static uint32_t pow2_at_least(uint64_t n)
{
	uint32_t p = AGG_MIN_ENTRIES;

	while (p < n && p < (1u << 30))
		p <<= 1;
	return p;
}

/*
 * Each sample adds at most one sum, so a slot's sums map needs at most as
 * many entries as samples come between two reads: the events' rates (-F,
 * or -e's) times the CPUs (one sample per CPU at a time, whatever the
 * threads) times AGG_READ_NS.  The half-full check at every drain (every
 * 500 ms at most) reads it before it fills when samples come at full rate
 * and every one makes a new sum.  At the default 999 Hz on 2 CPUs: 2 048
 * sums.  A sample stores up to two stacks (kernel and user), but stacks
 * repeat: measured, the fullest one-second read held 109 stacks for 122
 * sums (xz -9, cfi, 999 Hz), 430 for 380 (python3 loop) and 3 032 for
 * 4 001 at 9 999 Hz (python3: nearly a stack per sample).  As many stacks
 * as sums, then, but at 1 KiB each no more than AGG_MAX_STACKS (8 MiB a
 * slot, 2.7 times python3's at 9 999 Hz): a stack a full map refuses is
 * counted (its samples keep their count, without frames).
 */
void bpf_session_size_aggregates(struct bpf_session *s)
{
	const struct bpf_session_config *cfg = &s->cfg;
	uint64_t rate = 0, per_read;
	bool on = cfg->aggregate_samples;

	for (int i = 0; i < cfg->n_events; i++)
		rate += cfg->events[i].use_freq ? cfg->events[i].freq : AGG_COUNT_EVENT_HZ;
	per_read = rate * (uint64_t)s->n_cpus * AGG_READ_NS / 1000000000ULL;
	s->agg_keys = per_read < AGG_MAX_KEYS ? pow2_at_least(per_read) : AGG_MAX_KEYS;
	s->agg_stacks = per_read < AGG_MAX_STACKS ? pow2_at_least(per_read) : AGG_MAX_STACKS;
	/* the tests' overrides (a full map on purpose) */
	if (cfg->knobs.agg_keys)
		s->agg_keys = cfg->knobs.agg_keys;
	if (cfg->knobs.agg_stacks)
		s->agg_stacks = cfg->knobs.agg_stacks;
	if (!on)
		s->agg_keys = s->agg_stacks = 1;
	bpf_map__set_max_entries(s->skel->maps.sample_counts0, s->agg_keys);
	bpf_map__set_max_entries(s->skel->maps.sample_counts1, s->agg_keys);
	bpf_map__set_max_entries(s->skel->maps.sample_stacks0, s->agg_stacks);
	bpf_map__set_max_entries(s->skel->maps.sample_stacks1, s->agg_stacks);
	s->skel->rodata->aggregate_samples = on;
	/* the per-instruction map costs a hash update per sample and 16 MiB
	 * of buckets (14 ms to create and free): a counter tells the samples
	 * the kernel took (COLLECTOR_CNT_AGG_SAMPLES), summed or streamed */
	s->skel->rodata->count_by_ip = cfg->knobs.count_by_ip;
	if (!s->skel->rodata->count_by_ip)
		bpf_map__set_max_entries(s->skel->maps.ip_counts, 1);
	/* the key-by-key read (kernels without batch operations), for the tests */
	s->no_batch = cfg->knobs.agg_no_batch;
	s->agg_read_ns = bpf_session_monotonic_ns();
}

/* One sum and its stacks (NULL: none, or refused by a full map), as a
 * record to on_record. */
static int deliver_aggregate(struct bpf_session *s, const struct collector_agg_key *k,
			     const struct collector_agg_value *v,
			     const struct collector_agg_stack *kst,
			     const struct collector_agg_stack *ust, uint64_t now, uint64_t *buf)
{
	struct collector_agg_sample_event *e = (struct collector_agg_sample_event *)buf;
	uint64_t *frames = (uint64_t *)(e + 1);
	uint32_t nk = 0, nu = 0;

	memset(e, 0, sizeof(*e));
	if (kst) {
		nk = kst->n < COLLECTOR_MAX_STACK_DEPTH ? kst->n : COLLECTOR_MAX_STACK_DEPTH;
		memcpy(frames, kst->frames, nk * sizeof(uint64_t));
	}
	if (ust) {
		nu = ust->n < COLLECTOR_MAX_STACK_DEPTH ? ust->n : COLLECTOR_MAX_STACK_DEPTH;
		memcpy(frames + nk, ust->frames, nu * sizeof(uint64_t));
	}
	e->sample.hdr.kind = COLLECTOR_EV_AGG_SAMPLE;
	e->sample.hdr.ktime_ns = now;
	e->sample.hdr.tgid = k->tgid;
	e->sample.hdr.tid = k->tid;
	e->sample.period = v->weight;
	e->sample.n_kernel = nk;
	e->sample.n_user = nu;
	e->sample.kernel_mode = nk > 0;
	e->sample.ip = nk ? frames[0] : nu ? frames[nk] : 0;
	e->sample.user_ip = nu ? frames[nk] : 0;
	e->sample.event = k->event;
	e->sample.user_end = k->user_end <= COLLECTOR_END_COMPLETE ? k->user_end : 0;
	e->count = v->count;
	return s->cfg.on_record(s->cfg.ctx, e, sizeof(*e) + (nk + nu) * sizeof(uint64_t));
}

/* Stack hash h of a stacks map, into *st: st, or NULL when the map has none. */
static const struct collector_agg_stack *map_stack(struct bpf_map *stacks, uint64_t h,
						   struct collector_agg_stack *st)
{
	if (!h || bpf_map__lookup_elem(stacks, &h, sizeof(h), st, sizeof(*st), 0) != 0)
		return NULL;
	return st;
}

/* Every key of a hash map, in *keys (malloc'd); returns how many, or a
 * negative errno.  Deleting while walking would restart the walk. */
static long map_keys(struct bpf_map *map, size_t key_size, void **keys)
{
	size_t n = 0, cap = 0;
	char *k = NULL;

	for (;;) {
		if (n == cap) {
			char *nk = realloc(k, (cap = cap ? 2 * cap : 256) * key_size);

			if (!nk) {
				free(k);
				return -ENOMEM;
			}
			k = nk;
		}
		if (bpf_map__get_next_key(map, n ? k + (n - 1) * key_size : NULL, k + n * key_size,
					  key_size) != 0)
			break;
		n++;
	}
	*keys = k;
	return (long)n;
}

/* Every sum of a sums map, each taken out atomically (what a CPU adds
 * after its read goes to the next read) and delivered with its stacks;
 * *n_keys: the sums the map held.  Returns the sums delivered, or a
 * negative errno. */
static int deliver_sums(struct bpf_session *s, struct bpf_map *counts, struct bpf_map *stacks,
			uint64_t now, uint64_t *buf, long *n_keys)
{
	struct collector_agg_key *keys;
	long n = map_keys(counts, sizeof(*keys), (void **)&keys);
	int err = 0, done = 0;

	*n_keys = n;
	if (n < 0)
		return (int)n;
	for (long i = 0; i < n && !err; i++) {
		struct collector_agg_stack kst, ust;
		struct collector_agg_value v;

		if (bpf_map_lookup_and_delete_elem(bpf_map__fd(counts), &keys[i], &v) != 0)
			continue;
		err = deliver_aggregate(s, &keys[i], &v, map_stack(stacks, keys[i].kernel_stack, &kst),
					map_stack(stacks, keys[i].user_stack, &ust), now, buf);
		done++;
	}
	free(keys);
	return err ? err : done;
}

/* Sums a per-CPU u64 array entry over the CPUs (0 when unreadable). */
static uint64_t percpu_sum(struct bpf_session *s, struct bpf_map *map, uint32_t key)
{
	uint64_t vals[s->n_cpus], sum = 0;

	if (bpf_map__lookup_elem(map, &key, sizeof(key), vals, sizeof(vals), 0) != 0)
		return 0;
	for (int c = 0; c < s->n_cpus; c++)
		sum += vals[c];
	return sum;
}

static void percpu_zero(struct bpf_session *s, struct bpf_map *map, uint32_t key)
{
	uint64_t vals[s->n_cpus];

	memset(vals, 0, sizeof(vals));
	bpf_map__update_elem(map, &key, sizeof(key), vals, sizeof(vals), 0);
}

/* Makes the other slot the one the program adds to, and waits until no
 * program adds to the old one any more (a program runs for microseconds:
 * the wait is a few polls at most).  Returns the old slot. */
static uint32_t flip_slot(struct bpf_session *s)
{
	uint32_t old = s->skel->bss->sample_agg_slot & 1;
	struct timespec pause = { 0, 20000 };

	__atomic_store_n(&s->skel->bss->sample_agg_slot, old ^ 1, __ATOMIC_SEQ_CST);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (int i = 0; i < 50000 && percpu_sum(s, s->skel->maps.sample_agg_inflight, old); i++)
		nanosleep(&pause, NULL);
	return old;
}

/* Empties a slot's map no program adds to any more; returns the entries
 * it had, or a negative errno. */
static long clear_map(struct bpf_map *map, size_t key_size)
{
	void *keys;
	long n = map_keys(map, key_size, &keys);

	for (long i = 0; i < n; i++)
		bpf_map__delete_elem(map, (char *)keys + i * key_size, key_size, 0);
	if (n >= 0)
		free(keys);
	return n;
}

/*
 * A quiescent slot's map (no program adds to it any more) read and emptied
 * in batches: a few system calls for all its entries, where the walk key
 * by key made three per sum (next key, lookup and delete, then a lookup
 * per stack) and two per stack: 13% of a continuous -a run's own CPU under
 * a build loop (self-profile).  Its keys and values into *keys and *vals
 * (malloc'd, room for hint entries to start); returns the entries, or a
 * negative errno: -EINVAL or -EOPNOTSUPP when the kernel has no batch
 * operations for the map (then nothing was taken).
 */
static long take_all(struct bpf_map *map, size_t key_size, size_t val_size, size_t hint,
		     void **keys_out, void **vals_out)
{
	size_t cap = hint < 64 ? 64 : hint, n = 0;
	char *keys = malloc(cap * key_size), *vals = malloc(cap * val_size);
	uint32_t in = 0, out = 0; /* a hash map's batch position: a bucket */
	bool first = true;
	long err = 0;

	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t count = (uint32_t)(cap - n);

		if (!keys || !vals) {
			err = -ENOMEM;
			break;
		}
		err = bpf_map_lookup_and_delete_batch(bpf_map__fd(map), first ? NULL : &in, &out,
						      keys + n * key_size, vals + n * val_size,
						      &count, &opts);
		err = err ? -errno : 0;
		if (err == 0 || err == -ENOENT || err == -ENOSPC)
			n += count;
		if (err == -ENOENT) { /* past the last bucket */
			err = 0;
			break;
		}
		if (err && err != -ENOSPC)
			break;
		if (err == 0) {
			in = out;
			first = false;
		}
		/* -ENOSPC: the next bucket holds more than the room left */
		if (err == -ENOSPC || n == cap) {
			char *nk, *nv;

			cap *= 2;
			nk = realloc(keys, cap * key_size);
			keys = nk ? nk : keys;
			nv = nk ? realloc(vals, cap * val_size) : NULL;
			vals = nv ? nv : vals;
			if (!nk || !nv) {
				err = -ENOMEM;
				break;
			}
		}
	}
	/* entries taken before another error are delivered: they are gone
	 * from the map */
	if (err && (n == 0 || err == -ENOMEM)) {
		free(keys);
		free(vals);
		return err;
	}
	*keys_out = keys;
	*vals_out = vals;
	return (long)n;
}

/* A stack of a slot's batch: its hash, its index in the batch. */
struct stack_ref {
	uint64_t hash;
	uint32_t i;
};

static int stack_ref_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct stack_ref *)a)->hash, y = ((const struct stack_ref *)b)->hash;

	return x < y ? -1 : x > y;
}

static const struct collector_agg_stack *batch_stack(const struct stack_ref *refs, size_t n,
						     const struct collector_agg_stack *vals,
						     uint64_t hash)
{
	struct stack_ref key = { .hash = hash };
	const struct stack_ref *r;

	if (!hash)
		return NULL;
	r = bsearch(&key, refs, n, sizeof(*refs), stack_ref_cmp);
	return r ? &vals[r->i] : NULL;
}

/* A slot's fill counter (how many sums or stacks its programs added), at
 * most max (the map's entries). */
static size_t slot_fill(struct bpf_session *s, uint32_t slot, uint32_t which, uint32_t max)
{
	uint64_t n = percpu_sum(s, s->skel->maps.sample_agg_fill,
				slot * COLLECTOR_AGG_FILL_MAX + which);

	return n < max ? (size_t)n : max;
}

/* The quiescent slot's sums and stacks taken in batches and delivered;
 * *n_keys and *n_stacks: what the slot held.  Returns the sums delivered,
 * or a negative errno (-EINVAL, -EOPNOTSUPP: no batch operations, nothing
 * taken). */
static int deliver_slot(struct bpf_session *s, uint32_t slot, uint64_t now, uint64_t *buf,
			long *n_keys, long *n_stacks)
{
	struct bpf_map *counts = slot ? s->skel->maps.sample_counts1 : s->skel->maps.sample_counts0;
	struct bpf_map *stacks = slot ? s->skel->maps.sample_stacks1 : s->skel->maps.sample_stacks0;
	struct collector_agg_key *keys = NULL;
	struct collector_agg_value *vals = NULL;
	struct collector_agg_stack *stack_vals = NULL;
	uint64_t *stack_keys = NULL;
	struct stack_ref *refs = NULL;
	long n, ns;
	int err = 0, done = 0;

	n = take_all(counts, sizeof(*keys), sizeof(*vals), slot_fill(s, slot, COLLECTOR_AGG_FILL_KEYS, s->agg_keys),
		     (void **)&keys, (void **)&vals);
	*n_keys = n;
	*n_stacks = 0;
	if (n < 0)
		return (int)n;
	ns = take_all(stacks, sizeof(*stack_keys), sizeof(*stack_vals),
		      slot_fill(s, slot, COLLECTOR_AGG_FILL_STACKS, s->agg_stacks), (void **)&stack_keys,
		      (void **)&stack_vals);
	if (ns < 0) {
		err = (int)ns; /* the sums delivered without their frames */
		ns = 0;
	}
	*n_stacks = ns;
	refs = ns ? malloc(ns * sizeof(*refs)) : NULL;
	if (ns && !refs) {
		err = -ENOMEM;
		ns = 0;
	}
	for (long i = 0; i < ns; i++)
		refs[i] = (struct stack_ref){ stack_keys[i], (uint32_t)i };
	if (ns)
		qsort(refs, ns, sizeof(*refs), stack_ref_cmp);
	for (long i = 0; i < n; i++) {
		int e = deliver_aggregate(s, &keys[i], &vals[i],
					  batch_stack(refs, ns, stack_vals, keys[i].kernel_stack),
					  batch_stack(refs, ns, stack_vals, keys[i].user_stack), now, buf);

		if (e) {
			err = e;
			break;
		}
		done++;
	}
	free(refs);
	free(stack_keys);
	free(stack_vals);
	free(keys);
	free(vals);
	return err ? err : done;
}

/* The CPU samples' sums of the slot just left, then its maps emptied:
 * in batches, or key by key where the kernel has no batch operations. */
static int read_samples(struct bpf_session *s, uint64_t now, uint64_t *buf)
{
	uint32_t old = flip_slot(s);
	long n = 0, ns = 0;
	int done = s->no_batch ? -EOPNOTSUPP : deliver_slot(s, old, now, buf, &n, &ns);

	if (done == -EOPNOTSUPP || done == -EINVAL) {
		struct bpf_map *counts = old ? s->skel->maps.sample_counts1
					     : s->skel->maps.sample_counts0;
		struct bpf_map *stacks = old ? s->skel->maps.sample_stacks1
					     : s->skel->maps.sample_stacks0;

		s->no_batch = true;
		done = deliver_sums(s, counts, stacks, now, buf, &n);
		ns = clear_map(stacks, sizeof(uint64_t));
	}
	s->agg_reads++;
	if (n > 0 && (uint64_t)n > s->agg_most_keys)
		s->agg_most_keys = n;
	if (ns > 0 && (uint64_t)ns > s->agg_most_stacks)
		s->agg_most_stacks = ns;
	for (uint32_t k = 0; k < COLLECTOR_AGG_FILL_MAX; k++)
		percpu_zero(s, s->skel->maps.sample_agg_fill, old * COLLECTOR_AGG_FILL_MAX + k);
	s->agg_read_ns = now;
	return done;
}

int bpf_session_read_aggregates(struct bpf_session *s)
{
	uint64_t *buf, now = bpf_session_monotonic_ns();
	int off = 0, cpu = 0;
	long n;

	if (!s->cfg.off_cpu && !s->cfg.aggregate_samples)
		return 0;
	buf = malloc(sizeof(struct collector_agg_sample_event) +
		     2 * COLLECTOR_MAX_STACK_DEPTH * sizeof(uint64_t));
	if (!buf)
		return -ENOMEM;
	/* off-CPU stacks stay: a thread switched out holds their hashes
	 * until it is back; a copied stack's time up to a cut comes apart */
	if (s->cfg.off_cpu && (off = bpf_session_window_pieces(s)) >= 0)
		off = deliver_sums(s, s->skel->maps.agg_counts, s->skel->maps.agg_stacks, now, buf,
				   &n);
	if (s->cfg.aggregate_samples && off >= 0)
		cpu = read_samples(s, now, buf);
	free(buf);
	return off < 0 ? off : cpu < 0 ? cpu : off + cpu;
}

int bpf_session_read_aggregates_if_due(struct bpf_session *s)
{
	uint32_t slot = s->skel->bss->sample_agg_slot & 1;
	uint64_t now = bpf_session_monotonic_ns(), keys, stacks;

	if (now - s->agg_read_ns >= AGG_READ_NS)
		return bpf_session_read_aggregates(s);
	keys = percpu_sum(s, s->skel->maps.sample_agg_fill,
			  slot * COLLECTOR_AGG_FILL_MAX + COLLECTOR_AGG_FILL_KEYS);
	stacks = percpu_sum(s, s->skel->maps.sample_agg_fill,
			    slot * COLLECTOR_AGG_FILL_MAX + COLLECTOR_AGG_FILL_STACKS);
	if (keys * 100 >= (uint64_t)s->agg_keys * AGG_FILL_PERCENT ||
	    stacks * 100 >= (uint64_t)s->agg_stacks * AGG_FILL_PERCENT)
		return bpf_session_read_aggregates(s);
	return 0;
}

void bpf_session_report_aggregates(struct bpf_session *s)
{
	if (!s->cfg.aggregate_samples || !s->cfg.verbose)
		return;
	fprintf(stderr, "collector: in-kernel sums: 2 slots of %u sums and %u stacks "
		"(%.1f MiB); %llu reads (%s), the fullest %llu sums and %llu stacks\n", s->agg_keys,
		s->agg_stacks,
		2.0 * (s->agg_keys * 100.0 + s->agg_stacks * (sizeof(struct collector_agg_stack) + 56.0)) /
		1048576, (unsigned long long)s->agg_reads, s->no_batch ? "key by key" : "in batches",
		(unsigned long long)s->agg_most_keys,
		(unsigned long long)s->agg_most_stacks);
}
