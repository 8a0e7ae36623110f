// SPDX-License-Identifier: GPL-2.0
/*
 * speedscope writer: OUT/speedscope.json in speedscope's own file format
 * (https://www.speedscope.app/file-format-schema.json), which speedscope
 * opens offline (its npm package's build, or the web app) and shows as a
 * timeline per thread ("Time Order"), a flame graph ("Left Heavy") and a
 * table ("Sandwich").
 *
 *   - One "sampled" profile per thread that has samples, named
 *     "comm pid/tid": its samples in time order, each a stack of frame
 *     indices root first (formats/frames.h: inlined calls as frames of
 *     their own, unknown code as "[image]") and its weight the CPU time it
 *     stands for in ns.  Consecutive samples of the same stack are one
 *     sample with the weights added: speedscope draws them alike, and long
 *     loops cost one stack instead of thousands.
 *   - With --trace, one "evented" profile per thread that made traced
 *     calls, named "comm pid/tid: traced calls": an open event at each
 *     call's entry and a close event at its exit, at their times in ns from
 *     the start of the run, so a traced run shows as a timeline.  Events
 *     nest as a stack must: an exit closes the calls opened after its own
 *     entry first (their exits were lost), an exit without an entry is left
 *     out, and the calls still open at the end close at the thread's last
 *     event.
 *   - Frames (shared.frames) are functions: the display name, the source
 *     file and line of the definition when known, else the image's path.
 *   - activeProfileIndex opens the thread with the most samples.
 * Keys come in the order "$schema" (so `collector dump` knows the file by
 * its first bytes), name, exporter, activeProfileIndex, profiles, shared:
 * frames are named as stacks use them, so they are written last.
 */
#include "formats/format.h"
#include "formats/frames.h"
#include "formats/speedscope/speedscope.h"
#include "formats/speedscope/speedscope_reader.h"
#include "formats/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SPEEDSCOPE_FILE "speedscope.json"

struct writer {
	const struct model *m;
	struct frame_table frames;
	FILE *fp;
	uint32_t *stack;          /* frame_table_stack's output */
	size_t stack_cap;
	bool first_profile;
	int err;
};

/* Indices of m's events (samples or trace events) grouped by thread, each
 * group in time order: a counting sort. */
struct by_thread {
	uint32_t *index;
	size_t *start;            /* group t is index[start[t] .. start[t + 1]) */
};

static uint32_t thread_at(const void *items, size_t i, size_t stride, size_t offset)
{
	uint32_t t;

	memcpy(&t, (const char *)items + i * stride + offset, sizeof(t));
	return t;
}

static int group_by_thread(const struct model *m, const void *items, size_t n, size_t stride,
			   size_t offset, struct by_thread *g)
{
	size_t nt = m->threads.len, *fill;

	g->index = malloc((n + 1) * sizeof(*g->index));
	g->start = calloc(nt + 2, sizeof(*g->start));
	fill = calloc(nt + 1, sizeof(*fill));
	if (!g->index || !g->start || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t t = thread_at(items, i, stride, offset);

		g->start[(t < nt ? t : nt) + 1]++;
	}
	for (size_t t = 0; t <= nt; t++)
		g->start[t + 1] += g->start[t];
	for (size_t i = 0; i < n; i++) {
		uint32_t t = thread_at(items, i, stride, offset);

		t = t < nt ? t : (uint32_t)nt;
		g->index[g->start[t] + fill[t]++] = (uint32_t)i;
	}
	free(fill);
	return 0;
}

static void free_groups(struct by_thread *g)
{
	free(g->index);
	free(g->start);
}

static uint64_t rel_time(const struct model *m, uint64_t t)
{
	return t > m->run.start_ns ? t - m->run.start_ns : 0;
}

static void put_profile_name(struct writer *w, uint32_t thread, const char *suffix)
{
	const struct model *m = w->m;
	const struct model_thread *th = &m->threads.items[thread];
	const struct model_process *p = th->process < m->processes.len ?
					&m->processes.items[th->process] : NULL;
	char name[128];

	snprintf(name, sizeof(name), "%s %d/%d%s", *th->comm ? th->comm : p ? p->comm : "?",
		 p ? (int)p->pid : 0, (int)th->tid, suffix);
	fputs(w->first_profile ? "\n" : ",\n", w->fp);
	w->first_profile = false;
	fputs("{\"type\":", w->fp);
	fputs(*suffix ? "\"evented\"" : "\"sampled\"", w->fp);
	fputs(",\"name\":", w->fp);
	json_put_string(w->fp, name);
	/* evented profiles (traced calls) are in ns; a sampled one in its
	 * event's unit, "none" for a count */
	fputs(*suffix || model_event(w->m, 0)->clock ? ",\"unit\":\"nanoseconds\""
						    : ",\"unit\":\"none\"", w->fp);
}

