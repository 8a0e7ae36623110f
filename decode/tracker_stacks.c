// SPDX-License-Identifier: GPL-2.0
/*
 * Samples into the model: each sample's user stack (walked by the kernel
 * through frame pointers, or unwound here from a copy of the stack) and
 * kernel stack become model locations, then one model stack.
 *
 * Both parts come from caches keyed by the raw frames (lib/stackcache.h),
 * and the whole stack from a cache keyed by the two parts, so a stack seen
 * before costs two fingerprints and three look-ups; only a new part is
 * resolved, frame by frame, through the symbolizer.
 */
#include "decode/tracker_internal.h"

#include <string.h>

#include "lib/clock.h"

/* A mapping is re-read at most this often per process when a sample falls
 * outside every known mapping (the process may have exited meanwhile). */
#define MAPS_REREAD_NS 50000000ULL

/* The part cache's domain for kernel stacks (processes are 0, 1, ...), and
 * the bit that sets a process's unwound-but-truncated stacks apart. */
#define KERNEL_DOMAIN UINT32_MAX
#define TRUNCATED_DOMAIN 0x80000000u

/* Functions that start a thread: a user stack that ends in one of them is
 * complete; any other ending means the walk stopped early. */
static const char *const stack_roots[] = {
	"_start", "__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl",
	"start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal",
	"thread_start",
};

/* Where a runtime starts its threads and coroutines without CFI that says
 * so (no undefined return address): a walk the unwinder gave up at one of
 * them is whole all the same.  Go: every goroutine's stack ends at
 * runtime.goexit (its return address, pushed as the goroutine is made),
 * a thread's system stack at runtime.mstart, under runtime.clone for a
 * thread Go made, the first thread's at runtime.rt0_go; Go's assembly
 * functions carry an ABI suffix (".abi0").  Not runtime.systemstack or
 * runtime.mcall: a stack that ends there is the system stack's part of a
 * goroutine's call, whose frames (on the goroutine's stack) are missing. */
static const char *const runtime_entries[] = {
	"runtime.goexit", "runtime.mstart", "runtime.rt0_go", "runtime.clone",
};

static uint32_t unknown_location(struct tracker *t, uint64_t addr)
{
	if (t->unknown_image == MODEL_NONE)
		t->unknown_image = symbolizer_special_image(t->sym, "[unknown]");
	return model_intern_location(t->m, t->unknown_image, addr, MODEL_NONE, MODEL_NONE, 0,
				     NULL, 0);
}

/* The mapping of a user address, the process's maps read again (at most
 * every MAPS_REREAD_NS) when none holds it: a new mmap, a dlopen; at once
 * when they were read right after the exec, before ld.so mapped the
 * libraries (a sample's return address into libc in its first 50 ms: with
 * the exec record drained at once, split's stacks ended at main on 1-2.5%
 * of its samples). */
static const struct model_mapping *user_mapping(struct tracker *t, uint32_t process,
						uint64_t addr, uint64_t ktime)
{
	const struct model_mapping *mp = model_find_mapping(t->m, process, addr);
	struct proc_state *ps = &t->procs.items[process];

	/* a process whose maps wait for its first sample (tracker_defer_maps())
	 * has them read now, alive or gone */
	if (!mp && (ps->maps_deferred ||
		    (ps->alive && (ktime >= ps->maps_read_ktime + MAPS_REREAD_NS ||
				   trk_maps_early(t, process))))) {
		trk_load_maps(t, process, ktime);
		mp = model_find_mapping(t->m, process, addr);
	}
	return mp;
}

static uint32_t user_location(struct tracker *t, const struct model_mapping *mp, uint64_t addr)
{
	uint32_t loc;

	if (!mp) {
		model_stat_add(t->m, MODEL_STAT_FRAMES_WITHOUT_MAPPING, 1);
		return unknown_location(t, addr);
	}
	loc = model_find_location(t->m, mp->image, addr - mp->bias);
	if (loc != MODEL_NONE)
		return loc;
	loc = symbolizer_location(t->sym, mp->image, addr - mp->bias);
	if (t->m->images.items[mp->image].kind == MODEL_IMAGE_ANON &&
	    t->m->locations.items[loc].function == MODEL_NONE)
		trk_jit_location(t, mp->image, loc);
	return loc;
}

/* Whether name is entry, or entry with a Go ABI suffix (".abi0"). */
static bool same_entry(const char *name, const char *entry)
{
	size_t n = strlen(entry);

	return !strncmp(name, entry, n) && (!name[n] || !strncmp(name + n, ".abi", 4));
}

