// SPDX-License-Identifier: GPL-2.0
/* `collector stacks`: every thread's stack now (cli/stacks.h). */
#include "cli/stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/frames.h"
#include "formats/registry.h"
#include "lib/proc.h"

int stacks_options(struct collector_options *o)
{
	if (o->command) {
		fprintf(stderr, "collector stacks: shows the threads of running processes: give "
			"-p PID (or -a), not a command\n");
		return EINVAL;
	}
	if (o->interval > 0 || o->otlp || o->n_trace_specs) {
		fprintf(stderr, "collector stacks: --interval, --otlp and --trace go with a "
			"profile, not with one look at the threads\n");
		return EINVAL;
	}
	o->off_cpu = true;
	if (o->duration <= 0)
		o->duration = STACKS_LOOK_S;
	return 0;
}

/* What a thread did during the look, and the sample that shows it. */
struct thread_look {
	uint64_t off_ns, on_ns;  /* weights of its off-CPU and on-CPU samples */
	size_t longest_wait;     /* its off-CPU sample of the most weight, or SIZE_MAX */
	size_t running;          /* its on-CPU sample of the most frames, or SIZE_MAX */
	char state;              /* /proc's, after the look; '-': gone */
	bool waiting;            /* shown by its longest wait, not its running stack */
};

/* A thread waits when the kernel says it is not runnable (or it was never
 * seen on a CPU), else it runs, preempted now and then (its waits then are
 * its turns on the run queue). */
static void decide(struct thread_look *l, pid_t tid)
{
	struct proc_stat ps;

	l->state = proc_stat(tid, &ps) == 0 ? ps.state : '-';
	l->waiting = l->longest_wait != SIZE_MAX &&
		     (l->running == SIZE_MAX || (l->state != 'R' && l->off_ns >= l->on_ns));
}

/* A sample's user frames: a Python thread's, its native frames with its
 * interpreter's spliced in (more than the native ones alone). */
static uint32_t user_frames_of(const struct model *m, size_t sample)
{
	uint32_t st = m->samples.items[sample].stack;

	if (st == MODEL_NONE)
		return 0;
	return m->stacks.items[st].n_frames - m->stacks.items[st].n_kernel;
}

/*
 * Each thread's samples, summed.  Of its on-CPU ones, the one of the most
 * user frames (ties: the latest), not the most frequent: a running Python
 * thread's samples are each at another instruction, so each has a stack
 * of its own, while the few whose interpreter walk failed share one, of
 * native frames only, which a vote elected (test_stacks, python3.14 under
 * ASan, once); and not the most frames: a sample preempted in the kernel
 * has five more, of the timer's interrupt.
 */
static void look_at(const struct model *m, struct thread_look *looks)
{
	for (size_t i = 0; i < m->threads.len; i++)
		looks[i] = (struct thread_look){ .longest_wait = SIZE_MAX, .running = SIZE_MAX };
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		struct thread_look *l;

		if (s->thread >= m->threads.len)
			continue;
		l = &looks[s->thread];
		if (model_event(m, s->event)->aggregated) {
			l->off_ns += s->weight;
			if (l->longest_wait == SIZE_MAX ||
			    s->weight > m->samples.items[l->longest_wait].weight)
				l->longest_wait = i;
			continue;
		}
		l->on_ns += s->weight;
		if (l->running == SIZE_MAX || user_frames_of(m, i) >= user_frames_of(m, l->running))
			l->running = i;
	}
	for (size_t i = 0; i < m->threads.len; i++)
		decide(&looks[i], m->threads.items[i].tid);
}

/* A frame: its function (or image and address), and where. */
static void print_location(FILE *out, const struct model *m, uint32_t loc, bool kernel)
{
	const struct model_location *l = &m->locations.items[loc];
	const char *image = frame_basename(m->images.items[l->image].path);

	if (l->function == MODEL_NONE) {
		fprintf(out, "    %s0x%llx (%s)\n", kernel ? "[k] " : "", (unsigned long long)l->addr,
			image);
		return;
	}
	for (uint32_t k = 0; k <= l->n_inlines; k++) {
		uint32_t fn, line, file;

		frame_location_line(m, l, k, &fn, &line);
		file = k == 0 ? l->file : m->functions.items[fn].file;
		fprintf(out, "    %s%s", kernel ? "[k] " : "", m->functions.items[fn].name);
		if (file != MODEL_NONE && line)
			fprintf(out, " (%s:%u)%s\n", m->files.items[file].path, line,
				k < l->n_inlines ? " [inlined]" : "");
		else
			fprintf(out, " (%s)\n", image);
	}
}

