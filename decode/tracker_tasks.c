// SPDX-License-Identifier: GPL-2.0
/*
 * Processes, threads and their mappings, as the records tell them (fork,
 * exec, exit) and as /proc describes those first met through a record or
 * named by -p.  With --call-graph dwarf the unwinder gets every process's
 * mappings as soon as they are read, while /proc/PID/map_files exists.
 */
#include "decode/tracker_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/kvlist.h"
#include "lib/proc.h"
#include "lib/maps_store.h"
#include "lib/procmaps.h"

/* The parent of a process, 0 when unknown. */
static pid_t read_ppid(pid_t pid)
{
	struct proc_stat st;

	return proc_stat(pid, &st) == 0 ? st.ppid : 0;
}

/* ---- mappings ----------------------------------------------------------- */

static void free_unwind_maps(struct proc_state *ps)
{
	for (size_t i = 0; i < ps->n_umaps; i++) {
		free((char *)ps->umaps[i].path);
		free((char *)ps->umaps[i].name);
	}
	free(ps->umaps);
	ps->umaps = NULL;
	ps->n_umaps = 0;
}

/* Hands the process's mappings to the unwinder, which opens every image
 * now, while /proc/PID/map_files still exists; lazily (cfi, whose few
 * samples before their tables are unwound here), at its first sample. */
static void prepare_unwinding(struct tracker *t, uint32_t process)
{
	struct proc_state *ps = &t->procs.items[process];

	ps->maps_version = ++t->maps_version;
	if (t->unwind_lazy)
		return;
	struct proc_ref ref = trk_unwind_ref(t, process);

	if (unwinder_prepare(t->unwinder, &ref, ps->maps_version, ps->umaps, ps->n_umaps) != 0)
		model_stat_add(t->m, MODEL_STAT_UNWINDER_PREPARE_FAILED, 1);
}

/* Empties the process's unwinder mappings and makes room for n; false
 * without memory (its samples are then unwound without mappings). */
static bool reset_unwind_maps(struct proc_state *ps, size_t n)
{
	free_unwind_maps(ps);
	ps->umaps = calloc(n ? n : 1, sizeof(*ps->umaps));
	return ps->umaps != NULL;
}

/* A mapping of file path; like names it in the process (its name, device
 * and inode). */
static void add_unwind_map(struct proc_state *ps, const struct unwind_mapping *like,
			   const char *path)
{
	struct unwind_mapping *u = &ps->umaps[ps->n_umaps];

	*u = *like;
	u->path = strdup(path);
	u->name = like->name ? strdup(like->name) : NULL;
	if (u->path && (u->name || !like->name))
		ps->n_umaps++;
	else
		free((char *)u->path);
}

/*
 * Whether /proc/PID/map_files opens for this collector (it takes
 * CAP_SYS_ADMIN): procmaps_open_path()'s test, made once a run once it
 * said yes, not once per reading of a process's maps.  The faccessat()
 * through /proc was 3.5% of a continuous -a run's CPU under a build loop
 * (a reading at each new process's first stack copy and at the exec of
 * an image not open).  A no is not kept: a process gone says no too.
 */
static int trk_map_files(const struct tracker *t)
{
	return t->map_files_usable ? 1 : -1;
}

static void trk_map_files_seen(struct tracker *t, int map_files)
{
	if (map_files == 1)
		t->map_files_usable = true;
}

/* map_files: procmaps_open_path's answer for this reading of the maps */
static void set_unwind_maps(struct tracker *t, uint32_t process, const struct procmaps *maps,
			    int *map_files)
{
	struct proc_state *ps = &t->procs.items[process];
	pid_t pid = t->m->processes.items[process].pid;
	char path[4200];

	if (!reset_unwind_maps(ps, maps->n))
		return;
	for (size_t i = 0; i < maps->n; i++) {
		const struct procmap_entry *e = &maps->entries[i];

		if (procmap_is_file(e)) {
			if (procmaps_open_path(pid, e, path, sizeof(path), map_files) != 0)
				continue;
		} else if (strcmp(e->path, "[vdso]") == 0) {
			snprintf(path, sizeof(path), "[vdso]");
		} else {
			continue;
		}
		add_unwind_map(ps, &(struct unwind_mapping){ .start = e->start, .end = e->end,
				     .pgoff = e->pgoff, .name = procmap_is_file(e) ? e->path : NULL,
				     .dev = procmap_dev(e), .inode = e->inode }, path);
	}
	prepare_unwinding(t, process);
}