static bool is_runtime_entry(const struct model *m, uint32_t loc)
{
	const char *name = model_location_name(m, loc);

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(runtime_entries) / sizeof(runtime_entries[0]); i++)
		if (same_entry(name, runtime_entries[i]))
			return true;
	return false;
}

/* Whether loc is in its image's entry function (the function that holds
 * e_entry): where the kernel starts the program, so nothing calls it.  A
 * stripped executable has no "_start" to match by name: its entry is
 * named by its FDE ("ld.bfd+0x41ce0"), or, written without CFI (ld.so's
 * _start, which calls _dl_start; musl's; a -nostartfiles program's), by
 * the symbolizer after e_entry. */
static bool is_entry_function(const struct model *m, uint32_t loc)
{
	const struct model_location *l = &m->locations.items[loc];
	const struct model_function *f;
	uint64_t entry = m->images.items[l->image].entry;

	if (!entry || l->function == MODEL_NONE)
		return false;
	f = &m->functions.items[l->function];
	return f->image == l->image && entry >= f->entry && entry < f->entry + (f->size ? f->size : 1);
}

static bool is_root(const struct model *m, uint32_t loc)
{
	const char *name = model_location_name(m, loc);

	if (!name)
		return false;
	if (is_entry_function(m, loc))
		return true;
	for (size_t i = 0; i < sizeof(stack_roots) / sizeof(stack_roots[0]); i++)
		if (strcmp(name, stack_roots[i]) == 0)
			return true;
	return is_runtime_entry(m, loc);
}

static uint32_t add_part(struct tracker *t, const uint32_t *locs, uint32_t n, bool truncated)
{
	struct stack_part *p = MODEL_VEC_PUSH(t->parts);

	p->first = t->pool.len;
	p->n = n;
	p->truncated = truncated;
	for (uint32_t i = 0; i < n; i++)
		*MODEL_VEC_PUSH(t->pool) = locs[i];
	return t->parts.len - 1;
}

/* Frames up to the first zero address: a walk ends where a frame's
 * return address is 0 (the outermost frame of some threads). */
static uint32_t walked_frames(const uint64_t *ips, uint32_t n)
{
	uint32_t i;

	if (n > COLLECTOR_MAX_STACK_DEPTH)
		n = COLLECTOR_MAX_STACK_DEPTH;
	for (i = 0; i < n && ips[i]; i++)
		;
	return i;
}

/* How a user stack's completeness is known. */
enum walk_end {
	WALK_END_BY_ROOT = -1,  /* frame pointers: complete if it ends in a thread's start */
	WALK_END_TRUNCATED = 0, /* the unwinder stopped early */
	WALK_END_COMPLETE = 1,  /* the CFI says the outermost frame has no caller */
};

/* Caller frames are return addresses: resolve them at address - 1, the
 * call instruction, or every call site lands on the next statement. */
