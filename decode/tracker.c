// SPDX-License-Identifier: GPL-2.0
/* Kernel records -> model: processes, threads, mappings, stacks. */
#include "decode/tracker.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/collector.h"
#include "lib/idmap.h"
#include "lib/stackcache.h"
#include "lib/proc.h"
#include "lib/procmaps.h"
#include "symbols/unwind.h"

/* A mapping is re-read at most this often per process when a sample falls
 * outside every known mapping (the process may have exited meanwhile). */
#define MAPS_REREAD_NS 50000000ULL
#define EXEC_GRACE_NS 50000000ULL
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

/* A resolved part of a stack (user or kernel), shared through the caches. */
struct stack_part {
	uint32_t first;      /* index in tracker.pool */
	uint32_t n;
	bool truncated;
};

struct proc_state {
	uint64_t maps_read_ktime;
	bool alive;
	/* --call-graph dwarf: the mappings as the unwinder sees them */
	uint64_t maps_version;
	struct unwind_mapping *umaps;
	size_t n_umaps;
};

struct thread_state {
	uint64_t first_cputime;
	bool first_known;
	bool last_read;    /* final CPU time read at the end of the window */
};

struct tracker {
	struct model *m;
	struct symbolizer *sym;

	struct idmap pid_to_process;    /* tgid -> current model process */
	struct idmap tid_to_thread;     /* tid -> current model thread */
	struct stackcache part_cache;   /* (process or KERNEL_DOMAIN, raw frames) -> part */
	struct idmap stack_cache;       /* (user part << 32 | kernel part) -> model stack */
	MODEL_VEC(struct stack_part) parts;
	MODEL_VEC(uint32_t) pool;
	MODEL_VEC(struct proc_state) procs;     /* by model process id */
	MODEL_VEC(struct thread_state) threads; /* by model thread id */
	uint32_t unknown_image;
	uint32_t empty_part;            /* the part of samples with no user stack */
	pid_t awaiting_exec;            /* launched, not exec'd yet */
	uint64_t exec_allowed_ktime;    /* when it was let go */
	pid_t ignored_tgid;             /* the collector itself */
	struct unwinder *unwinder;      /* --call-graph dwarf, else NULL */
	uint64_t maps_version;          /* bumped whenever mappings change */
	uint64_t unwind_ns, unwinds;    /* time spent unwinding */
	uint64_t stack_record_bytes;    /* ring bytes of stack-copy samples */
	uint64_t samples;
	uint64_t last_task_ktime;       /* last fork, exec or new process */
	size_t live;
};

static uint64_t epoch_of(const struct tracker *t, uint64_t ktime)
{
	return ktime + t->m->run.ktime_to_epoch_ns;
}

/* The parent of a process, 0 when unknown. */
static pid_t read_ppid(pid_t pid)
{
	struct proc_stat st;

	return proc_stat(pid, &st) == 0 ? st.ppid : 0;
}

/* ---- mappings ----------------------------------------------------------- */

static void free_unwind_maps(struct proc_state *ps)
{
	for (size_t i = 0; i < ps->n_umaps; i++)
		free((char *)ps->umaps[i].path);
	free(ps->umaps);
	ps->umaps = NULL;
	ps->n_umaps = 0;
}

/* Hands the process's mappings to the unwinder, which opens every image
 * now, while /proc/PID/map_files still exists. */
static void prepare_unwinding(struct tracker *t, uint32_t process)
{
	struct proc_state *ps = &t->procs.items[process];

	ps->maps_version = ++t->maps_version;
	if (unwinder_prepare(t->unwinder, t->m->processes.items[process].pid, ps->maps_version,
			     ps->umaps, ps->n_umaps) != 0)
		model_stat_add(t->m, MODEL_STAT_UNWINDER_PREPARE_FAILED, 1);
}

