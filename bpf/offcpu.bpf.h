/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --off-cpu: how long each target thread stays switched out, attributed to
 * its kernel and user stacks at the moment it left the CPU, summed in the
 * kernel by stack (stack_agg.bpf.h) as event off_cpu_event, in ns.
 *
 * At switch-out the stacks are walked (the kernel's by bpf_get_stack, the
 * user's by the sampling program's own walk from the registers saved at
 * kernel entry, or taken from the thread's last switch-out when those
 * registers are the same), stored once by hash, and the hashes and the time
 * kept by thread id; at switch-in the time out is added to the
 * sums, or, when shorter than off_cpu_min_ns, only counted
 * (COLLECTOR_CNT_OFFCPU_SHORT).  Only the time after offcpu_since_ns
 * counts; a thread out when the run starts, and one still out at a cut or
 * when it ends, are the window's (offcpu_window.bpf.h), which moves a
 * thread's start_ns to the cut: start_ns is taken at the switch-in and
 * moved by a cut atomically, so that each ns out is counted once.
 *
 * With cfi, a switch-out before the image's table (the unwinder would copy
 * a sample's stack for user space then) sends the kernel frames and a copy
 * of the top of the user stack to user space instead
 * (COLLECTOR_EV_OFFCPU_STACK), and its time at the switch-in
 * (COLLECTOR_EV_OFFCPU_DONE): a program that blocks as soon as it starts
 * (cat reading a pipe) did so before its process's table listed libc, and
 * the frame-pointer walk left it one frame (__read), once in about 20 runs
 * of test_offcpu's pipe under load.
 *
 * Included by sample.bpf.c after user_frames_fp(), task_user_regs() and
 * stack_copy.bpf.h.
 */
#ifndef COLLECTOR_OFFCPU_BPF_H
#define COLLECTOR_OFFCPU_BPF_H

#include "stack_agg.bpf.h"

/* Set by the loader through skel->rodata before load. */
const volatile u64 off_cpu_min_ns = 1000;
const volatile u32 off_cpu_event = 0;
/* Set by the loader through skel->bss: time out before it is not counted
 * (a launched command waits for its go before the exec; a -p target out
 * since before the run is counted from it, offcpu_window.bpf.h), nor after
 * offcpu_until_ns when set (the run's end: the blocks still going on are
 * counted up to it by the window's iterator). */
u64 offcpu_since_ns = 0;
u64 offcpu_until_ns = 0;

/*
 * The scheduler's own functions (the kernel's .sched.text, and its
 * .spinlock.text of lock slow paths), found by find_sched_text, which the
 * loader runs once after load, for user space: it starts a switch-out's
 * kernel stack where the thread chose to wait (hrtimer_nanosleep,
 * pipe_read, futex_wait_queue) and not in __schedule, schedule and
 * do_nanosleep, as the stack the kernel gives of a task that is not
 * running does (bpf_get_task_stack(), offcpu_window.bpf.h): a wait that
 * began before the run and one that began during it are one stack.  Not
 * here: the trimmed stack's length, unknown to the verifier, made it walk
 * the hash loop once per length (over a million instructions).  0: unknown.
 */
u64 sched_text_start = 0, sched_text_end = 0, lock_text_start = 0, lock_text_end = 0;

SEC("syscall")
int find_sched_text(void *ctx)
{
	bpf_kallsyms_lookup_name("__sched_text_start", sizeof("__sched_text_start"), 0,
				 &sched_text_start);
	bpf_kallsyms_lookup_name("__sched_text_end", sizeof("__sched_text_end"), 0,
				 &sched_text_end);
	bpf_kallsyms_lookup_name("__lock_text_start", sizeof("__lock_text_start"), 0,
				 &lock_text_start);
	bpf_kallsyms_lookup_name("__lock_text_end", sizeof("__lock_text_end"), 0,
				 &lock_text_end);
	return 0;
}

/*
 * frames[first..first + n) of sc (first + n within its 256) stored once in
 * agg_stacks; returns their hash.  With notice, a stack stored for the
 * first time with a runtime's frames goes to user space to be named
 * (runtime_frames_notice(), as thread tid of process notice).  A global
 * function: its loops over the frames are verified once, not once per
 * length the caller may hold (on_switch_offcpu's verification went from 112 312 instructions to 56 293).
 */
