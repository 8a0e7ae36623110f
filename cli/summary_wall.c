// SPDX-License-Identifier: GPL-2.0
/*
 * The summary's wall view (cli/summary.h): what on-CPU and off-CPU time add
 * up to, beside the time the threads were in the window, and, thread by
 * thread, where they do not add up and why.
 *
 * A thread's time in the window runs from its start, or the window's, to
 * its end, or the window's (a thread there before the window starts with
 * it: decode/tracker_tasks.c).  Its on-CPU time is sampled (its samples'
 * weights: within about a period per sample of the truth), its off-CPU time
 * summed at each switch-in, at each cut and at the end, and for a thread
 * blocked since before the run from the run's start
 * (bpf/offcpu_window.bpf.h).  What is left is said with the reasons the
 * run counted.
 */
#include "cli/summary.h"

#include <stdlib.h>

/* Threads listed whose times do not add up, at most. */
#define WALL_SHOWN 5

struct thread_wall {
	uint32_t thread;
	uint64_t in_window, on, off;
	uint64_t gap; /* in_window less on and off, or 0 */
};

/* The larger gap first; ties by thread id (the model's order). */
static int by_gap(const void *a, const void *b)
{
	const struct thread_wall *x = a, *y = b;

	if (x->gap != y->gap)
		return x->gap < y->gap ? 1 : -1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* Whether a thread's on + off is its time in the window, give or take 2%
 * of it or a sampling period's worth for each of its samples' error. */
static bool adds_up(const struct thread_wall *w, uint64_t period_ns)
{
	uint64_t sum = w->on + w->off;
	uint64_t diff = sum > w->in_window ? sum - w->in_window : w->in_window - sum;
	uint64_t slack = w->in_window / 50;

	return diff <= (slack > 2 * period_ns ? slack : 2 * period_ns);
}

static void print_reasons(FILE *out, const struct model *m)
{
	uint64_t lost = 0;

	for (int c = 0; c < MODEL_LOST_COUNT; c++)
		lost += model_lost_value(m, (enum model_lost)c);
	fprintf(out, "                  not attributed: %llu blocks shorter than --off-cpu-min "
		"(%.3f us); %llu threads that woke while their stacks were taken (their time "
		"before); %llu off-CPU stacks or times lost; %llu events lost\n",
		(unsigned long long)model_stat_value(m, MODEL_STAT_OFFCPU_SHORT_SWITCHES),
		model_stat_value(m, MODEL_STAT_OFFCPU_MIN_NS) / 1e3,
		(unsigned long long)model_stat_value(m, MODEL_STAT_OFFCPU_WINDOW_WOKE),
		(unsigned long long)model_stat_value(m, MODEL_STAT_OFFCPU_STACKS_DROPPED),
		(unsigned long long)lost);
}

void summary_print_wall(FILE *out, const struct model *m, uint64_t from_ns)
{
	struct thread_wall *w = calloc(m->threads.len ? m->threads.len : 1, sizeof(*w));
	uint64_t on = 0, off = 0, in_window = 0, period = 0;
	size_t n_ok = 0, shown = 0;

	if (!w)
		return;
	if (from_ns < m->run.start_ns)
		from_ns = m->run.start_ns;
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		const struct model_event *e = model_event(m, s->event);

		if (!model_wall_event(m, s->event) || s->thread >= m->threads.len)
			continue;
		*(e->aggregated ? &w[s->thread].off : &w[s->thread].on) += s->weight;
		if (!e->aggregated && e->freq_hz)
			period = 1000000000ULL / e->freq_hz;
	}
	for (size_t i = 0; i < m->threads.len; i++) {
		const struct model_thread *t = &m->threads.items[i];
		uint64_t start = t->start_ns > from_ns ? t->start_ns : from_ns;
		uint64_t end = t->end_ns && t->end_ns < m->run.end_ns ? t->end_ns : m->run.end_ns;

		w[i].thread = (uint32_t)i;
		w[i].in_window = end > start ? end - start : 0;
		w[i].gap = w[i].in_window > w[i].on + w[i].off ?
				   w[i].in_window - w[i].on - w[i].off : 0;
		on += w[i].on;
		off += w[i].off;
		in_window += w[i].in_window;
		n_ok += adds_up(&w[i], period);
	}
	fprintf(out, "  wall view       on-CPU %.3f s + off-CPU %.3f s = %.3f s; the threads "
		"lived %.3f s in the %s\n", on / 1e9, off / 1e9, (on + off) / 1e9, in_window / 1e9,
		from_ns > m->run.start_ns ? "last interval" : "run");
	fprintf(out, "                  %zu of %zu threads add up (on + off within 2%% of their "
		"time, or two sampling periods)\n", n_ok, m->threads.len);
	if (model_stat_value(m, MODEL_STAT_OFFCPU_WINDOW_BLOCKED))
		fprintf(out, "                  %llu threads found blocked when the run started "
			"(%llu with their kernel stack only), %llu blocks counted up to a cut or "
			"the end\n",
			(unsigned long long)model_stat_value(m, MODEL_STAT_OFFCPU_WINDOW_BLOCKED),
			(unsigned long long)model_stat_value(m, MODEL_STAT_OFFCPU_WINDOW_NO_USER),
			(unsigned long long)model_stat_value(m, MODEL_STAT_OFFCPU_WINDOW_CUT));
	qsort(w, m->threads.len, sizeof(*w), by_gap);
	for (size_t i = 0; i < m->threads.len && shown < WALL_SHOWN; i++) {
		const struct model_thread *t = &m->threads.items[w[i].thread];

		if (adds_up(&w[i], period))
			continue;
		fprintf(out, "                  thread %d (%s): %.3f s in the window, on-CPU %.3f "
			"s, off-CPU %.3f s\n", t->tid, t->comm, w[i].in_window / 1e9, w[i].on / 1e9,
			w[i].off / 1e9);
		shown++;
	}
	if (n_ok < m->threads.len)
		print_reasons(out, m);
	free(w);
}
