// SPDX-License-Identifier: GPL-2.0
/*
 * The targets' CPU time over the window, for the summary's rate: each
 * thread's cumulative on-CPU time when first seen and when last seen (from
 * the records, and from /proc for threads still alive at the window's
 * ends).
 */
#include "decode/tracker_internal.h"

#include "lib/proc.h"

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

uint64_t tracker_target_cpu_ns(const struct tracker *t)
{
	uint64_t sum = t->forgotten_cpu_ns;

	for (size_t i = 0; i < t->m->threads.len; i++) {
		const struct thread_state *ts = &t->threads.items[i];
		uint64_t now = t->m->threads.items[i].cputime_ns;

		if (ts->first_known && now > ts->first_cputime)
			sum += now - ts->first_cputime;
	}
	return sum;
}