__noinline u64 offcpu_put_stack(struct sample_scratch *sc, u32 first, u32 n, u32 notice, u32 tid)
{
	bool added;
	u64 h;

	if (!sc)
		return 0;
	first &= 127;
	n &= 127;
	h = agg_store_stack(&agg_stacks, sc->frames, first, n, agg_stack_hash(sc->frames, first, n),
			    &added);
	if (added && notice)
		runtime_frames_notice(sc, first, n, notice, tid);
	return h;
}

struct offcpu_state {
	u64 start_ns;     /* 0: not switched out (as far as we saw); read and
			   * written atomically, it says who counts the time */
	u64 kernel_stack;
	u64 user_stack;
	u64 user_ip, user_sp, user_bp; /* the registers user_stack was walked from */
	u32 copy_seq;     /* not 0: the stacks went to user space as this
			   * OFFCPU_STACK (kernel_stack, user_stack unused) */
	u32 pad;
};

/* By thread id, preallocated: task storage made at switch-out could not
 * be had at times under load (its per-CPU lock is shared by every BPF
 * program that uses task storage), and the time out was then lost
 * (test_offcpu's pipe reader had none, once in three runs).  Least
 * recently used first out: a thread that exited leaves its entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 32768);
	__type(key, u32);
	__type(value, struct offcpu_state);
} offcpu_states SEC(".maps");

/* A switch-out's state as it is put together, per CPU: in map memory, not
 * on the BPF stack, where the walk's calls below it came near the
 * verifier's 512 bytes; and there for the runtimes' walks, which end the
 * switch-out in programs of their own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct offcpu_state);
} offcpu_new_state SEC(".maps");

/*
 * The current task (sched_switch's prev), switched out before its image's
 * table: its user registers and the top of its user stack, after the nk
 * kernel frames the off-CPU walk left in the off-CPU scratch, as
 * COLLECTOR_EV_OFFCPU_STACK number seq.  0 when it went to the ring.  A
 * global function: the verifier checks it once.
 */
__noinline int offcpu_stack_copy(u32 tgid, u32 tid, u32 nk, u32 seq)
{
	struct task_struct *task = bpf_get_current_task_btf();
	u32 cpu = bpf_get_smp_processor_id(), slot = OFFCPU_SCRATCH;
	struct collector_stack_sample_event *e;
	struct sample_scratch *ks;
	struct stack_scratch *sc;
	struct pt_regs *regs;
	u64 size;

	sc = bpf_map_lookup_elem(&scratch, &cpu);
	ks = bpf_map_lookup_elem(&sample_scratch, &slot);
	regs = task_user_regs(task);
	if (!sc || !ks || !regs)
		return -1;
	e = &sc->e;
	__builtin_memset(&e->sample, 0, sizeof(e->sample));
	fill_header(&e->sample.hdr, COLLECTOR_EV_OFFCPU_STACK, tgid, tid, bpf_ktime_get_ns());
	nk &= 127;
	if (nk) {
		bpf_probe_read_kernel(sc->data, nk * sizeof(u64), ks->frames);
		e->sample.ip = ks->frames[0];
	}
	e->sample.n_kernel = nk;
	e->sample.kernel_mode = nk > 0;
	e->sample.event = off_cpu_event;
	read_user_regs(&e->regs, regs);
	e->sample.user_ip = e->regs.ip;
	e->seq = seq;
	size = stack_copy_user(sc, nk);
	if (!size)
		return -1;
	return bpf_ringbuf_output(&events, sc, size, submit_flags()) ? -1 : 0;
}

/* The time out of a thread whose stacks went as OFFCPU_STACK seq. */
static __always_inline void offcpu_copy_done(u32 tgid, u32 tid, u32 seq, u64 out_ns)
{
	struct collector_offcpu_done_event d = { .out_ns = out_ns, .seq = seq, .more = 0 };

	fill_header(&d.hdr, COLLECTOR_EV_OFFCPU_DONE, tgid, tid, bpf_ktime_get_ns());
	if (bpf_ringbuf_output(&events, &d, sizeof(d), submit_flags()) != 0)
		sample_lost(off_cpu_event);
}

