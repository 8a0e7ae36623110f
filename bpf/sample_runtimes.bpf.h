/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The runtimes' walks of samples: programs of their own, reached by tail
 * call from on_sample (runtime_walk(), runtime.bpf.h), each loaded by the
 * loader when the run meets the runtime's first process
 * (loader/runtime_procs.c).  Each goes on with the sample in the scratch
 * (its kernel frames and the native frames so far, the walk's state) and
 * ends it as on_sample would: to the sums or the ring, and the end of the
 * sampler's turn under its CPU share.
 *
 * Included by sample.bpf.c after on_sample.
 */
#ifndef COLLECTOR_SAMPLE_RUNTIMES_BPF_H
#define COLLECTOR_SAMPLE_RUNTIMES_BPF_H

/* The JVM's walk of a sample that on_sample's walk left at a JVM's code
 * (UNWIND_RUNTIME_WALK): from there on, Java frames and the native ones
 * below them (bpf/hotspot_walk.bpf.h), then the sample's end. */
SEC("perf_event")
int sample_java(struct bpf_perf_event_data *ctx)
{
	u32 zero = 0, nk, nu;
	struct sample_scratch *sc = bpf_map_lookup_elem(&sample_scratch, &zero);

	if (!sc)
		return 0;
	nk = sc->e.n_kernel;
	nu = unwind_walk_resume(sc, sc->e.hdr.tgid);
	if (nu == UNWIND_COPY_STACK)
		sample_copied(ctx, sc->e.hdr.tgid, sc->e.hdr.tid, sc->e.ip, sc->e.kernel_mode);
	else
		sample_finish(sc, nk, nu);
	sample_turn_end(sc->turn_start);
	return 0;
}

/* CPython's walk of a sample of an interpreter (python.bpf.h): its
 * frames after the native ones, then the sample's end. */
SEC("perf_event")
int sample_python(struct bpf_perf_event_data *ctx)
{
	u32 zero = 0, nk, nu;
	struct sample_scratch *sc = bpf_map_lookup_elem(&sample_scratch, &zero);

	if (!sc)
		return 0;
	nk = sc->e.n_kernel & 255;
	nu = sc->e.n_user & 255;
	if (nu > COLLECTOR_MAX_STACK_DEPTH)
		nu = COLLECTOR_MAX_STACK_DEPTH;
	nu += python_frames(sc, nk + nu, COLLECTOR_MAX_STACK_DEPTH - nu, sc->e.hdr.tgid,
			    bpf_get_current_task_btf());
	sample_finish(sc, nk, nu);
	sample_turn_end(sc->turn_start);
	return 0;
}

#endif /* COLLECTOR_SAMPLE_RUNTIMES_BPF_H */
