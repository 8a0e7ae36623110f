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
#define COUNTERS trace_counters
#define COUNTERS_MAX COLLECTOR_TCNT_MAX
#define CNT_WAKEUPS COLLECTOR_TCNT_WAKEUPS
#include "common.bpf.h"

/* Set by the loader through skel->rodata before load (and filter_tgids and
 * wakeup_bytes: common.bpf.h). */
const volatile bool stream_events = true;
const volatile u32 n_args = 0;
/* slots a thread uses, minus one: fewer only to test the func_stats path */
const volatile u32 slot_mask = COLLECTOR_TRACE_SLOTS - 1;

/* Set by the loader when the run ends: from then on no call is counted or
 * streamed, entry or exit.  The calls complete by then are whole (a caller
 * with all its callees), which detaching the probes could not give: the
 * entry and return probes come off at two different instants. */
bool stopped = false;

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

/* A Python call's entry and return probes run in one activation of the
 * interpreter's evaluator, whose calls all see about one stack pointer:
 * within this many bytes (trace_python.bpf.h). */
#define PY_SP_SLACK 256

/* Entries of an equal stack pointer scanned for an earlier call of the
 * same function: the tail callers above it are few. */
#define TAIL_SCAN 4

/*
 * Drops the shadow entries of calls that returned without their exit (a
 * longjmp over them, their return probe attached after their entry probe,
 * the kernel's limit on nested return probes): a call at stack pointer sp
 * is made from frames above sp, so entries at lower addresses are gone.
 * At the same address, an entry of another function is a caller that
 * tail-called this one (its exit comes with ours); one of the same function
 * is an earlier call from that very frame.  Returns the new depth.
 */
static __always_inline u32 drop_returned(struct collector_shadow_stack *st, u32 func, u64 sp,
					 bool python)
{
	u32 d = st->depth, top = d, i;
	/* a Python call: the calls of the same evaluator activation stay */
	u64 gone_below = python ? sp - PY_SP_SLACK : sp;

	for (i = 0; i < COLLECTOR_TRACE_DEPTH && d > 0; i++) {
		if (st->sp[(d - 1) & (COLLECTOR_TRACE_DEPTH - 1)] >= gone_below)
			break;
		d--;
	}
	for (i = 0; i < TAIL_SCAN && i < d && !python; i++) {
		u32 k = (d - 1 - i) & (COLLECTOR_TRACE_DEPTH - 1);

		if (st->sp[k] != sp)
			break;
		if (st->func[k] == func) {
			d = k;
			break;
		}
	}
	if (d < top)
		count_n(COLLECTOR_TCNT_FRAMES_DROPPED, top - d);
	return d;
}

/* A call of func enters: onto the thread's shadow stack, and streamed.
 * python: a Python function's call (trace_python.bpf.h). */
