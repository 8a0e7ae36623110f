/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: user stacks unwound in the BPF program from tables the
 * loader builds out of .eh_frame and .debug_frame (symbols/cfi_table.h,
 * bpf/collector.h's struct collector_unwind_*).
 *
 * The maps: unwind_rows (every image's rows, one array), unwind_pages
 * (per image, one entry per 4 KiB of text: its first and last row),
 * unwind_procs (per process, its executable mappings sorted by start, each
 * with its image's pages), unwind_asked (when a process last asked for its
 * tables) and unwind_requests (the ring of those requests).  The loader
 * writes the two arrays through mappings of them
 * (BPF_F_MMAPABLE), not a system call per row.
 *
 * A frame costs: the mapping (the last one found is tried first: frames are
 * mostly in one image), one page-index load, a binary search over the
 * rows of that page (array look-ups, which the verifier inlines), and one
 * or two reads of the stack, from the sample's copy of its top when they
 * fall in it.  A PC with no table (JIT code, an image without CFI) gets a
 * frame-pointer step, counted; a PC outside every known mapping stops the
 * walk, counted, and asks the loader to read the process's mappings again
 * (a library it mapped since, with dlopen).
 *
 * Include after common.bpf.h.  The walk writes return addresses into a
 * frame array (u64 PCs, innermost first, as the frame-pointer walk does);
 * a frame interrupted by a signal holds its exact PC + 1, so that every
 * caller's PC - 1 lies in its call.
 */
#ifndef COLLECTOR_UNWIND_BPF_H
#define COLLECTOR_UNWIND_BPF_H

/* Sized by the loader before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, u32);
	__type(value, struct collector_unwind_row);
} unwind_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, u32);
	__type(value, struct collector_unwind_page);
} unwind_pages SEC(".maps");

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

struct cfi_walk {
	u64 *frames;      /* 256 entries */
	u64 *copy;        /* the copy of [copy_sp, copy_sp + copy_len) */
	u64 copy_sp, copy_len;
	struct collector_unwind_proc *proc;
	u64 pc, sp, bp;
	u32 first, n;     /* frames[first .. first + n) are written */
	u32 map;          /* index of the last mapping found */
	bool exact;       /* pc was interrupted (frame 0, signal): not a return address */
	bool complete;    /* reached the outermost frame */
	bool outside;     /* stopped at a PC outside every known mapping */
};

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
	if (bpf_map_delete_elem(&unwind_procs, &tgid) == 0)
		unwind_request(COLLECTOR_EV_UNWIND_GONE, tgid, 0, bpf_ktime_get_ns(),
			       BPF_RB_NO_WAKEUP);
}

/* A word of the target's stack: from the copy when it lies in it. */
static __always_inline bool unwind_read(struct cfi_walk *w, u64 addr, u64 *out)
{
	u64 off = addr - w->copy_sp;

	if (addr >= w->copy_sp && !(off & 7) && w->copy_len >= 8 && off <= w->copy_len - 8) {
		*out = w->copy[(off / 8) & (UNWIND_COPY_WORDS - 1)];
		return true;
	}
	return bpf_probe_read_user(out, sizeof(*out), (void *)addr) == 0;
}

/*
 * The searches are global functions: the verifier checks each once, on its
 * own, instead of once per path through the walk that calls it (inlined,
 * their loops made the sampling program too large to verify).
 */