void trk_refresh_unwind_maps(struct tracker *t, uint32_t process)
{
	struct proc_state *ps = &t->procs.items[process];
	struct procmaps maps;
	int map_files = trk_map_files(t);

	if (!ps->umaps_stale)
		return;
	ps->umaps_stale = false;
	if (maps_store_read(t->shared_maps, t->m->processes.items[process].pid,
			    ps->maps_read_ktime, &maps, NULL) != 0)
		return;
	set_unwind_maps(t, process, &maps, &map_files);
	trk_map_files_seen(t, map_files);
	procmaps_free(&maps);
}

/* A forked child maps what its parent maps, through its own map_files. */
static void copy_unwind_maps(struct tracker *t, uint32_t parent, uint32_t child)
{
	struct proc_state *pp = &t->procs.items[parent], *cp = &t->procs.items[child];
	pid_t pid = t->m->processes.items[child].pid;
	char path[128];

	cp->umaps_stale = pp->umaps_stale;
	if (!reset_unwind_maps(cp, pp->n_umaps))
		return;
	for (size_t i = 0; i < pp->n_umaps; i++) {
		const struct unwind_mapping *u = &pp->umaps[i];
		const char *p = u->path;

		if (strstr(u->path, "/map_files/") &&
		    procmaps_map_files_path(pid, u->start, u->end, path, sizeof(path)) == 0)
			p = path;
		add_unwind_map(cp, u, p);
	}
	prepare_unwinding(t, child);
}

void trk_free_proc_state(struct proc_state *ps)
{
	free_unwind_maps(ps);
}

void tracker_share_maps(struct tracker *t, struct maps_store *store)
{
	t->shared_maps = store;
}

void tracker_defer_maps(struct tracker *t)
{
	t->maps_lazy = t->shared_maps != NULL;
}

/*
 * Whether an exec'd process's maps wait for its first sample: with -a,
 * under a build loop, most processes (a shell's tools, the compiler's
 * driver) are never sampled, and reading each one's maps at its exec
 * (the store's copy, the symbolizer's look-up of every file) was 7% of a
 * continuous run's CPU.  The store keeps what the kernel's records said
 * after the process is gone.  An interpreter's are read at the exec: its
 * walker must know it before its first samples.
 */
static bool defers_maps(struct tracker *t, uint32_t process)
{
	const char *exe = t->m->processes.items[process].exe;

	return t->maps_lazy && exe && exe[0] == '/' &&
	       !runtimes_may_be(t->runtimes, exe);
}

/*
 * Process pid's maps as another thread read them (the unwind service, at
 * its exec and its requests), when it read them after this image of the
 * process began and after the tracker's own last reading: for a process
 * gone before its samples were decoded (a summed stack of a build's
 * compiler), whose maps the tracker read at its exec, before ld.so mapped
 * its libraries.  0 or -ENOENT.
 */
static int shared_maps(struct tracker *t, uint32_t process, uint64_t last_read_ktime,
		       struct procmaps *maps, uint64_t *read_ns)
{
	const struct model_process *p = &t->m->processes.items[process];

	if (maps_store_get(t->shared_maps, p->pid, last_read_ktime + 1, maps, read_ns) != 0)
		return -ENOENT;
	if (trk_epoch_of(t, *read_ns) < p->start_ns || !maps->n) {
		procmaps_free(maps); /* the process's image before its exec */
		return -ENOENT;
	}
	model_stat_add(t->m, MODEL_STAT_MAPS_SHARED, 1);
	return 0;
}