static __always_inline int enter_call(struct pt_regs *ctx, u32 tgid, u32 tid, u32 func,
				      bool python)
{
	u64 now = bpf_ktime_get_ns(), sp = PT_REGS_SP(ctx);
	struct collector_shadow_stack *st;
	struct collector_trace_event *e;
	u32 d;

	st = bpf_task_storage_get(&shadow, bpf_get_current_task_btf(), NULL,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count(COLLECTOR_TCNT_SHADOW_FULL);
		return 0;
	}
	d = drop_returned(st, func, sp, python);
	st->depth = d;
	if (d >= COLLECTOR_TRACE_DEPTH) {
		/* its exit finds no entry at its frame, and is left out too */
		count(COLLECTOR_TCNT_DEPTH_OVERFLOW);
		return 0;
	}
	/* keep the mask below: the check above does not bound d for the
	 * verifier once the compiler has narrowed it */
	barrier_var(d);
	st->func[d & (COLLECTOR_TRACE_DEPTH - 1)] = func;
	st->sp[d & (COLLECTOR_TRACE_DEPTH - 1)] = sp;
	st->start_ns[d & (COLLECTOR_TRACE_DEPTH - 1)] = now;
	st->child_ns[d & (COLLECTOR_TRACE_DEPTH - 1)] = 0;
	st->depth = d + 1;

	if (!stream_events)
		return 0;
	/* n_args is a constant to the verifier (read-only data): the record
	 * stops after the arguments asked for, 32 bytes with none. */
	e = bpf_ringbuf_reserve(&events, COLLECTOR_TRACE_EXIT_SIZE + n_args * sizeof(u64), 0);
	if (!e) {
		count(COLLECTOR_TCNT_RB_FULL_ENTRY);
		return 0;
	}
	fill_header(&e->hdr, COLLECTOR_EV_TRACE, tgid, tid, now);
	e->func = func;
	e->kind = COLLECTOR_TRACE_ENTRY;
	e->n_args = n_args;
	e->pad = 0;
	/* (a Python call's arguments are Python objects: none recorded) */
	if (n_args > 0)
		e->args[0] = python ? 0 : PT_REGS_PARM1(ctx);
	if (n_args > 1)
		e->args[1] = python ? 0 : PT_REGS_PARM2(ctx);
	if (n_args > 2)
		e->args[2] = python ? 0 : PT_REGS_PARM3(ctx);
	if (n_args > 3)
		e->args[3] = python ? 0 : PT_REGS_PARM4(ctx);
	if (n_args > 4)
		e->args[4] = python ? 0 : PT_REGS_PARM5(ctx);
	if (n_args > 5)
		e->args[5] = python ? 0 : ctx->r9; /* libbpf 1.1 has no PT_REGS_PARM6 */
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("uprobe")
int trace_entry(struct pt_regs *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32;

	if (stopped || !in_targets(tgid))
		return 0;
	return enter_call(ctx, tgid, (u32)id, (u32)bpf_get_attach_cookie(ctx), false);
}

/* The func_stats entry of (tgid, tid, func), created if need be. */
static __always_inline struct collector_func_stats *hash_stats(u32 tgid, u32 tid, u32 func)
{
	struct collector_func_key key = { .tgid = tgid, .tid = tid, .func = func };
	struct collector_func_stats *fs, *z;
	u32 zero = 0;

	fs = bpf_map_lookup_elem(&func_stats, &key);
	if (fs)
		return fs;
	z = bpf_map_lookup_elem(&zero_stats, &zero);
	if (!z)
		return NULL;
	bpf_map_update_elem(&func_stats, &key, z, BPF_NOEXIST);
	fs = bpf_map_lookup_elem(&func_stats, &key);
	if (!fs)
		count(COLLECTOR_TCNT_STATS_FULL);
	return fs;
}

/* One thread updates its own stats (slot or key): no atomics needed. */
static __always_inline void add_call(struct collector_func_stats *fs, u64 dur, u64 self)
{
	u32 b = log2_bucket(dur);

	fs->calls++;
	fs->total_ns += dur;
	fs->self_ns += self;
	if (b < COLLECTOR_HIST_BUCKETS)
		fs->hist[b]++;
}

/*
 * A call's aggregates go to the thread's slot for the function, already in
 * hand with the shadow stack: a hash lookup per call cost about as much as
 * the rest of the bookkeeping.  Past COLLECTOR_TRACE_SLOTS functions in a
 * thread (or on a slot taken by another function), func_stats directly.
 */
static __always_inline void account(struct collector_shadow_stack *st, u32 tgid, u32 tid,
				    u32 func, u64 dur, u64 self)
{
	struct collector_trace_slot *s = &st->slot[func & slot_mask & (COLLECTOR_TRACE_SLOTS - 1)];
	struct collector_func_stats *fs;

	if (s->func_plus_1 == func + 1) {
		add_call(&s->stats, dur, self);
		return;
	}
	if (s->func_plus_1 == 0) {
		/* free slots are zero: never used, or merged and cleared */
		s->func_plus_1 = func + 1;
		add_call(&s->stats, dur, self);
		return;
	}
	count(COLLECTOR_TCNT_SLOT_TAKEN);
	fs = hash_stats(tgid, tid, func);
	if (fs)
		add_call(fs, dur, self);
}

/* trace_python.bpf.h: a Python call whose entry the probes did not give */
static __always_inline int py_return_unentered(u32 tgid, u32 tid, u32 func,
					       struct collector_shadow_stack *st);

/* A call of func returns: matched with its entry on the shadow stack,
 * accounted, and streamed.  python: a Python function's return. */
static __always_inline int leave_call(struct pt_regs *ctx, u32 tgid, u32 tid, u32 func,
				      bool python)
{
	u64 now = bpf_ktime_get_ns();
	/* native: the returning call's entry sp + 8; Python: the evaluator's
	 * sp, its calls' entries within PY_SP_SLACK of it */
	u64 sp = PT_REGS_SP(ctx) + (python ? PY_SP_SLACK : 0);
	struct collector_shadow_stack *st;
	struct collector_trace_event *e;
	u32 d, i, match = COLLECTOR_TRACE_DEPTH;
	u64 dur, self;

	st = bpf_task_storage_get(&shadow, bpf_get_current_task_btf(), NULL, 0);
	if (python && (!st || st->depth == 0))
		return py_return_unentered(tgid, tid, func, st);
	if (!st || st->depth == 0) {
		count(COLLECTOR_TCNT_EXIT_NO_ENTRY);
		return 0;
	}
	d = st->depth;
	/* The innermost open call of this function below this frame: normally
	 * the top.  Entries above it never returned through their exit probe
	 * and are dropped; entries at or above sp are callers, still running.
	 * Indexes are masked with DEPTH - 1 (a power of two) so the verifier
	 * sees them bounded. */
	for (i = 0; i < COLLECTOR_TRACE_DEPTH; i++) {
		u32 k = (d - 1 - i) & (COLLECTOR_TRACE_DEPTH - 1);

		if (i >= d || st->sp[k] >= sp)
			break;
		if (st->func[k] == func) {
			match = k;
			break;
		}
	}
	if (match >= COLLECTOR_TRACE_DEPTH && python)
		return py_return_unentered(tgid, tid, func, st);
	if (match >= COLLECTOR_TRACE_DEPTH) {
		/* the i entries above this frame are gone all the same; a call
		 * past the depth limit returns beneath the top (i == 0), and
		 * its entry was counted as an overflow */
		if (i > 0 || d < COLLECTOR_TRACE_DEPTH)
			count(COLLECTOR_TCNT_EXIT_NO_ENTRY);
		if (i > 0 && i <= d) {
			count_n(COLLECTOR_TCNT_FRAMES_DROPPED, i);
			st->depth = d - i;
		}
		return 0;
	}
	if (match + 1 < d)
		count_n(COLLECTOR_TCNT_FRAMES_DROPPED, d - match - 1);
	match &= COLLECTOR_TRACE_DEPTH - 1;
	dur = now - st->start_ns[match];
	self = dur > st->child_ns[match] ? dur - st->child_ns[match] : 0;
	st->depth = match;
	if (match > 0)
		st->child_ns[(match - 1) & (COLLECTOR_TRACE_DEPTH - 1)] += dur;
	account(st, tgid, tid, func, dur, self);

	if (!stream_events)
		return 0;
	e = bpf_ringbuf_reserve(&events, COLLECTOR_TRACE_EXIT_SIZE, 0);
	if (!e) {
		count(COLLECTOR_TCNT_RB_FULL_EXIT);
		return 0;
	}
	fill_header(&e->hdr, COLLECTOR_EV_TRACE, tgid, tid, now);
	e->func = func;
	e->kind = COLLECTOR_TRACE_EXIT;
	e->n_args = 0;
	e->pad = 0;
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("uretprobe")
int trace_exit(struct pt_regs *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32;

	if (stopped || !in_targets(tgid))
		return 0;
	return leave_call(ctx, tgid, (u32)id, (u32)bpf_get_attach_cookie(ctx), false);
}

#include "trace_python.bpf.h"

/* Threads whose slots are being merged or were reported, by tid: the
 * first of the exit tracepoint and the end-of-run iterator to insert a
 * thread's tid handles its slots, the other leaves them alone (a thread
 * can exit while the iterator walks the tasks). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 16);
	__type(key, u32);
	__type(value, u8);
} claimed SEC(".maps");

enum collector_trace_claimant {
	COLLECTOR_CLAIM_EXIT = 1,
	COLLECTOR_CLAIM_ITER = 2,
};

/* Whether the caller handles tid's slots.  The iterator may be asked to
 * show a task again (its output did not fit in the read buffer): its own
 * claim lets it. */
static __always_inline bool claim(u32 tid, u8 who, u64 calls)
{
	long err = bpf_map_update_elem(&claimed, &tid, &who, BPF_NOEXIST);
	u8 *prev;

	if (!err)
		return true;
	if (err == -EEXIST) {
		prev = bpf_map_lookup_elem(&claimed, &tid);
		return prev && *prev == who && who == COLLECTOR_CLAIM_ITER;
	}
	count_n(COLLECTOR_TCNT_CLAIM_FULL, calls);
	return false;
}

/* calls held in a thread's slots */
static __always_inline u64 slot_calls(struct collector_shadow_stack *st)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < COLLECTOR_TRACE_SLOTS; i++)
		n += st->slot[i].stats.calls;
	return n;
}

