// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-clock sampling of target processes.
 *
 * on_sample runs on every cpu-clock perf event (one per CPU).  It counts the
 * sample in kernel maps (by instruction and by stack) and streams a
 * time-ordered record through the ring buffer.  The task tracepoints follow
 * targets across fork, exec and exit, and record when target threads go off
 * and on a CPU.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "collector.h"

#ifndef EEXIST
#define EEXIST 17
#endif

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader through skel->rodata before load. */
const volatile bool filter_tgids = true;   /* false: every process (-a) */
const volatile bool trace_switches = false;
const volatile u64 wakeup_bytes = 1 << 20; /* force a wakeup past this fill */
const volatile bool dwarf_mode = false;    /* copy registers and stack */
const volatile u32 stack_bytes = 8192;     /* <= COLLECTOR_MAX_STACK_COPY */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, u32);   /* tgid */
	__type(value, u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20); /* resized by the loader */
} events SEC(".maps");

/* User and kernel stacks in maps of their own: a stack id whose bucket is
 * taken by another stack is lost (-EEXIST), and two maps halve the load. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384); /* resized by the loader */
	__uint(key_size, sizeof(u32));
	__uint(value_size, COLLECTOR_MAX_STACK_DEPTH * sizeof(u64));
} user_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384); /* resized by the loader */
	__uint(key_size, sizeof(u32));
	__uint(value_size, COLLECTOR_MAX_STACK_DEPTH * sizeof(u64));
} kernel_stacks SEC(".maps");

/* Aggregates grow as needed (no preallocation): a system-wide run meets
 * hundreds of thousands of distinct instructions. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 20);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct collector_ip_key);
	__type(value, u64);
} ip_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 20);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct collector_stack_key);
	__type(value, u64);
} stack_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COLLECTOR_CNT_MAX);
	__type(key, u32);
	__type(value, u64);
} counters SEC(".maps");

/* Where a dwarf-mode record is built before it is copied to the ring with
 * its real length (a page of slack keeps every copy provably in bounds). */
struct stack_scratch {
	struct collector_stack_sample_event e;
	u8 stack[COLLECTOR_MAX_STACK_COPY + 4096];
};

/* One slot per CPU, indexed by CPU: a per-CPU array cannot hold values
 * this big (32 KiB at most).  The loader sizes it to the possible CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct stack_scratch);
} scratch SEC(".maps");

static __always_inline void count(u32 which)
{
	u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += 1;
}

static __always_inline bool is_target(u32 tgid)
{
	if (!filter_tgids)
		return tgid != 0; /* the idle task is not a process */
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

/* Submit without waking the reader unless the ring fills past a threshold:
 * a wakeup per record costs 2-4 us here. */