static uint32_t user_part(struct tracker *t, uint32_t process, const uint64_t *ips, uint32_t n,
			  uint64_t user_ip, uint64_t ktime, enum walk_end end)
{
	uint32_t locs[COLLECTOR_MAX_STACK_DEPTH];
	struct stackcache_key key;
	const struct runtime *spliced;
	uint32_t part, n_all, n_native;
	bool truncated, unmapped = false, leaf_unmapped = false;

	n = walked_frames(ips, n);
	if (!n && !user_ip) {
		/* no user stack at all (a kernel thread): one shared part */
		if (t->empty_part == UINT32_MAX)
			t->empty_part = add_part(t, NULL, 0, false);
		return t->empty_part;
	}
	if (!n) {
		/* no walk: only the PC is known, a stack of one frame */
		ips = &user_ip;
		n = 1;
	}
	/* the same frames found complete and truncated are two parts */
	key = stackcache_key(end == WALK_END_TRUNCATED ? process | TRUNCATED_DOMAIN : process, ips, n);
	part = stackcache_get(&t->part_cache, &key);
	if (part != UINT32_MAX)
		return part;
	truncated = end == WALK_END_TRUNCATED;
	/* the native frames (with the runtimes' frames the walk put among
	 * them), then a splicing runtime's (tracker_runtimes.c) */
	n_all = n;
	n = n_native = trk_runtimes_native_frames(t, process, ips, n, &spliced);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = i ? ips[i] - 1 : ips[i];
		const struct model_mapping *mp;

		if (trk_runtime_frame(t, process, ips[i])) {
			locs[i] = trk_runtime_location(t, process, ips[i]);
			continue;
		}
		/* a stub of a runtime (a JVM's call_stub), by its own name */
		if (t->runtimes && (locs[i] = trk_runtime_native_location(t, process, addr)) !=
					   MODEL_NONE)
			continue;
		mp = user_mapping(t, process, addr, ktime);

		/* A caller outside every executable mapping is no return
		 * address: a frame-pointer walk through code that keeps no
		 * frame pointer read data as one.  The walk ends before it. */
		if (!mp && i) {
			model_stat_add(t->m, MODEL_STAT_FRAMES_WITHOUT_MAPPING, 1);
			n = i;
			truncated = unmapped = true;
			break;
		}
		leaf_unmapped |= !mp;
		locs[i] = user_location(t, mp, addr);
	}
	if (end == WALK_END_BY_ROOT && !truncated)
		truncated = n >= COLLECTOR_MAX_STACK_DEPTH || (n && !is_root(t->m, locs[n - 1]));
	/* the unwinder stopped at a runtime's thread entry, or at an entry
	 * function without CFI (ld.so's _start, musl's): whole */
	if (end == WALK_END_TRUNCATED && !unmapped && n && n < COLLECTOR_MAX_STACK_DEPTH &&
	    (is_runtime_entry(t->m, locs[n - 1]) || is_entry_function(t->m, locs[n - 1])))
		truncated = false;
	if (spliced)
		n = trk_runtimes_splice(t, process, spliced, ips, ips + n_native, n_all - n_native,
					locs, n);
	part = add_part(t, locs, n, truncated);
	/* not remembered when a frame had no mapping yet: the process's maps
	 * may have been read before it mapped that library (the maps are
	 * read again for the next such sample).  The leaf too: node reserves
	 * its code range without access and makes pages of it executable as
	 * it compiles (seen in /proc/PID/maps: ---p, then rwxp); a leaf in a
	 * page made so since the last reading, decoded before the next one
	 * was due, was [unknown], and remembered it took every later sample
	 * of the stack (test_perf_node: JS:*hotLoop at 8-35% of the user
	 * samples for perf's 75%, in about 1 run of 10). */
	if (!unmapped && !leaf_unmapped)
		stackcache_put(&t->part_cache, &key, part);
	return part;
}

static uint32_t kernel_part(struct tracker *t, const uint64_t *ips, uint32_t n, uint64_t ip)
{
	uint32_t locs[COLLECTOR_MAX_STACK_DEPTH];
	struct stackcache_key key;
	uint32_t kimg, part;

	n = walked_frames(ips, n);
	if (!n) {
		ips = &ip; /* the walk failed: only the sampled instruction */
		n = 1;
	}
	key = stackcache_key(KERNEL_DOMAIN, ips, n);
	part = stackcache_get(&t->part_cache, &key);
	if (part != UINT32_MAX)
		return part;
	kimg = symbolizer_kernel_image(t->sym);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = i ? ips[i] - 1 : ips[i];
		uint32_t loc = model_find_location(t->m, kimg, a);

		locs[i] = loc != MODEL_NONE ? loc : symbolizer_location(t->sym, kimg, a);
	}
	part = add_part(t, locs, n, false);
	stackcache_put(&t->part_cache, &key, part);
	return part;
}

/* The kernel frames that follow a sample record, of any kind. */
static const uint64_t *sample_kernel_frames(const struct collector_sample_event *e)
{
	if (e->hdr.kind == COLLECTOR_EV_SAMPLE_STACK)
		return (const uint64_t *)((const struct collector_stack_sample_event *)e + 1);
	if (e->hdr.kind == COLLECTOR_EV_AGG_SAMPLE)
		return (const uint64_t *)((const struct collector_agg_sample_event *)e + 1);
	return (const uint64_t *)(e + 1);
}

/* count samples of one stack (a sum of the kernel's: count > 1), the
 * event's weight shared among them, the remainder to the first. */
