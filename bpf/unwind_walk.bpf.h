/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: the walk of a user stack with the unwind tables
 * (unwind.bpf.h: the maps, the searches).
 *
 * The walk is written once: it stops at a JVM's code (UNWIND_RUNTIME_WALK)
 * for the JVM's programs (of samples, of switch-outs), which go on with
 * unwind_walk_resume() and step the JVM's frames themselves.
 *
 * Each frame is one call of unwind_frame(), a global function, which the
 * verifier checks once on its own; the walk's state is in the scratch
 * (struct cfi_walk, map memory), and bpf_loop's context holds only
 * pointers, the same at every frame, so the loop is verified in a round
 * or two (see struct cfi_walk for what it cost before).
 *
 * A call under a uretprobe (--trace) returns through the kernel's
 * trampoline: where the walk reads the trampoline's address as a return
 * address, it takes the original from the task's pending return
 * instances (unwind_uretprobe_ra()), so the traced frame and its callers
 * stay in the stack, with or without frame pointers.
 *
 * Included by sample.bpf.c after struct sample_scratch (frames[256],
 * stack[] (the copy of the stack top), walk), copy_stack_top() and
 * user_frames_fp().
 */
#ifndef COLLECTOR_UNWIND_WALK_BPF_H
#define COLLECTOR_UNWIND_WALK_BPF_H

/* A word of the target's stack: from the copy when it lies in it. */
static __always_inline bool unwind_read(struct sample_scratch *sc, u64 addr, u64 *out)
{
	struct cfi_walk *w = &sc->walk;
	u64 off = addr - w->copy_sp;

	if (addr >= w->copy_sp && !(off & 7) && w->copy_len >= 8 && off <= w->copy_len - 8) {
		*out = sc->stack[(off / 8) & (UNWIND_COPY_WORDS - 1)];
		return true;
	}
	return bpf_probe_read_user(out, sizeof(*out), (void *)addr) == 0;
}

/* Frame k, written as `value`, and the caller's registers. */
static __always_inline void unwind_push(struct sample_scratch *sc, u32 k, u64 value, u64 pc,
					u64 sp, u64 bp, bool exact)
{
	struct cfi_walk *w = &sc->walk;

	sc->frames[(w->first + k) & 255] = value;
	w->n = k + 1;
	w->pc = pc;
	w->sp = sp;
	w->bp = bp;
	w->exact = exact;
}

#include "hotspot_walk.bpf.h"

/* Frame k (k >= 1) of the stack from the rules at sc->walk.pc, its
 * mapping from p's table or lp's learned ones (either may be NULL): the
 * caller's pc, sp and rbp.  Returns 0 to go on, 1 when the walk ends. */
static __always_inline long unwind_native_frame(struct sample_scratch *sc,
						struct collector_unwind_proc *p,
						struct collector_unwind_learned *lp, u32 k)
{
	struct cfi_walk *w = &sc->walk;
	u64 lookup, cfa, ra, bp;
	struct collector_unwind_row *r;
	struct collector_unwind_map *m;
	u32 kind = COLLECTOR_ROW_NONE, cfa_off = 0;
	s64 rbp_off = 0;

