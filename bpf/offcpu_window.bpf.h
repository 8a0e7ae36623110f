/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --off-cpu's window: the blocks that straddle its ends, so that each
 * target thread's time out adds up over the window whatever it did before
 * the run or does after a cut.
 *
 * offcpu_window is a sleepable task iterator the loader runs on demand
 * (loader/offcpu_window.c), once per target thread, doing window_op
 * (enum collector_window_op):
 *
 *   START  right after sched_switch is attached: a thread off its CPU with
 *          no state in offcpu_states (it has not switched since) went out
 *          before the run.  Its stacks are taken where it waits: the kernel
 *          stack by bpf_get_task_stack(), its user registers as saved at
 *          kernel entry, its Python frames and a copy of the top of its user
 *          stack read with bpf_copy_from_user_task() (the thread is not the
 *          current task: no other read reaches its memory), sent as an
 *          OFFCPU_STACK copy (offcpu.bpf.h) for user space to unwind; its
 *          state says it is out since offcpu_since_ns, and its switch-in
 *          counts the time as any other's.  A thread that ran while its
 *          stacks were taken (its context-switch count moved, or it is on a
 *          CPU) is left out and counted (COLLECTOR_CNT_WINDOW_WOKE); one
 *          whose copy the ring could not take keeps its kernel stack
 *          (COLLECTOR_CNT_WINDOW_NO_USER).  With the ring half full, a
 *          thread is left for the next pass (window_deferred): the loader
 *          drains the ring and runs START again, which takes the threads
 *          still without a state (1 000 blocked Python threads, 32 KiB of
 *          stack each, are twice a 16 MiB ring).
 *   CUT    at an interval's cut and at the run's end (window_at_ns): a
 *          thread still out has its time up to then counted, by the stacks
 *          its switch-out took, and its start moved to the cut, by an
 *          atomic compare-and-exchange against the switch-in's exchange:
 *          one of the two counts each ns.  The time of a thread whose
 *          stacks went to user space as a copy is put in window_pieces, an
 *          OFFCPU_DONE record each with `more` set, which the loader reads
 *          with the kernel's sums: not through the ring, which the cut may
 *          be draining.
 *
 * Its own scratch: the program sleeps (a page of the stack may be swapped
 * out) and is preempted, and the per-CPU slots of the other programs are
 * theirs while it does.  The loader runs one iteration at a time.
 *
 * Included by sample.bpf.c after offcpu.bpf.h.
 */
#ifndef COLLECTOR_OFFCPU_WINDOW_BPF_H
#define COLLECTOR_OFFCPU_WINDOW_BPF_H

/* Set by the loader through skel->bss before each iteration. */
u32 window_op = 0;
u64 window_at_ns = 0;
/* Set here: a thread was left for the next pass (the ring half full). */
u32 window_deferred = 0;

struct window_scratch {
	struct stack_scratch copy;  /* the OFFCPU_STACK record */
	struct sample_scratch walk; /* frames: kernel, then Python */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct window_scratch);
} window_scratch SEC(".maps");

/* By thread id: the time up to a cut of a thread whose stacks are a copy.
 * Summed, should a second cut come before the loader read the first. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, u32);
	__type(value, struct collector_offcpu_done_event);
} window_pieces SEC(".maps");

static __always_inline void window_piece(u32 tgid, u32 tid, u32 seq, u64 out_ns)
{
	struct collector_offcpu_done_event d = { .out_ns = out_ns, .seq = seq, .more = 1 }, *old;

	old = bpf_map_lookup_elem(&window_pieces, &tid);
	if (old && old->seq == seq) {
		__sync_fetch_and_add(&old->out_ns, out_ns);
		return;
	}
	fill_header(&d.hdr, COLLECTOR_EV_OFFCPU_DONE, tgid, tid, bpf_ktime_get_ns());
	if (bpf_map_update_elem(&window_pieces, &tid, &d, BPF_ANY) != 0)
		sample_lost(off_cpu_event);
}

static __always_inline u64 task_switches(struct task_struct *task)
{
	return BPF_CORE_READ(task, nvcsw) + BPF_CORE_READ(task, nivcsw);
}

/* The record of a blocked thread's stacks in ws->copy, from its
 * registers: nk kernel then np Python frames, then the stack copy.
 * Returns its size, 0 when it could not be made. */
static __always_inline u64 window_record(struct window_scratch *ws, struct task_struct *task,
					 struct pt_regs *regs, u32 tgid, u32 tid, u32 nk, u32 np)
{
	struct collector_stack_sample_event *e = &ws->copy.e;
	u32 n = (nk + np) & 127;

	__builtin_memset(&e->sample, 0, sizeof(e->sample));
	fill_header(&e->sample.hdr, COLLECTOR_EV_OFFCPU_STACK, tgid, tid, bpf_ktime_get_ns());
	if (n)
		bpf_probe_read_kernel(ws->copy.data, n * sizeof(u64), ws->walk.frames);
	e->sample.ip = nk ? ws->walk.frames[0] : 0;
	e->sample.n_kernel = nk;
	e->sample.n_user = np; /* the Python frames, before the copy */
	e->sample.kernel_mode = nk > 0;
	e->sample.event = off_cpu_event;
	e->sample.cputime_ns = BPF_CORE_READ(task, se.sum_exec_runtime);
	read_user_regs(&e->regs, regs);
	e->sample.user_ip = e->regs.ip;
	return stack_copy_in(&ws->copy, n, task, true);
}