/* The switch-out's state st kept by thread id, from now on. */
static __always_inline void offcpu_state_keep(struct offcpu_state *st, u32 tid)
{
	st->start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&offcpu_states, &tid, st, BPF_ANY) != 0)
		count(COLLECTOR_CNT_OFFCPU_NO_STATE);
}

/*
 * A switch-out's end, once the user stack's walk returned nu (the frames
 * after the nk kernel ones in the off-CPU scratch, or UNWIND_COPY_STACK):
 * the stacks stored by hash and the state (st) kept.  Before the image's
 * table, a copy goes to user space instead.  on_switch_offcpu's, and the
 * runtimes' walks' (offcpu_runtimes.bpf.h), which go on from where it
 * handed over.
 */
static __always_inline void offcpu_switch_out_end(struct sample_scratch *sc,
						  struct offcpu_state *st, u32 nk, u32 nu, u32 tgid,
						  u32 tid)
{
	nk &= 127;
	if (nu == UNWIND_COPY_STACK) {
		/* a thread's records come in order (its copy, then its
		 * time): a number unlike its previous one is enough, the
		 * switch-out's time in ns, odd */
		st->copy_seq = (u32)bpf_ktime_get_ns() | 1;
		if (offcpu_stack_copy(tgid, tid, nk, st->copy_seq) == 0)
			goto keep;
		/* the ring full: the frame-pointer walk */
		st->copy_seq = 0;
		nu = unwind_fp_walk(sc, nk, st->user_ip, st->user_sp, st->user_bp) & 255;
	}
	if (nu > COLLECTOR_MAX_STACK_DEPTH)
		nu = COLLECTOR_MAX_STACK_DEPTH;
	st->kernel_stack = offcpu_put_stack(sc, 0, nk, 0, 0);
	st->user_stack = offcpu_put_stack(sc, nk, nu, tgid, tid);
keep:
	offcpu_state_keep(st, tid);
}