static void set_unwind_maps(struct tracker *t, uint32_t process, const struct procmaps *maps)
{
	struct proc_state *ps = &t->procs.items[process];
	pid_t pid = t->m->processes.items[process].pid;
	char path[4200];

	free_unwind_maps(ps);
	ps->umaps = calloc(maps->n ? maps->n : 1, sizeof(*ps->umaps));
	if (!ps->umaps)
		return;
	for (size_t i = 0; i < maps->n; i++) {
		const struct procmap_entry *e = &maps->entries[i];
		struct unwind_mapping *u = &ps->umaps[ps->n_umaps];

		if (procmap_is_file(e)) {
			if (procmaps_open_path(pid, e, path, sizeof(path)) != 0)
				continue;
		} else if (strcmp(e->path, "[vdso]") == 0) {
			snprintf(path, sizeof(path), "[vdso]");
		} else {
			continue;
		}
		u->start = e->start;
		u->end = e->end;
		u->pgoff = e->pgoff;
		u->path = strdup(path);
		if (u->path)
			ps->n_umaps++;
	}
	prepare_unwinding(t, process);
}

/* A forked child maps what its parent maps, through its own map_files. */
static void copy_unwind_maps(struct tracker *t, uint32_t parent, uint32_t child)
{
	struct proc_state *pp = &t->procs.items[parent], *cp = &t->procs.items[child];
	pid_t pid = t->m->processes.items[child].pid;
	char path[128];

	free_unwind_maps(cp);
	cp->umaps = calloc(pp->n_umaps ? pp->n_umaps : 1, sizeof(*cp->umaps));
	if (!cp->umaps)
		return;
	for (size_t i = 0; i < pp->n_umaps; i++) {
		const struct unwind_mapping *u = &pp->umaps[i];

		cp->umaps[i] = *u;
		if (strstr(u->path, "/map_files/")) {
			snprintf(path, sizeof(path), "/proc/%d/map_files/%llx-%llx", pid,
				 (unsigned long long)u->start, (unsigned long long)u->end);
			cp->umaps[i].path = strdup(path);
		} else {
			cp->umaps[i].path = strdup(u->path);
		}
		if (cp->umaps[i].path)
			cp->n_umaps++;
	}
	prepare_unwinding(t, child);
}

static void load_maps(struct tracker *t, uint32_t process, uint64_t now_ktime)
{
	struct model_process *p = &t->m->processes.items[process];
	pid_t pid = p->pid;
	struct procmaps maps;
	size_t i;

	t->procs.items[process].maps_read_ktime = now_ktime;
	if (procmaps_read(pid, &maps) != 0) {
		model_stat_add(t->m, MODEL_STAT_MAPS_UNREADABLE, 1);
		return;
	}
	for (i = 0; i < maps.n; i++) {
		const struct procmap_entry *e = &maps.entries[i];
		struct model_mapping mm = { 0 };
		char open_path[4200];
		const struct model_mapping *known;

		if (!e->exec)
			continue;
		/* already known, unchanged: keep the older record */
		known = model_find_mapping(t->m, process, e->start);
		if (known && known->start == e->start && known->end == e->end &&
		    known->pgoff == e->pgoff)
			continue;
		mm.start = e->start;
		mm.end = e->end;
		mm.pgoff = e->pgoff;
		mm.exec = true;
		mm.since_ns = epoch_of(t, now_ktime);
		if (procmap_is_file(e)) {
			procmaps_open_path(pid, e, open_path, sizeof(open_path));
			mm.image = symbolizer_image(t->sym, e->path, open_path, procmap_dev(e),
						    e->inode);
			mm.bias = symbolizer_bias(t->sym, mm.image, e->start, e->pgoff);
		} else {
			/* [vdso], JIT code: addresses relative to the mapping */
			mm.image = symbolizer_special_image(t->sym, e->path[0] ? e->path
									      : "[anon:exec]");
			mm.bias = e->start;
		}
		model_add_mapping(t->m, process, &mm);
		if (p->exe && e->path[0] && strcmp(e->path, p->exe) == 0 &&
		    p->exe_image == MODEL_NONE)
			p->exe_image = mm.image;
		p = &t->m->processes.items[process];
	}
	if (t->unwinder)
		set_unwind_maps(t, process, &maps);
	procmaps_free(&maps);
}