	lookup = w->exact ? w->pc : w->pc - 1;
	bp = w->bp;
	m = unwind_find_map(w, p, lp, lookup);
	if (!m) {
		w->outside = true;
		return 1;
	}
	if (w->stop_pending && !m->n_pages && m->first_page == COLLECTOR_UNWIND_PENDING) {
		w->pending = true;
		return 1;
	}
	r = unwind_find_row(m, lookup);
	if (r) {
		kind = r->kind;
		cfa_off = r->cfa_off;
		rbp_off = 8 * (s64)r->rbp_off8;
	}
	switch (kind) {
	case COLLECTOR_ROW_END:
		w->complete = true;
		return 1;
	case COLLECTOR_ROW_SIGNAL:
		/* the trampoline's own frame: its address is no return
		 * address (the CFI starts a byte before it for the look-up at
		 * pc - 1), so it is written as pc + 1, as the user-space
		 * unwinder writes it, and resolves to __restore_rt */
		if (!w->exact && k)
			sc->frames[(w->first + k - 1) & 255] = w->pc + 1;
		if (!unwind_read(sc, w->sp + SIGFRAME_RIP, &ra) ||
		    !unwind_read(sc, w->sp + SIGFRAME_RSP, &cfa) ||
		    !unwind_read(sc, w->sp + SIGFRAME_RBP, &bp) || !ra || ra >= USER_TOP)
			return 1;
		/* the interrupted PC, exact: written + 1 */
		unwind_push(sc, k, ra + 1, ra, cfa, bp, true);
		return 0;
	case COLLECTOR_ROW_RSP:
		cfa = w->sp + cfa_off;
		break;
	case COLLECTOR_ROW_RBP:
		cfa = w->bp + cfa_off;
		break;
	case COLLECTOR_ROW_PLT:
		cfa = w->sp + 8 + ((w->pc & 15) >= cfa_off ? 8 : 0);
		break;
	default:
		/* no table here: the frame pointer, if it is one */
		count(COLLECTOR_CNT_CFI_FP_FRAMES);
		w->fp_stepped = true;
		if (w->bp < w->sp || w->bp >= USER_TOP || !unwind_read(sc, w->bp, &bp))
			return 1;
		cfa = w->bp + 16;
		rbp_off = 0;
		break;
	}
	/* the stack grows down: a caller's frame is above its callee's */
	if (cfa <= w->sp || cfa >= USER_TOP || !unwind_read(sc, cfa - 8, &ra) || !ra)
		return 1;
	/* a call under a uretprobe returns through the trampoline */
	if (ra == w->tramp)
		ra = unwind_uretprobe_ra(w, cfa - 8);
	if (!ra || ra >= USER_TOP)
		return 1;
	if (rbp_off && !unwind_read(sc, cfa + rbp_off, &bp))
		return 1;
	unwind_push(sc, k, ra, ra, cfa, bp, false);
	return 0;
}

/* Frame k of the sampler's walk: native frames only.  At a pc in a JVM's
 * code cache (hp, or NULL) the walk stops and says so (w->runtime): the
 * JVM's walk, a program of its own loaded when the run meets its first
 * JVM, goes on from there (sample.bpf.c's sample_java), so that its
 * 12 800 instructions are not verified at every start. */
__noinline long unwind_frame(struct sample_scratch *sc, struct collector_unwind_proc *p,
			     struct collector_unwind_learned *lp,
			     struct collector_hotspot_proc *hp, u32 k)
{
	if (!sc || k >= COLLECTOR_MAX_STACK_DEPTH)
		return 1;
	if (hp && hs_in_code_cache(hp, sc->walk.pc)) {
		sc->walk.runtime = COLLECTOR_FRAME_JAVA;
		return 1;
	}
	return unwind_native_frame(sc, p, lp, k);
}

/* Frame k of a walk with the JVM's frames in it (the JVM's programs'):
 * by the JVM's walk (hp, or NULL) when sc->walk.pc is in its code cache,
 * else native. */
__noinline long unwind_frame_java(struct sample_scratch *sc, struct collector_unwind_proc *p,
				  struct collector_unwind_learned *lp,
				  struct collector_hotspot_proc *hp, u32 k)
{
	if (!sc || k >= COLLECTOR_MAX_STACK_DEPTH)
		return 1;
	if (hp && hs_in_code_cache(hp, sc->walk.pc))
		return hotspot_frame(sc, hp, k);
	return unwind_native_frame(sc, p, lp, k);
}

/* user_frames_cfi()'s answer for a sample to copy for user space: more
 * frames than a walk writes. */
#define UNWIND_COPY_STACK 256

/* The frame-pointer walk where the tables cannot serve: a global
 * function, verified once and not at each state of the walk's callers
 * (inline, it cost 4 000 of on_sample's verifier instructions). */
