// SPDX-License-Identifier: GPL-2.0
/*
 * Function tracing through uprobes and uretprobes.
 *
 * Each probe's cookie is the loader's id of the traced function.  Two
 * levels, both in the kernel: per-thread, per-function aggregates (calls,
 * total and self time, a log2 latency histogram) always; the full event
 * stream through the ring buffer when a trace format was asked for.
 * The targets map and the ring buffer are the sampler's own (the loader
 * reuses their fds), so samples and calls arrive in one time order.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "collector.h"

char LICENSE[] SEC("license") = "GPL";

const volatile bool filter_tgids = true;
const volatile bool stream_events = true;
const volatile u32 n_args = 0;
const volatile u64 wakeup_bytes = 1 << 20;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, u32);
	__type(value, u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/* Each thread's shadow stack lives in its task: no lookup by tid, and the
 * kernel frees it when the thread exits. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct collector_shadow_stack);
} shadow SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct collector_func_key);
	__type(value, struct collector_func_stats);
} func_stats SEC(".maps");

/* zeroed values to create map entries from (too big for the BPF stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct collector_func_stats);
} zero_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COLLECTOR_TCNT_MAX);
	__type(key, u32);
	__type(value, u64);
} trace_counters SEC(".maps");

static __always_inline void count(u32 which)
{
	u64 *c = bpf_map_lookup_elem(&trace_counters, &which);

	if (c)
		*c += 1;
}

static __always_inline bool is_target(u32 tgid)
{
	if (!filter_tgids)
		return true;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline u64 submit_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes) {
		count(COLLECTOR_TCNT_WAKEUPS);
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

static __always_inline u32 log2_bucket(u64 v)
{
	u32 r = 0;

	/* floor(log2(v)) without loops the verifier must unroll */
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

static __always_inline void fill_header(struct collector_event_header *h, u32 tgid, u32 tid,
					u64 now)
{
	h->kind = COLLECTOR_EV_TRACE;
	h->cpu = bpf_get_smp_processor_id();
	h->ktime_ns = now;
	h->tgid = tgid;
	h->tid = tid;
}

SEC("uprobe")
int trace_entry(struct pt_regs *ctx)
{
	u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	u32 tgid = id >> 32, tid = (u32)id;
	u32 func = (u32)bpf_get_attach_cookie(ctx);
	struct collector_shadow_stack *st;
	struct collector_trace_event *e;
	u32 d;

	if (!is_target(tgid))
		return 0;
	st = bpf_task_storage_get(&shadow, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count(COLLECTOR_TCNT_SHADOW_FULL);
		return 0;
	}
	d = st->depth;
	if (d >= COLLECTOR_TRACE_DEPTH) {
		count(COLLECTOR_TCNT_DEPTH_OVERFLOW);
		st->depth = d + 1; /* keep counting so the exits pair up */
		return 0;
	}
	st->func[d & (COLLECTOR_TRACE_DEPTH - 1)] = func;
	st->start_ns[d & (COLLECTOR_TRACE_DEPTH - 1)] = now;
	st->child_ns[d & (COLLECTOR_TRACE_DEPTH - 1)] = 0;
	st->depth = d + 1;

	if (!stream_events)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(COLLECTOR_TCNT_RB_FULL_ENTRY);
		return 0;
	}
	fill_header(&e->hdr, tgid, tid, now);
	e->func = func;
	e->kind = COLLECTOR_TRACE_ENTRY;
	e->n_args = n_args;
	e->pad = 0;
	e->args[0] = n_args > 0 ? PT_REGS_PARM1(ctx) : 0;
	e->args[1] = n_args > 1 ? PT_REGS_PARM2(ctx) : 0;
	e->args[2] = n_args > 2 ? PT_REGS_PARM3(ctx) : 0;
	e->args[3] = n_args > 3 ? PT_REGS_PARM4(ctx) : 0;
	e->args[4] = n_args > 4 ? PT_REGS_PARM5(ctx) : 0;
	e->args[5] = n_args > 5 ? ctx->r9 : 0; /* libbpf 1.1 has no PT_REGS_PARM6 */
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

