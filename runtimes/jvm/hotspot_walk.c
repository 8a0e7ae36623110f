// SPDX-License-Identifier: GPL-2.0
/* The reference walker of HotSpot frames (runtimes/jvm/hotspot_walk.h). */
#include "runtimes/jvm/hotspot_walk.h"

#include <errno.h>
#include <string.h>

/* How far fp may lie above sp in a frame that keeps one. */
#define FP_RANGE 0x10000
/* the interpreter frame's return address and saved rbp, words from fp */
#define HOTSPOT_SLOT_RETURN 1
#define HOTSPOT_SLOT_LINK 0

const char *hotspot_walk_end_name(enum hotspot_walk_end e)
{
	switch (e) {
	case HOTSPOT_WALK_LEFT: return "left the code cache";
	case HOTSPOT_WALK_NOT_MINE: return "not in the code cache";
	case HOTSPOT_WALK_LIMIT: return "frame limit";
	case HOTSPOT_WALK_NO_BLOB: return "no blob for pc";
	case HOTSPOT_WALK_BAD_FRAME: return "bad frame";
	}
	return "?";
}

static bool in_code_cache(const struct collector_hotspot_proc *p, uint64_t pc)
{
	return pc >= p->codecache_low && pc < p->codecache_high;
}

int hotspot_find_blob(const struct collector_hotspot_proc *p, uint64_t pc, hotspot_read_fn rd,
		      void *ctx, uint64_t *blob)
{
	const struct collector_hotspot_heap *h = NULL;
	uint64_t seg;

	for (int i = 0; i < COLLECTOR_HOTSPOT_MAX_HEAPS && i < (int)p->n_heaps; i++)
		if (pc >= p->heaps[i].low && pc < p->heaps[i].high) {
			h = &p->heaps[i];
			break;
		}
	if (!h)
		return -ENOENT;
	seg = (pc - h->low) >> p->segment_shift;
	for (int hop = 0; hop < COLLECTOR_HOTSPOT_SEGMAP_HOPS; hop++) {
		uint8_t b;

		if (rd(ctx, h->segmap + seg, &b, 1))
			return -EFAULT;
		if (b == 0xff)
			return -ENOENT; /* a free segment */
		if (b == 0) {
			*blob = h->low + (seg << p->segment_shift) + p->heapblock_size;
			return 0;
		}
		if (b > seg)
			return -ENOENT;
		seg -= b;
	}
	return -ENOENT;
}

/* The blob's head as the walker uses it. */
struct blob_head {
	uint64_t blob, name8, code_begin, code_end, deopt;
	int32_t frame_size, frame_complete, orig_pc_offset;
	uint32_t compile_id;
};

