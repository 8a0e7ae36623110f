// SPDX-License-Identifier: GPL-2.0
/*
 * JIT-compiled code: each process's anonymous executable memory is an
 * image "[jit]" of its own whose addresses are the runtime addresses, and
 * its functions come from the process's perf map (symbols/perfmap.h),
 * /tmp/perf-PID.map, or /proc/PID/root/tmp/perf-NSPID.map for a process in
 * another PID or mount namespace.
 *
 * The functions are keyed by name: the copies of one method (recompiled,
 * on-stack replacement) are one function, as perf groups them.
 *
 * A runtime adds to its map as it compiles, so the map is read late: when
 * the process exits, and at the end of the run for what is still pending.
 * The file is opened while the process is alive (its /proc/PID/root leads
 * into its mount namespace only then) and kept open, so that its content
 * can be read after the process is gone.
 */
#include "decode/tracker_internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/proc.h"
#include "symbols/perfmap.h"

/* A perf map larger than this is left unread (a runtime writes about
 * 100 bytes per compiled function). */
#define PERFMAP_MAX_BYTES (512u << 20)

/* A descriptor of process pid's perf map (through its namespace while it
 * is alive), or -1 when it has none yet. */
static int open_perf_map(pid_t pid, bool alive)
{
	struct stat st;
	char path[96];
	int fd = -1;

	if (alive) {
		snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", (int)pid,
			 (int)proc_namespace_pid(pid));
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	/* an earlier process's of the same pid names other code: not read
	 * (until this process writes its own) */
	if (fd >= 0 && alive && fstat(fd, &st) == 0 && proc_file_predates(pid, &st)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Opens the process's perf map while it is alive, once it exists. */
static void open_map(struct jit_state *js, bool alive)
{
	if (js->fd < 0)
		js->fd = open_perf_map(js->pid, alive);
}

/* The perf map open as fd, read whole and parsed.  0 or a negative errno. */
static int read_map(int fd, struct perfmap *pm)
{
	char path[64], *text;
	size_t len;
	int err;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = proc_read_all(path, PERFMAP_MAX_BYTES, &text, &len);
	if (err)
		return err;
	return perfmap_parse(pm, text, len);
}

uint32_t trk_jit_image(struct tracker *t, uint32_t process)
{
	struct proc_state *ps = &t->procs.items[process];
	struct jit_state *js;

	if (ps->jit != UINT32_MAX) {
		js = &t->jits.items[ps->jit];
		open_map(js, ps->alive);
		return js->image;
	}
	js = MODEL_VEC_PUSH(t->jits);
	js->image = symbolizer_jit_image(t->sym);
	js->pid = t->m->processes.items[process].pid;
	js->fd = -1;
	ps->jit = (uint32_t)(t->jits.len - 1);
	open_map(js, ps->alive);
	return js->image;
}

void trk_jit_location(struct tracker *t, uint32_t image, uint32_t loc)
{
	for (size_t i = 0; i < t->jits.len; i++) {
		if (t->jits.items[i].image == image) {
			*MODEL_VEC_PUSH(t->jits.items[i].pending) = loc;
			return;
		}
	}
}

/* The process of JIT image jit is alive (its /proc/PID/root leads into its
 * mount namespace). */
static bool jit_process_alive(const struct tracker *t, uint32_t jit)
{
	for (size_t i = 0; i < t->procs.len; i++)
		if (t->procs.items[i].jit == jit)
			return t->procs.items[i].alive;
	return false;
}

/* The pending locations of one JIT image get the functions of its map.
 * The map may have appeared since the image was met (a JVM asked for it
 * by runtimes/jvm/): opened now, through the namespace while alive. */
static void resolve(struct tracker *t, struct jit_state *js)
{
	struct perfmap pm;

	if (!js->pending.len)
		return;
	open_map(js, jit_process_alive(t, (uint32_t)(js - t->jits.items)));
	if (js->fd < 0)
		return;
	if (read_map(js->fd, &pm) != 0)
		return;
	for (size_t i = 0; i < js->pending.len; i++) {
		struct model_location *l = &t->m->locations.items[js->pending.items[i]];
		const struct perfmap_entry *e = perfmap_lookup(&pm, l->addr);

		/* keyed by name alone: a method compiled again (a higher tier,
		 * an OSR copy) is listed once per copy, as perf report groups
		 * them it is one function (four rows of one JVM method before) */
		if (e)
			l->function = model_intern_function(t->m, js->image, e->name, 0, 0,
							    MODEL_NONE, 0);
	}
	js->pending.len = 0;
	perfmap_free(&pm);
}

void trk_jit_resolve(struct tracker *t, pid_t pid)
{
	for (size_t i = 0; i < t->jits.len; i++)
		if (pid < 0 || t->jits.items[i].pid == pid)
			resolve(t, &t->jits.items[i]);
}

/* Whether the process's perf map, as it is now, names every pending
 * location of js (the map read and let go: resolve() names them). */
static bool map_names_pending(const struct tracker *t, const struct jit_state *js, bool alive)
{
	int fd = js->fd >= 0 ? js->fd : open_perf_map(js->pid, alive);
	struct perfmap pm;
	bool all = false;

	if (fd < 0)
		return false;
	if (read_map(fd, &pm) == 0) {
		all = true;
		for (size_t i = 0; all && i < js->pending.len; i++) {
			uint64_t addr = t->m->locations.items[js->pending.items[i]].addr;

			all = perfmap_lookup(&pm, addr) != NULL;
		}
		perfmap_free(&pm);
	}
	if (fd != js->fd)
		close(fd);
	return all;
}

/*
 * Pending code is not yet looked up in its process's map (that is done
 * after the JVMs are asked, runtimes/jvm/): a process counts as waiting
 * when its map, as it is now, leaves some of it unnamed (or it has none).
 * Else a process whose map names all of it (node --perf-basic-prof) was
 * taken for one whose JIT code stays unnamed, and the summary said so.
 * A HotSpot JVM with pending code waits whatever its map names, as it did:
 * a map it dumped at an earlier request may name code freed since, and is
 * asked for again.
 */
size_t tracker_jit_waiting(struct tracker *t, pid_t *pids, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < t->procs.len && n < max; i++) {
		struct proc_state *ps = &t->procs.items[i];
		const struct jit_state *js;

		if (!ps->alive || ps->jit == UINT32_MAX)
			continue;
		js = &t->jits.items[ps->jit];
		if (!js->pending.len)
			continue;
		/* a process a runtime walks names its code itself */
		if (runtimes_walk(t->runtimes, js->pid, &ps->runtime_words) ||
		    (map_names_pending(t, js, ps->alive) &&
		     !runtimes_own_jit(t->runtimes, js->pid, &ps->runtime_words)))
			continue;
		pids[n++] = js->pid;
	}
	return n;
}

void trk_jit_forget(struct tracker *t, uint32_t jit)
{
	struct jit_state *js = &t->jits.items[jit];

	if (js->fd >= 0)
		close(js->fd);
	js->fd = -1;
	free(js->pending.items);
	js->pending.items = NULL;
	js->pending.len = js->pending.cap = 0;
}

void trk_jit_free(struct tracker *t)
{
	for (size_t i = 0; i < t->jits.len; i++) {
		if (t->jits.items[i].fd >= 0)
			close(t->jits.items[i].fd);
		free(t->jits.items[i].pending.items);
	}
	free(t->jits.items);
}