static __always_inline void offcpu_switch_out(void *ctx, struct task_struct *prev, u32 tid)
{
	struct offcpu_state *st, *old;
	struct sample_scratch *sc;
	u32 slot = OFFCPU_SCRATCH, zero = 0, nk = 0, nu = 0, tgid = BPF_CORE_READ(prev, tgid);
	struct pt_regs *regs;
	bool python;
	long r;

	sc = bpf_map_lookup_elem(&sample_scratch, &slot);
	st = bpf_map_lookup_elem(&offcpu_new_state, &zero);
	if (!sc || !st) {
		count(COLLECTOR_CNT_OFFCPU_NO_STATE);
		return;
	}
	__builtin_memset(st, 0, sizeof(*st));
	sc->runtime_kinds = 0;
	/* prev is the current task here: the stack where it calls schedule() */
	r = bpf_get_stack(ctx, sc->frames, COLLECTOR_MAX_STACK_DEPTH * sizeof(u64), 0);
	if (r > 0)
		nk = r / sizeof(u64);
	else
		count(COLLECTOR_CNT_KSTACK_FAIL);
	if (nk > COLLECTOR_MAX_STACK_DEPTH)
		nk = COLLECTOR_MAX_STACK_DEPTH;
	regs = task_user_regs(prev);
	if (regs) {
		st->user_ip = BPF_CORE_READ(regs, ip);
		st->user_sp = BPF_CORE_READ(regs, sp);
		st->user_bp = BPF_CORE_READ(regs, bp);
	}
	python = walk_python && bpf_map_lookup_elem(&python_procs, &tgid);
	old = bpf_map_lookup_elem(&offcpu_states, &tid);
	/* The same user registers (ip, sp, bp at kernel entry) as at the
	 * thread's last switch-out: taken for the same user stack (a loop
	 * around one blocking call), not walked again.  Measured (make
	 * bench-offcpu, ping-pong through pipes, back to back on a loaded
	 * machine): 5.9 us a run before, 3.4 us after.  A caller above the
	 * innermost frame pointer that changed while those three stayed equal
	 * (two callers with frames of the same size calling one function)
	 * keeps the older stack.  A Python thread's Python stack may differ
	 * under the same native registers (time.sleep called from two
	 * functions). */
	if (regs && old && old->user_stack && old->user_ip == st->user_ip &&
	    old->user_sp == st->user_sp && old->user_bp == st->user_bp && !python) {
		st->user_stack = old->user_stack;
		st->kernel_stack = offcpu_put_stack(sc, 0, nk, 0, 0);
		offcpu_state_keep(st, tid);
		return;
	}
	if (!regs) {
		offcpu_switch_out_end(sc, st, nk, 0, tgid, tid);
		return;
	}
	/* the walk the samples get (user_stack_walk(): prev is the current
	 * task): the unwind tables, else frame pointers.  A JVM's frames and
	 * a Python thread's are their runtime's walk's, a program of its own
	 * (runtime_walk_offcpu(): the stack cut where it would begin while
	 * that is not loaded). */
	nu = user_stack_walk(sc, nk, st->user_ip, st->user_sp, st->user_bp);
	if (nu == UNWIND_RUNTIME_WALK) {
		runtime_walk_offcpu(ctx, sc, sc->walk.runtime, nk, sc->walk.n);
		nu = sc->walk.n & 255;
	} else if (python) {
		/* a Python thread's stack is its Python frames, which a copy
		 * does not carry: it keeps the frame-pointer walk
		 * (test_python_offcpu lost 40 ms of a 400 ms sleep to a copy) */
		if (nu == UNWIND_COPY_STACK)
			nu = unwind_fp_walk(sc, nk, st->user_ip, st->user_sp, st->user_bp) & 255;
		if (nu)
			runtime_walk_offcpu(ctx, sc, COLLECTOR_FRAME_PYTHON, nk, nu);
	}
	offcpu_switch_out_end(sc, st, nk, nu, tgid, tid);
}

static __always_inline void offcpu_switch_in(struct task_struct *next, u32 tgid, u32 tid)
{
	struct offcpu_state *st = bpf_map_lookup_elem(&offcpu_states, &tid);
	struct collector_agg_key key = {};
	u64 out_ns, start, now = bpf_ktime_get_ns();

	if (!st || !st->start_ns)
		return;
	/* taken, not read: a cut on another CPU moves it only while it is
	 * still the one this switch-out set */
	start = __sync_lock_test_and_set(&st->start_ns, 0);
	if (!start)
		return;
	if (start < offcpu_since_ns)
		start = offcpu_since_ns;
	if (offcpu_until_ns && now > offcpu_until_ns)
		now = offcpu_until_ns;
	out_ns = now > start ? now - start : 0;
	if (out_ns < off_cpu_min_ns)
		count(COLLECTOR_CNT_OFFCPU_SHORT);
	if (st->copy_seq) {
		offcpu_copy_done(tgid, tid, st->copy_seq, out_ns < off_cpu_min_ns ? 0 : out_ns);
		st->copy_seq = 0;
		return;
	}
	if (out_ns < off_cpu_min_ns)
		return;
	key.tgid = tgid;
	key.tid = tid;
	key.event = off_cpu_event;
	key.kernel_stack = st->kernel_stack;
	key.user_stack = st->user_stack;
	agg_add(&key, 1, out_ns);
}

/* Attached only with --off-cpu (the loader turns its autoload off else). */
SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch_offcpu, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 pid = BPF_CORE_READ(next, pid);

	/* next's first: prev's switch-out may end in a runtime's walk (a
	 * tail call, which does not come back) */
	if (pid) {
		u32 tgid = BPF_CORE_READ(next, tgid);

		if (is_target(tgid))
			offcpu_switch_in(next, tgid, pid);
	}
	pid = BPF_CORE_READ(prev, pid);
	if (pid && is_target(BPF_CORE_READ(prev, tgid)))
		offcpu_switch_out(ctx, prev, pid);
	return 0;
}

#endif /* COLLECTOR_OFFCPU_BPF_H */
