/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: a process's mappings found by the program itself, from
 * the kernel's tree of the process's VMAs, for the PCs its own mapping
 * table (unwind_procs, which user space writes) does not hold yet.
 *
 * Why: on a busy machine most processes are new (a build runs hundreds of
 * compilers a minute), and the first samples of each came before user
 * space had read its maps and written its table: each was a stack copy for
 * user space, about 110 us of the collector's CPU a process (a forced
 * wake-up of the loader's thread, the copy, the user-space unwind).  Their
 * images' tables were loaded already (every cc1 is the same file): only
 * the process's mapping table was missing.  Side by side under a build
 * loop (-a -F 99, 240 s): 232 stack copies instead of 7 134, and the
 * collector's CPU and BPF time 0.66% of a core instead of 0.98%.
 *
 * How: the tables of the images are in unwind_images, by file (device and
 * inode, as the VMA holds them).  For a PC outside the process's table,
 * the program looks its VMA up in the process's maple tree (mm->mm_mt),
 * reading the nodes as the kernel's lockless walkers do (the nodes are
 * freed after an RCU grace period, and a program runs inside one; every
 * read is a probe read, and the VMA found is checked: its mm, its range;
 * a VMA freed and reused between those reads, by another thread of the
 * sampled process, could still mislead one process's walks), then the
 * image of its file, and keeps the mapping in unwind_learned.  The
 * helpers that look VMAs up with the mmap lock (bpf_find_vma, the VMA
 * iterator) allow one look-up per program run with interrupts off, or
 * none: a stack crosses two or three images.
 *
 * A VMA whose file has no table yet is not kept: the sample is copied and
 * the loader asked, as for a process without a table, until the table is
 * there.  Learned mappings are dropped with the process's table (exec,
 * exit) and when the loader evicts an image (unwind_epoch moves on).
 *
 * Include after unwind.bpf.h; reads the kernel's maple tree of VMAs
 * (Linux 6.1 on) through CO-RE.
 */
#ifndef COLLECTOR_UNWIND_LEARN_BPF_H
#define COLLECTOR_UNWIND_LEARN_BPF_H

static const struct collector_unwind_learned unwind_learned_empty = {};

/* VMA look-ups per walk: a stack crosses a few images. */
#define UNWIND_LEARN_PER_WALK 4

/* The maple tree (include/linux/maple_tree.h, lib/maple_tree.c): a
 * node is 256-byte aligned, and a pointer to it holds its type in bits
 * 3-6; the root's is also tagged 0b10. */
#define MAPLE_NODE_BYTES 256
#define MAPLE_TYPE_SHIFT 3
#define MAPLE_TYPE_MASK 15
#define MAPLE_MAX_DEPTH 8

/* A descent of the maple tree from root to the leaf entry for pc. */
struct maple_descent {
	struct cfi_walk *w;  /* w->node: the node read */
	u64 root, pc;
	u64 vma;             /* the leaf's entry, 0 until found */
};

/*
 * One level of the descent (bpf_loop's callback: verified once, not once
 * per level; the levels unrolled were a fifth of on_sample's verified
 * instructions, 14 ms of CPU at every start).  One read of the node into
 * w->node, then the first pivot (the last index of a slot) at or above pc
 * among the node's used slots; its slot is the next level's root.
 * Returns 1 to stop.
 */
static long maple_level(u32 depth, void *data)
{
	struct maple_descent *md = data;
	struct cfi_walk *w = md->w;
	u64 root = md->root, node = root & ~(u64)(MAPLE_NODE_BYTES - 1), meta;
	u32 i, end, type, slots, npiv;

	/* the root's pointer is tagged as an internal entry (0b10) when the
	 * tree has nodes; a child's is not */
	if (!w || (depth == 0 && (root & 3) != 2) || node < 4096)
		return 1;
	type = (root >> MAPLE_TYPE_SHIFT) & MAPLE_TYPE_MASK;
	if (bpf_probe_read_kernel(w->node, MAPLE_NODE_BYTES, (void *)node))
		return 1;
	/* a dead node (freed after a change) points at itself */
	if ((w->node[0] & ~(u64)(MAPLE_NODE_BYTES - 1)) == node)
		return 1;
	if (type == bpf_core_enum_value(enum maple_type, maple_arange_64)) {
		npiv = 9;
		slots = 1 + 9;
		meta = bpf_core_field_offset(struct maple_arange_64, meta);
		end = ((u8 *)w->node)[meta & (MAPLE_NODE_BYTES - 1)];
	} else if (type == bpf_core_enum_value(enum maple_type, maple_range_64) ||
		   type == bpf_core_enum_value(enum maple_type, maple_leaf_64)) {
		npiv = 15;
		slots = 1 + 15;
		/* the last pivot set: every slot is used (when it is the
		 * node's end, the scan stops there all the same) */
		meta = bpf_core_field_offset(struct maple_range_64, meta);
		end = w->node[15] ? 15 : ((u8 *)w->node)[meta & (MAPLE_NODE_BYTES - 1)];
	} else {
		return 1;
	}
	if (end > npiv)
		end = npiv;
	/* pivot i is w->node[1 + i]; the slot after the last pivot below pc
	 * holds it (the last used slot ends at the node's end, without a
	 * pivot of its own) */
	for (i = 0; i < 15 && i < end; i++)
		if (w->node[(1 + i) & 31] >= md->pc)
			break;
	md->root = w->node[(slots + i) & 31];
	if (type == bpf_core_enum_value(enum maple_type, maple_leaf_64)) {
		md->vma = md->root;
		return 1;
	}
	return 0;
}