static __always_inline void account(u32 tgid, u32 tid, u32 func, u64 dur, u64 self)
{
	struct collector_func_key key = { .tgid = tgid, .tid = tid, .func = func };
	struct collector_func_stats *fs;
	u32 zero = 0, b;

	fs = bpf_map_lookup_elem(&func_stats, &key);
	if (!fs) {
		struct collector_func_stats *z = bpf_map_lookup_elem(&zero_stats, &zero);

		if (!z)
			return;
		bpf_map_update_elem(&func_stats, &key, z, BPF_NOEXIST);
		fs = bpf_map_lookup_elem(&func_stats, &key);
		if (!fs) {
			count(COLLECTOR_TCNT_STATS_FULL);
			return;
		}
	}
	/* one thread updates its own keys: no atomics needed */
	fs->calls++;
	fs->total_ns += dur;
	fs->self_ns += self;
	b = log2_bucket(dur);
	if (b < COLLECTOR_HIST_BUCKETS)
		fs->hist[b]++;
}

SEC("uretprobe")
int trace_exit(struct pt_regs *ctx)
{
	u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	u32 tgid = id >> 32, tid = (u32)id;
	u32 func = (u32)bpf_get_attach_cookie(ctx);
	struct collector_shadow_stack *st;
	struct collector_trace_event *e;
	u32 d, i, match = COLLECTOR_TRACE_DEPTH;
	u64 dur, self;

	if (!is_target(tgid))
		return 0;
	st = bpf_task_storage_get(&shadow, bpf_get_current_task_btf(), NULL, 0);
	if (!st || st->depth == 0) {
		count(COLLECTOR_TCNT_EXIT_NO_ENTRY);
		return 0;
	}
	d = st->depth;
	if (d > COLLECTOR_TRACE_DEPTH) {
		/* past the tracked depth: this exit pairs with an untracked entry */
		st->depth = d - 1;
		return 0;
	}
	/* The innermost open call of this function: normally the top. Frames
	 * above it never returned through their uretprobe (longjmp, or
	 * attached mid-call) and are dropped.  Indexes are masked with
	 * DEPTH - 1 (a power of two) so the verifier sees them bounded. */
	for (i = 0; i < COLLECTOR_TRACE_DEPTH; i++) {
		u32 k = (d - 1 - i) & (COLLECTOR_TRACE_DEPTH - 1);

		if (i >= d)
			break;
		if (st->func[k] == func) {
			match = k;
			break;
		}
	}
	if (match >= COLLECTOR_TRACE_DEPTH) {
		count(COLLECTOR_TCNT_EXIT_NO_ENTRY);
		return 0;
	}
	for (i = match + 1; i < d && i < COLLECTOR_TRACE_DEPTH; i++)
		count(COLLECTOR_TCNT_FRAMES_DROPPED);
	match &= COLLECTOR_TRACE_DEPTH - 1;
	dur = now - st->start_ns[match];
	self = dur > st->child_ns[match] ? dur - st->child_ns[match] : 0;
	st->depth = match;
	if (match > 0)
		st->child_ns[(match - 1) & (COLLECTOR_TRACE_DEPTH - 1)] += dur;
	account(tgid, tid, func, dur, self);

	if (!stream_events)
		return 0;
	e = bpf_ringbuf_reserve(&events, COLLECTOR_TRACE_EXIT_SIZE, 0);
	if (!e) {
		count(COLLECTOR_TCNT_RB_FULL_EXIT);
		return 0;
	}
	fill_header(&e->hdr, tgid, tid, now);
	e->func = func;
	e->kind = COLLECTOR_TRACE_EXIT;
	e->n_args = 0;
	e->pad = 0;
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}