static void print_thread(FILE *out, const struct model *m, uint32_t thread,
			 const struct thread_look *l, double look_s)
{
	const struct model_thread *t = &m->threads.items[thread];
	bool wait = l->waiting;
	size_t pick = wait ? l->longest_wait : l->running;
	const struct model_stack *st;
	char state = l->state;

	/* the state as /proc says it now; '-': gone since */
	fprintf(out, "  Thread %d \"%s\" (%c): %s, %.1f%% of the %.3f s looked at off its CPU%s\n",
		t->tid, t->comm, state, wait ? "waiting" : "running",
		look_s > 0 ? 100.0 * l->off_ns / (look_s * 1e9) : 0.0, look_s,
		state == '-' ? " (exited since)" : "");
	if (pick == SIZE_MAX || m->samples.items[pick].stack == MODEL_NONE) {
		fprintf(out, "    (no stack)\n");
		return;
	}
	st = &m->stacks.items[m->samples.items[pick].stack];
	for (uint32_t i = 0; i < st->n_frames; i++)
		print_location(out, m, m->frames.items[st->frames + i], i < st->n_kernel);
	if (st->truncated)
		fprintf(out, "    ... (the stack goes on: the unwinder stopped here)\n");
}

static int by_index(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* The samples kept: each thread's pick, in the samples' order (picks
 * sorted first, so that the compaction never reads a slot it wrote: a
 * thread's pick may come before another's). */
static int keep_picks(struct model *m, const struct thread_look *looks)
{
	size_t *picks = calloc(m->threads.len + 1, sizeof(*picks)), n = 0;

	if (!picks)
		return -ENOMEM;
	for (size_t t = 0; t < m->threads.len; t++) {
		size_t pick = looks[t].waiting ? looks[t].longest_wait : looks[t].running;

		if (pick != SIZE_MAX)
			picks[n++] = pick;
	}
	qsort(picks, n, sizeof(*picks), by_index);
	for (size_t i = 0; i < n; i++)
		m->samples.items[i] = m->samples.items[picks[i]];
	m->samples.len = n;
	model_events_tally(m);
	free(picks);
	return 0;
}

int stacks_output(FILE *out, struct model *m, unsigned int formats,
		  const struct export_options *eo)
{
	struct thread_look *looks = calloc(m->threads.len + 1, sizeof(*looks));
	double look_s = (m->run.end_ns - m->run.start_ns) / 1e9;
	bool any = false;
	size_t shown_threads = 0;

	if (!looks) {
		fprintf(stderr, "collector: out of memory\n");
		return -1;
	}
	look_at(m, looks);
	/* process by process, each thread once, in the order they were met */
	for (uint32_t p = 0; p < m->processes.len; p++) {
		const struct model_process *mp = &m->processes.items[p];
		bool shown = false;

		for (uint32_t t = 0; t < m->threads.len; t++) {
			if (m->threads.items[t].process != p ||
			    (looks[t].longest_wait == SIZE_MAX && looks[t].running == SIZE_MAX))
				continue; /* the look saw nothing of it (ended before) */
			if (!shown)
				fprintf(out, "%sProcess %d: %s\n", any ? "\n" : "", mp->pid,
					mp->cmdline ? mp->cmdline : mp->comm);
			shown = any = true;
			shown_threads++;
			print_thread(out, m, t, &looks[t], look_s);
		}
	}
	fflush(out);
	fprintf(stderr, "collector: %zu threads looked at for %.3f s, none stopped: the waiting "
		"ones' stacks read where they wait, the running ones sampled\n", shown_threads,
		look_s);
	if (keep_picks(m, looks) != 0) {
		free(looks);
		fprintf(stderr, "collector: out of memory\n");
		return -1;
	}
	free(looks);
	return formats && formats_write(m, formats, eo) ? -1 : 0;
}
