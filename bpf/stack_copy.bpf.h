/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sample with the user registers and a copy of the top of the user
 * stack (struct collector_stack_sample_event), for user space to unwind:
 * every sample with --call-graph dwarf, and with cfi the samples that come
 * before their image's table (unwind_walk.bpf.h says which).
 * stack_sample() is a global function, the copy a bpf_loop over pages
 * whose state is in the scratch; the return addresses pending uretprobes
 * replaced are put back in the copy.
 *
 * Included by sample.bpf.c after fill_sample(), kernel_frames(),
 * read_user_regs() and sample_lost().
 */
#ifndef COLLECTOR_STACK_COPY_BPF_H
#define COLLECTOR_STACK_COPY_BPF_H

/* The state of a stack copy (stack_copy_page()). */
struct stack_copy {
	u64 addr;       /* the next byte to copy */
	u64 len;        /* bytes copied or left zero */
	u64 read;       /* the copy's length: up to the last byte read */
	u32 nk;         /* kernel frames before the copy */
	u32 pad;
	/* stack_patch_uretprobes(): the next return instance, the
	 * trampoline's address, the copy's start */
	u64 ri, tramp, sp;
};

/* Where a dwarf-mode record is built before it is copied to the ring with
 * its real length (a page of slack keeps every copy provably in bounds). */
struct stack_scratch {
	struct collector_stack_sample_event e;
	/* the kernel frames, then the stack copy right after them */
	u8 data[COLLECTOR_MAX_STACK_DEPTH * 8 + COLLECTOR_MAX_STACK_COPY + 4096];
	struct stack_copy copy;
};

/* One slot per CPU, indexed by CPU: a per-CPU array cannot hold values
 * this big (32 KiB at most).  The loader sizes it to the possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct stack_scratch);
} scratch SEC(".maps");

/*
 * A copy of the user stack into a dwarf-mode record, a page a call.  A
 * page the program cannot read (no fault is taken here) is left zero and
 * the copy goes on: inside the stack it is one no code has touched yet
 * (a big frame's untouched array: dlopen_fresh's main has 20 KiB), whose
 * bytes are zero indeed, and the frames above it are still wanted; past
 * the stack's top it is unmapped, and the copy's length ends at the last
 * page read.  The state is in the scratch (map memory), which the
 * verifier does not follow from one call to the next: on the BPF stack,
 * it verified the callback once per page of a 32 KiB copy (on_sample cfi
 * 14 900 -> 41 300 instructions).
 */
struct stack_copy_loop {
	struct stack_scratch *sc;
	struct task_struct *task; /* whose stack: another task's (remote) */
};

static __always_inline long stack_copy_page_in(void *data, bool remote)
{
	struct stack_copy_loop *l = data;
	struct stack_scratch *sc = l->sc;
	struct stack_copy *c = &sc->copy;
	u64 chunk = 4096 - (c->addr & 4095), len = c->len, at;

	if (len >= stack_bytes || len > COLLECTOR_MAX_STACK_COPY)
		return 1;
	if (chunk > stack_bytes - len)
		chunk = stack_bytes - len;
	if (chunk > 4096)
		return 1;
	/* right after the kernel frames */
	at = (c->nk & 127) * 8 + (len & (COLLECTOR_MAX_STACK_COPY - 1));
	/* the helpers zero what they could not read */
	if (remote ? bpf_copy_from_user_task(&sc->data[at], chunk, (void *)c->addr, l->task, 0) == 0
		   : bpf_probe_read_user(&sc->data[at], chunk, (void *)c->addr) == 0)
		c->read = len + chunk;
	c->len = len + chunk;
	c->addr += chunk;
	return 0;
}

static long stack_copy_page(u32 i, void *data)
{
	return stack_copy_page_in(data, false);
}

/* Sleepable programs only: another task's stack. */
static long stack_copy_page_task(u32 i, void *data)
{
	return stack_copy_page_in(data, true);
}

/*
 * In a stack copy, the return addresses that pending uretprobes (--trace)
 * replaced with their trampoline put back (the slot each one hijacked, if
 * the copy holds it and it holds the trampoline still): user space
 * unwinds the traced frames as if no probe were there.  A global
 * function, verified once.
 */
static long stack_patch_one(u32 i, void *data)
{
	struct stack_scratch *sc = ((struct stack_copy_loop *)data)->sc;
	struct stack_copy *c = &sc->copy;
	struct return_instance *ri = (struct return_instance *)c->ri;
	u64 slot, off, at, *word;

	if (!ri)
		return 1;
	slot = BPF_CORE_READ(ri, stack);
	off = slot - c->sp;
	if (slot >= c->sp && !(off & 7) && off + 8 <= c->read && off < COLLECTOR_MAX_STACK_COPY) {
		/* at <= 127 * 8 + 65 535: in bounds */
		at = (c->nk & 127) * 8 + (off & (COLLECTOR_MAX_STACK_COPY - 1));
		word = (u64 *)&sc->data[at];
		if (*word == c->tramp)
			*word = BPF_CORE_READ(ri, orig_ret_vaddr);
	}
	c->ri = (u64)BPF_CORE_READ(ri, next);
	return 0;
}