/* The index of p's mapping that holds pc, or -1. */
__noinline long unwind_map_index(struct collector_unwind_proc *p, u64 pc)
{
	u32 n, lo = 0, hi, i;

	if (!p)
		return -1;
	n = p->n_maps;
	if (n > COLLECTOR_UNWIND_MAX_MAPS)
		n = COLLECTOR_UNWIND_MAX_MAPS;
	/* lo: the number of mappings that start at or below pc */
	hi = n;
	for (i = 0; i < 8 && lo < hi; i++) {
		u32 mid = (lo + hi) / 2;

		if (p->maps[mid & (COLLECTOR_UNWIND_MAX_MAPS - 1)].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || pc >= p->maps[(lo - 1) & (COLLECTOR_UNWIND_MAX_MAPS - 1)].end)
		return -1;
	return lo - 1;
}

/* The index in unwind_rows of the row that holds at offset off of the
 * table whose pages start at first_page, or -1. */
__noinline long unwind_row_index(u32 first_page, u32 n_pages, u64 off)
{
	struct collector_unwind_page *pg;
	struct collector_unwind_row *r;
	u32 key, lo, hi, i;

	if ((off >> 12) >= n_pages)
		return -1;
	key = first_page + (u32)(off >> 12);
	pg = bpf_map_lookup_elem(&unwind_pages, &key);
	if (!pg)
		return -1;
	lo = pg->first;
	hi = pg->last;
	/* the last row that starts at or below off; a page holds a few
	 * dozen rows, 16 steps are enough for 65 536 */
	for (i = 0; i < 16 && lo < hi; i++) {
		u32 mid = lo + (hi - lo + 1) / 2;

		r = bpf_map_lookup_elem(&unwind_rows, &mid);
		if (!r)
			return -1;
		if (r->pc <= (u32)off)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The mapping that holds pc, or NULL; the last one found is tried first. */
static __always_inline struct collector_unwind_map *unwind_find_map(struct cfi_walk *w, u64 pc)
{
	struct collector_unwind_proc *p = w->proc;
	struct collector_unwind_map *m = &p->maps[w->map & (COLLECTOR_UNWIND_MAX_MAPS - 1)];
	long i;

	if (w->map < p->n_maps && pc >= m->start && pc < m->end)
		return m;
	i = unwind_map_index(p, pc);
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
	u32 key;

	if (pc < m->base)
		return NULL;
	i = unwind_row_index(m->first_page, m->n_pages, pc - m->base);
	if (i < 0)
		return NULL;
	key = i;
	return bpf_map_lookup_elem(&unwind_rows, &key);
}

/* Frame k, written as `value`, and the caller's registers. */
static __always_inline void unwind_push(struct cfi_walk *w, u32 k, u64 value, u64 pc, u64 sp,
					u64 bp, bool exact)
{
	w->frames[(w->first + k) & 255] = value;
	w->n = k + 1;
	w->pc = pc;
	w->sp = sp;
	w->bp = bp;
	w->exact = exact;
}

/* One frame: the caller's pc, sp and rbp from the rules at pc. */
static long unwind_step(u32 i, void *data)
{
	struct cfi_walk *w = data;
	u64 lookup = w->exact ? w->pc : w->pc - 1, cfa, ra, bp = w->bp;
	struct collector_unwind_row *r;
	struct collector_unwind_map *m;
	u32 k = w->n, kind = COLLECTOR_ROW_NONE, cfa_off = 0;
	s64 rbp_off = 0;

	if (k >= COLLECTOR_MAX_STACK_DEPTH)
		return 1;
	m = unwind_find_map(w, lookup);
	if (!m) {
		w->outside = true;
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
			w->frames[(w->first + k - 1) & 255] = w->pc + 1;
		if (!unwind_read(w, w->sp + SIGFRAME_RIP, &ra) ||
		    !unwind_read(w, w->sp + SIGFRAME_RSP, &cfa) ||
		    !unwind_read(w, w->sp + SIGFRAME_RBP, &bp) || !ra || ra >= USER_TOP)
			return 1;
		/* the interrupted PC, exact: written + 1 */
		unwind_push(w, k, ra + 1, ra, cfa, bp, true);
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
		if (w->bp < w->sp || w->bp >= USER_TOP || !unwind_read(w, w->bp, &bp))
			return 1;
		cfa = w->bp + 16;
		rbp_off = 0;
		break;
	}
	/* the stack grows down: a caller's frame is above its callee's */
	if (cfa <= w->sp || cfa >= USER_TOP || !unwind_read(w, cfa - 8, &ra) || !ra ||
	    ra >= USER_TOP)
		return 1;
	if (rbp_off && !unwind_read(w, cfa + rbp_off, &bp))
		return 1;
	unwind_push(w, k, ra, ra, cfa, bp, false);
	return 0;
}

#endif /* COLLECTOR_UNWIND_BPF_H */