static void store_samples(struct tracker *t, const struct collector_sample_event *e,
			  uint32_t thread, uint32_t stack, uint64_t count)
{
	struct model_thread *th = &t->m->threads.items[thread];
	struct model_sample *s;

	if (e->cputime_ns > th->cputime_ns)
		th->cputime_ns = e->cputime_ns;
	for (uint64_t i = 0; i < count; i++) {
		s = model_add_sample(t->m);
		s->ktime_ns = e->hdr.ktime_ns;
		s->time_ns = trk_epoch_of(t, e->hdr.ktime_ns);
		s->weight = e->period / count + (i ? 0 : e->period % count);
		s->cputime_ns = e->cputime_ns;
		s->user_pc = e->user_ip;
		s->process = th->process;
		s->thread = thread;
		s->stack = stack;
		s->cpu = e->hdr.cpu;
		/* an index the run does not have (a record replayed into a run
		 * of fewer events) goes to the first event */
		s->event = e->event < model_event_count(t->m) ? e->event : 0;
		s->kernel_mode = e->kernel_mode;
	}
	t->samples += count;
}

/* The sample's whole stack from its user part and the kernel frames that
 * follow the record (either kind): both parts come from caches keyed by
 * the raw frames, and the stack they make from a cache keyed by the two
 * parts, so a stack seen before costs two fingerprints and three look-ups. */
static void add_samples(struct tracker *t, const struct collector_sample_event *e,
			uint32_t thread, uint32_t upart, uint64_t count)
{
	uint32_t kpart = UINT32_MAX, stack, n = 0, n_kernel = 0;
	uint32_t locs[2 * COLLECTOR_MAX_STACK_DEPTH];
	const struct stack_part *up, *kp;
	uint64_t key;

	if (e->kernel_mode)
		kpart = kernel_part(t, sample_kernel_frames(e), e->n_kernel, e->ip);
	up = &t->parts.items[upart];
	if (up->truncated)
		model_stat_add(t->m, MODEL_STAT_TRUNCATED_STACKS, count);
	key = (uint64_t)upart << 32 | kpart;
	stack = idmap_get(&t->stack_cache, key);
	if (stack == UINT32_MAX) {
		if (kpart != UINT32_MAX) {
			kp = &t->parts.items[kpart];
			memcpy(locs, t->pool.items + kp->first, kp->n * sizeof(uint32_t));
			n = n_kernel = kp->n;
		}
		if (up->n) /* an empty pool has no array at all */
			memcpy(locs + n, t->pool.items + up->first, up->n * sizeof(uint32_t));
		n += up->n;
		stack = model_intern_stack(t->m, locs, n, n_kernel, up->truncated);
		idmap_put(&t->stack_cache, key, stack);
	}
	store_samples(t, e, thread, stack, count);
}

static void add_sample(struct tracker *t, const struct collector_sample_event *e, uint32_t thread,
		       uint32_t upart)
{
	add_samples(t, e, thread, upart, 1);
}

/* count samples whose kernel then user frames are at frames. */
static void handle_sample_frames(struct tracker *t, const struct collector_sample_event *e,
				 const uint64_t *frames, uint64_t count)
{
	uint32_t thread = trk_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	uint32_t process = t->m->threads.items[thread].process;
	enum walk_end end = e->user_end == COLLECTOR_END_COMPLETE ? WALK_END_COMPLETE
			    : e->user_end == COLLECTOR_END_TRUNCATED ? WALK_END_TRUNCATED
			    : WALK_END_BY_ROOT;

	add_samples(t, e, thread,
		    user_part(t, process, frames + e->n_kernel, e->n_user, e->user_ip,
			      e->hdr.ktime_ns, end), count);
}

void trk_handle_sample(struct tracker *t, const struct collector_sample_event *e)
{
	handle_sample_frames(t, e, (const uint64_t *)(e + 1), 1);
}

/* Whether a kernel frame is the tracing machinery's (the BPF program, its
 * JIT'd code, the tracepoint's glue) rather than the traced kernel's. */