/*
 * Who a process is to a backend (model_set_process_identity()), read once,
 * with its first maps or when its first record is decoded (trk_thread()),
 * whichever comes first: the service it was told
 * it is (OTEL_SERVICE_NAME, else the service.name of its
 * OTEL_RESOURCE_ATTRIBUTES, as its SDK would say) and its container.  A
 * forked child is its parent, when the parent is known.  A process gone by
 * then stays unknown.
 */
static void identify(struct tracker *t, uint32_t process)
{
	static const char *const names[] = { "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES" };
	pid_t pid = t->m->processes.items[process].pid;
	const char *service = NULL;
	char *env[2], container[80], why[160];
	struct kv *attrs = NULL;
	size_t n_attrs = 0;

	proc_environ(pid, names, env, 2);
	if (env[0] && env[0][0])
		service = env[0];
	else if (env[1] && !kvlist_parse(env[1], &attrs, &n_attrs, why, sizeof(why)))
		service = kvlist_get(attrs, n_attrs, "service.name");
	if (proc_container_id(pid, container, sizeof(container)) <= 0)
		container[0] = 0;
	model_set_process_identity(t->m, process, service && *service ? service : NULL,
				   container[0] ? container : NULL);
	kvlist_free(attrs, n_attrs);
	free(env[0]);
	free(env[1]);
}

void trk_load_maps(struct tracker *t, uint32_t process, uint64_t now_ktime)
{
	struct model_process *p = &t->m->processes.items[process];
	uint64_t last_read = t->procs.items[process].maps_read_ktime, read_ns;
	pid_t pid = p->pid;
	struct procmaps maps;
	int map_files = trk_map_files(t);
	size_t i;

	/* read while the process surely lives: an exec'd command's maps
	 * are read at its exec (a record decoded after its exit could not) */
	if (!p->identified) {
		identify(t, process);
		p = &t->m->processes.items[process];
	}
	t->procs.items[process].maps_read_ktime = now_ktime;
	t->procs.items[process].maps_deferred = false;
	/* the unwind service's reading when it made one since now_ktime (at
	 * an exec, it reads too); else /proc, the reading shared with it */
	if (maps_store_read(t->shared_maps, pid, now_ktime, &maps, &read_ns) != 0 || !maps.n) {
		procmaps_free(&maps);
		if (shared_maps(t, process, last_read, &maps, &read_ns) != 0) {
			model_stat_add(t->m, MODEL_STAT_MAPS_UNREADABLE, 1);
			return;
		}
	}
	t->procs.items[process].maps_read_ktime = read_ns;
	/* A process that has exited (a zombie) lists no mapping: what was
	 * read before stays (above, unless another reading is shared).  Read
	 * again for a sample decoded after the exit, it emptied the
	 * unwinder's mappings, and every later sample of the process had one
	 * frame (dwarf under --trace, whose [uprobes] mapping is made after
	 * the exec: 10-16% of a run's stacks). */
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
		mm.since_ns = trk_epoch_of(t, now_ktime);
		if (procmap_is_file(e)) {
			mm.image = symbolizer_open_image(t->sym, procmap_dev(e), e->inode);
			if (mm.image == MODEL_NONE) {
				procmaps_open_path(pid, e, open_path, sizeof(open_path),
						   &map_files);
				mm.image = symbolizer_image(t->sym, e->path, open_path,
							    procmap_dev(e), e->inode);
			}
			mm.bias = symbolizer_bias(t->sym, mm.image, e->start, e->pgoff);
		} else if (!e->path[0]) {
			/* anonymous code: JIT, runtime addresses */
			mm.image = trk_jit_image(t, process);
			mm.bias = 0;
		} else {
			/* [vdso], [uprobes]: addresses relative to the mapping */
			mm.image = symbolizer_special_image(t->sym, e->path);
			mm.bias = e->start;
		}
		model_add_mapping(t->m, process, &mm);
		if (p->exe && e->path[0] && strcmp(e->path, p->exe) == 0 &&
		    p->exe_image == MODEL_NONE)
			p->exe_image = mm.image;
		p = &t->m->processes.items[process];
	}
	/* cfi's few samples unwound here: the unwinder's mappings (an open
	 * path for each, a test through /proc) made at the first of them */
	if (t->unwinder && t->unwind_lazy && t->shared_maps)
		t->procs.items[process].umaps_stale = true;
	else if (t->unwinder)
		set_unwind_maps(t, process, &maps, &map_files);
	trk_map_files_seen(t, map_files);
	procmaps_free(&maps);
	trk_runtimes_maps_loaded(t, process);
}