/* ---- processes and threads ---------------------------------------------- */

static uint32_t new_process(struct tracker *t, pid_t pid, pid_t ppid, uint32_t generation,
			    const char *comm, const char *cmdline, const char *exe,
			    uint64_t ktime)
{
	uint32_t id = model_add_process(t->m, pid, ppid, generation, comm, cmdline, exe);
	struct proc_state *ps = MODEL_VEC_PUSH(t->procs);

	ps->alive = true;
	t->m->processes.items[id].start_ns = epoch_of(t, ktime);
	idmap_put(&t->pid_to_process, pid, id);
	t->live++;
	return id;
}

/* A process first met through a record: describe it from /proc. */
static uint32_t process_from_proc(struct tracker *t, pid_t pid, uint64_t ktime)
{
	char comm[16], exe[4096], *cmdline;
	int len;
	uint32_t id;

	cmdline = malloc(8192);
	proc_comm(pid, 0, comm);
	if (!comm[0])
		snprintf(comm, sizeof(comm), "pid-%d", pid);
	proc_exe(pid, exe, sizeof(exe));
	len = cmdline ? proc_cmdline(pid, cmdline, 8192) : -ENOMEM;
	id = new_process(t, pid, read_ppid(pid), 0, comm, len > 0 ? cmdline : NULL,
			 exe[0] ? exe : NULL, ktime);
	free(cmdline);
	load_maps(t, id, ktime);
	return id;
}

static uint32_t get_process(struct tracker *t, pid_t pid, uint64_t ktime)
{
	uint32_t id = idmap_get(&t->pid_to_process, pid);

	if (id != UINT32_MAX)
		return id;
	return process_from_proc(t, pid, ktime);
}

static uint32_t new_thread(struct tracker *t, uint32_t process, pid_t tid, const char *comm,
			   uint64_t ktime, uint64_t cputime, bool cputime_known)
{
	uint32_t id = model_add_thread(t->m, process, tid, comm);
	struct thread_state *ts = MODEL_VEC_PUSH(t->threads);

	t->m->threads.items[id].start_ns = epoch_of(t, ktime);
	t->m->threads.items[id].cputime_ns = cputime;
	ts->first_cputime = cputime;
	ts->first_known = cputime_known;
	idmap_put(&t->tid_to_thread, tid, id);
	return id;
}

static uint32_t get_thread(struct tracker *t, pid_t tgid, pid_t tid, uint64_t ktime)
{
	uint32_t id = idmap_get(&t->tid_to_thread, tid), process;
	char comm[16];

	if (id != UINT32_MAX)
		return id;
	process = get_process(t, tgid, ktime);
	proc_comm(tgid, tid, comm);
	if (!comm[0])
		snprintf(comm, sizeof(comm), "%s", t->m->processes.items[process].comm);
	/* first met through a record: its CPU time so far is not ours */
	return new_thread(t, process, tid, comm, ktime, 0, false);
}

int tracker_add_process(struct tracker *t, pid_t pid, uint64_t now_ktime)
{
	char path[64];
	struct dirent *d;
	uint32_t process;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	process = process_from_proc(t, pid, now_ktime);
	while ((d = readdir(dir)) != NULL) {
		char comm[16];
		pid_t tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		proc_comm(pid, tid, comm);
		new_thread(t, process, tid, comm, now_ktime, proc_thread_cputime(pid, tid), true);
	}
	closedir(dir);
	return 0;
}

/* ---- stacks ------------------------------------------------------------- */

static uint32_t unknown_location(struct tracker *t, uint64_t addr)
{
	if (t->unknown_image == MODEL_NONE)
		t->unknown_image = symbolizer_special_image(t->sym, "[unknown]");
	return model_intern_location(t->m, t->unknown_image, addr, MODEL_NONE, MODEL_NONE, 0,
				     NULL, 0);
}