__noinline u32 unwind_fp_walk(struct sample_scratch *sc, u32 first, u64 ip, u64 sp, u64 bp)
{
	if (!sc)
		return 0;
	return user_frames_fp(sc, first & 127, ip, sp, bp, -1);
}

/* Whether pc is in the code cache of hp (or NULL). */
__noinline bool unwind_in_code_cache(struct collector_hotspot_proc *hp, u64 pc)
{
	return hp && hs_in_code_cache(hp, pc);
}

/* user_frames_cfi()'s answer when the walk stopped at a runtime's code
 * whose walk is a program of its own (sc->walk.runtime says which). */
#define UNWIND_RUNTIME_WALK 512

/* The loop's context: pointers only, the same at every frame. */
struct cfi_loop {
	struct sample_scratch *sc;
	struct collector_unwind_proc *proc;
	struct collector_unwind_learned *learned;
	struct collector_hotspot_proc *hotspot; /* the process's JVM, or NULL */
};

/* Frame k0 + i (sc->walk.k0): each frame before it was written (else the
 * walk ended).  k0 is in the scratch, not in the loop's context: 8 bytes
 * more of the BPF stack put the off-CPU walk's calls past 512 when it
 * stepped the JVM's frames itself. */
static long unwind_step(u32 i, void *data)
{
	struct cfi_loop *l = data;

	/* a global function's result is unknown to the verifier, which asks
	 * a callback for 0 or 1 */
	return unwind_frame(l->sc, l->proc, l->learned, l->hotspot, l->sc->walk.k0 + i) ? 1 : 0;
}

static long unwind_step_java(u32 i, void *data)
{
	struct cfi_loop *l = data;

	return unwind_frame_java(l->sc, l->proc, l->learned, l->hotspot, l->sc->walk.k0 + i) ? 1 : 0;
}

/* The end of a walk: the tables asked for, and the answer of
 * user_frames_cfi(). */
static __always_inline u32 unwind_walk_end(struct sample_scratch *sc, u32 tgid,
					   struct collector_unwind_proc *proc, bool copy_instead)
{
	struct cfi_walk *w = &sc->walk;

	if (w->outside)
		unwind_ask_tables(tgid, w->pc);
	else if (w->ask_pc)
		unwind_ask_tables(tgid, w->ask_pc);
	/* A return address that the tables found (no frame-pointer step
	 * before it, which may read garbage) outside every mapping the table
	 * lists is in one mapped since: libc, when the table was written
	 * while ld.so was still loading it (20 ms of a program's samples,
	 * until it may ask again), or a dlopen. */
	if (copy_instead && (w->pending || (w->outside && !w->fp_stepped &&
					    (!proc || proc->n_maps < COLLECTOR_UNWIND_MAX_MAPS)))) {
		count(COLLECTOR_CNT_CFI_NO_TABLES);
		return UNWIND_COPY_STACK;
	}
	if (w->outside)
		count(COLLECTOR_CNT_CFI_OUTSIDE);
	if (w->complete)
		count(COLLECTOR_CNT_CFI_COMPLETE);
	sc->e.user_end = w->complete ? COLLECTOR_END_COMPLETE : COLLECTOR_END_TRUNCATED;
	/* bounded, so that the verifier tells it from UNWIND_COPY_STACK */
	return w->n & 255;
}

/*
 * The user call stack of task from the tables, into sc->frames[first..];
 * returns the frames written and sets sc->e.user_end.  A process without
 * tables yet, or a PC outside its known mappings, asks the loader for
 * them.  Such a sample, or one whose walk meets a mapping whose table is
 * being built or one mapped since the process's table was written, is left for user space when copy_instead (the walk
 * returns UNWIND_COPY_STACK: the caller copies the stack, as
 * --call-graph dwarf does), and else gets the frame-pointer
 * walk, or the frame-pointer step at that mapping.  A process whose
 * mapping table is full (COLLECTOR_UNWIND_MAX_MAPS) keeps the
 * frame-pointer walk: its PCs past the table would be copied forever.
 * At a JVM's code (hand_off_java) the walk stops and returns
 * UNWIND_RUNTIME_WALK for the JVM's program (unwind_walk_resume()).
 */
