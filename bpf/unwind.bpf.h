/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: user stacks unwound in the BPF program from tables the
 * loader builds out of .eh_frame and .debug_frame (unwind/cfi_table.h,
 * bpf/collector.h's struct collector_unwind_*).
 *
 * The maps: unwind_row_chunks (every image's rows and, after them, its
 * page index, one entry per 256 bytes of text; in chunks: arrays the
 * loader adds as the run needs them, bpf/collector.h), unwind_procs (per
 * process, its executable mappings sorted by start, each with its image's
 * page index), unwind_asked (when a process last asked for its tables),
 * unwind_requests (the ring of those requests), and unwind_images and
 * unwind_learned (each image's table by file, and the mappings the
 * program found in a process's VMAs itself: unwind_learn.bpf.h).  The loader writes the
 * chunks through mappings of them (BPF_F_MMAPABLE), not a system call per
 * row.
 *
 * A frame costs: the mapping (the last one found is tried first: frames are
 * mostly in one image), one page-index load, a binary search over the
 * rows of that page (array look-ups, which the verifier inlines), and one
 * or two reads of the stack, from the sample's copy of its top when they
 * fall in it.  A PC with no table (JIT code, an image without CFI) gets a
 * frame-pointer step, counted; a PC outside every mapping of the
 * process's table is looked up in its VMAs (unwind_learn.bpf.h), and one
 * outside those too stops the walk, counted, and asks the loader to read
 * the process's mappings again.
 *
 * Include after common.bpf.h; the walk itself is in unwind_walk.bpf.h.
 * The walk writes return addresses into a
 * frame array (u64 PCs, innermost first, as the frame-pointer walk does);
 * a frame interrupted by a signal holds its exact PC + 1, so that every
 * caller's PC - 1 lies in its call.
 */
#ifndef COLLECTOR_UNWIND_BPF_H
#define COLLECTOR_UNWIND_BPF_H

/* A chunk of rows: every chunk the loader creates is of this shape.  The
 * sizes, not the types: a type reached only through the array of maps is
 * a forward declaration in the object's BTF, which libbpf refuses. */
struct unwind_row_chunk {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, COLLECTOR_UNWIND_CHUNK_ROWS);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(struct collector_unwind_row));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, COLLECTOR_UNWIND_MAX_CHUNKS);
	__type(key, u32);
	__array(values, struct unwind_row_chunk);
} unwind_row_chunks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u32); /* tgid */
	__type(value, struct collector_unwind_proc);
} unwind_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, u32); /* tgid */
	__type(value, u64); /* bpf_ktime_get_ns() of the last request */
} unwind_asked SEC(".maps");

/* Requests for tables (COLLECTOR_EV_UNWIND_MISS records): a ring of their
 * own, read by a thread of the loader's own, so that a backlog of samples
 * to decode does not delay them. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 << 10);
} unwind_requests SEC(".maps");

/* The tables of the images, by file (user space writes them), and the
 * mappings the program found itself: unwind_learn.bpf.h. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct collector_unwind_image_key);
	__type(value, struct collector_unwind_image);
} unwind_images SEC(".maps");

/* The mappings found per process (tgid). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u32);
	__type(value, struct collector_unwind_learned);
} unwind_learned SEC(".maps");

/* Moved on by the loader when it evicts an image: learned mappings of an
 * older epoch may point at rows given to another image. */
u32 unwind_epoch = 0;

/* Set by the loader: learn mappings (every cfi run, unless
 * COLLECTOR_UNWIND_NO_LEARN is set). */
const volatile bool unwind_learn = false;

/* A process asks for its tables at most this often. */
#define UNWIND_ASK_NS 20000000ULL

/* Words of the sample's stack copy the walk reads (a power of two). */
#define UNWIND_COPY_WORDS 512

/* The kernel's rt_sigframe (x86-64) as __restore_rt finds it at rsp: the
 * ucontext's saved rbp, rsp and rip. */
#define SIGFRAME_RBP 120
#define SIGFRAME_RSP 160
#define SIGFRAME_RIP 168

/* Highest user address + 1 (x86-64, 4-level page tables) */
#define USER_TOP 0x00007ffffffff000ULL

#include "hotspot.bpf.h"

/*
 * A walk's state, in the sample's scratch (map memory), not on the BPF
 * stack: the verifier does not follow values in map memory from one frame
 * to the next, so the walk's loop is verified in one or two rounds.  On
 * the stack, values it knew exactly (the frame count, the last mapping)
 * made it verify the step once per frame and once per path of its callers:
 * 575 000 instructions, against 3 000 for the frame-pointer walk, which
 * held a run's start 0.8 s under load.
 */