static __always_inline u64 submit_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes) {
		count(COLLECTOR_CNT_WAKEUPS);
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

static __always_inline void fill_header(struct collector_event_header *h, u32 kind,
					u32 tgid, u32 tid)
{
	h->kind = kind;
	h->cpu = bpf_get_smp_processor_id();
	h->ktime_ns = bpf_ktime_get_ns();
	h->tgid = tgid;
	h->tid = tid;
}

static __always_inline void add_count(void *map, void *key)
{
	u64 one = 1, *c = bpf_map_lookup_elem(map, key);

	if (c) {
		__sync_fetch_and_add(c, 1);
		return;
	}
	if (bpf_map_update_elem(map, key, &one, BPF_NOEXIST) == -EEXIST) {
		c = bpf_map_lookup_elem(map, key);
		if (c)
			__sync_fetch_and_add(c, 1);
	} else if (!bpf_map_lookup_elem(map, key)) {
		count(COLLECTOR_CNT_AGG_FULL);
	}
}

/* The user-mode PC of a task: its saved registers at kernel entry. */
static __always_inline u64 task_user_ip(struct task_struct *task)
{
	struct pt_regs *regs;

	if (!BPF_CORE_READ(task, mm))
		return 0; /* kernel thread */
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return 0;
	return BPF_CORE_READ(regs, ip);
}

static __always_inline void read_user_regs(struct collector_user_regs *r, struct pt_regs *regs)
{
	r->ip = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->bp = BPF_CORE_READ(regs, bp);
	r->bx = BPF_CORE_READ(regs, bx);
	r->r12 = BPF_CORE_READ(regs, r12);
	r->r13 = BPF_CORE_READ(regs, r13);
	r->r14 = BPF_CORE_READ(regs, r14);
	r->r15 = BPF_CORE_READ(regs, r15);
}

/* --call-graph dwarf: user registers and the top of the user stack. */
static __always_inline int stack_sample(struct bpf_perf_event_data *ctx, struct task_struct *task,
				   u32 tgid, u32 tid, u64 ip, bool kernel_mode, s64 kstack)
{
	struct collector_stack_sample_event *e;
	u32 cpu = bpf_get_smp_processor_id(), len = 0, i;
	struct stack_scratch *sc;
	u64 addr, size;

	sc = bpf_map_lookup_elem(&scratch, &cpu);
	if (!sc)
		return 0;
	e = &sc->e;
	fill_header(&e->sample.hdr, COLLECTOR_EV_SAMPLE_STACK, tgid, tid);
	e->sample.ip = ip;
	e->sample.period = ctx->sample_period;
	e->sample.cputime_ns = BPF_CORE_READ(task, se.sum_exec_runtime);
	e->sample.user_stack_id = -2;
	e->sample.kernel_stack_id = kstack;
	e->sample.kernel_mode = kernel_mode;
	e->stack_len = 0;
	e->pad = 0;
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

	/* Page by page from sp: a copy that reaches an unmapped page keeps
	 * what it read, with its real length. */
	addr = e->regs.sp;
	for (i = 0; addr && i < COLLECTOR_MAX_STACK_COPY / 4096 + 1; i++) {
		u64 chunk = 4096 - (addr & 4095);

		if (len >= stack_bytes)
			break;
		if (chunk > stack_bytes - len)
			chunk = stack_bytes - len;
		if (chunk > 4096 || len > COLLECTOR_MAX_STACK_COPY)
			break;
		if (bpf_probe_read_user(&sc->stack[len & (COLLECTOR_MAX_STACK_COPY - 1)], chunk,
					(void *)addr) != 0)
			break;
		len += chunk;
		addr += chunk;
	}
	if (len < stack_bytes && addr)
		count(COLLECTOR_CNT_STACK_COPY_SHORT);
	e->stack_len = len;
	if (len > COLLECTOR_MAX_STACK_COPY)
		return 0;
	size = sizeof(*e) + len;
	if (bpf_ringbuf_output(&events, sc, size, submit_flags()) != 0)
		count(COLLECTOR_CNT_RB_FULL_SAMPLE);
	return 0;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	u32 tgid = id >> 32, tid = (u32)id;
	struct task_struct *task;
	struct collector_sample_event *e;
	struct collector_ip_key ipk = {};
	struct collector_stack_key sk = {};
	u64 ip = PT_REGS_IP(&ctx->regs);
	bool kernel_mode;
	s64 ustack, kstack;

	if (!is_target(tgid))
		return 0;
	count(COLLECTOR_CNT_SAMPLES);

	task = bpf_get_current_task_btf();
	/* x86-64: the kernel owns the upper half of the address space (the
	 * context only allows 8-byte reads of regs, so not regs.cs) */
	kernel_mode = ip >= 0xffff800000000000ULL;

	if (dwarf_mode)
		ustack = -2; /* unwound in user space from the stack copy */
	else
		ustack = bpf_get_stackid(ctx, &user_stacks, BPF_F_USER_STACK);
	if (ustack == -EEXIST)
		count(COLLECTOR_CNT_USTACK_COLLISION);
	else if (ustack < 0 && !dwarf_mode && BPF_CORE_READ(task, mm))
		count(COLLECTOR_CNT_USTACK_FAIL);
	if (kernel_mode) {
		kstack = bpf_get_stackid(ctx, &kernel_stacks, 0);
		if (kstack == -EEXIST)
			count(COLLECTOR_CNT_KSTACK_COLLISION);
		else if (kstack < 0)
			count(COLLECTOR_CNT_KSTACK_FAIL);
	} else {
		kstack = -2; /* -ENOENT: no kernel part */
	}

	ipk.tgid = tgid;
	ipk.tid = tid;
	ipk.ip = ip;
	add_count(&ip_counts, &ipk);
	sk.tgid = tgid;
	sk.tid = tid;
	sk.user_stack_id = ustack;
	sk.kernel_stack_id = kstack;
	add_count(&stack_counts, &sk);

	if (dwarf_mode)
		return stack_sample(ctx, task, tgid, tid, ip, kernel_mode, kstack);

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(COLLECTOR_CNT_RB_FULL_SAMPLE);
		return 0;
	}
	fill_header(&e->hdr, COLLECTOR_EV_SAMPLE, tgid, tid);
	e->ip = ip;
	e->user_ip = kernel_mode ? task_user_ip(task) : ip;
	e->period = ctx->sample_period;
	e->cputime_ns = BPF_CORE_READ(task, se.sum_exec_runtime);
	e->user_stack_id = ustack;
	e->kernel_stack_id = kstack;
	e->kernel_mode = kernel_mode;
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

static __always_inline struct collector_task_event *reserve_task_event(u32 kind,
								       struct task_struct *p)
{
	struct collector_task_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(COLLECTOR_CNT_RB_FULL_TASK);
		return NULL;
	}
	fill_header(&e->hdr, kind, BPF_CORE_READ(p, tgid), BPF_CORE_READ(p, pid));
	e->parent_tgid = 0;
	e->child_tid = 0;
	e->child_tgid = 0;
	e->exit_code = 0;
	e->cputime_ns = BPF_CORE_READ(p, se.sum_exec_runtime);
	e->group_dead = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	e->filename[0] = 0;
	return e;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	u32 ptgid = BPF_CORE_READ(parent, tgid);
	u32 ctgid = BPF_CORE_READ(child, tgid);
	struct collector_task_event *e;
	u8 one = 1;

	if (!is_target(ptgid))
		return 0;
	if (filter_tgids && ctgid != ptgid &&
	    bpf_map_update_elem(&targets, &ctgid, &one, BPF_ANY) != 0)
		count(COLLECTOR_CNT_TARGETS_FULL);
	e = reserve_task_event(COLLECTOR_EV_FORK, child);
	if (!e)
		return 0;
	e->parent_tgid = ptgid;
	e->child_tid = BPF_CORE_READ(child, pid);
	e->child_tgid = ctgid;
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct collector_task_event *e;

	if (!is_target(BPF_CORE_READ(p, tgid)))
		return 0;
	e = reserve_task_event(COLLECTOR_EV_EXEC, p);
	if (!e)
		return 0;
	e->child_tid = old_pid; /* a non-leader thread that execs takes the tgid */
	bpf_probe_read_kernel_str(&e->filename, sizeof(e->filename), BPF_CORE_READ(bprm, filename));
	bpf_ringbuf_submit(e, submit_flags());
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	u32 tgid = BPF_CORE_READ(p, tgid);
	struct collector_task_event *e;
	bool group_dead;

	if (!is_target(tgid))
		return 0;
	/* do_exit() drops signal->live before this tracepoint; reading it
	 * works whether or not the tracepoint passes group_dead. */
	group_dead = BPF_CORE_READ(p, signal, live.counter) == 0;
	e = reserve_task_event(COLLECTOR_EV_EXIT, p);
	if (e) {
		e->exit_code = BPF_CORE_READ(p, exit_code);
		e->group_dead = group_dead;
		bpf_ringbuf_submit(e, submit_flags());
	}
	if (group_dead && filter_tgids)
		bpf_map_delete_elem(&targets, &tgid);
	return 0;
}

static __always_inline void switch_event(struct task_struct *t, bool off)
{
	struct collector_switch_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(COLLECTOR_CNT_RB_FULL_SWITCH);
		return;
	}
	fill_header(&e->hdr, COLLECTOR_EV_SWITCH, BPF_CORE_READ(t, tgid), BPF_CORE_READ(t, pid));
	e->cputime_ns = BPF_CORE_READ(t, se.sum_exec_runtime);
	e->user_ip = off ? task_user_ip(t) : 0;
	e->off = off;
	bpf_ringbuf_submit(e, submit_flags());
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	if (!trace_switches)
		return 0;
	if (BPF_CORE_READ(prev, pid) && is_target(BPF_CORE_READ(prev, tgid)))
		switch_event(prev, true);
	if (BPF_CORE_READ(next, pid) && is_target(BPF_CORE_READ(next, tgid)))
		switch_event(next, false);
	return 0;
}
