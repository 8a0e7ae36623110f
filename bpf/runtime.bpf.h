/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every language runtime's walk shares in the kernel.
 *
 * Contract: a runtime's walk that places a frame of its kind in a
 * scratch's frames marks it (runtime_frames_placed()); a stack the
 * kernel's sums store for the first time that holds any such frame goes to
 * user space once (runtime_frames_notice(): a RUNTIME_FRAMES event), so
 * that its runtime frames are named while the process lives: summed stacks
 * are read at a cut or at the end, when the process may be gone, and a
 * runtime's frame (a code object, a Method* or a compiled method's pc) is
 * named from the live process's memory.  Every walk begins with the
 * scratch's runtime_kinds at 0.
 *
 * A runtime's walk of samples is a program of its own (sample_runtimes.bpf.h),
 * reached from on_sample by runtime_walk(): a tail call through
 * runtime_walks, by frame kind, which falls through while that program
 * is not loaded; its walk of a switch-out's stack (--off-cpu) another
 * (offcpu_runtimes.bpf.h), reached by runtime_walk_offcpu().
 *
 * Included by sample.bpf.c after struct sample_scratch and count().
 */
#ifndef COLLECTOR_RUNTIME_BPF_H
#define COLLECTOR_RUNTIME_BPF_H

static __always_inline void runtime_frames_placed(struct sample_scratch *sc, u32 kind)
{
	sc->runtime_kinds |= 1u << (kind & 31);
}

/* When user space was last woken for a runtime's stack with -a. */
u64 runtime_wake_ns;

/* Woken for -a's at most this often: a busy machine's short JVMs (javac
 * lives a second) had 1.1% of their Java frames unnamed, their stacks
 * read after they were gone when they waited for the next drain (30 ms),
 * and a wake per new stack would be thousands a second at a JVM's start. */
#define RUNTIME_WAKE_NS 1000000ULL

/* frames[first..first + n) of sc, just stored in the sums for thread tid
 * of process tgid: sent when the walk placed a runtime's frame.  Rare:
 * once per new stack per slot.  A target's wakes user space at once: a
 * JVM's last stacks (its String.format at exit, interpreted) were read
 * after it had exited, 23 to 300 frames unnamed a `-- java` run, when
 * they waited for the next drain; -a's at most every RUNTIME_WAKE_NS. */
static __always_inline void runtime_frames_notice(struct sample_scratch *sc, u32 first, u32 n,
						  u32 tgid, u32 tid)
{
	struct collector_runtime_frames_event *e;

	n &= 127;
	first &= 255;
	if (!n || !sc->runtime_kinds)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(COLLECTOR_CNT_RB_FULL_SAMPLE);
		return;
	}
	fill_header(&e->hdr, COLLECTOR_EV_RUNTIME_FRAMES, tgid, tid, bpf_ktime_get_ns());
	e->n = n;
	e->pad = 0;
	bpf_probe_read_kernel(e->frames, n * sizeof(u64), &sc->frames[first]);
	if (!filter_tgids) {
		u64 now = e->hdr.ktime_ns;

		if (now - runtime_wake_ns < RUNTIME_WAKE_NS) {
			bpf_ringbuf_submit(e, submit_flags());
			return;
		}
		runtime_wake_ns = now;
	}
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

/*
 * The runtimes' walks of a sample, by frame kind (COLLECTOR_FRAME_JAVA:
 * sample_java, COLLECTOR_FRAME_PYTHON: sample_python): programs of their
 * own, reached by tail call from on_sample, each loaded and verified by
 * the loader when the run meets the runtime's first process
 * (loader/runtime_procs.c), not at every start.  Until then a sample that
 * needs one is taken without it (COLLECTOR_CNT_RUNTIME_UNLOADED).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 16);
	__type(key, u32);
	__type(value, u32);
} runtime_walks SEC(".maps");

/* The same walks of a switch-out's stack (--off-cpu): programs on
 * sched_switch, reached from on_switch_offcpu (offcpu_runtimes.bpf.h),
 * loaded with the sampler's.  An array of their own: a program array
 * holds programs of one type and attach point. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 16);
	__type(key, u32);
	__type(value, u32);
} offcpu_runtime_walks SEC(".maps");

/* The walk of a runtime's frames for the stack in sc (nk kernel frames,
 * nu native user frames so far), by tail call through walks (it ends the
 * program); when that runtime's program is not loaded yet, the call falls
 * through and the stack goes on without it. */
static __always_inline void runtime_walk_in(void *ctx, void *walks, struct sample_scratch *sc,
					    u32 kind, u32 nk, u32 nu)
{
	sc->e.n_kernel = nk;
	sc->e.n_user = nu;
	bpf_tail_call(ctx, walks, kind);
	count(COLLECTOR_CNT_RUNTIME_UNLOADED);
}

/* A sample's (on_sample). */
static __always_inline void runtime_walk(void *ctx, struct sample_scratch *sc, u32 kind, u32 nk,
					 u32 nu)
{
	runtime_walk_in(ctx, &runtime_walks, sc, kind, nk, nu);
}

/* A switch-out's (on_switch_offcpu). */
static __always_inline void runtime_walk_offcpu(void *ctx, struct sample_scratch *sc, u32 kind,
						u32 nk, u32 nu)
{
	runtime_walk_in(ctx, &offcpu_runtime_walks, sc, kind, nk, nu);
}

#endif /* COLLECTOR_RUNTIME_BPF_H */