struct cfi_walk {
	u64 copy_sp, copy_len; /* the copy of the stack top in the scratch */
	u64 pc, sp, bp;
	/* pending uretprobes (--trace): the address of the task's next
	 * struct return_instance to match (0: none) and the trampoline's
	 * address, which stands in the stack for each one's return address */
	u64 ri, tramp;
	u32 first, n;     /* frames[first .. first + n) are written */
	u32 map;          /* index of the last mapping found */
	u32 probe;        /* unwind_map_index()'s probe */
	u8 exact;         /* pc was interrupted (frame 0, signal): not a return address */
	u8 complete;      /* reached the outermost frame */
	u8 outside;       /* stopped at a PC outside every known mapping */
	u8 stop_pending;  /* stop at a mapping whose table is being built */
	u8 pending;       /* ... and stopped at one */
	u8 fp_stepped;    /* a frame was stepped by frame pointer (no table) */
	u8 runtime;       /* stopped at the code of this frame kind's runtime,
			   * whose walk is a program of its own (0: no) */
	u8 k0;            /* the frame a walk's loop begins with (1, or where
			   * it stopped for a runtime's program) */

	/* mappings looked up in the kernel's VMAs (unwind_learn.bpf.h) */
	u64 mm;           /* the task's struct mm_struct */
	u64 ask_pc;       /* a PC whose image has no table yet (0: none) */
	u32 learn_left;   /* look-ups left this walk */
	u32 pad2;
	struct collector_unwind_map learned; /* the last one found */
	u64 node[32];     /* a maple tree node, as read */
	struct hotspot_scratch hs; /* a JVM's Java frames (hotspot_walk.bpf.h) */
};

/* Return instances of a task looked at per trampoline met: the kernel
 * keeps them newest first, and the walk meets them in that order, so the
 * one matched is nearly always the first looked at; the others are those
 * a longjmp left behind (the kernel drops them at the next return). */
#define UNWIND_MAX_RETURN_INSTANCES 8

/* A request to the loader (struct collector_unwind_request). */
static __always_inline void unwind_request(u32 kind, u32 tgid, u64 pc, u64 now, u64 flags)
{
	struct collector_unwind_request *e;

	e = bpf_ringbuf_reserve(&unwind_requests, sizeof(*e), 0);
	if (!e)
		return; /* a miss is asked again at a later sample */
	fill_header(&e->hdr, kind, tgid, 0, now);
	e->pc = pc;
	bpf_ringbuf_submit(e, flags);
}

/* Tells the loader that process tgid needs (new) tables, the image that
 * holds pc first, at most every UNWIND_ASK_NS: a record that wakes the
 * reader at once. */
static __always_inline void unwind_ask_tables(u32 tgid, u64 pc)
{
	u64 now = bpf_ktime_get_ns(), *last = bpf_map_lookup_elem(&unwind_asked, &tgid);

	if (last && now - *last < UNWIND_ASK_NS)
		return;
	bpf_map_update_elem(&unwind_asked, &tgid, &now, BPF_ANY);
	unwind_request(COLLECTOR_EV_UNWIND_MISS, tgid, pc, now, BPF_RB_FORCE_WAKEUP);
}

/* A process's tables are stale (exec) or of no use (exit); the loader is
 * told (without waking it: the images it no longer maps are freed when
 * their space is wanted). */
static __always_inline void unwind_forget(u32 tgid)
{
	bpf_map_delete_elem(&unwind_asked, &tgid);
	bpf_map_delete_elem(&unwind_learned, &tgid);
	if (bpf_map_delete_elem(&unwind_procs, &tgid) == 0)
		unwind_request(COLLECTOR_EV_UNWIND_GONE, tgid, 0, bpf_ktime_get_ns(),
			       BPF_RB_NO_WAKEUP);
}

/*
 * The searches are global functions: the verifier checks each once, on its
 * own, instead of once per path through the walk that calls it (inlined,
 * their loops made the sampling program too large to verify).
 */

/*
 * The index of p's mapping that holds pc, or -1.  Each probe goes through
 * w->probe, in map memory: an index the verifier computed itself it follows
 * exactly, and a search's 8 halvings were then 2^8 paths to verify (7 800
 * passes over the loop's body); one it loads from map memory it does not.
 */
