// SPDX-License-Identifier: GPL-2.0
/*
 * Continuous runs: between intervals, the processes and threads that have
 * ended leave the model and the tracker, the model's code tables and the
 * caches of resolved raw stacks start over, and the images no process maps
 * any more are closed, so that memory follows what is alive rather than
 * everything the run has met.  Measured on a system-wide run with 180
 * short processes a second (a shell loop of /bin/true): the heap grew by
 * 3.2 KiB per process met without this.
 */
#include "decode/tracker_internal.h"

#include <errno.h>
#include <stdlib.h>

/* The CPU time of the threads about to go still counts in the summary's
 * rate (tracker_target_cpu_ns()). */
static void keep_cputime_of_ended(struct tracker *t)
{
	const struct model *m = t->m;

	for (size_t i = 0; i < m->threads.len; i++) {
		const struct model_thread *th = &m->threads.items[i];
		const struct thread_state *ts = &t->threads.items[i];

		if ((th->end_ns || m->processes.items[th->process].end_ns) && ts->first_known &&
		    th->cputime_ns > ts->first_cputime)
			t->forgotten_cpu_ns += th->cputime_ns - ts->first_cputime;
	}
}

/* The tracker's vectors indexed by model id, renumbered as the model was,
 * and the pid and tid maps made again from what is left. */
static int renumber(struct tracker *t, const uint32_t *process_map, size_t n_processes,
		    const uint32_t *thread_map, size_t n_threads)
{
	const struct model *m = t->m;

	for (size_t i = 0; i < n_processes; i++) {
		if (process_map[i] == MODEL_NONE) {
			if (t->procs.items[i].jit != UINT32_MAX)
				trk_jit_forget(t, t->procs.items[i].jit);
			runtimes_drop(t->runtimes, &t->procs.items[i].runtime_words);
			if (t->unwinder) { /* its exit, when its record was lost */
				struct proc_ref ref = { 0, &t->procs.items[i].unwind_word };

				unwinder_forget(t->unwinder, &ref);
			}
			trk_free_proc_state(&t->procs.items[i]);
		} else
			t->procs.items[process_map[i]] = t->procs.items[i];
	}
	t->procs.len = m->processes.len;
	/* the processes whose interpreter is awaited, renumbered too */
	size_t kept = 0;

	for (size_t i = 0; i < t->runtime_pending.len; i++) {
		uint32_t p = t->runtime_pending.items[i].process;

		if (p < n_processes && process_map[p] != MODEL_NONE) {
			t->runtime_pending.items[kept] = t->runtime_pending.items[i];
			t->runtime_pending.items[kept++].process = process_map[p];
		}
	}
	t->runtime_pending.len = kept;
	for (size_t i = 0; i < n_threads; i++)
		if (thread_map[i] != MODEL_NONE)
			t->threads.items[thread_map[i]] = t->threads.items[i];
	t->threads.len = m->threads.len;
	idmap_clear(&t->pid_to_process);
	idmap_clear(&t->tid_to_thread);
	for (size_t i = 0; i < m->processes.len; i++)
		if (idmap_put(&t->pid_to_process, m->processes.items[i].pid, i))
			return -ENOMEM;
	for (size_t i = 0; i < m->threads.len; i++)
		if (idmap_put(&t->tid_to_thread, m->threads.items[i].tid, i))
			return -ENOMEM;
	return 0;
}

/* The model's code tables start over (each interval interns what its own
 * samples meet), the symbolizer closes the images no live process maps
 * (measured: a 30-minute system-wide run on a machine building software
 * kept 321 files mapped, 185 MiB, most of them binaries long gone), and
 * the JIT locations still unnamed are gone with the locations. */
static int forget_code(struct tracker *t)
{
	const struct model *m = t->m;
	bool *in_use = calloc(m->images.len + 1, sizeof(*in_use));

	if (!in_use)
		return -ENOMEM;
	for (size_t i = 0; i < m->processes.len; i++) {
		const struct model_process *p = &m->processes.items[i];

		if (p->exe_image != MODEL_NONE)
			in_use[p->exe_image] = true;
		for (size_t k = 0; k < p->maps.len; k++)
			in_use[p->maps.items[k].image] = true;
	}
	/* the symbolizer keeps what it resolved from the tables first */
	symbolizer_forget_code(t->sym, in_use, m->images.len);
	unwinder_release_files(t->unwinder);
	model_forget_code(t->m);
	for (size_t i = 0; i < t->jits.len; i++)
		t->jits.items[i].pending.len = 0;
	free(in_use);
	return 0;
}

void tracker_name_jit_code(struct tracker *t)
{
	trk_jit_resolve(t, -1);
}

int tracker_forget_ended(struct tracker *t)
{
	size_t n_processes = t->m->processes.len, n_threads = t->m->threads.len;
	uint32_t *process_map = malloc((n_processes + 1) * sizeof(*process_map));
	uint32_t *thread_map = malloc((n_threads + 1) * sizeof(*thread_map));
	int err = -ENOMEM;

	if (process_map && thread_map) {
		keep_cputime_of_ended(t);
		model_forget_ended_tasks(t->m, process_map, thread_map);
		err = renumber(t, process_map, n_processes, thread_map, n_threads);
		/* the part cache is keyed by model process, and holds model
		 * locations: start over */
		stackcache_clear(&t->part_cache);
		idmap_clear(&t->stack_cache);
		free(t->parts.items);
		free(t->pool.items);
		t->parts.items = NULL;
		t->pool.items = NULL;
		t->parts.len = t->parts.cap = t->pool.len = t->pool.cap = 0;
		t->empty_part = UINT32_MAX;
		if (!err)
			err = forget_code(t);
	}
	free(process_map);
	free(thread_map);
	return err;
}
