/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reference walker of HotSpot's Java frames, in user space: the walk
 * that bpf/hotspot.h describes, step for step, on registers and a memory
 * reader, so that the design is proved (and tested) before the BPF walker
 * exists, and so that the BPF side has one implementation to be compared
 * with.  It reads nothing but through the reader, walks nothing outside
 * the code cache (native frames are the caller's: it stops with
 * HOTSPOT_WALK_LEFT and the registers of the first native frame), and
 * takes at most COLLECTOR_HOTSPOT_MAX_FRAMES steps, each with the loops'
 * bounds the BPF side has.
 */
#ifndef COLLECTOR_HOTSPOT_WALK_H
#define COLLECTOR_HOTSPOT_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/hotspot.h"

/* Reads size bytes at addr: 0, or a negative errno. */
typedef int (*hotspot_read_fn)(void *ctx, uint64_t addr, void *buf, size_t size);

struct hotspot_regs {
	uint64_t pc, sp, fp;
	uint64_t r13;         /* the interpreter's bcp: first frame only */
};

enum hotspot_walk_end {
	HOTSPOT_WALK_LEFT = 0,  /* pc left the code cache: a native frame's
				 * registers are in regs (the caller's walk) */
	HOTSPOT_WALK_NOT_MINE,  /* pc was not in the code cache to begin with */
	HOTSPOT_WALK_LIMIT,     /* COLLECTOR_HOTSPOT_MAX_FRAMES steps taken */
	HOTSPOT_WALK_NO_BLOB,   /* no blob holds pc (a free segment, a hole) */
	HOTSPOT_WALK_BAD_FRAME, /* a read failed, or the stack did not grow */
};

struct hotspot_walk_frame {
	uint64_t frame;       /* COLLECTOR_HS_INTERP/COMPILED, or a native pc
			       * (a stub, an adapter: kind NATIVE) */
	uint64_t blob;        /* the CodeBlob holding pc */
	uint64_t name8;       /* the first 8 bytes of the blob's name */
};

/* The CodeBlob holding pc (the segment map walk): 0 and *blob, or
 * -ENOENT (not in a heap, a free segment, too many hops), -EFAULT. */
int hotspot_find_blob(const struct collector_hotspot_proc *p, uint64_t pc, hotspot_read_fn rd,
		      void *ctx, uint64_t *blob);

/* Walks from regs (the interrupted registers when first, else those of a
 * frame whose pc is a return address into the code cache), the frames
 * into out[max] (*n of them, innermost first); regs are left at the frame
 * where the walk ended. */
enum hotspot_walk_end hotspot_walk(const struct collector_hotspot_proc *p, struct hotspot_regs *regs,
				   bool first, hotspot_read_fn rd, void *ctx,
				   struct hotspot_walk_frame *out, size_t max, size_t *n);

const char *hotspot_walk_end_name(enum hotspot_walk_end e);

#endif /* COLLECTOR_HOTSPOT_WALK_H */
