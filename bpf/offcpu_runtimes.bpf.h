/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runtimes' walks of a switch-out's stack (--off-cpu): programs of
 * their own on sched_switch, reached by tail call from on_switch_offcpu
 * (runtime_walk_offcpu(), runtime.bpf.h) and loaded with the sampler's
 * walks when the run meets the runtime's first process
 * (loader/runtime_procs.c).  Each goes on with the switch-out in the
 * off-CPU scratch and its state (offcpu_new_state) and ends it as
 * on_switch_offcpu would (offcpu_switch_out_end()).  The switch-in of
 * next was done before the tail call.
 *
 * Included by sample.bpf.c after offcpu.bpf.h.
 */
#ifndef COLLECTOR_OFFCPU_RUNTIMES_BPF_H
#define COLLECTOR_OFFCPU_RUNTIMES_BPF_H

/* The JVM's walk of a switch-out's stack, from where on_switch_offcpu's
 * walk stopped at a JVM's code: Java frames and the native ones below. */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_java, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 slot = OFFCPU_SCRATCH, zero = 0, tgid = BPF_CORE_READ(prev, tgid);
	struct sample_scratch *sc = bpf_map_lookup_elem(&sample_scratch, &slot);
	struct offcpu_state *st = bpf_map_lookup_elem(&offcpu_new_state, &zero);

	if (!sc || !st)
		return 0;
	offcpu_switch_out_end(sc, st, sc->e.n_kernel, unwind_walk_resume(sc, tgid), tgid,
			      BPF_CORE_READ(prev, pid));
	return 0;
}

/* CPython's walk of a switch-out's stack: where a Python thread waits,
 * by its Python frames after the native ones. */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_python, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	u32 slot = OFFCPU_SCRATCH, zero = 0, tgid = BPF_CORE_READ(prev, tgid), nk, nu;
	struct sample_scratch *sc = bpf_map_lookup_elem(&sample_scratch, &slot);
	struct offcpu_state *st = bpf_map_lookup_elem(&offcpu_new_state, &zero);

	if (!sc || !st)
		return 0;
	nk = sc->e.n_kernel & 127;
	nu = sc->e.n_user & 255;
	if (nu > COLLECTOR_MAX_STACK_DEPTH)
		nu = COLLECTOR_MAX_STACK_DEPTH;
	nu += python_frames(sc, nk + nu, COLLECTOR_MAX_STACK_DEPTH - nu, tgid, prev);
	offcpu_switch_out_end(sc, st, nk, nu, tgid, BPF_CORE_READ(prev, pid));
	return 0;
}

#endif /* COLLECTOR_OFFCPU_RUNTIMES_BPF_H */
