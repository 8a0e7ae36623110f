// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-clock sampling of target processes.
 *
 * on_sample runs on every cpu-clock perf event (one per CPU).  It counts the
 * sample in a kernel map by instruction and streams a time-ordered record,
 * with the sample's kernel and user call stacks inline, through the ring
 * buffer; or, when no format needs the samples in time order, adds it to
 * sums by stack in kernel maps (sample_agg.bpf.h) and writes no record.  The task tracepoints follow
 * targets across fork, exec and exit, and record when target threads go off
 * and on a CPU.
 */
#define COUNTERS counters
#define COUNTERS_MAX COLLECTOR_CNT_MAX
#define CNT_WAKEUPS COLLECTOR_CNT_WAKEUPS
#include "common.bpf.h"
#include "unwind.bpf.h"

/* Set by the loader through skel->rodata before load (and filter_tgids,
 * false with -a, and wakeup_bytes: common.bpf.h). */
const volatile bool trace_switches = false;
const volatile bool dwarf_mode = false;    /* copy registers and stack */
const volatile bool cfi_mode = false;      /* unwind with the tables (unwind.bpf.h) */
const volatile u32 stack_bytes = 8192;     /* <= COLLECTOR_MAX_STACK_COPY */
const volatile bool kernel_fp_walk = false; /* bpf_get_stack for every sample */
/* The sampler's share of a CPU, as kernel.perf_cpu_time_max_percent: after
 * a sample that took t ns, the CPU takes none for t * idle_per_busy ns.
 * 0: no limit. */
const volatile u32 idle_per_busy = 0;
/* Which events (bit = the link's cookie) keep to that share: the clocks,
 * whose timer fires whatever the target does.  A count (page-faults/1)
 * fires as often as the target makes its events, and each sample slows
 * the target by its cost: taking them all cannot stop it, and a count the
 * user asked for event by event is not thinned out. */
const volatile u32 budgeted_events = 0;
/* Whether each sample is counted by instruction in ip_counts: only when
 * asked (COLLECTOR_COUNT_BY_IP, a count independent of the others for the
 * tests); else COLLECTOR_CNT_AGG_SAMPLES counts them. */
const volatile bool count_by_ip = false;

/* The first target (-p's first PID, or the command), which is also in
 * targets: most samples are its own, and comparing with it costs less than
 * a hash look-up in a program that runs cache-cold 999 times a second.
 * Set by the loader through skel->bss; cleared when that process exits, so
 * a reused PID is not taken for it. */
u32 main_tgid = 0;

/* The launched command while it is held before its exec (set by the
 * loader, cleared at its exec): the profiler's own forked copy, whose
 * samples are not taken.  User space leaves out its streamed records, but
 * summed in the kernel they were the command's (a sample in the execve
 * that tears its address space down, with a user PC the command never
 * mapped), and with cfi a stack copy each. */
u32 held_tgid = 0;

/* Samples by instruction, counted in the kernel: it grows as needed (no
 * preallocation), since a system-wide run meets hundreds of thousands of
 * distinct instructions.  1 entry unless count_by_ip: its 16 MiB of
 * buckets took 14 ms to create and free, for a total a counter gives. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 20);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct collector_ip_key);
	__type(value, u64);
} ip_counts SEC(".maps");

/* Sample records the ring could not take, by event index (the total is
 * COLLECTOR_CNT_RB_FULL_SAMPLE). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COLLECTOR_MAX_EVENTS);
	__type(key, u32);
	__type(value, u64);
} lost_by_event SEC(".maps");

static __always_inline void sample_lost(u32 event)
{
	u64 *c = bpf_map_lookup_elem(&lost_by_event, &event);

	count(COLLECTOR_CNT_RB_FULL_SAMPLE);
	if (c)
		*c += 1;
}

/* Bytes of user stack copied from sp for the frame-pointer walk: frames
 * within them cost a load each, frames beyond one 16-byte read each. */
#define FP_STACK_COPY 4096

/* Where a sample record and its stacks are put together before they are
 * copied to the ring with their real length. */