/* One thread's samples, runs of one stack merged. */
static void put_sampled(struct writer *w, uint32_t thread, const uint32_t *idx, size_t n)
{
	const struct model *m = w->m;
	const struct model_sample *first = &m->samples.items[idx[0]];
	const struct model_sample *last = &m->samples.items[idx[n - 1]];
	uint64_t start = rel_time(m, first->time_ns);
	uint64_t w0 = first->weight ? first->weight : m->run.period_ns;
	FILE *fp = w->fp;

	put_profile_name(w, thread, "");
	fputs(",\"startValue\":", fp);
	json_put_uint(fp, start > w0 ? start - w0 : 0);
	fputs(",\"endValue\":", fp);
	json_put_uint(fp, rel_time(m, last->time_ns));
	fputs(",\n\"samples\":[", fp);
	for (size_t i = 0; i < n && !w->err;) {
		uint32_t stack = m->samples.items[idx[i]].stack;
		long depth;

		while (++i < n && m->samples.items[idx[i]].stack == stack)
			;
		depth = frame_table_stack(&w->frames, stack, w->stack, w->stack_cap);
		if (depth < 0) {
			w->err = (int)depth;
			break;
		}
		fputc_unlocked('[', fp); /* the writer's own FILE (formats/text.c) */
		for (long k = 0; k < depth; k++) {
			if (k)
				fputc_unlocked(',', fp);
			json_put_uint(fp, w->stack[k]);
		}
		fputs(i < n ? "],\n" : "]", fp);
	}
	fputs("],\n\"weights\":[", fp);
	for (size_t i = 0; i < n;) {
		uint32_t stack = m->samples.items[idx[i]].stack;
		uint64_t weight = 0;

		for (; i < n && m->samples.items[idx[i]].stack == stack; i++) {
			uint64_t wi = m->samples.items[idx[i]].weight;

			weight += wi ? wi : m->run.period_ns;
		}
		json_put_uint(fp, weight);
		if (i < n)
			fputc_unlocked(',', fp);
	}
	fputs("]}", fp);
}

static void put_event(struct writer *w, bool open, uint32_t frame, uint64_t at, bool *first)
{
	fputs(*first ? "\n{\"type\":\"" : ",\n{\"type\":\"", w->fp);
	*first = false;
	fputs(open ? "O\",\"frame\":" : "C\",\"frame\":", w->fp);
	json_put_uint(w->fp, frame);
	fputs(",\"at\":", w->fp);
	json_put_uint(w->fp, at);
	fputc('}', w->fp);
}

/* The frame of traced function `func`, or -1 when it has none. */
static long traced_frame(struct writer *w, uint32_t func)
{
	const struct model *m = w->m;

	if (func >= m->traced.len || m->traced.items[func].function >= m->functions.len)
		return -1;
	return frame_table_function(&w->frames, m->traced.items[func].function);
}

/* One thread's traced calls as properly nested open/close events. */
static void put_evented(struct writer *w, uint32_t thread, const uint32_t *idx, size_t n)
{
	const struct model *m = w->m;
	MODEL_VEC(uint32_t) open = { 0 };   /* traced function ids of open calls */
	uint64_t last_at = rel_time(m, m->trace.items[idx[n - 1]].time_ns);
	bool first = true;

	put_profile_name(w, thread, ": traced calls");
	fputs(",\"startValue\":", w->fp);
	json_put_uint(w->fp, rel_time(m, m->trace.items[idx[0]].time_ns));
	fputs(",\"endValue\":", w->fp);
	json_put_uint(w->fp, last_at);
	fputs(",\"events\":[", w->fp);
	for (size_t i = 0; i < n && !w->err; i++) {
		const struct model_trace_event *e = &m->trace.items[idx[i]];
		uint64_t at = rel_time(m, e->time_ns);
		long frame = traced_frame(w, e->func);
		size_t depth;

		if (frame < -1) {
			w->err = (int)frame;
			break;
		}
		if (frame < 0)
			continue;
		if (e->kind == MODEL_TRACE_ENTRY) {
			*MODEL_VEC_PUSH(open) = e->func;
			put_event(w, true, (uint32_t)frame, at, &first);
			continue;
		}
		/* an exit: the innermost open call of the function, if any */
		for (depth = open.len; depth > 0 && open.items[depth - 1] != e->func; depth--)
			;
		if (!depth)
			continue;
		while (open.len >= depth)
			put_event(w, false, (uint32_t)traced_frame(w, open.items[--open.len]), at,
				  &first);
	}
	while (open.len)
		put_event(w, false, (uint32_t)traced_frame(w, open.items[--open.len]), last_at,
			  &first);
	fputs("]}", w->fp);
	free(open.items);
}