static bool tracing_frame(struct tracker *t, uint32_t kimg, uint64_t addr)
{
	static const char *const prefixes[] = {
		"bpf_", "__bpf_", "__traceiter_", "__probestub_", "trace_sched_",
	};
	const char *name = model_location_name(t->m, symbolizer_location(t->sym, kimg, addr));

	if (!name) /* JIT'd BPF code has no kallsyms entry of the kernel image */
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

bool trk_in_sched_text(const struct tracker *t, uint64_t addr)
{
	for (int i = 0; i < 2; i++)
		if (addr >= t->sched_text[2 * i] && addr < t->sched_text[2 * i + 1])
			return true;
	return false;
}

void tracker_set_sched_text(struct tracker *t, const uint64_t ranges[4])
{
	memcpy(t->sched_text, ranges, sizeof(t->sched_text));
}

/* A sum aggregated in the kernel.  Of an aggregated event (--off-cpu): a
 * sample whose weight is the sum, and whose event counts the occurrences
 * it holds; its kernel stack was taken inside the sched_switch
 * tracepoint's BPF program: the frames above the scheduler go, and the
 * scheduler's own.  Of a
 * sampled event (the CPU samples summed in the kernel): the samples it
 * counts, as the stream would have brought them but for their times. */
void trk_handle_agg_sample(struct tracker *t, const struct collector_agg_sample_event *ae)
{
	const uint64_t *frames = (const uint64_t *)(ae + 1);
	struct collector_sample_event e = ae->sample;
	uint32_t skip = 0, kimg;

	if (e.event < t->m->events.len && !t->m->events.items[e.event].aggregated) {
		if (ae->count)
			handle_sample_frames(t, &ae->sample, frames, ae->count);
		return;
	}
	if (e.event < t->m->events.len)
		t->m->events.items[e.event].occurrences += ae->count;
	if (e.n_kernel) {
		kimg = symbolizer_kernel_image(t->sym);
		while (skip + 1 < e.n_kernel && tracing_frame(t, kimg, frames[skip]))
			skip++;
		/* and the scheduler's own frames under them (decode/tracker.h) */
		while (skip + 1 < e.n_kernel && trk_in_sched_text(t, frames[skip]))
			skip++;
	}
	if (!skip) {
		handle_sample_frames(t, &ae->sample, frames, 1);
		return;
	}
	/* add_sample() finds the kernel frames after the record: a copy */
	{
		uint8_t buf[sizeof(*ae) + 2 * COLLECTOR_MAX_STACK_DEPTH * sizeof(uint64_t)];
		struct collector_agg_sample_event *c = (struct collector_agg_sample_event *)buf;
		uint32_t n = e.n_kernel + e.n_user - skip;

		*c = *ae;
		c->sample.n_kernel -= skip;
		c->sample.ip = frames[skip];
		memcpy(c + 1, frames + skip, n * sizeof(uint64_t));
		handle_sample_frames(t, &c->sample, (const uint64_t *)(c + 1), 1);
	}
}

/* Whether the maps, read again, list a caller among ips[1..n) that they
 * did not. */
static bool reread_for_caller(struct tracker *t, uint32_t process, const uint64_t *ips, int n,
			      uint64_t ktime)
{
	for (int i = 1; i < n; i++)
		if (!model_find_mapping(t->m, process, ips[i] - 1))
			return user_mapping(t, process, ips[i] - 1, ktime) != NULL;
	return false;
}

/* Hand-overs between the native unwinder and a runtime's walk in one
 * stack, at most: a JVM's Java frames under native ones under Java ones
 * (a JNI call back into Java, reflection). */
#define COPY_RUNTIME_ROUNDS 4

/*
 * A copy's native unwinding stopped (n frames in ips) at a pc a runtime
 * owns (a JVM's code cache, which has no CFI): the runtime walks its
 * frames from the registers of that frame, in place of it, and the native
 * unwinder goes on where they end, from the caller's registers and the
 * rest of the copy.  Returns the frames in ips then.
 */
static int unwind_through_runtimes(struct tracker *t, uint32_t process, const struct unwind_regs *regs,
				   const uint8_t *stack, size_t stack_len, uint64_t *ips, int n,
				   bool *complete)
{
	struct proc_ref uref = trk_unwind_ref(t, process);
	struct proc_state *ps = &t->procs.items[process];

	for (int round = 0; round < COPY_RUNTIME_ROUNDS && !*complete && n > 0 &&
			    n < COLLECTOR_MAX_STACK_DEPTH; round++) {
		struct unwind_regs last, next = { 0 };
		struct runtime_regs rr;
		struct proc_ref rp;
		const struct runtime *r;
		uint64_t skip;
		bool left = false;
		int m;

		if (!unwinder_last_frame(t->unwinder, &uref, &last) ||
		    last.ip != (n == 1 ? ips[0] : ips[n - 1]))
			break;
		r = trk_runtime_owning_pc(t, process, last.ip);
		if (!r)
			break;
		rp = trk_runtime_proc(t, r, process);
		rr = (struct runtime_regs){ last.ip, last.sp, last.bp };
		m = r->ops->walk_copy(r->rt, &rp, &rr, n == 1 && round == 0, stack, regs->sp,
				      stack_len, ips + n - 1, COLLECTOR_MAX_STACK_DEPTH - (n - 1),
				      &left);
		if (m <= 0)
			break;
		n += m - 1;
		/* the native walk again, from the caller, on what the copy
		 * holds above its sp */
		if (!left || n >= COLLECTOR_MAX_STACK_DEPTH || rr.sp < regs->sp ||
		    rr.sp - regs->sp >= stack_len)
			break;
		skip = rr.sp - regs->sp;
		next.ip = rr.ip;
		next.sp = rr.sp;
		next.bp = rr.bp;
		m = unwinder_unwind(t->unwinder, &uref, ps->maps_version, ps->umaps, ps->n_umaps, &next,
				    stack + skip, stack_len - skip, ips + n,
				    COLLECTOR_MAX_STACK_DEPTH - n, complete);
		if (m <= 0)
			break;
		n += m;
	}
	return n;
}

/* --call-graph dwarf: unwind the user stack from the registers and the
 * stack copy with the CFI of the mapped images (and the runtimes' walks
 * through code that has none). */
int trk_unwind_copy(struct tracker *t, uint32_t process,
		    const struct collector_stack_sample_event *se, uint64_t *ips, bool *complete)
{
	const struct collector_sample_event *e = &se->sample;
	struct proc_state *ps = &t->procs.items[process];
	struct unwind_regs regs = {
		.ip = se->regs.ip, .sp = se->regs.sp, .bp = se->regs.bp, .bx = se->regs.bx,
		.r12 = se->regs.r12, .r13 = se->regs.r13, .r14 = se->regs.r14, .r15 = se->regs.r15,
	};
	/* a sample's stack copy is counted for the summary's figures per
	 * sample (an off-CPU interval's apart, by tracker_offcpu.c) */
	bool sample = e->hdr.kind == COLLECTOR_EV_SAMPLE_STACK;
	struct proc_ref uref;
	uint64_t t0;
	int n;

	*complete = false;
	if (sample)
		t->stack_record_bytes += sizeof(*se) + se->stack_len;
	if (!regs.ip) /* a kernel thread */
		return 0;
	ips[0] = regs.ip;
	if (!t->unwinder)
		return 1;
	/* a PC in no known mapping (a library dlopen'ed since, the reason
	 * cfi sends such a sample here) reads the maps again first: the
	 * unwinder gets the new mapping too */
	user_mapping(t, process, regs.ip, e->hdr.ktime_ns);
	t0 = monotonic_ns();
	for (int pass = 0; pass < 2; pass++) {
		trk_refresh_unwind_maps(t, process);
		ps = &t->procs.items[process];
		uref = trk_unwind_ref(t, process);
		n = unwinder_unwind(t->unwinder, &uref, ps->maps_version, ps->umaps, ps->n_umaps,
				    &regs,
				    (const uint8_t *)(se + 1) +
					    (e->n_kernel + e->n_user) * sizeof(uint64_t),
				    se->stack_len, ips, COLLECTOR_MAX_STACK_DEPTH, complete);
		/* a caller in no known mapping: one made since (a library
		 * dlopen'ed, whose function called the one that blocked or
		 * was sampled), which libdw may have stepped through by frame
		 * pointer: the maps read again, and the stack unwound again
		 * when they list it now */
		if (pass || n <= 1 || !reread_for_caller(t, process, ips, n, e->hdr.ktime_ns))
			break;
	}
	if (n > 0 && t->runtimes)
		n = unwind_through_runtimes(t, process, &regs,
					    (const uint8_t *)(se + 1) +
						    (e->n_kernel + e->n_user) * sizeof(uint64_t),
					    se->stack_len, ips, n, complete);
	if (sample) {
		t->unwind_ns += monotonic_ns() - t0;
		t->unwinds++;
	}
	if (n <= 0) {
		ips[0] = regs.ip;
		n = 1;
		*complete = false;
	}
	return n;
}

void trk_handle_stack_sample(struct tracker *t, const struct collector_stack_sample_event *se)
{
	const struct collector_sample_event *e = &se->sample;
	uint32_t thread = trk_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	uint32_t process = t->m->threads.items[thread].process;
	uint64_t ips[COLLECTOR_MAX_STACK_DEPTH];
	bool complete;
	int n = trk_unwind_copy(t, process, se, ips, &complete);

	/* the unwound frames are interned like frame-pointer ones: a stack
	 * seen before is not resolved again */
	add_sample(t, e, thread, user_part(t, process, ips, (uint32_t)n, se->regs.ip,
					   e->hdr.ktime_ns,
					   complete ? WALK_END_COMPLETE : WALK_END_TRUNCATED));
}