struct sample_scratch {
	struct collector_sample_event e;
	u64 frames[256];        /* kernel then user: 2 * 127, a power of two for masks */
	/* the copy, with room past it the verifier can see a read ends in */
	u64 stack[2 * FP_STACK_COPY / 8];
	struct cfi_walk walk;   /* --call-graph cfi: unwind_walk.bpf.h */
	/* the runtimes' frame kinds placed in frames since the walk began,
	 * a bit each (1 << COLLECTOR_FRAME_PYTHON, ...): a stack the sums
	 * store for the first time with any goes to be named (runtime.bpf.h) */
	u32 runtime_kinds;
	u32 pad;
	/* the sample's start under the sampler's CPU share (0: none), for
	 * the program that ends it (a runtime's, reached by tail call) */
	u64 turn_start;
};

/* The scratch slots: the sampling program's, the off-CPU walk's. */
#define SAMPLE_SCRATCH 0
#define OFFCPU_SCRATCH 1

#include "runtime.bpf.h"
#include "python.bpf.h"
#include "stack_agg.bpf.h"
#include "sample_agg.bpf.h"

/* Slot 0: the sampling program's; slot 1: the off-CPU walk's (offcpu.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, u32);
	__type(value, struct sample_scratch);
} sample_scratch SEC(".maps");

/* Per CPU: the sampler's next turn (ktime ns) under its CPU share. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} next_turn SEC(".maps");

/* Ends the sampler's turn that began at start (0: none) under its CPU
 * share. */
static __always_inline void sample_turn_end(u64 start)
{
	u32 zero = 0;
	u64 *turn, end;

	if (!start)
		return;
	turn = bpf_map_lookup_elem(&next_turn, &zero);
	if (turn) {
		end = bpf_ktime_get_ns();
		*turn = end + (end - start) * idle_per_busy;
	}
}