__noinline int stack_patch_uretprobes(struct stack_scratch *sc, u64 sp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct stack_copy_loop l = { .sc = sc };

	if (!sc)
		return 0;
	sc->copy.ri = (u64)BPF_CORE_READ(task, utask, return_instances);
	if (!sc->copy.ri)
		return 0;
	sc->copy.tramp = BPF_CORE_READ(task, mm, uprobes_state.xol_area, vaddr);
	sc->copy.sp = sp;
	bpf_loop(4 * UNWIND_MAX_RETURN_INSTANCES, stack_patch_one, &l, 0);
	return 0;
}

/*
 * The top of the user stack from the record's sp (sc->e.regs, set), page
 * by page right after its nk frames (kernel, and any Python frames of an
 * off-CPU copy): a copy that reaches an
 * unmapped page keeps what it read, with its real length (sc->e.stack_len),
 * the return addresses pending uretprobes replaced put back.  The record's
 * size, or 0 when it does not fit.  For stack_sample() and the off-CPU
 * copies (offcpu.bpf.h); with remote (a constant), the stack of task, not
 * the current one's (offcpu_window.bpf.h, sleepable), whose uretprobes are
 * left as they are.
 */
static __always_inline u64 stack_copy_in(struct stack_scratch *sc, u32 nk,
					 struct task_struct *task, bool remote)
{
	struct stack_copy_loop copy = { .sc = sc, .task = task };
	u64 len, size;

	sc->copy.nk = nk;
	sc->copy.addr = sc->e.regs.sp;
	sc->copy.len = 0;
	sc->copy.read = 0;
	if (sc->copy.addr)
		bpf_loop(COLLECTOR_MAX_STACK_COPY / 4096 + 1,
			 remote ? stack_copy_page_task : stack_copy_page, &copy, 0);
	len = sc->copy.read;
	if (!remote)
		stack_patch_uretprobes(sc, sc->e.regs.sp);
	if (len < stack_bytes && sc->copy.addr)
		count(COLLECTOR_CNT_STACK_COPY_SHORT);
	sc->e.stack_len = len;
	if (len > COLLECTOR_MAX_STACK_COPY)
		return 0;
	size = sizeof(sc->e) + nk * sizeof(u64) + len;
	return size > sizeof(*sc) ? 0 : size;
}

static __always_inline u64 stack_copy_user(struct stack_scratch *sc, u32 nk)
{
	return stack_copy_in(sc, nk, NULL, false);
}

/* --call-graph dwarf: user registers and the top of the user stack (and,
 * with cfi, a sample before its image's table).  A global function: the
 * verifier checks it once, not at each of its calls. */
__noinline int stack_sample(struct bpf_perf_event_data *ctx, u32 tgid, u32 tid, u64 ip,
			    u32 kernel_mode)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct collector_stack_sample_event *e;
	u32 cpu = bpf_get_smp_processor_id(), nk = 0;
	struct stack_scratch *sc;
	u64 size;

	if (!ctx)
		return 0;
	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!sc)
		return 0;
	e = &sc->e;
	fill_sample(&e->sample, ctx, task, COLLECTOR_EV_SAMPLE_STACK, tgid, tid, ip, kernel_mode);
	e->stack_len = 0;
	e->seq = 0;
	if (kernel_mode)
		nk = kernel_frames(ctx, (u64 *)sc->data);
	e->sample.n_kernel = nk;
	if (!BPF_CORE_READ(task, mm)) {
		__builtin_memset(&e->regs, 0, sizeof(e->regs));
		count(COLLECTOR_CNT_NO_USER_REGS);
	} else if (kernel_mode) {
		/* the registers saved at kernel entry */
		read_user_regs(&e->regs, (struct pt_regs *)bpf_task_pt_regs(task));
	} else {
		/* the context is rewritten by the verifier: direct loads only */
		e->regs.ip = ctx->regs.ip;
		e->regs.sp = ctx->regs.sp;
		e->regs.bp = ctx->regs.bp;
		e->regs.bx = ctx->regs.bx;
		e->regs.r12 = ctx->regs.r12;
		e->regs.r13 = ctx->regs.r13;
		e->regs.r14 = ctx->regs.r14;
		e->regs.r15 = ctx->regs.r15;
	}
	e->sample.user_ip = e->regs.ip;
	size = stack_copy_user(sc, nk);
	if (!size)
		return 0;
	if (bpf_ringbuf_output(&events, sc, size, submit_flags()) != 0)
		sample_lost(e->sample.event);
	return 0;
}

#endif /* COLLECTOR_STACK_COPY_BPF_H */
