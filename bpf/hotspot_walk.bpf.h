/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One step of a JVM's Java frames in the cfi walk: the frame at
 * sc->walk.pc, in the code cache of process's JVM (struct
 * collector_hotspot_proc), rewritten as the Java frame it is and its
 * caller's registers found, as bpf/hotspot.h describes step by step and
 * runtimes/jvm/hotspot_walk.c does in user space (its tests are the
 * design's).  The native walk calls it for every frame whose pc is in the
 * code cache and goes on by its tables where the caller's pc leaves it.
 *
 * A function of its own, called from one place (unwind_frame_java(), a
 * global function bpf_loop's callback calls): verified once.  Static, so
 * that only the JVM's programs (sample_java, offcpu_java), which reach
 * it, have it verified: a global function is checked even when
 * unreachable (on_sample: 48 470 instructions so, 41 737 static).
 * Included by unwind_walk.bpf.h, which has struct sample_scratch,
 * unwind_push().
 */
#ifndef COLLECTOR_HOTSPOT_WALK_BPF_H
#define COLLECTOR_HOTSPOT_WALK_BPF_H

/* How far fp may lie above sp in a frame that keeps one. */
#define HS_FP_RANGE 0x10000
/* the interpreter frame's return address and saved rbp, words from fp */
#define HS_SLOT_RETURN 1
#define HS_SLOT_LINK 0

static __always_inline bool hs_in_code_cache(const struct collector_hotspot_proc *p, u64 pc)
{
	return pc >= p->codecache_low && pc < p->codecache_high;
}

/* One hop of the segment map (bpf_loop's callback: verified once, not
 * once per hop).  The map's byte at seg is the distance back to the
 * blob's first segment (at most 254 a hop), 0 there, 0xff when free. */
struct hs_segmap_walk {
	u64 segmap, seg;
	int found;        /* 1: seg is the blob's first segment; -1: none */
};

static long hs_segmap_hop(u32 i, void *data)
{
	struct hs_segmap_walk *h = data;
	u8 b;

	if (bpf_probe_read_user(&b, 1, (void *)(h->segmap + h->seg)) || b == 0xff || b > h->seg) {
		h->found = -1;
		return 1;
	}
	if (b == 0) {
		h->found = 1;
		return 1;
	}
	h->seg -= b;
	return 0;
}

/* The CodeBlob holding pc, through its heap's segment map; 0: none. */
static __always_inline u64 hs_find_blob(const struct collector_hotspot_proc *p, u64 pc)
{
	struct hs_segmap_walk h = { 0 };
	u64 low = 0, segmap = 0;
	u32 shift = p->segment_shift & 31;

	for (u32 i = 0; i < COLLECTOR_HOTSPOT_MAX_HEAPS; i++) {
		if (i >= p->n_heaps)
			break;
		if (pc >= p->heaps[i].low && pc < p->heaps[i].high) {
			low = p->heaps[i].low;
			segmap = p->heaps[i].segmap;
			break;
		}
	}
	if (!segmap)
		return 0;
	h.segmap = segmap;
	h.seg = (pc - low) >> shift;
	bpf_loop(COLLECTOR_HOTSPOT_SEGMAP_HOPS, hs_segmap_hop, &h, 0);
	return h.found == 1 ? low + (h.seg << shift) + p->heapblock_size : 0;
}

/* Fields of the blob's head, read into the scratch (an offset past what
 * was read reads 0). */
static __always_inline s32 hs_i32(const struct hotspot_scratch *s, u16 off)
{
	if (off > COLLECTOR_HOTSPOT_BLOB_READ - 4)
		return 0;
	return *(const s32 *)(s->blob + off);
}

static __always_inline u64 hs_u64(const struct hotspot_scratch *s, u16 off)
{
	if (off > COLLECTOR_HOTSPOT_BLOB_READ - 8)
		return 0;
	return *(const u64 *)(s->blob + off);
}

/* A code pointer of the blob: a pointer, or an int offset from the blob
 * (COLLECTOR_HS_BLOB_OFFSETS, 23 on). */
static __always_inline u64 hs_blob_ptr(const struct collector_hotspot_proc *p,
				       const struct hotspot_scratch *s, u64 blob, u16 off)
{
	if (p->flags & COLLECTOR_HS_BLOB_OFFSETS)
		return blob + (u64)(s64)hs_i32(s, off);
	return hs_u64(s, off);
}

/* The blob's head and the first 8 bytes of its name: 0, or -1 when they
 * do not read.  A blob near the end of its heap's mapping reads shorter. */
static __always_inline int hs_read_blob(const struct collector_hotspot_proc *p,
					struct hotspot_scratch *s, u64 blob)
{
	u32 len = p->blob_read_len;

	/* the fields' bytes only (user space says how many: 128 or 192 in
	 * 17-25), else the most a blob's head may need */
	if (len < 64 || len > COLLECTOR_HOTSPOT_BLOB_READ)
		len = COLLECTOR_HOTSPOT_BLOB_READ;
	if (bpf_probe_read_user(s->blob, len, (void *)blob) &&
	    bpf_probe_read_user(s->blob, 128, (void *)blob))
		return -1;
	s->name8 = 0;
	return bpf_probe_read_user(&s->name8, 8, (void *)hs_u64(s, p->blob_name)) ? -1 : 0;
}

static __always_inline bool hs_is_nmethod(u64 name8)
{
	return name8 == COLLECTOR_HS_NAME_NMETHOD || name8 == COLLECTOR_HS_NAME_NATIVE_NMETHOD;
}

/* s->facts from the head just read of blob (hs_read_blob()); the fields
 * of an nmethod are garbage for another blob, and unused. */
static __always_inline void hs_facts_of_head(const struct collector_hotspot_proc *p,
					     struct hotspot_scratch *s, u64 blob)
{
	struct hs_blob_facts *f = &s->facts;

	f->blob = blob;
	f->name8 = s->name8;
	f->frame_size = hs_i32(s, p->blob_frame_size);
	f->compile_id = hs_i32(s, p->nm_compile_id);
	f->orig_pc_offset = hs_i32(s, p->nm_orig_pc_offset);
	f->pad = 0;
	f->deopt_handler = hs_blob_ptr(p, s, blob, p->nm_deopt_handler);
	f->code_begin = hs_blob_ptr(p, s, blob, p->blob_code_begin);
	f->code_end = hs_blob_ptr(p, s, blob, p->blob_code_end);
	f->check = hs_is_nmethod(f->name8) ? (u64)(u32)f->compile_id : hs_u64(s, p->blob_name);
}

/* The facts of the blob of return address pc from hotspot_blob_facts into
 * s->facts (s->key set for them either way): true when they were there
 * and the blob still stands, checked by one read (its compile id, or its
 * name pointer); an entry whose blob is gone is dropped. */
static __always_inline bool hs_facts_cached(const struct collector_hotspot_proc *p,
					    struct hotspot_scratch *s, u64 pc)
{
	struct hs_blob_facts *f;
	bool nmethod;
	u64 now = 0;

	s->key.tgid = bpf_get_current_pid_tgid() >> 32;
	s->key.pad = 0;
	s->key.pc = pc;
	f = bpf_map_lookup_elem(&hotspot_blob_facts, &s->key);
	if (!f)
		return false;
	s->facts = *f;
	nmethod = hs_is_nmethod(s->facts.name8);
	if (!bpf_probe_read_user(&now, nmethod ? 4 : 8,
				 (void *)(s->facts.blob + (nmethod ? p->nm_compile_id : p->blob_name))) &&
	    now == s->facts.check) {
		count(COLLECTOR_CNT_HS_FACTS_HIT);
		return true;
	}
	bpf_map_delete_elem(&hotspot_blob_facts, &s->key);
	count(COLLECTOR_CNT_HS_FACTS_STALE);
	return false;
}

/* The next frame's registers. */
/* An interpreted frame: Method* and bcp from the frame at fp.  0, or -1. */
static __always_inline int hs_step_interpreter(const struct collector_hotspot_proc *p,
					       struct hotspot_scratch *s, struct hs_regs *r,
					       bool first, u64 *frame)
{
	s32 lo = p->interp_bcp; /* the lowest slot read: fp + 8 * lo */
	u64 method, cmethod = 0, base, bcp, bci = COLLECTOR_HS_BCI_MAX;
	struct pt_regs *regs;

	if (r->fp < r->sp || r->fp >= r->sp + HS_FP_RANGE || lo > 0 || lo < -12)
		return -1;
	if (bpf_probe_read_user(s->words, 10 * sizeof(u64), (void *)(r->fp + 8 * (s64)lo)))
		return -1;
	/* words[k] is the slot fp + 8 * (lo + k) */
	method = s->words[(p->interp_method - lo) & 15];
	if (bpf_probe_read_user(&cmethod, 8, (void *)(method + p->method_constmethod)))
		return -1;
	base = cmethod + p->cmethod_size;
	bcp = s->words[(p->interp_bcp - lo) & 15];
	/* the slot is written at calls: the live bcp is in r13 */
	if (first) {
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
		s->r13 = BPF_CORE_READ(regs, r13);
		if (s->r13 >= base && s->r13 - base < 0xffff)
			bcp = s->r13;
	}
	if (bcp >= base && bcp - base < 0xffff)
		bci = bcp - base;
	*frame = COLLECTOR_HS_INTERP(method, bci);
	r->pc = s->words[(HS_SLOT_RETURN - lo) & 15];
	r->sp = s->words[(p->interp_sender_sp - lo) & 15];
	r->fp = s->words[(HS_SLOT_LINK - lo) & 15];
	return 0;
}

/* Where the caller's sp is when a first frame's pc is in a compiled
 * method's prologue or epilogue: 8 (the return address at sp), 16 (rbp
 * pushed above it), or 0 (the frame is whole). */
static __always_inline int hs_partial_frame(const struct collector_hotspot_proc *p,
					    struct hotspot_scratch *s, u64 pc)
{
	u8 *c = s->code, before = 0;
	u64 begin = s->facts.code_begin;
	s32 complete;

	if (bpf_probe_read_user(c, 8, (void *)pc))
		return 0;
	if (p->blob_frame_complete_width == 2)
		complete = (s16)hs_i32(s, p->blob_frame_complete);
	else
		complete = hs_i32(s, p->blob_frame_complete);
	if (pc < begin + (u64)(s64)complete) {
		/* push rbp at pc, or after the stack bang (mov [rsp-d], eax) */
		if (c[0] == 0x55 || (c[0] == 0x89 && c[1] == 0x84 && c[2] == 0x24 && c[7] == 0x55))
			return 8;
		if (pc > begin && !bpf_probe_read_user(&before, 1, (void *)(pc - 1)) &&
		    before == 0x55)
			return 16;
		return 0;
	}
	if (c[0] == 0x5d) /* pop rbp */
		return 16;
	if (c[0] == 0xc3 || (c[0] == 0x49 && c[1] == 0x3b && (c[2] == 0x67 || c[2] == 0xa7)) ||
	    (c[0] == 0x0f && c[1] == 0x87))
		return 8; /* ret, or the return's safepoint poll after pop rbp */
	return 0;
}

/* A frame of frame_size words from sp (a compiled method, a runtime
 * stub).  0, or -1. */
static __always_inline int hs_step_sized(const struct collector_hotspot_proc *p,
					 struct hotspot_scratch *s, struct hs_regs *r, bool first)
{
	s32 size = s->facts.frame_size;
	int partial = first ? hs_partial_frame(p, s, r->pc) : 0;
	u64 csp, w[2];

	if (size <= 0 || size > HS_FP_RANGE / 8)
		return -1;
	csp = partial ? r->sp + (u64)partial : r->sp + 8 * (u64)size;
	if (bpf_probe_read_user(w, sizeof(w), (void *)(csp - 16)))
		return -1;
	r->pc = w[1];
	/* a prologue has not yet, an epilogue has already, changed rbp */
	if (!partial || partial == 16)
		r->fp = w[0];
	r->sp = csp;
	return 0;
}

/* A frame kept by rbp (StubRoutines), or none (the return address at
 * sp: a first frame in an adapter or a vtable stub).  0, or -1. */
static __always_inline int hs_step_unsized(struct hotspot_scratch *s, struct hs_regs *r,
					   bool first)
{
	/* "StubRout": "StubRoutines (1)" and the like build rbp frames */
	bool stub_routines = s->facts.name8 == 0x74756f5262757453ULL;
	u64 w[2];

	if ((!first || stub_routines) && r->fp >= r->sp && r->fp < r->sp + HS_FP_RANGE) {
		if (bpf_probe_read_user(w, sizeof(w), (void *)r->fp))
			return -1;
		r->sp = r->fp + 16;
		r->fp = w[0];
		r->pc = w[1];
		return 0;
	}
	if (!first || bpf_probe_read_user(&r->pc, 8, (void *)r->sp))
		return -1;
	r->sp += 8;
	return 0;
}

/* One frame (k - 1, at sc->walk.pc in p's code cache) rewritten as the
 * Java frame it is (a stub stays a native pc) and its caller pushed as
 * frame k.  Returns 0 to go on, 1 when the walk ends. */
static __noinline long hotspot_frame(struct sample_scratch *sc, struct collector_hotspot_proc *p, u32 k)
{
	struct hotspot_scratch *s;
	struct hs_blob_facts *f;
	struct cfi_walk *w;
	struct hs_regs *r;
	u64 blob, frame, pc;
	bool first, interp;
	int err;

	if (!sc || !p || !k || k >= COLLECTOR_MAX_STACK_DEPTH)
		return 1;
	w = &sc->walk;
	s = &w->hs;
	f = &s->facts;
	/* the registers and the deoptimized pc in map memory: the BPF
	 * stack of the calls above it came to 512 bytes */
	r = &s->regs;
	s->orig_pc = 0;
	pc = w->pc;
	first = k == 1 && w->exact;
	r->pc = pc;
	r->sp = w->sp;
	r->fp = w->bp;
	if (!s->in_java) {
		count(COLLECTOR_CNT_HS_WALKS);
		s->in_java = 1;
	}
	frame = pc; /* a stub: a native frame in the code cache */
	/* the interpreter's code is known: no blob to look up for it */
	interp = p->interp_end && pc >= p->interp_begin && pc < p->interp_end;
	/* a return address's blob from the cache, else found and read (and
	 * kept); a first frame's always read */
	if (!interp && (first || !hs_facts_cached(p, s, pc))) {
		blob = hs_find_blob(p, pc);
		if (!blob) {
			count(COLLECTOR_CNT_HS_NO_BLOB);
			return 1;
		}
		if (hs_read_blob(p, s, blob))
			goto bad;
		hs_facts_of_head(p, s, blob);
		if (!first)
			bpf_map_update_elem(&hotspot_blob_facts, &s->key, f, BPF_ANY);
	}
	if (!interp)
		interp = f->name8 == COLLECTOR_HS_NAME_INTERPRETER;
	if (interp) {
		err = hs_step_interpreter(p, s, r, first, &frame);
	} else if (hs_is_nmethod(f->name8)) {
		/* deoptimized: its pc was saved in the frame */
		if (pc == f->deopt_handler &&
		    !bpf_probe_read_user(&s->orig_pc, 8,
					 (void *)(r->sp + (u64)(s64)f->orig_pc_offset)) &&
		    s->orig_pc >= f->code_begin && s->orig_pc < f->code_end)
			pc = s->orig_pc;
		frame = COLLECTOR_HS_COMPILED(pc, f->compile_id, first);
		err = hs_step_sized(p, s, r, first);
	} else if (f->frame_size > 0) {
		err = hs_step_sized(p, s, r, first);
	} else {
		err = hs_step_unsized(s, r, first);
	}
	if (err)
		goto bad;
	sc->frames[(w->first + k - 1) & 255] = frame;
	runtime_frames_placed(sc, COLLECTOR_FRAME_JAVA);
	count(COLLECTOR_CNT_HS_FRAMES);
	/* the stack grows down: a caller's frame is above its callee's */
	if (r->sp <= w->sp || !r->pc || r->pc >= USER_TOP)
		goto bad;
	if (k + 1 >= COLLECTOR_MAX_STACK_DEPTH)
		count(COLLECTOR_CNT_HS_LIMIT);
	if (!hs_in_code_cache(p, r->pc))
		s->in_java = 0; /* back to the native walk */
	unwind_push(sc, k, r->pc, r->pc, r->sp, r->fp, false);
	return 0;
bad:
	count(COLLECTOR_CNT_HS_BAD_FRAME);
	return 1;
}

#endif /* COLLECTOR_HOTSPOT_WALK_BPF_H */