__noinline long unwind_map_index(struct collector_unwind_proc *p, struct cfi_walk *w, u64 pc)
{
	u32 n, lo = 0, hi, i, mid;

	if (!p || !w)
		return -1;
	n = p->n_maps;
	if (n > COLLECTOR_UNWIND_MAX_MAPS)
		n = COLLECTOR_UNWIND_MAX_MAPS;
	/* lo: the number of mappings that start at or below pc */
	hi = n;
	for (i = 0; i < 8 && lo < hi; i++) {
		w->probe = (lo + hi) / 2;
		mid = *(volatile u32 *)&w->probe;
		if (p->maps[mid & (COLLECTOR_UNWIND_MAX_MAPS - 1)].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= p->maps[(lo - 1) & (COLLECTOR_UNWIND_MAX_MAPS - 1)].end)
		return -1;
	return lo - 1;
}

/* Row i of every image's rows, or NULL (no chunk holds it yet). */
static __always_inline struct collector_unwind_row *unwind_row_at(u32 i)
{
	u32 chunk = i >> COLLECTOR_UNWIND_CHUNK_SHIFT, at = i & (COLLECTOR_UNWIND_CHUNK_ROWS - 1);
	void *rows = bpf_map_lookup_elem(&unwind_row_chunks, &chunk);

	if (!rows)
		return NULL;
	return bpf_map_lookup_elem(rows, &at);
}

/* The index of the row that holds at offset off of the table whose pages
 * start at first_page, or -1. */
__noinline long unwind_row_index(u32 first_page, u32 n_pages, u64 off)
{
	struct collector_unwind_page *pg;
	struct collector_unwind_row *r;
	u32 lo, hi, i;

	if ((off >> COLLECTOR_UNWIND_PAGE_SHIFT) >= n_pages)
		return -1;
	/* the page index entries are in the rows' space, after the image's rows */
	pg = (struct collector_unwind_page *)unwind_row_at(first_page +
							   (u32)(off >> COLLECTOR_UNWIND_PAGE_SHIFT));
	if (!pg)
		return -1;
	lo = pg->first;
	hi = pg->last;
	/* the last row that starts at or below off; a page holds a few
	 * rows, 16 steps are enough for 65 536 */
	for (i = 0; i < 16 && lo < hi; i++) {
		u32 mid = lo + (hi - lo + 1) / 2;

		r = unwind_row_at(mid);
		if (!r)
			return -1;
		if (r->pc <= (u32)off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * The return address that a pending uretprobe replaced with its trampoline
 * in the stack slot at `slot` (the stack pointer at the traced function's
 * entry, which the kernel keeps as return_instance.stack), or 0.  The
 * kernel's own walker (perf, bpf_get_stack) puts them back by order; by
 * the slot, a chained instance (a traced function tail-called by another,
 * one trampoline for both) and one a longjmp left behind cannot shift the
 * others.  A global function: its loop is verified once.
 */
__noinline u64 unwind_uretprobe_ra(struct cfi_walk *w, u64 slot)
{
	struct return_instance *ri;
	u32 i;

	if (!w)
		return 0;
	ri = (struct return_instance *)w->ri;
	for (i = 0; i < UNWIND_MAX_RETURN_INSTANCES && ri; i++) {
		if (BPF_CORE_READ(ri, stack) == slot) {
			w->ri = (u64)BPF_CORE_READ(ri, next);
			return BPF_CORE_READ(ri, orig_ret_vaddr);
		}
		ri = BPF_CORE_READ(ri, next);
	}
	return 0;
}

/* Where the pending uretprobes of a task (its utask and mm, read by the
 * caller) are, for unwind_uretprobe_ra(): none (both 0) for a task that
 * has none, which is nearly every one.  A global function, verified once
 * whatever the states of its callers. */
__noinline int unwind_uretprobes_of(struct cfi_walk *w, u64 utask, u64 mm)
{
	struct uprobe_task *ut = (struct uprobe_task *)utask;
	struct mm_struct *m = (struct mm_struct *)mm;

	if (!w)
		return 0;
	w->ri = ut ? (u64)BPF_CORE_READ(ut, return_instances) : 0;
	w->tramp = w->ri && m ? BPF_CORE_READ(m, uprobes_state.xol_area, vaddr) : 0;
	return 0;
}

/* The mapping of p's table that holds pc, or NULL; the last one found is
 * tried first. */
static __always_inline struct collector_unwind_map *unwind_find_proc_map(struct cfi_walk *w,
								    struct collector_unwind_proc *p,
								    u64 pc)
{
	struct collector_unwind_map *m = &p->maps[w->map & (COLLECTOR_UNWIND_MAX_MAPS - 1)];
	long i;

	if (w->map < p->n_maps && pc >= m->start && pc < m->end)
		return m;
	i = unwind_map_index(p, w, pc);
	if (i < 0)
		return NULL;
	w->map = i;
	return &p->maps[i & (COLLECTOR_UNWIND_MAX_MAPS - 1)];
}

/* The row that holds at pc in mapping m, or NULL (no table there). */
static __always_inline struct collector_unwind_row *unwind_find_row(struct collector_unwind_map *m,
								    u64 pc)
{
	long i;

	if (pc < m->base)
		return NULL;
	i = unwind_row_index(m->first_page, m->n_pages, pc - m->base);
	if (i < 0)
		return NULL;
	return unwind_row_at(i);
}

#include "unwind_learn.bpf.h"

#endif /* COLLECTOR_UNWIND_BPF_H */