/* ---- processes and threads ---------------------------------------------- */

static uint32_t new_process(struct tracker *t, pid_t pid, pid_t ppid, uint32_t generation,
			    const char *comm, const char *cmdline, const char *exe,
			    uint64_t ktime)
{
	uint32_t id = model_add_process(t->m, pid, ppid, generation, comm, cmdline, exe);
	struct proc_state *ps = MODEL_VEC_PUSH(t->procs);

	ps->alive = true;
	ps->jit = UINT32_MAX;
	t->m->processes.items[id].start_ns = trk_epoch_of(t, ktime);
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
	trk_load_maps(t, id, ktime);
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

	t->m->threads.items[id].start_ns = trk_epoch_of(t, ktime);
	t->m->threads.items[id].cputime_ns = cputime;
	ts->first_cputime = cputime;
	ts->first_known = cputime_known;
	idmap_put(&t->tid_to_thread, tid, id);
	return id;
}

uint32_t trk_thread(struct tracker *t, pid_t tgid, pid_t tid, uint64_t ktime)
{
	uint32_t id = idmap_get(&t->tid_to_thread, tid), process;
	char comm[16];

	if (id != UINT32_MAX) {
		process = t->m->threads.items[id].process;
		if (!t->m->processes.items[process].identified)
			identify(t, process);
		return id;
	}
	process = get_process(t, tgid, ktime);
	if (!t->m->processes.items[process].identified)
		identify(t, process);
	proc_comm(tgid, tid, comm);
	if (!comm[0])
		snprintf(comm, sizeof(comm), "%s", t->m->processes.items[process].comm);
	/* first met through a record, not its fork: there since before the
	 * window (a -p target's thread, one -a or --off-cpu's window found
	 * blocked), its time in it from the window's start; its CPU time so
	 * far is not ours */
	if (t->m->run.start_ktime_ns && ktime > t->m->run.start_ktime_ns)
		ktime = t->m->run.start_ktime_ns;
	return new_thread(t, process, tid, comm, ktime, 0, false);
}

void trk_handle_comm(struct tracker *t, const struct collector_task_event *e)
{
	uint32_t thread = idmap_get(&t->tid_to_thread, e->hdr.tid);
	char *comm;
	size_t n = strnlen(e->comm, sizeof(e->comm));

	/* a thread not met yet takes its name from /proc when it is: the
	 * new one (-a's renames at every exec make no process here) */
	if (thread == UINT32_MAX || !n ||
	    t->m->processes.items[t->m->threads.items[thread].process].pid != (pid_t)e->hdr.tgid)
		return;
	comm = t->m->threads.items[thread].comm;
	if (n >= sizeof(t->m->threads.items[thread].comm))
		n = sizeof(t->m->threads.items[thread].comm) - 1;
	memcpy(comm, e->comm, n);
	comm[n] = 0;
}

int tracker_add_process(struct tracker *t, pid_t pid, uint64_t now_ktime)
{
	uint32_t process;
	pid_t *tids;
	size_t n;
	int err;

	err = proc_threads(pid, &tids, &n);
	if (err)
		return err;
	process = process_from_proc(t, pid, now_ktime);
	for (size_t i = 0; i < n; i++) {
		char comm[16];

		proc_comm(pid, tids[i], comm);
		new_thread(t, process, tids[i], comm, now_ktime,
			   proc_thread_cputime(pid, tids[i]), true);
	}
	free(tids);
	return 0;
}