/* A thread's storage goes with it: its slots move to func_stats first. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(trace_thread_exit, struct task_struct *p)
{
	struct collector_shadow_stack *st;
	u32 tgid, tid, i, k;

	st = bpf_task_storage_get(&shadow, p, NULL, 0);
	if (!st)
		return 0;
	tgid = p->tgid;
	tid = p->pid;
	if (!claim(tid, COLLECTOR_CLAIM_EXIT, slot_calls(st)))
		return 0;
	for (i = 0; i < COLLECTOR_TRACE_SLOTS; i++) {
		struct collector_trace_slot *s = &st->slot[i];
		struct collector_func_stats *fs;

		if (!s->func_plus_1)
			continue;
		fs = hash_stats(tgid, tid, s->func_plus_1 - 1);
		if (!fs) {
			/* counted once above; these calls are lost too */
			count_n(COLLECTOR_TCNT_STATS_FULL, s->stats.calls - 1);
			continue;
		}
		fs->calls += s->stats.calls;
		fs->total_ns += s->stats.total_ns;
		fs->self_ns += s->stats.self_ns;
		for (k = 0; k < COLLECTOR_HIST_BUCKETS; k++) {
			fs->hist[k] += s->stats.hist[k];
			s->stats.hist[k] = 0;
		}
		/* the storage outlives the tracepoint: a later iterator must
		 * find the slot free, and free slots are zero */
		s->stats.calls = 0;
		s->stats.total_ns = 0;
		s->stats.self_ns = 0;
		s->func_plus_1 = 0;
	}
	bpf_map_delete_elem(&claimed, &tid);
	return 0;
}

/*
 * End of the run (stopped): the threads still alive report their slots as
 * (collector_func_key, collector_func_stats) records.  Read only: the
 * claim, kept, stops the exit tracepoint from merging the same slots
 * again.
 */
SEC("iter/task")
int trace_report_slots(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task;
	struct collector_shadow_stack *st;
	struct collector_func_key key = {};
	u32 i;

	if (!task)
		return 0;
	st = bpf_task_storage_get(&shadow, task, NULL, 0);
	if (!st)
		return 0;
	key.tgid = task->tgid;
	key.tid = task->pid;
	if (!claim(key.tid, COLLECTOR_CLAIM_ITER, slot_calls(st)))
		return 0;
	for (i = 0; i < COLLECTOR_TRACE_SLOTS; i++) {
		struct collector_trace_slot *s = &st->slot[i];

		if (!s->func_plus_1)
			continue;
		key.func = s->func_plus_1 - 1;
		bpf_seq_write(seq, &key, sizeof(key));
		bpf_seq_write(seq, &s->stats, sizeof(s->stats));
	}
	return 0;
}