static __always_inline u32 user_frames_cfi(struct sample_scratch *sc, u32 first, u32 tgid,
					   struct task_struct *task, u64 ip, u64 sp, u64 bp,
					   bool copy_instead)
{
	struct cfi_walk *w = &sc->walk;
	struct cfi_loop l = { .sc = sc };
	bool in_jvm;

	if (!ip)
		return 0;
	l.proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	l.learned = unwind_learned_of(tgid);
	l.hotspot = NULL;
	if (hand_off_java)
		l.hotspot = bpf_map_lookup_elem(&hotspot_procs, &tgid);
	w->hs.in_java = 0;
	w->runtime = 0;
	w->k0 = 1;
	w->mm = (u64)BPF_CORE_READ(task, mm);
	w->ask_pc = 0;
	w->learn_left = UNWIND_LEARN_PER_WALK;
	w->pc = ip;
	w->sp = sp;
	w->bp = bp;
	w->first = first & 127;
	w->n = 1;
	w->map = 0;
	w->exact = true;
	w->complete = false;
	w->outside = false;
	w->stop_pending = copy_instead;
	w->pending = false;
	w->fp_stepped = false;
	/* A pc in a JVM's code cache: the walk is the JVM's program's from
	 * the first frame on.  l.hotspot is never tested here for NULL: the
	 * verifier would walk the rest of the function once for each answer
	 * (13 000 instructions more). */
	in_jvm = unwind_in_code_cache(l.hotspot, ip);
	/* no mapping, or one whose image has no table yet (a JVM's code
	 * cache has none: its frames are the JVM walk's) */
	if (!in_jvm && (!unwind_find_map(w, l.proc, l.learned, ip) || w->ask_pc)) {
		count(COLLECTOR_CNT_CFI_NO_TABLES);
		unwind_ask_tables(tgid, ip);
		if (copy_instead && (!l.proc || l.proc->n_maps < COLLECTOR_UNWIND_MAX_MAPS))
			return UNWIND_COPY_STACK;
		return unwind_fp_walk(sc, first, ip, sp, bp) & 255;
	}
	w->copy_sp = sp;
	w->copy_len = copy_stack_top(sc, sp);
	unwind_uretprobes_of(w, (u64)BPF_CORE_READ(task, utask), w->mm);
	sc->frames[first & 255] = ip;
	if (in_jvm) {
		w->runtime = COLLECTOR_FRAME_JAVA;
		return UNWIND_RUNTIME_WALK;
	}
	bpf_loop(COLLECTOR_MAX_STACK_DEPTH - 1, unwind_step, &l, 0);
	if (w->runtime)
		return UNWIND_RUNTIME_WALK;
	return unwind_walk_end(sc, tgid, l.proc, copy_instead);
}

/* The walk user_frames_cfi() left at a JVM's code (UNWIND_RUNTIME_WALK),
 * from where it stopped, with the JVM's frames: the same answers. */
static __always_inline u32 unwind_walk_resume(struct sample_scratch *sc, u32 tgid)
{
	struct cfi_walk *w = &sc->walk;
	struct cfi_loop l = { .sc = sc };

	l.proc = bpf_map_lookup_elem(&unwind_procs, &tgid);
	l.learned = unwind_learned_of(tgid);
	l.hotspot = bpf_map_lookup_elem(&hotspot_procs, &tgid);
	w->runtime = 0;
	if (w->n < 1 || w->n >= COLLECTOR_MAX_STACK_DEPTH)
		return unwind_walk_end(sc, tgid, l.proc, true);
	w->k0 = w->n;
	bpf_loop(COLLECTOR_MAX_STACK_DEPTH - w->k0, unwind_step_java, &l, 0);
	return unwind_walk_end(sc, tgid, l.proc, true);
}

#endif /* COLLECTOR_UNWIND_WALK_BPF_H */