static int32_t i32_at(const uint8_t *b, uint16_t off)
{
	int32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static uint64_t u64_at(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static uint64_t blob_ptr(const struct collector_hotspot_proc *p, uint64_t blob, const uint8_t *b,
			 uint16_t off)
{
	if (p->flags & COLLECTOR_HS_BLOB_OFFSETS)
		return blob + (uint64_t)(int64_t)i32_at(b, off);
	return u64_at(b, off);
}

static int read_blob(const struct collector_hotspot_proc *p, uint64_t blob, hotspot_read_fn rd,
		     void *ctx, struct blob_head *h)
{
	uint8_t b[COLLECTOR_HOTSPOT_BLOB_READ];
	size_t got = sizeof(b);

	/* a blob near the end of its heap's mapping: a shorter read */
	while (got >= 128 && rd(ctx, blob, b, got))
		got /= 2;
	if (got < 128)
		return -EFAULT;
	if (got < sizeof(b))
		memset(b + got, 0, sizeof(b) - got);
	h->blob = blob;
	h->frame_size = i32_at(b, p->blob_frame_size);
	if (p->blob_frame_complete_width == 2) {
		int16_t v;

		memcpy(&v, b + p->blob_frame_complete, 2);
		h->frame_complete = v;
	} else {
		h->frame_complete = i32_at(b, p->blob_frame_complete);
	}
	h->code_begin = blob_ptr(p, blob, b, p->blob_code_begin);
	h->code_end = blob_ptr(p, blob, b, p->blob_code_end);
	h->compile_id = (uint32_t)i32_at(b, p->nm_compile_id);
	h->orig_pc_offset = i32_at(b, p->nm_orig_pc_offset);
	h->deopt = blob_ptr(p, blob, b, p->nm_deopt_handler);
	h->name8 = 0;
	return rd(ctx, u64_at(b, p->blob_name), &h->name8, 8) ? -EFAULT : 0;
}

/* ---- steps ------------------------------------------------------------------ */

/* An interpreted frame: Method* and bcp from the frame at fp. */
static int step_interpreter(const struct collector_hotspot_proc *p, struct hotspot_regs *r,
			    bool first, hotspot_read_fn rd, void *ctx, uint64_t *frame)
{
	uint64_t w[10], method, cmethod, base, bci = COLLECTOR_HS_BCI_MAX, bcp;
	int lo = p->interp_bcp; /* the lowest slot read: fp + 8 * lo */

	if (r->fp < r->sp || r->fp >= r->sp + FP_RANGE)
		return -EINVAL;
	if (rd(ctx, r->fp + 8 * (int64_t)lo, w, sizeof(w)))
		return -EFAULT;
	/* w[k] is the slot fp + 8 * (lo + k) */
	method = w[p->interp_method - lo];
	if (rd(ctx, method + p->method_constmethod, &cmethod, 8))
		return -EFAULT;
	base = cmethod + p->cmethod_size;
	bcp = first ? r->r13 : w[p->interp_bcp - lo];
	if (bcp >= base && bcp - base < 0xffff)
		bci = bcp - base;
	else if (first && (bcp = w[p->interp_bcp - lo]) >= base && bcp - base < 0xffff)
		bci = bcp - base;
	*frame = COLLECTOR_HS_INTERP(method, bci);
	r->pc = w[HOTSPOT_SLOT_RETURN - lo];
	r->sp = w[p->interp_sender_sp - lo];
	r->fp = w[HOTSPOT_SLOT_LINK - lo];
	return 0;
}

/* Where the caller's sp is when a first frame's pc is in a compiled
 * method's prologue or epilogue: 8 (the return address at sp), 16 (rbp
 * pushed above it), or 0 (the frame is whole). */
static int partial_frame(const struct blob_head *h, uint64_t pc, hotspot_read_fn rd, void *ctx)
{
	uint8_t c[8] = { 0 }, before = 0;

	if (rd(ctx, pc, c, sizeof(c)))
		return 0;
	if (pc < h->code_begin + (uint64_t)h->frame_complete) {
		/* push rbp at pc, or after the stack bang (mov [rsp-d], eax) */
		if (c[0] == 0x55 || (c[0] == 0x89 && c[1] == 0x84 && c[2] == 0x24 && c[7] == 0x55))
			return 8;
		if (pc > h->code_begin && !rd(ctx, pc - 1, &before, 1) && before == 0x55)
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

/* A frame of frame_size words from sp (compiled method, runtime stub). */
static int step_sized(const struct blob_head *h, struct hotspot_regs *r, bool first,
		      hotspot_read_fn rd, void *ctx)
{
	int partial = first ? partial_frame(h, r->pc, rd, ctx) : 0;
	uint64_t csp = partial ? r->sp + (uint64_t)partial : r->sp + 8 * (uint64_t)h->frame_size;
	uint64_t w[2];

	if (h->frame_size <= 0 || h->frame_size > FP_RANGE / 8)
		return -EINVAL;
	if (rd(ctx, csp - 16, w, sizeof(w)))
		return -EFAULT;
	r->pc = w[1];
	/* a prologue has not yet, an epilogue has already, changed rbp */
	if (!partial || partial == 16)
		r->fp = w[0];
	r->sp = csp;
	return 0;
}

/* A frame kept by rbp (StubRoutines), or none (the return address at sp). */
static int step_unsized(struct hotspot_regs *r, bool first, uint64_t name8, hotspot_read_fn rd,
			void *ctx)
{
	uint64_t w[2];
	/* "StubRoutines (1)" and the like build rbp frames; a first frame in
	 * an adapter or vtable stub has none */
	bool stub_routines = !memcmp(&name8, "StubRout", 8);

	if ((!first || stub_routines) && r->fp >= r->sp && r->fp < r->sp + FP_RANGE) {
		if (rd(ctx, r->fp, w, sizeof(w)))
			return -EFAULT;
		r->sp = r->fp + 16;
		r->fp = w[0];
		r->pc = w[1];
		return 0;
	}
	if (!first)
		return -EINVAL;
	if (rd(ctx, r->sp, &r->pc, 8))
		return -EFAULT;
	r->sp += 8;
	return 0;
}

/* One frame at regs: its frame into *f, regs to its caller's. */
static int step(const struct collector_hotspot_proc *p, struct hotspot_regs *r, bool first,
		hotspot_read_fn rd, void *ctx, struct hotspot_walk_frame *f)
{
	struct blob_head h;
	uint64_t blob;
	int err = hotspot_find_blob(p, r->pc, rd, ctx, &blob);

	if (err)
		return err == -ENOENT ? -ENOENT : -EFAULT;
	if ((err = read_blob(p, blob, rd, ctx, &h)))
		return err;
	f->blob = blob;
	f->name8 = h.name8;
	if ((p->interp_end && r->pc >= p->interp_begin && r->pc < p->interp_end) ||
	    h.name8 == COLLECTOR_HS_NAME_INTERPRETER)
		return step_interpreter(p, r, first, rd, ctx, &f->frame);
	if (h.name8 == COLLECTOR_HS_NAME_NMETHOD || h.name8 == COLLECTOR_HS_NAME_NATIVE_NMETHOD) {
		uint64_t pc = r->pc, orig;

		if (pc == h.deopt && !rd(ctx, r->sp + (uint64_t)h.orig_pc_offset, &orig, 8) &&
		    orig >= h.code_begin && orig < h.code_end)
			pc = orig; /* deoptimized: its pc was saved in the frame */
		f->frame = COLLECTOR_HS_COMPILED(pc, h.compile_id, first);
		return step_sized(&h, r, first, rd, ctx);
	}
	f->frame = r->pc; /* a stub: a native frame in the code cache */
	if (h.frame_size > 0)
		return step_sized(&h, r, first, rd, ctx);
	return step_unsized(r, first, h.name8, rd, ctx);
}

enum hotspot_walk_end hotspot_walk(const struct collector_hotspot_proc *p, struct hotspot_regs *regs,
				   bool first, hotspot_read_fn rd, void *ctx,
				   struct hotspot_walk_frame *out, size_t max, size_t *n)
{
	*n = 0;
	if (!in_code_cache(p, regs->pc))
		return HOTSPOT_WALK_NOT_MINE;
	for (int i = 0; i < COLLECTOR_HOTSPOT_MAX_FRAMES && *n < max; i++) {
		struct hotspot_regs before = *regs;
		int err = step(p, regs, first && i == 0, rd, ctx, &out[*n]);

		if (err) {
			*regs = before;
			return err == -ENOENT ? HOTSPOT_WALK_NO_BLOB : HOTSPOT_WALK_BAD_FRAME;
		}
		(*n)++;
		if (regs->sp <= before.sp || !regs->pc) {
			*regs = before;
			return HOTSPOT_WALK_BAD_FRAME;
		}
		if (!in_code_cache(p, regs->pc))
			return HOTSPOT_WALK_LEFT;
	}
	return HOTSPOT_WALK_LIMIT;
}