/* The VMA of the maple tree at root that holds pc, or 0: at most
 * MAPLE_MAX_DEPTH levels.  A global function: verified once. */
__noinline u64 unwind_maple_find(struct cfi_walk *w, u64 root, u64 pc)
{
	struct maple_descent md = { .w = w, .root = root, .pc = pc };

	if (!w)
		return 0;
	bpf_loop(MAPLE_MAX_DEPTH, maple_level, &md, 0);
	return md.vma;
}

/*
 * Finds the mapping of task's mm that holds pc into w->learned: 0 found
 * (with its table, or without one: anonymous code, an image without CFI),
 * 1 its image has no table yet (first_page COLLECTOR_UNWIND_PENDING), -1
 * none (no executable VMA there, or the tree changed under the read).
 */
__noinline long unwind_learn_map(struct cfi_walk *w, u64 mm, u64 pc)
{
	struct collector_unwind_image_key key = {};
	struct collector_unwind_map *m;
	struct collector_unwind_image *img;
	struct vm_area_struct *vma;
	struct mm_struct *mms = (struct mm_struct *)mm;
	struct file *f;
	u64 start, end, pgoff;
	u32 s;

	if (!w || !mm || !bpf_core_field_exists(mms->mm_mt))
		return -1;
	vma = (struct vm_area_struct *)unwind_maple_find(w, (u64)BPF_CORE_READ(mms, mm_mt.ma_root),
							 pc);
	if (!vma || (u64)BPF_CORE_READ(vma, vm_mm) != mm)
		return -1;
	start = BPF_CORE_READ(vma, vm_start);
	end = BPF_CORE_READ(vma, vm_end);
	if (pc < start || pc >= end || !(BPF_CORE_READ(vma, vm_flags) & 4 /* VM_EXEC */))
		return -1;
	m = &w->learned;
	m->start = start;
	m->end = end;
	m->base = 0;
	m->first_page = 0;
	m->n_pages = 0;
	f = BPF_CORE_READ(vma, vm_file);
	if (f) {
		key.dev = BPF_CORE_READ(f, f_inode, i_sb, s_dev);
		key.ino = BPF_CORE_READ(f, f_inode, i_ino);
	} else if (start == (u64)BPF_CORE_READ(mms, context.vdso)) {
		key.dev = COLLECTOR_UNWIND_VDSO_DEV;
	} else {
		return 0; /* anonymous code (JIT): frame-pointer steps */
	}
	img = bpf_map_lookup_elem(&unwind_images, &key);
	if (!img) {
		m->first_page = COLLECTOR_UNWIND_PENDING;
		return 1;
	}
	pgoff = (u64)BPF_CORE_READ(vma, vm_pgoff) << 12;
	for (s = 0; s < COLLECTOR_UNWIND_IMAGE_SEGS && s < img->n_segs; s++) {
		struct collector_unwind_image_seg *seg = &img->segs[s];

		if (pgoff >= seg->start && pgoff < seg->end) {
			m->base = start - pgoff + seg->delta;
			m->first_page = seg->first_page;
			m->n_pages = seg->n_pages;
			break;
		}
	}
	return 0;
}

/* The learned mappings of process tgid, made when it has none; NULL when
 * nothing is learned. */
static __always_inline struct collector_unwind_learned *unwind_learned_of(u32 tgid)
{
	struct collector_unwind_learned *lp;

	if (!unwind_learn)
		return NULL;
	lp = bpf_map_lookup_elem(&unwind_learned, &tgid);
	if (!lp) {
		bpf_map_update_elem(&unwind_learned, &tgid, &unwind_learned_empty, BPF_NOEXIST);
		lp = bpf_map_lookup_elem(&unwind_learned, &tgid);
		if (!lp)
			return NULL;
	}
	if (lp->epoch != unwind_epoch) {
		lp->n = 0;
		lp->epoch = unwind_epoch;
	}
	return lp;
}

/*
 * The mapping that holds pc: from the process's table (p), else from its
 * learned ones (lp), else looked up in its VMAs (at most
 * UNWIND_LEARN_PER_WALK times a walk) and kept in lp when its image has a
 * table; NULL when none holds it.  One whose image has no table yet is
 * returned as pending, and w->ask_pc notes it for the loader.
 */
static __always_inline struct collector_unwind_map *
unwind_find_map(struct cfi_walk *w, struct collector_unwind_proc *p,
		struct collector_unwind_learned *lp, u64 pc)
{
	struct collector_unwind_map *m;
	long r;
	u32 i, n;

	if (p) {
		m = unwind_find_proc_map(w, p, pc);
		if (m)
			return m;
	}
	if (!lp)
		return NULL;
	n = lp->n;
	for (i = 0; i < COLLECTOR_UNWIND_LEARNED && i < n; i++) {
		m = &lp->maps[i];
		if (pc >= m->start && pc < m->end)
			return m;
	}
	if (!w->learn_left)
		return NULL;
	w->learn_left--;
	r = unwind_learn_map(w, w->mm, pc);
	if (r < 0)
		return NULL;
	if (r > 0) {
		w->ask_pc = pc;
		return &w->learned;
	}
	count(COLLECTOR_CNT_CFI_LEARNED);
	/* written before it is counted in: a reader never meets a slot
	 * half written by this CPU (two CPUs learning for one process in
	 * the same microsecond may both write slot n; the last one stays) */
	if (n < COLLECTOR_UNWIND_LEARNED) {
		lp->maps[n & (COLLECTOR_UNWIND_LEARNED - 1)] = w->learned;
		lp->n = n + 1;
	}
	return &w->learned;
}

#endif /* COLLECTOR_UNWIND_LEARN_BPF_H */