static void end_process(struct tracker *t, uint32_t process, uint64_t ktime)
{
	struct proc_state *ps = &t->procs.items[process];

	if (!ps->alive)
		return;
	ps->alive = false;
	t->m->processes.items[process].end_ns = trk_epoch_of(t, ktime);
	if (t->live)
		t->live--;
}

void trk_handle_fork(struct tracker *t, const struct collector_task_event *e)
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
		if (pp->identified)
			model_set_process_identity(t->m, child, pp->service_name,
						   pp->container_id);
		for (size_t i = 0; i < pp->maps.len; i++) {
			struct model_mapping mm = t->m->processes.items[parent].maps.items[i];

			mm.since_ns = trk_epoch_of(t, kt);
			model_add_mapping(t->m, child, &mm);
		}
		t->procs.items[child].maps_read_ktime = kt;
		/* the store has the child's as a copy of the parent's */
		t->procs.items[child].maps_deferred = t->procs.items[parent].maps_deferred;
		if (t->unwinder)
			copy_unwind_maps(t, parent, child);
	}
	new_thread(t, child, e->child_tid, e->comm, kt, 0, true);
}

/*
 * An exec's maps are read when its record is drained, usually 100 ms or
 * more after it, once the dynamic loader has mapped the libraries.  Drained
 * within a millisecond of it, they held the executable and ld.so only; a
 * live process's unknown address makes them read again, but the off-CPU
 * sums are read at the end, when a short process is gone: test_offcpu's
 * pipe reader (cat, blocked a second in libc's read) had its time under
 * vfs_read with its user frame unresolved, once under ASan.  Reproduced
 * at will with the drain every millisecond: the exec record read 0.46 ms
 * after the exec, no __read.  Maps read (by the tracker, or by the unwind
 * service at the exec) before MAPS_SETTLE_NS had passed are read again
 * once it has (tracker_settle_maps()).
 */
#define MAPS_SETTLE_NS 20000000ULL

/* The command line of the exec record e (size bytes): its arguments, or
 * /proc's when the record has none or not all (past COLLECTOR_ARGS_LEN:
 * the process may still be there to read); into buf, its length. */
static int exec_cmdline(const struct collector_task_event *e, size_t size, char *buf,
			size_t buf_size)
{
	const struct collector_exec_event *x = (const void *)e;
	size_t head = offsetof(struct collector_exec_event, args);
	bool has = size >= head && x->args_len && x->args_len <= size - head;
	int len;

	if (!has || x->args_cut) {
		len = proc_cmdline(e->hdr.tgid, buf, buf_size);
		if (len > 0 || !has)
			return len;
	}
	memcpy(buf, x->args, x->args_len < buf_size ? x->args_len : buf_size - 1);
	return proc_join_args(buf, x->args_len, buf_size);
}

/* Process `process` exited or exec'd: what the unwinder and the runtimes
 * walk it with goes (their names stay, for the stacks decoded later). */
static void forget_process(struct tracker *t, uint32_t process)
{
	struct proc_ref ref = trk_unwind_ref(t, process);

	if (t->unwinder)
		unwinder_forget(t->unwinder, &ref);
	trk_runtimes_gone(t, process);
}