static uint32_t user_location(struct tracker *t, uint32_t process, uint64_t addr,
			      uint64_t ktime)
{
	const struct model_mapping *mp = model_find_mapping(t->m, process, addr);
	struct proc_state *ps = &t->procs.items[process];
	uint32_t loc;

	if (!mp && ps->alive && ktime >= ps->maps_read_ktime + MAPS_REREAD_NS) {
		load_maps(t, process, ktime); /* a new mmap, dlopen */
		mp = model_find_mapping(t->m, process, addr);
	}
	if (!mp) {
		model_stat_add(t->m, MODEL_STAT_FRAMES_WITHOUT_MAPPING, 1);
		return unknown_location(t, addr);
	}
	loc = model_find_location(t->m, mp->image, addr - mp->bias);
	if (loc != MODEL_NONE)
		return loc;
	return symbolizer_location(t->sym, mp->image, addr - mp->bias);
}

static bool is_root(const struct model *m, uint32_t loc)
{
	const char *name = model_location_name(m, loc);

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(stack_roots) / sizeof(stack_roots[0]); i++)
		if (strcmp(name, stack_roots[i]) == 0)
			return true;
	return false;
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
	uint32_t part;
	bool truncated;

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
	for (uint32_t i = 0; i < n; i++)
		locs[i] = user_location(t, process, i ? ips[i] - 1 : ips[i], ktime);
	if (end == WALK_END_BY_ROOT)
		truncated = n >= COLLECTOR_MAX_STACK_DEPTH || !is_root(t->m, locs[n - 1]);
	else
		truncated = end == WALK_END_TRUNCATED;
	part = add_part(t, locs, n, truncated);
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

/* ---- records ------------------------------------------------------------ */

/* The kernel frames that follow a sample record, of either kind. */
static const uint64_t *sample_kernel_frames(const struct collector_sample_event *e)
{
	if (e->hdr.kind == COLLECTOR_EV_SAMPLE_STACK)
		return (const uint64_t *)((const struct collector_stack_sample_event *)e + 1);
	return (const uint64_t *)(e + 1);
}

static void store_sample(struct tracker *t, const struct collector_sample_event *e,
			 uint32_t thread, uint32_t stack)
{
	struct model_thread *th = &t->m->threads.items[thread];
	struct model_sample *s;

	if (e->cputime_ns > th->cputime_ns)
		th->cputime_ns = e->cputime_ns;
	s = model_add_sample(t->m);
	s->ktime_ns = e->hdr.ktime_ns;
	s->time_ns = epoch_of(t, e->hdr.ktime_ns);
	s->weight_ns = e->period;
	s->cputime_ns = e->cputime_ns;
	s->user_pc = e->user_ip;
	s->process = th->process;
	s->thread = thread;
	s->stack = stack;
	s->cpu = e->hdr.cpu;
	s->kernel_mode = e->kernel_mode;
	t->samples++;
}

/* The sample's whole stack from its user part and the kernel frames that
 * follow the record (either kind): both parts come from caches keyed by
 * the raw frames, and the stack they make from a cache keyed by the two
 * parts, so a stack seen before costs two fingerprints and three look-ups. */
static void add_sample(struct tracker *t, const struct collector_sample_event *e, uint32_t thread,
		       uint32_t upart)
{
	uint32_t kpart = UINT32_MAX, stack, n = 0, n_kernel = 0;
	uint32_t locs[2 * COLLECTOR_MAX_STACK_DEPTH];
	const struct stack_part *up, *kp;
	uint64_t key;

	if (e->kernel_mode)
		kpart = kernel_part(t, sample_kernel_frames(e), e->n_kernel, e->ip);
	up = &t->parts.items[upart];
	if (up->truncated)
		model_stat_add(t->m, MODEL_STAT_TRUNCATED_STACKS, 1);
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
	store_sample(t, e, thread, stack);
}