static __always_inline void window_start(struct task_struct *task, u32 tgid, u32 tid)
{
	struct offcpu_state st = {}, *old;
	struct window_scratch *ws;
	struct pt_regs *regs;
	u32 zero = 0, nk = 0, np = 0;
	u64 switches, size = 0;
	long r;

	if (BPF_CORE_READ(task, on_cpu) || bpf_map_lookup_elem(&offcpu_states, &tid))
		return;
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) * 2 >
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE)) {
		window_deferred = 1;
		return;
	}
	ws = bpf_map_lookup_elem(&window_scratch, &zero);
	if (!ws)
		return;
	switches = task_switches(task);
	r = bpf_get_task_stack(task, ws->walk.frames, COLLECTOR_MAX_STACK_DEPTH * sizeof(u64), 0);
	if (r > 0)
		nk = r / sizeof(u64);
	else
		count(COLLECTOR_CNT_KSTACK_FAIL);
	if (nk > COLLECTOR_MAX_STACK_DEPTH)
		nk = COLLECTOR_MAX_STACK_DEPTH;
	regs = task_user_regs(task);
	if (regs) {
		/* the record holds 127 frames before its copy */
		np = python_frames_of_task(&ws->walk, nk, COLLECTOR_MAX_STACK_DEPTH - nk, tgid,
					   task);
		size = window_record(ws, task, regs, tgid, tid, nk, np);
	}
	if (BPF_CORE_READ(task, on_cpu) || task_switches(task) != switches) {
		count(COLLECTOR_CNT_WINDOW_WOKE);
		return;
	}
	st.start_ns = offcpu_since_ns ? offcpu_since_ns : bpf_ktime_get_ns();
	if (size) {
		/* as offcpu.bpf.h numbers its copies: odd, unlike the last */
		st.copy_seq = (u32)bpf_ktime_get_ns() | 1;
		ws->copy.e.seq = st.copy_seq;
	} else {
		st.kernel_stack = agg_put_stack(ws->walk.frames, 0, nk);
	}
	/* not over a state its own switch-out made meanwhile */
	if (bpf_map_update_elem(&offcpu_states, &tid, &st, BPF_NOEXIST) != 0)
		return;
	count(COLLECTOR_CNT_WINDOW_BLOCKED);
	if (!size) {
		if (regs)
			count(COLLECTOR_CNT_WINDOW_NO_USER);
		return;
	}
	if (bpf_ringbuf_output(&events, &ws->copy, size, submit_flags()) == 0)
		return;
	/* the ring full: its kernel stack, in the state already there */
	count(COLLECTOR_CNT_WINDOW_NO_USER);
	old = bpf_map_lookup_elem(&offcpu_states, &tid);
	if (old && old->copy_seq == st.copy_seq) {
		old->kernel_stack = agg_put_stack(ws->walk.frames, 0, nk);
		old->user_stack = 0;
		old->copy_seq = 0;
	}
}

static __always_inline void window_cut(u32 tgid, u32 tid)
{
	struct offcpu_state *st = bpf_map_lookup_elem(&offcpu_states, &tid);
	struct collector_agg_key key = {};
	u64 start, from, at = window_at_ns;
	u32 seq;

	if (!st)
		return;
	start = st->start_ns;
	if (!start || start >= at)
		return;
	key.kernel_stack = st->kernel_stack;
	key.user_stack = st->user_stack;
	seq = st->copy_seq;
	/* the stacks read first: start_ns still the same after them, no
	 * switch-in (which zeroes it) nor switch-out (a later time) came
	 * between */
	if (__sync_val_compare_and_swap(&st->start_ns, start, at) != start)
		return;
	from = start > offcpu_since_ns ? start : offcpu_since_ns;
	if (at <= from)
		return;
	count(COLLECTOR_CNT_WINDOW_CUT);
	if (seq) {
		window_piece(tgid, tid, seq, at - from);
		return;
	}
	key.tgid = tgid;
	key.tid = tid;
	key.event = off_cpu_event;
	agg_add(&key, 1, at - from);
}

/* Run by the loader only with --off-cpu (its autoload is off else). */
SEC("iter.s/task")
int offcpu_window(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	u32 tid, tgid;

	if (!task)
		return 0;
	tid = BPF_CORE_READ(task, pid);
	tgid = BPF_CORE_READ(task, tgid);
	/* the collector itself (-a) is no target */
	if (!tid || !is_target(tgid) || tgid == bpf_get_current_pid_tgid() >> 32)
		return 0;
	if (window_op == COLLECTOR_WINDOW_START)
		window_start(task, tgid, tid);
	else if (window_op == COLLECTOR_WINDOW_CUT)
		window_cut(tgid, tid);
	return 0;
}

#endif /* COLLECTOR_OFFCPU_WINDOW_BPF_H */