/* The thread with the most samples: the profile speedscope opens first. */
static uint32_t busiest_profile(const struct model *m, const struct by_thread *s,
				const struct by_thread *t)
{
	size_t best = 0, index = 0, best_index = 0;

	for (size_t th = 0; th < m->threads.len; th++) {
		size_t ns = s->start[th + 1] - s->start[th];

		if (ns > best) {
			best = ns;
			best_index = index;
		}
		index += (ns > 0) + (t->start[th + 1] > t->start[th]);
	}
	return (uint32_t)best_index;
}

static void put_frames(struct writer *w)
{
	const struct model *m = w->m;

	fputs("],\n\"shared\":{\"frames\":[", w->fp);
	for (size_t i = 0; i < w->frames.frames.len; i++) {
		const struct frame *f = &w->frames.frames.items[i];
		const struct model_function *fn = f->function < m->functions.len ?
						  &m->functions.items[f->function] : NULL;

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", w->fp);
		json_put_string(w->fp, w->frames.names.items[f->name].text);
		fputs(",\"file\":", w->fp);
		if (fn && fn->file < m->files.len) {
			json_put_string(w->fp, m->files.items[fn->file].path);
			if (fn->line) {
				fputs(",\"line\":", w->fp);
				json_put_uint(w->fp, fn->line);
			}
		} else {
			json_put_string(w->fp, f->image < m->images.len ?
					       m->images.items[f->image].path : "?");
		}
		fputc('}', w->fp);
	}
	fputs("]}}\n", w->fp);
}

static void put_file(struct writer *w, const struct by_thread *s, const struct by_thread *t)
{
	const struct model *m = w->m;
	char name[300];

	snprintf(name, sizeof(name), "collector: %s",
		 m->run.command_line ? m->run.command_line : m->run.system_wide ? "all CPUs" : "");
	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\n\"name\":", w->fp);
	json_put_string(w->fp, name);
	fputs(",\n\"exporter\":\"collector " COLLECTOR_VERSION "\"", w->fp);
	if (m->samples.len || m->trace.len) {
		fputs(",\n\"activeProfileIndex\":", w->fp);
		json_put_uint(w->fp, busiest_profile(m, s, t));
	}
	fputs(",\n\"profiles\":[", w->fp);
	for (size_t th = 0; th < m->threads.len && !w->err; th++) {
		size_t ns = s->start[th + 1] - s->start[th], ne = t->start[th + 1] - t->start[th];

		if (ns)
			put_sampled(w, (uint32_t)th, s->index + s->start[th], ns);
		if (ne)
			put_evented(w, (uint32_t)th, t->index + t->start[th], ne);
	}
	put_frames(w);
}

int speedscope_write(const struct model *m, const struct export_options *opts)
{
	struct writer w = { .m = m, .first_profile = true };
	struct by_thread samples = { 0 }, events = { 0 };
	struct outfile f;
	int err;

	w.stack_cap = frame_table_max_depth(m) + 1;
	w.stack = malloc(w.stack_cap * sizeof(*w.stack));
	err = w.stack ? frame_table_init(&w.frames, m) : -ENOMEM;
	if (!err)
		err = group_by_thread(m, m->samples.items, m->samples.len,
				      sizeof(struct model_sample),
				      offsetof(struct model_sample, thread), &samples);
	if (!err)
		err = group_by_thread(m, m->trace.items, m->trace.len,
				      sizeof(struct model_trace_event),
				      offsetof(struct model_trace_event, thread), &events);
	if (!err)
		err = outfile_open(&f, opts, SPEEDSCOPE_FILE);
	if (!err) {
		w.fp = f.fp;
		put_file(&w, &samples, &events);
		err = w.err;
		if (err)
			outfile_abort(&f);
		else
			err = outfile_commit(&f);
	}
	if (err == -ENOMEM)
		fprintf(stderr, "collector: %s/%s: %s\n", opts->dir, SPEEDSCOPE_FILE, strerror(-err));
	free_groups(&samples);
	free_groups(&events);
	frame_table_free(&w.frames);
	free(w.stack);
	return err;
}

/* ---- collector dump ---------------------------------------------------- */

/* A JSON object whose first key is speedscope's "$schema". */
bool speedscope_recognize(const char *path, const unsigned char *head, size_t n)
{
	(void)path;
	return n > 0 && memmem(head, n, SPEEDSCOPE_SCHEMA, strlen(SPEEDSCOPE_SCHEMA)) != NULL &&
	       memmem(head, n, "\"$schema\"", 9) != NULL;
}

int speedscope_dump(const char *path, FILE *out, bool check)
{
	FORMAT_DUMP(struct speedscope_file, speedscope_read_file, speedscope_print,
		    speedscope_file_free, path, out, check);
}

const struct format speedscope_format = {
	.name = "speedscope",
	.needs = FORMAT_NEEDS_SAMPLES | FORMAT_NEEDS_TRACE_EVENTS,
	.samples_in_time_order = true, /* its "Time Order" view: samples in time order */
	.write = speedscope_write,
	.recognize = speedscope_recognize,
	.dump = speedscope_dump,
	.one_event = true,
};