void trk_handle_exec(struct tracker *t, const struct collector_task_event *e, size_t size)
{
	uint64_t kt = e->hdr.ktime_ns;
	uint32_t old = idmap_get(&t->pid_to_process, e->hdr.tgid), process, gen = 0;
	uint32_t old_thread = idmap_get(&t->tid_to_thread, e->child_tid);
	pid_t ppid = 0;
	char cmdline[8192];
	int len;

	t->last_task_ktime = kt;

	if (old != UINT32_MAX) {
		forget_process(t, old); /* a new image */
		gen = t->m->processes.items[old].generation + 1;
		ppid = t->m->processes.items[old].ppid;
		end_process(t, old, kt);
	} else {
		ppid = read_ppid(e->hdr.tgid);
	}
	if (old_thread != UINT32_MAX)
		t->m->threads.items[old_thread].end_ns = trk_epoch_of(t, kt);
	len = exec_cmdline(e, size, cmdline, sizeof(cmdline));
	process = new_process(t, e->hdr.tgid, ppid, gen, e->comm, len > 0 ? cmdline : NULL,
			      e->filename[0] ? e->filename : NULL, kt);
	t->procs.items[process].exec_ktime = kt;
	proc_exe_file(e->hdr.tgid, &t->procs.items[process].exe_dev, &t->procs.items[process].exe_ino);
	if (defers_maps(t, process)) {
		t->procs.items[process].maps_deferred = true;
		model_stat_add(t->m, MODEL_STAT_MAPS_DEFERRED, 1);
	} else {
		/* drained once the maps settled, a reading made since: the
		 * service's at the exec lists the executable and ld.so only */
		trk_load_maps(t, process,
			      monotonic_ns() >= kt + MAPS_SETTLE_NS ? kt + MAPS_SETTLE_NS : kt);
		if (trk_maps_early(t, process))
			*MODEL_VEC_PUSH(t->early_maps) = (struct early_maps){ e->hdr.tgid, kt };
	}
	new_thread(t, process, e->hdr.tid, e->comm, kt, e->cputime_ns, true);
}

bool trk_exec_current(const struct tracker *t, uint32_t process)
{
	const struct proc_state *ps = &t->procs.items[process];
	uint64_t dev, ino;

	if (!ps->exe_ino)
		return true;
	proc_exe_file(t->m->processes.items[process].pid, &dev, &ino);
	return !ino || (dev == ps->exe_dev && ino == ps->exe_ino);
}

bool trk_maps_early(const struct tracker *t, uint32_t process)
{
	const struct proc_state *ps = &t->procs.items[process];

	return ps->exec_ktime && ps->maps_read_ktime < ps->exec_ktime + MAPS_SETTLE_NS;
}

void tracker_settle_maps(struct tracker *t, uint64_t now, bool all)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->early_maps.len; i++) {
		struct early_maps em = t->early_maps.items[i];
		uint32_t process;

		if (!all && now < em.exec_ktime + MAPS_SETTLE_NS) {
			t->early_maps.items[kept++] = em;
			continue;
		}
		process = idmap_get(&t->pid_to_process, em.pid);
		/* the same exec, its maps not read since it settled, still
		 * alive: as they are once settled, or later (the service's
		 * reading at the process's first request for tables) */
		if (process != UINT32_MAX && t->procs.items[process].alive &&
		    t->procs.items[process].exec_ktime == em.exec_ktime &&
		    trk_maps_early(t, process) && trk_exec_current(t, process))
			trk_load_maps(t, process, em.exec_ktime + MAPS_SETTLE_NS);
	}
	t->early_maps.len = kept;
}

void trk_handle_exit(struct tracker *t, const struct collector_task_event *e)
{
	uint32_t thread = idmap_get(&t->tid_to_thread, e->hdr.tid);
	uint32_t process = idmap_get(&t->pid_to_process, e->hdr.tgid);

	if (thread != UINT32_MAX) {
		struct model_thread *th = &t->m->threads.items[thread];

		th->end_ns = trk_epoch_of(t, e->hdr.ktime_ns);
		if (e->cputime_ns > th->cputime_ns)
			th->cputime_ns = e->cputime_ns;
		/* The tid stays mapped: the thread's last switch-out comes after
		 * its exit record.  A new thread that reuses the tid replaces it
		 * through its fork record. */
	}
	if (e->group_dead && process != UINT32_MAX) {
		end_process(t, process, e->hdr.ktime_ns);
		trk_jit_resolve(t, e->hdr.tgid);
		forget_process(t, process);
		/* a later process may reuse the pid */
		idmap_put(&t->pid_to_process, e->hdr.tgid, UINT32_MAX);
	}
}