static __always_inline bool is_target(u32 tgid)
{
	if (!tgid)
		return false; /* the idle task is not a process */
	if (!filter_tgids || tgid == main_tgid)
		return true;
	return target_listed(tgid);
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

/* A task's user registers as saved at kernel entry; NULL for a kernel
 * thread, which has none. */
static __always_inline struct pt_regs *task_user_regs(struct task_struct *task)
{
	if (!BPF_CORE_READ(task, mm))
		return NULL;
	return (struct pt_regs *)bpf_task_pt_regs(task);
}

/* The user-mode PC of a task, 0 for a kernel thread. */
static __always_inline u64 task_user_ip(struct task_struct *task)
{
	struct pt_regs *regs = task_user_regs(task);

	return regs ? BPF_CORE_READ(regs, ip) : 0;
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

/* The state of a frame-pointer walk, for bpf_loop's callback. */
struct fp_walk {
	struct sample_scratch *sc;
	u64 sp, len, fp;
	u32 first;      /* index in sc->frames of the user PC */
	u32 n;
};

/* One frame: the return address and the caller's frame pointer, from the
 * copy when the frame lies in it, else read from the target. */
static long fp_walk_step(u32 i, void *data)
{
	struct fp_walk *w = data;
	u64 fp = w->fp, off = fp - w->sp, next, ret, pair[2];
	u32 k = i + 1;

	if (k >= COLLECTOR_MAX_STACK_DEPTH)
		return 1;
	/* user space only, as the kernel's valid_user_frame() */
	if (!fp || fp >= 0x00007ffffffff000ULL - 16)
		return 1;
	/* frames are 16-byte aligned by the ABI, sp 8-byte: an odd frame
	 * pointer is read from the target like one outside the copy */
	if (fp >= w->sp && !(off & 7) && w->len >= 16 && off <= w->len - 16) {
		off = (off / 8) & (FP_STACK_COPY / 8 - 1);
		next = w->sc->stack[off];
		ret = w->sc->stack[off + 1];
	} else {
		if (bpf_probe_read_user(pair, sizeof(pair), (void *)fp) != 0)
			return 1;
		next = pair[0];
		ret = pair[1];
	}
	if (!ret)
		return 1;
	/* first + k <= 127 + 126: the mask keeps the verifier sure of it */
	w->sc->frames[(w->first + k) & 255] = ret;
	w->n = k + 1;
	w->fp = next;
	return 0;
}

/* Copies the top of the user stack from sp into sc->stack: to the end of
 * sp's page, then on into the next.  Returns the bytes copied. */
static __always_inline u64 copy_stack_top(struct sample_scratch *sc, u64 sp)
{
	u64 addr = sp, len = 0;
	u32 i;

	for (i = 0; i < 2 && addr; i++) {
		u64 chunk = 4096 - (addr & 4095);

		if (chunk > FP_STACK_COPY - len)
			chunk = FP_STACK_COPY - len;
		if (!chunk || chunk > 4096 || len >= FP_STACK_COPY)
			break;
		if (bpf_probe_read_user((u8 *)sc->stack + (len & (FP_STACK_COPY - 1)), chunk,
					(void *)addr) != 0)
			break;
		len += chunk;
		addr += chunk;
	}
	return len;
}

/*
 * The user call stack by frame pointers, as the kernel's perf walker does it
 * (the PC, then the return address of each frame, following saved rbp until
 * a frame cannot be read), but over one copy of the top of the stack: the
 * kernel's walker (bpf_get_stack) copies 16 bytes per frame with a fault
 * handler set up each time, about 60 ns a frame here.  The target is stopped
 * while this runs, so the copy and the per-frame reads see the same stack.
 * copied: the copy is already made, of that many bytes (else -1).
 * Returns the number of frames written to frames[0..COLLECTOR_MAX_STACK_DEPTH).
 */
static __always_inline u32 user_frames_fp(struct sample_scratch *sc, u32 first, u64 ip, u64 sp,
					  u64 fp, s64 copied)
{
	struct fp_walk w = { .sc = sc, .first = first, .sp = sp, .fp = fp, .n = 1 };

	if (!ip)
		return 0;
	sc->frames[first & 255] = ip;
	w.len = copied >= 0 ? copied : copy_stack_top(sc, sp);
	bpf_loop(COLLECTOR_MAX_STACK_DEPTH - 1, fp_walk_step, &w, 0);
	return w.n;
}

#include "unwind_walk.bpf.h"

/*
 * The current task's user stack from its registers (ip, sp, bp), into
 * sc->frames from nk on: with cfi the unwind tables (UNWIND_COPY_STACK
 * before the image's table: the caller copies the stack for user space),
 * else frame pointers.  The one walk of the sampler and of the off-CPU
 * switch-out (the switched-out task is the current one there); at a JVM's
 * code it stops (UNWIND_RUNTIME_WALK) for the JVM's program, which goes
 * on from there.  A global function: each program verifies it once, not
 * once per state of its callers (on_switch_offcpu 131 641 instructions
 * with it inlined).  Returns the frames, or UNWIND_COPY_STACK or
 * UNWIND_RUNTIME_WALK; the caller bounds it.
 */
__noinline u32 user_stack_walk(struct sample_scratch *sc, u32 nk, u64 ip, u64 sp, u64 bp)
{
	struct task_struct *task = bpf_get_current_task_btf();
	u32 tgid = bpf_get_current_pid_tgid() >> 32;

	if (!sc)
		return 0;
	nk &= 127;
	if (cfi_mode)
		return user_frames_cfi(sc, nk, tgid, task, ip, sp, bp, true);
	return user_frames_fp(sc, nk, ip, sp, bp, -1);
}

/* The user registers a frame-pointer walk starts from: the sample's own in
 * user mode, those saved at kernel entry in kernel mode (none for a kernel
 * thread). */
static __always_inline bool user_walk_regs(struct bpf_perf_event_data *ctx,
					   struct task_struct *task, bool kernel_mode,
					   u64 *ip, u64 *sp, u64 *bp)
{
	struct pt_regs *regs;

	if (!kernel_mode) {
		*ip = ctx->regs.ip;
		*sp = ctx->regs.sp;
		*bp = ctx->regs.bp;
		return true;
	}
	regs = task_user_regs(task);
	if (!regs)
		return false;
	*ip = BPF_CORE_READ(regs, ip);
	*sp = BPF_CORE_READ(regs, sp);
	*bp = BPF_CORE_READ(regs, bp);
	return true;
}

/* Walks the kernel stack of a kernel-mode sample into frames (room for
 * COLLECTOR_MAX_STACK_DEPTH); returns how many frames it wrote. */
static __always_inline u32 kernel_frames(struct bpf_perf_event_data *ctx, u64 *frames)
{
	long r = bpf_get_stack(ctx, frames, COLLECTOR_MAX_STACK_DEPTH * sizeof(u64), 0);
	u32 n;

	if (r < 0) {
		count(COLLECTOR_CNT_KSTACK_FAIL);
		return 0;
	}
	n = r / sizeof(u64);
	/* never more than asked for: the bound is for the verifier */
	return n > COLLECTOR_MAX_STACK_DEPTH ? COLLECTOR_MAX_STACK_DEPTH : n;
}

static __always_inline void fill_sample(struct collector_sample_event *e,
					struct bpf_perf_event_data *ctx, struct task_struct *task,
					u32 kind, u32 tgid, u32 tid, u64 ip, bool kernel_mode)
{
	fill_header(&e->hdr, kind, tgid, tid, bpf_ktime_get_ns());
	e->ip = ip;
	e->user_ip = 0;
	e->period = ctx->sample_period;
	/* the current task is a trusted BTF pointer: a plain load, no helper */
	e->cputime_ns = task->se.sum_exec_runtime;
	e->n_kernel = 0;
	e->n_user = 0;
	e->kernel_mode = kernel_mode;
	/* the loader attaches each event's perf link with its index as cookie */
	e->event = bpf_get_attach_cookie(ctx);
	e->user_end = COLLECTOR_END_BY_ROOT;
	e->pad[0] = 0;
}

#include "stack_copy.bpf.h"

/* A sample whose stacks are in sc: to the kernel's sums by stack, or to
 * the ring. */
static __always_inline void sample_finish(struct sample_scratch *sc, u32 nk, u32 nu)
{
	u64 n;

	if (nu > COLLECTOR_MAX_STACK_DEPTH)
		nu = COLLECTOR_MAX_STACK_DEPTH;
	if (nk > COLLECTOR_MAX_STACK_DEPTH)
		nk = COLLECTOR_MAX_STACK_DEPTH;
	sc->e.n_kernel = nk;
	sc->e.n_user = nu;
	n = nk + nu;
	/* n <= 254: the mask changes nothing but shows the verifier, and the
	 * empty asm keeps the compiler from dropping it as useless */
	asm volatile("" : "+r"(n));
	n &= 255;
	if (aggregate_samples) {
		sample_agg_add(sc);
		return;
	}
	if (bpf_ringbuf_output(&events, sc, sizeof(sc->e) + n * sizeof(u64), submit_flags()) != 0)
		sample_lost(sc->e.event);
}

/* A sample's user stack before its image's table: a stack copy for user
 * space, through the ring even when the others are summed (and counted
 * with them). */
static __always_inline int sample_copied(struct bpf_perf_event_data *ctx, u32 tgid, u32 tid,
					 u64 ip, bool kernel_mode)
{
	if (aggregate_samples && !count_by_ip)
		count(COLLECTOR_CNT_AGG_SAMPLES);
	return stack_sample(ctx, tgid, tid, ip, kernel_mode);
}

/* One sample of a target: counted by instruction, its stacks to the ring
 * (or, aggregating, to the kernel's sums by stack).  start: the sample's
 * start under the sampler's CPU share (0: none). */
static __always_inline int take_sample(struct bpf_perf_event_data *ctx, u32 tgid, u32 tid,
				       u64 start)
{
	u32 zero = 0, nk = 0, nu = 0;
	struct collector_ip_key ipk = {};
	u64 ip = PT_REGS_IP(&ctx->regs), uip, usp, ubp;
	struct sample_scratch *sc;
	struct task_struct *task;
	bool kernel_mode;

	task = bpf_get_current_task_btf();
	/* x86-64: the kernel owns the upper half of the address space (the
	 * context only allows 8-byte reads of regs, so not regs.cs) */
	kernel_mode = ip >= 0xffff800000000000ULL;

	if (count_by_ip) {
		ipk.tgid = tgid;
		ipk.tid = tid;
		ipk.ip = ip;
		add_count(&ip_counts, &ipk);
	} else if (!aggregate_samples) {
		/* streamed: the summary checks the records against it */
		count(COLLECTOR_CNT_AGG_SAMPLES);
	}

	if (dwarf_mode)
		return stack_sample(ctx, tgid, tid, ip, kernel_mode);

	sc = bpf_map_lookup_elem(&sample_scratch, &zero);
	if (!sc)
		return 0;
	fill_sample(&sc->e, ctx, task, COLLECTOR_EV_SAMPLE, tgid, tid, ip, kernel_mode);
	sc->runtime_kinds = 0;
	sc->turn_start = start;
	if (kernel_mode)
		nk = kernel_frames(ctx, sc->frames);
	/* no user registers: a kernel thread, no user stack */
	if (user_walk_regs(ctx, task, kernel_mode, &uip, &usp, &ubp)) {
		sc->e.user_ip = uip;
		if (kernel_fp_walk ||
		    (!cfi_mode && BPF_CORE_READ(task, utask, return_instances))) {
			/* Calls under a uretprobe (--trace) return through the
			 * kernel's trampoline: the kernel's walker puts the
			 * real return addresses back, the frame-pointer walk
			 * could not (the cfi walk does it itself). */
			long r = bpf_get_stack(ctx, &sc->frames[nk],
					       COLLECTOR_MAX_STACK_DEPTH * sizeof(u64), BPF_F_USER_STACK);

			nu = r > 0 ? r / sizeof(u64) : 0;
		} else {
			nu = user_stack_walk(sc, nk, uip, usp, ubp);
			if (nu == UNWIND_COPY_STACK)
				return sample_copied(ctx, tgid, tid, ip, kernel_mode);
			if (nu == UNWIND_RUNTIME_WALK) {
				/* stopped at a JVM's code: the stack so far,
				 * cut there, when its walk is not loaded */
				runtime_walk(ctx, sc, sc->walk.runtime, nk, sc->walk.n);
				nu = sc->walk.n;
				sc->e.user_end = COLLECTOR_END_TRUNCATED;
			}
		}
	}
	if (nu > COLLECTOR_MAX_STACK_DEPTH)
		nu = COLLECTOR_MAX_STACK_DEPTH;
	/* a CPython process's interpreter frames follow its native ones */
	if (nu && walk_python && bpf_map_lookup_elem(&python_procs, &tgid))
		runtime_walk(ctx, sc, COLLECTOR_FRAME_PYTHON, nk, nu);
	sample_finish(sc, nk, nu);
	return 0;
}

/*
 * A sample costs a few microseconds (stack copy and walk, ring): at the
 * kernel's top rate, 100 000 Hz, that is most of a CPU, and a 1 ms command
 * ran for seconds, its CPU busy in this program.  perf is kept to a share
 * of the CPU by the kernel (perf_cpu_time_max_percent), which lowers
 * perf_event_max_sample_rate when its handler takes too long; a BPF program
 * on a software clock is not, so it keeps to that share itself: a sample
 * whose turn has not come is skipped and counted (SKIPPED_BUSY).
 */
SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	u64 id = bpf_get_current_pid_tgid(), start = 0, *turn = NULL;
	u32 tgid = id >> 32, tid = (u32)id, zero = 0;

	/* Samples are counted once taken (COLLECTOR_CNT_AGG_SAMPLES, or
	 * ip_counts), not here: a skipped one is not a sample. */
	if (!is_target(tgid) || tgid == held_tgid)
		return 0;
	if (idle_per_busy && budgeted_events & 1u << (bpf_get_attach_cookie(ctx) & 31)) {
		turn = bpf_map_lookup_elem(&next_turn, &zero);
		if (!turn)
			return 0;
		start = bpf_ktime_get_ns();
		if (start < *turn) {
			count(COLLECTOR_CNT_SKIPPED_BUSY);
			return 0;
		}
	}
	/* One call (inlined: each call is verified again), reached with the
	 * same register types whether budgeted or not (start a scalar, no
	 * map pointer kept across it), so that the verifier walks it once.
	 * A runtime's walk reached by tail call ends the turn itself. */
	take_sample(ctx, tgid, tid, start);
	sample_turn_end(start);
	return 0;
}

#include "sample_runtimes.bpf.h"

static __always_inline void fill_task_event(struct collector_task_event *e, u32 kind,
					    struct task_struct *p)
{
	fill_header(&e->hdr, kind, BPF_CORE_READ(p, tgid), BPF_CORE_READ(p, pid), bpf_ktime_get_ns());
	e->parent_tgid = 0;
	e->child_tid = 0;
	e->child_tgid = 0;
	e->exit_code = 0;
	e->cputime_ns = BPF_CORE_READ(p, se.sum_exec_runtime);
	e->group_dead = 0;
	BPF_CORE_READ_STR_INTO(&e->comm, p, comm);
	e->filename[0] = 0;
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
	fill_task_event(e, kind, p);
	return e;
}

/* The exec record, as long as its arguments (bpf_ringbuf_output copies it
 * from here): one per CPU, and an exec's program is not interrupted by
 * another. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct collector_exec_event);
} exec_scratch SEC(".maps");

/* The exec record of p (the task exec'ing: its new stack holds the
 * arguments, resident), to the ring. */
static __always_inline void send_exec(struct task_struct *p, pid_t old_pid,
				      struct linux_binprm *bprm)
{
	u64 start = BPF_CORE_READ(p, mm, arg_start), end = BPF_CORE_READ(p, mm, arg_end), len;
	struct collector_exec_event *e;
	u32 zero = 0;

	e = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!e)
		return;
	fill_task_event(&e->task, COLLECTOR_EV_EXEC, p);
	e->task.child_tid = old_pid; /* a non-leader thread that execs takes the tgid */
	bpf_probe_read_kernel_str(&e->task.filename, sizeof(e->task.filename),
				  BPF_CORE_READ(bprm, filename));
	len = end > start ? end - start : 0;
	e->args_cut = len > COLLECTOR_ARGS_LEN;
	if (len > COLLECTOR_ARGS_LEN)
		len = COLLECTOR_ARGS_LEN;
	if (bpf_probe_read_user(e->args, len, (const void *)start) != 0)
		len = 0;
	e->args_len = len;
	/* a target's new image is read at once (a Python interpreter is
	 * walked from its first samples: 64 of a 2 s script's were taken
	 * before the exec record was read 100 ms later); -a's many execs
	 * wait for the next drain */
	if (bpf_ringbuf_output(&events, e, __builtin_offsetof(struct collector_exec_event, args) + len,
			       filter_tgids ? BPF_RB_FORCE_WAKEUP : submit_flags()) != 0)
		count(COLLECTOR_CNT_RB_FULL_TASK);
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
	if (!is_target(BPF_CORE_READ(p, tgid)))
		return 0;
	if (cfi_mode) {
		u32 tgid = BPF_CORE_READ(p, tgid);

		unwind_forget(tgid); /* a new image */
		/* its tables from what is built or cached: before its first
		 * sample rather than after its second.  A target's at once;
		 * -a's many execs at the loader's next wake-up (a sample's
		 * request, 20 a second under a build loop), when ld.so has
		 * mapped the libraries: forcing a wake-up cost 21 us of this
		 * program's 24 here (the irq_work of a VM), 0.26% of a core
		 * under a build loop, and the tables written at an exec list
		 * no libc, which every stack goes through.  Where the
		 * program learns mappings itself (-a), none is written:
		 * its samples find them in the VMAs */
		if (filter_tgids || !unwind_learn)
			unwind_request(COLLECTOR_EV_UNWIND_EXEC, tgid, 0, bpf_ktime_get_ns(),
				       filter_tgids ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	}
	send_exec(p, old_pid, bprm);
	/* Let go only now: a sample can interrupt this program (a perf
	 * event's handler runs in the timer's interrupt), and one let in
	 * before the exec record was in the ring came to user space before
	 * it, from a process still waiting for its exec: set aside there,
	 * though the kernel had counted it (a stack copy, cfi having just
	 * forgotten the process's tables; test_aggregate, 1 in 10 to 20
	 * runs under ASan: one sample of 2 000 missing). */
	if (BPF_CORE_READ(p, tgid) == held_tgid)
		held_tgid = 0;
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
	if (group_dead && cfi_mode)
		unwind_forget(tgid);
	if (group_dead && filter_tgids) {
		bpf_map_delete_elem(&targets, &tgid);
		if (tgid == main_tgid)
			main_tgid = 0;
	}
	return 0;
}

/* A target thread's new name (prctl(PR_SET_NAME), pthread_setname_np): a
 * JVM names each thread once it runs, so that the fork's record has the
 * parent's name ("java") for all of them.  The task has its old name
 * still here: the record's comm is the new one.  An exec renames too,
 * just before its own record. */
SEC("tp_btf/task_rename")
int BPF_PROG(on_rename, struct task_struct *task, const char *comm)
{
	struct collector_task_event *e;

	if (!is_target(BPF_CORE_READ(task, tgid)))
		return 0;
	e = reserve_task_event(COLLECTOR_EV_COMM, task);
	if (!e)
		return 0;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), comm);
	bpf_ringbuf_submit(e, submit_flags());
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
	fill_header(&e->hdr, COLLECTOR_EV_SWITCH, BPF_CORE_READ(t, tgid), BPF_CORE_READ(t, pid),
		    bpf_ktime_get_ns());
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

#include "offcpu.bpf.h"
#include "offcpu_window.bpf.h"
#include "offcpu_runtimes.bpf.h"