/* A frame-pointer sample: the user frames follow the kernel ones. */
static void handle_sample(struct tracker *t, const struct collector_sample_event *e)
{
	uint32_t thread = get_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	uint32_t process = t->m->threads.items[thread].process;
	const uint64_t *frames = (const uint64_t *)(e + 1);

	add_sample(t, e, thread,
		   user_part(t, process, frames + e->n_kernel, e->n_user, e->user_ip,
			     e->hdr.ktime_ns, WALK_END_BY_ROOT));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* --call-graph dwarf: unwind the user stack from the registers and the
 * stack copy with the CFI of the mapped images. */
static void handle_stack_sample(struct tracker *t, const struct collector_stack_sample_event *se)
{
	const struct collector_sample_event *e = &se->sample;
	uint32_t thread = get_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	uint32_t process = t->m->threads.items[thread].process;
	struct proc_state *ps = &t->procs.items[process];
	uint64_t ips[COLLECTOR_MAX_STACK_DEPTH];
	struct unwind_regs regs = {
		.ip = se->regs.ip, .sp = se->regs.sp, .bp = se->regs.bp, .bx = se->regs.bx,
		.r12 = se->regs.r12, .r13 = se->regs.r13, .r14 = se->regs.r14, .r15 = se->regs.r15,
	};
	bool complete = false;
	uint64_t t0;
	int n;

	t->stack_record_bytes += sizeof(*se) + se->stack_len;
	if (!regs.ip) { /* a kernel thread */
		add_sample(t, e, thread, user_part(t, process, ips, 0, 0, e->hdr.ktime_ns,
						   WALK_END_TRUNCATED));
		return;
	}
	if (!t->unwinder) {
		add_sample(t, e, thread, user_part(t, process, ips, 0, regs.ip, e->hdr.ktime_ns,
						   WALK_END_TRUNCATED));
		return;
	}
	t0 = now_ns();
	n = unwinder_unwind(t->unwinder, t->m->processes.items[process].pid, ps->maps_version,
			    ps->umaps, ps->n_umaps, &regs,
			    (const uint8_t *)(se + 1) + e->n_kernel * sizeof(uint64_t), se->stack_len,
			    ips, COLLECTOR_MAX_STACK_DEPTH, &complete);
	t->unwind_ns += now_ns() - t0;
	t->unwinds++;
	if (n <= 0) {
		ips[0] = regs.ip;
		n = 1;
		complete = false;
	}
	/* the unwound frames are interned like frame-pointer ones: a stack
	 * seen before is not resolved again */
	add_sample(t, e, thread, user_part(t, process, ips, n, regs.ip, e->hdr.ktime_ns,
					   complete ? WALK_END_COMPLETE : WALK_END_TRUNCATED));
}

static void end_process(struct tracker *t, uint32_t process, uint64_t ktime)
{
	struct proc_state *ps = &t->procs.items[process];

	if (!ps->alive)
		return;
	ps->alive = false;
	t->m->processes.items[process].end_ns = epoch_of(t, ktime);
	if (t->live)
		t->live--;
}

static void handle_fork(struct tracker *t, const struct collector_task_event *e)
{
	uint64_t kt = e->hdr.ktime_ns;
	uint32_t parent, child;

	t->last_task_ktime = kt;
	if (e->child_tgid == e->parent_tgid) {
		/* a new thread: its CPU time starts at 0, all of it ours */
		parent = get_process(t, e->parent_tgid, kt);
		new_thread(t, parent, e->child_tid, e->comm, kt, 0, true);
		return;
	}
	parent = get_process(t, e->parent_tgid, kt);
	{
		const struct model_process *pp = &t->m->processes.items[parent];
		char *cmdline = pp->cmdline ? strdup(pp->cmdline) : NULL;
		char *exe = pp->exe ? strdup(pp->exe) : NULL;

		child = new_process(t, e->child_tgid, e->parent_tgid, 0, e->comm, cmdline, exe, kt);
		free(cmdline);
		free(exe);
	}
	/* the child starts with a copy of its parent's address space */
	{
		struct model_process *pp = &t->m->processes.items[parent];
		struct model_process *cp = &t->m->processes.items[child];

		cp->exe_image = pp->exe_image;
		for (size_t i = 0; i < pp->maps.len; i++) {
			struct model_mapping mm = t->m->processes.items[parent].maps.items[i];

			mm.since_ns = epoch_of(t, kt);
			model_add_mapping(t->m, child, &mm);
		}
		t->procs.items[child].maps_read_ktime = kt;
		if (t->unwinder)
			copy_unwind_maps(t, parent, child);
	}
	new_thread(t, child, e->child_tid, e->comm, kt, 0, true);
}

static void handle_exec(struct tracker *t, const struct collector_task_event *e)
{
	uint64_t kt = e->hdr.ktime_ns;
	uint32_t old = idmap_get(&t->pid_to_process, e->hdr.tgid), process, gen = 0;
	uint32_t old_thread = idmap_get(&t->tid_to_thread, e->child_tid);
	pid_t ppid = 0;
	char cmdline[8192];
	int len;

	t->last_task_ktime = kt;

	if (old != UINT32_MAX) {
		gen = t->m->processes.items[old].generation + 1;
		ppid = t->m->processes.items[old].ppid;
		end_process(t, old, kt);
	} else {
		ppid = read_ppid(e->hdr.tgid);
	}
	if (old_thread != UINT32_MAX)
		t->m->threads.items[old_thread].end_ns = epoch_of(t, kt);
	len = proc_cmdline(e->hdr.tgid, cmdline, sizeof(cmdline));
	process = new_process(t, e->hdr.tgid, ppid, gen, e->comm, len > 0 ? cmdline : NULL,
			      e->filename[0] ? e->filename : NULL, kt);
	load_maps(t, process, kt);
	new_thread(t, process, e->hdr.tid, e->comm, kt, e->cputime_ns, true);
}

static void handle_exit(struct tracker *t, const struct collector_task_event *e)
{
	uint32_t thread = idmap_get(&t->tid_to_thread, e->hdr.tid);
	uint32_t process = idmap_get(&t->pid_to_process, e->hdr.tgid);

	if (thread != UINT32_MAX) {
		struct model_thread *th = &t->m->threads.items[thread];

		th->end_ns = epoch_of(t, e->hdr.ktime_ns);
		if (e->cputime_ns > th->cputime_ns)
			th->cputime_ns = e->cputime_ns;
		/* The tid stays mapped: the thread's last switch-out comes after
		 * its exit record.  A new thread that reuses the tid replaces it
		 * through its fork record. */
	}
	if (e->group_dead && process != UINT32_MAX) {
		end_process(t, process, e->hdr.ktime_ns);
		if (t->unwinder)
			unwinder_forget(t->unwinder, e->hdr.tgid);
		/* a later process may reuse the pid */
		idmap_put(&t->pid_to_process, e->hdr.tgid, UINT32_MAX);
	}
}

static void handle_switch(struct tracker *t, const struct collector_switch_event *e)
{
	uint32_t thread = get_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	struct model_thread *th = &t->m->threads.items[thread];
	struct model_switch *s;

	if (th->end_ns) {
		/* the dying thread's last switch-out */
		model_stat_add(t->m, MODEL_STAT_SWITCHES_AFTER_EXIT, 1);
		return;
	}
	s = model_add_switch(t->m);

	s->ktime_ns = e->hdr.ktime_ns;
	s->time_ns = epoch_of(t, e->hdr.ktime_ns);
	s->cputime_ns = e->cputime_ns;
	s->user_pc = e->user_ip;
	s->process = th->process;
	s->thread = thread;
	s->cpu = e->hdr.cpu;
	s->off = e->off;
	if (e->cputime_ns > th->cputime_ns)
		th->cputime_ns = e->cputime_ns;
}

static void handle_trace(struct tracker *t, const struct collector_trace_event *e, size_t size)
{
	uint32_t thread;
	struct model_trace_event *me;
	uint8_t n_args = e->kind == COLLECTOR_TRACE_ENTRY ? e->n_args : 0;

	if (e->func >= t->m->traced.len) {
		/* the probe-cost calibration on the collector itself */
		model_stat_add(t->m, MODEL_STAT_TRACE_RECORDS_CALIBRATION, 1);
		return;
	}
	if (n_args > COLLECTOR_MAX_ARGS ||
	    size < COLLECTOR_TRACE_EXIT_SIZE + n_args * sizeof(uint64_t)) {
		model_stat_add(t->m, MODEL_STAT_MALFORMED_RECORDS, 1);
		return;
	}
	thread = get_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	me = model_add_trace_event(t->m, n_args ? (const uint64_t *)e->args : NULL, n_args);
	me->ktime_ns = e->hdr.ktime_ns;
	me->time_ns = epoch_of(t, e->hdr.ktime_ns);
	me->thread = thread;
	me->process = t->m->threads.items[thread].process;
	me->func = e->func;
	me->cpu = e->hdr.cpu;
	me->kind = e->kind == COLLECTOR_TRACE_ENTRY ? MODEL_TRACE_ENTRY : MODEL_TRACE_EXIT;
}

int tracker_handle_record(struct tracker *t, const void *data, size_t size)
{
	const struct collector_event_header *h = data;

	if (size < sizeof(*h)) {
		model_stat_add(t->m, MODEL_STAT_MALFORMED_RECORDS, 1);
		return 0;
	}
	if (t->ignored_tgid && (pid_t)h->tgid == t->ignored_tgid) {
		model_stat_add(t->m, MODEL_STAT_RECORDS_OF_COLLECTOR, 1);
		return 0;
	}
	if (t->awaiting_exec && (pid_t)h->tgid == t->awaiting_exec) {
		/* Until the exec, it is the profiler's own copy waiting.  An exec
		 * takes far less than EXEC_GRACE_NS once the child is let go: a
		 * record later than that ends the wait, should the exec record
		 * have been lost in a full ring. */
		if (h->kind != COLLECTOR_EV_EXEC &&
		    (!t->exec_allowed_ktime ||
		     h->ktime_ns < t->exec_allowed_ktime + EXEC_GRACE_NS)) {
			model_stat_add(t->m, MODEL_STAT_RECORDS_BEFORE_EXEC, 1);
			return 0;
		}
		t->awaiting_exec = 0;
	}
	switch (h->kind) {
	case COLLECTOR_EV_SAMPLE:
		if (size >= sizeof(struct collector_sample_event)) {
			const struct collector_sample_event *e = data;

			if (((size_t)e->n_kernel + e->n_user) * sizeof(uint64_t) <=
			    size - sizeof(*e)) {
				handle_sample(t, e);
				return 0;
			}
		}
		break;
	case COLLECTOR_EV_FORK:
	case COLLECTOR_EV_EXEC:
	case COLLECTOR_EV_EXIT:
		if (size >= sizeof(struct collector_task_event)) {
			if (h->kind == COLLECTOR_EV_FORK)
				handle_fork(t, data);
			else if (h->kind == COLLECTOR_EV_EXEC)
				handle_exec(t, data);
			else
				handle_exit(t, data);
			return 0;
		}
		break;
	case COLLECTOR_EV_SAMPLE_STACK:
		if (size >= sizeof(struct collector_stack_sample_event)) {
			const struct collector_stack_sample_event *se = data;

			if ((size_t)se->sample.n_kernel * sizeof(uint64_t) + se->stack_len <=
			    size - sizeof(*se)) {
				handle_stack_sample(t, se);
				return 0;
			}
		}
		break;
	case COLLECTOR_EV_TRACE:
		if (size >= COLLECTOR_TRACE_EXIT_SIZE) {
			handle_trace(t, data, size);
			return 0;
		}
		break;
	case COLLECTOR_EV_SWITCH:
		if (size >= sizeof(struct collector_switch_event)) {
			handle_switch(t, data);
			return 0;
		}
		break;
	}
	model_stat_add(t->m, MODEL_STAT_MALFORMED_RECORDS, 1);
	return 0;
}

/* Thread i's CPU time so far, or 0 once it or its process has ended. */
static uint64_t live_cputime(const struct tracker *t, size_t i)
{
	const struct model_thread *th = &t->m->threads.items[i];
	const struct model_process *p = &t->m->processes.items[th->process];

	if (th->end_ns || p->end_ns)
		return 0;
	return proc_thread_cputime(p->pid, th->tid);
}

void tracker_begin_window(struct tracker *t)
{
	for (size_t i = 0; i < t->m->threads.len; i++) {
		struct thread_state *ts = &t->threads.items[i];
		uint64_t now = ts->first_known ? live_cputime(t, i) : 0;

		if (now > ts->first_cputime)
			ts->first_cputime = now;
		if (now > t->m->threads.items[i].cputime_ns)
			t->m->threads.items[i].cputime_ns = now;
	}
}

void tracker_end_window(struct tracker *t)
{
	for (size_t i = 0; i < t->m->threads.len; i++) {
		struct thread_state *ts = &t->threads.items[i];
		uint64_t now;

		if (ts->last_read)
			continue;
		now = live_cputime(t, i);
		if (now > t->m->threads.items[i].cputime_ns)
			t->m->threads.items[i].cputime_ns = now;
		ts->last_read = true;
	}
}

void tracker_finish(struct tracker *t, uint64_t end_ktime)
{
	if (t->unwinder) {
		struct unwinder_stats us;

		unwinder_get_stats(t->unwinder, &us);
		model_stat_add(t->m, MODEL_STAT_UNWIND_NS_TOTAL, t->unwind_ns);
		model_stat_add(t->m, MODEL_STAT_UNWOUND_SAMPLES, t->unwinds);
		model_stat_add(t->m, MODEL_STAT_STACK_RECORD_BYTES, t->stack_record_bytes);
		model_stat_add(t->m, MODEL_STAT_UNWOUND_COMPLETE, us.complete);
		model_stat_add(t->m, MODEL_STAT_UNWINDER_DWFL_BUILDS, us.dwfl_builds);
		model_stat_add(t->m, MODEL_STAT_UNWINDER_IMAGES_FAILED, us.images_failed);
		model_stat_add(t->m, MODEL_STAT_UNWINDER_CACHED_WALKS, us.cached);
		model_stat_add(t->m, MODEL_STAT_UNWINDER_RULES, us.rules);
	}
	/* threads first seen in the last drain */
	tracker_end_window(t);
	(void)end_ktime;
}

int tracker_enable_unwinding(struct tracker *t)
{
	t->unwinder = unwinder_new();
	return t->unwinder ? 0 : -ENOMEM;
}

void tracker_ignore_process(struct tracker *t, pid_t pid)
{
	t->ignored_tgid = pid;
}

void tracker_expect_exec(struct tracker *t, pid_t pid)
{
	t->awaiting_exec = pid;
}

void tracker_exec_allowed(struct tracker *t, uint64_t ktime)
{
	t->exec_allowed_ktime = ktime;
	t->last_task_ktime = ktime;
}

uint64_t tracker_last_task_ktime(const struct tracker *t)
{
	return t->last_task_ktime;
}

uint64_t tracker_sample_count(const struct tracker *t)
{
	return t->samples;
}

size_t tracker_live_processes(const struct tracker *t)
{
	return t->live;
}

uint64_t tracker_target_cpu_ns(const struct tracker *t)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < t->m->threads.len; i++) {
		const struct thread_state *ts = &t->threads.items[i];
		uint64_t now = t->m->threads.items[i].cputime_ns;

		if (ts->first_known && now > ts->first_cputime)
			sum += now - ts->first_cputime;
	}
	return sum;
}

struct tracker *tracker_new(struct model *m, struct symbolizer *sym)
{
	struct tracker *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->m = m;
	t->sym = sym;
	t->unknown_image = MODEL_NONE;
	t->empty_part = UINT32_MAX;
	return t;
}

void tracker_free(struct tracker *t)
{
	if (!t)
		return;
	idmap_free(&t->pid_to_process);
	idmap_free(&t->tid_to_thread);
	stackcache_free(&t->part_cache);
	idmap_free(&t->stack_cache);
	free(t->parts.items);
	free(t->pool.items);
	for (size_t i = 0; i < t->procs.len; i++)
		free_unwind_maps(&t->procs.items[i]);
	free(t->procs.items);
	free(t->threads.items);
	unwinder_free(t->unwinder);
	free(t);
}
