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
 * counts; a thread still out when the run ends is not counted.
 *
 * Included by sample.bpf.c after user_frames_fp() and task_user_regs().
 */
#ifndef COLLECTOR_OFFCPU_BPF_H
#define COLLECTOR_OFFCPU_BPF_H

#include "stack_agg.bpf.h"

/* Set by the loader through skel->rodata before load. */
const volatile u64 off_cpu_min_ns = 1000;
const volatile u32 off_cpu_event = 0;
/* Set by the loader through skel->bss: time out before it is not counted
 * (a launched command waits for its go before the exec; a -p target may
 * have been out since long before the run). */
u64 offcpu_since_ns = 0;

struct offcpu_state {
	u64 start_ns;     /* 0: not switched out (as far as we saw) */
	u64 kernel_stack;
	u64 user_stack;
	u64 user_ip, user_sp, user_bp; /* the registers user_stack was walked from */
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

static __always_inline void offcpu_switch_out(void *ctx, struct task_struct *prev, u32 tid)
{
	struct offcpu_state st, *old;
	struct sample_scratch *sc;
	u32 slot = OFFCPU_SCRATCH, nk = 0, nu = 0, tgid = BPF_CORE_READ(prev, tgid);
	struct pt_regs *regs;
	bool added;
	long r;

	sc = bpf_map_lookup_elem(&sample_scratch, &slot);
	if (!sc) {
		count(COLLECTOR_CNT_OFFCPU_NO_STATE);
		return;
	}
	/* prev is the current task here: the stack where it calls schedule() */
	r = bpf_get_stack(ctx, sc->frames, COLLECTOR_MAX_STACK_DEPTH * sizeof(u64), 0);
	if (r > 0)
		nk = r / sizeof(u64);
	else
		count(COLLECTOR_CNT_KSTACK_FAIL);
	if (nk > COLLECTOR_MAX_STACK_DEPTH)
		nk = COLLECTOR_MAX_STACK_DEPTH;
	regs = task_user_regs(prev);
	st.user_ip = st.user_sp = st.user_bp = 0;
	if (regs) {
		st.user_ip = BPF_CORE_READ(regs, ip);
		st.user_sp = BPF_CORE_READ(regs, sp);
		st.user_bp = BPF_CORE_READ(regs, bp);
	}
	old = bpf_map_lookup_elem(&offcpu_states, &tid);
	/* The same user registers (ip, sp, bp at kernel entry) as at the
	 * thread's last switch-out: taken for the same user stack (a loop
	 * around one blocking call), not walked again.  Measured (make
	 * bench-offcpu, ping-pong through pipes, back to back on a loaded
	 * machine): 5.9 us a run before, 3.4 us after.  A caller above the
	 * innermost frame pointer that changed while those three stayed equal
	 * (two callers with frames of the same size calling one function)
	 * keeps the older stack. */
	if (regs && old && old->user_stack && old->user_ip == st.user_ip &&
	    old->user_sp == st.user_sp && old->user_bp == st.user_bp &&
	    /* a Python thread's Python stack may differ under the same
	     * native registers (time.sleep called from two functions) */
	    !bpf_map_lookup_elem(&python_procs, &tgid)) {
		st.user_stack = old->user_stack;
		st.kernel_stack = agg_put_stack(sc->frames, 0, nk);
		goto keep;
	}
	/* the walk the samples get: the unwind tables, else frame pointers */
	if (regs && cfi_mode)
		nu = user_frames_cfi(sc, nk, tgid, prev, st.user_ip, st.user_sp, st.user_bp,
				     false);
	else if (regs)
		nu = user_frames_fp(sc, nk, st.user_ip, st.user_sp, st.user_bp, -1);
	if (nu > COLLECTOR_MAX_STACK_DEPTH)
		nu = COLLECTOR_MAX_STACK_DEPTH;
	/* where a Python thread waits, by Python stack (python.bpf.h) */
	if (nu)
		nu += python_frames(sc, nk + nu, COLLECTOR_MAX_STACK_DEPTH - nu, tgid, prev);
	st.kernel_stack = agg_put_stack(sc->frames, 0, nk);
	st.user_stack = agg_store_stack(&agg_stacks, sc->frames, nk, nu,
					agg_stack_hash(sc->frames, nk, nu), &added);
	if (added)
		python_code_notice(sc, nk, nu, tgid, tid);
keep:
	st.start_ns = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&offcpu_states, &tid, &st, BPF_ANY) != 0)
		count(COLLECTOR_CNT_OFFCPU_NO_STATE);
}

static __always_inline void offcpu_switch_in(struct task_struct *next, u32 tgid, u32 tid)
{
	struct offcpu_state *st = bpf_map_lookup_elem(&offcpu_states, &tid);
	struct collector_agg_key key = {};
	u64 out_ns, start;

	if (!st || !st->start_ns)
		return;
	start = st->start_ns > offcpu_since_ns ? st->start_ns : offcpu_since_ns;
	out_ns = bpf_ktime_get_ns() - start;
	st->start_ns = 0;
	if (out_ns < off_cpu_min_ns) {
		count(COLLECTOR_CNT_OFFCPU_SHORT);
		return;
	}
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
	u32 pid = BPF_CORE_READ(prev, pid);

	if (pid && is_target(BPF_CORE_READ(prev, tgid)))
		offcpu_switch_out(ctx, prev, pid);
	pid = BPF_CORE_READ(next, pid);
	if (pid) {
		u32 tgid = BPF_CORE_READ(next, tgid);

		if (is_target(tgid))
			offcpu_switch_in(next, tgid, pid);
	}
	return 0;
}

#endif /* COLLECTOR_OFFCPU_BPF_H */
