// SPDX-License-Identifier: GPL-2.0
/*
 * The summary's Python part (python_report.h): how the walks of the
 * CPython processes fared, a version met that has no layouts, and the
 * Python functions by self samples (those whose innermost Python frame is
 * the function, whatever interpreter code runs under it) and total
 * samples.
 */
#include "runtimes/python/python_report.h"

#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"

#define TOP_PYTHON 20
/* Frames of a stack looked at for its functions' totals. */
#define MAX_FRAMES 256

/* Per function (key: its id, or 1 << 32 | the location of a frame not
 * named), the samples it is the innermost Python frame of (self) and
 * those it is in (total). */
struct py_entry {
	uint64_t key;
	uint64_t self;
	uint64_t total;
};

/* The frames of "[python]": the image python_runtime makes. */
static bool is_python(const struct model *m, uint32_t loc)
{
	const struct model_image *img = &m->images.items[m->locations.items[loc].image];

	return img->kind == MODEL_IMAGE_RUNTIME && !strcmp(img->path, python_runtime.image);
}

static int by_self(const void *a, const void *b)
{
	const struct py_entry *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Per Python function: self and total samples of the sampling events;
 * *with_python the samples with any. */
static long python_counts(const struct model *m, struct py_entry **out,
			  uint64_t *with_python, uint64_t *samples)
{
	uint64_t *per_stack = calloc(m->stacks.len ? m->stacks.len : 1, sizeof(*per_stack));
	MODEL_VEC(struct py_entry) entries = { 0 };
	struct idmap index = { 0 };

	*with_python = *samples = 0;
	if (!per_stack)
		return -1;
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *sm = &m->samples.items[i];

		if (model_event_samples(model_event(m, sm->event))) {
			per_stack[sm->stack]++;
			(*samples)++;
		}
	}
	for (size_t i = 0; i < m->stacks.len; i++) {
		const struct model_stack *s = &m->stacks.items[i];
		const uint32_t *frames = model_stack_frames(m, s);
		uint64_t seen[MAX_FRAMES];
		size_t n_seen = 0;
		bool inner = true;

		if (!per_stack[i])
			continue;
		for (uint32_t f = 0; f < s->n_frames; f++) {
			uint32_t loc = frames[f], fn = m->locations.items[loc].function, e;
			uint64_t key = fn != MODEL_NONE ? fn : (1ULL << 32 | loc);
			bool dup = false;

			if (!is_python(m, loc))
				continue;
			e = idmap_get(&index, key);
			if (e == UINT32_MAX) {
				struct py_entry *ne = MODEL_VEC_PUSH(entries);

				ne->key = key;
				e = entries.len - 1;
				idmap_put(&index, key, e);
			}
			if (inner) {
				entries.items[e].self += per_stack[i];
				*with_python += per_stack[i];
				inner = false;
			}
			for (size_t k = 0; k < n_seen; k++)
				dup |= seen[k] == key;
			if (!dup) {
				entries.items[e].total += per_stack[i];
				if (n_seen < MAX_FRAMES)
					seen[n_seen++] = key;
			}
		}
	}
	free(per_stack);
	idmap_free(&index);
	*out = entries.items;
	return (long)entries.len;
}

static void print_walks(FILE *out, const struct model *m, uint64_t with_python, uint64_t samples)
{
	uint64_t walks = model_named_stat_value(m, PYTHON_STAT_WALKS);
	uint64_t no_thread = model_named_stat_value(m, PYTHON_STAT_NO_THREAD);
	uint64_t failed = model_named_stat_value(m, PYTHON_STAT_READ_FAILED);
	uint64_t deep = model_named_stat_value(m, PYTHON_STAT_TOO_DEEP);

	fprintf(out, "  python          %llu interpreters walked; %llu of %llu samples (%.1f%%) "
		"with Python frames; %llu walks, %llu stopped early (%llu no thread state, "
		"%llu a read failed or a broken chain, %llu no room left); %llu frames unnamed (code object "
		"gone before it was read)\n",
		(unsigned long long)model_named_stat_value(m, PYTHON_STAT_INTERPRETERS),
		(unsigned long long)with_python, (unsigned long long)samples,
		samples ? 100.0 * with_python / samples : 0.0, (unsigned long long)walks,
		(unsigned long long)(no_thread + failed + deep), (unsigned long long)no_thread,
		(unsigned long long)failed, (unsigned long long)deep,
		(unsigned long long)model_named_stat_value(m, PYTHON_STAT_FRAMES_UNNAMED));
}

static void print_unsupported(FILE *out, const struct model *m)
{
	uint64_t n = model_named_stat_value(m, PYTHON_STAT_UNSUPPORTED);
	uint64_t v = model_named_stat_value(m, PYTHON_STAT_UNSUPPORTED_VERSION);

	if (!n)
		return;
	if (v)
		fprintf(out, "  python          %llu interpreters of a version without layouts, the "
			"last CPython %u.%u.%u: their frames stay native (3.11 and 3.12 are known "
			"from their headers, 3.13 on from _Py_DebugOffsets)\n",
			(unsigned long long)n, (unsigned)(v >> 24 & 0xff),
			(unsigned)(v >> 16 & 0xff), (unsigned)(v >> 8 & 0xff));
	else
		fprintf(out, "  python          %llu interpreters older than 3.11 (no Py_Version): "
			"their frames stay native\n", (unsigned long long)n);
}

/* The name of an entry: its function, or "[unknown]" and the frame's key. */
static void entry_name(const struct model *m, uint64_t key, char *buf, size_t size)
{
	if (key >> 32)
		snprintf(buf, size, "[unknown] [python]+0x%llx",
			 (unsigned long long)m->locations.items[(uint32_t)key].addr);
	else
		snprintf(buf, size, "%s", m->functions.items[key].name);
}

/* Under the traced functions: what CPython 3.11's probes cannot see. */
static void print_trace_note(FILE *out, const struct model *m)
{
	for (size_t i = 0; i < m->traced.len; i++) {
		const struct model_traced_function *tf = &m->traced.items[i];

		if (tf->image < m->images.len && m->images.items[tf->image].path &&
		    !strcmp(m->images.items[tf->image].path, python_runtime.image)) {
			fprintf(out, "  Python calls: exact counts; CPython 3.11's probes give no entry "
				"for a call the interpreter runs inline (Python calling Python), so "
				"those calls have no time\n");
			return;
		}
	}
}

void python_summary(FILE *out, const struct model *m, enum runtime_summary_part part,
		    const void *rt)
{
	bool tables = part == RUNTIME_SUMMARY_TABLES;
	struct py_entry *e = NULL;
	uint64_t with_python, samples;
	char name[256];
	long n;

	(void)rt;
	if (part == RUNTIME_SUMMARY_TRACE) {
		print_trace_note(out, m);
		return;
	}
	if (!tables)
		print_unsupported(out, m);
	if (!model_named_stat_value(m, PYTHON_STAT_INTERPRETERS))
		return;
	n = python_counts(m, &e, &with_python, &samples);
	if (!tables) {
		print_walks(out, m, with_python, samples);
		free(e);
		return;
	}
	if (n > 0 && samples) {
		qsort(e, n, sizeof(*e), by_self);
		fprintf(out, "\nTop Python functions (self: the innermost Python frame):\n");
		fprintf(out, "  %6s %10s %7s  %-40s %s\n", "self%", "samples", "total%", "function",
			"file:line");
		for (long i = 0; i < n && i < TOP_PYTHON; i++) {
			const struct model_function *fn =
				e[i].key >> 32 ? NULL : &m->functions.items[e[i].key];
			const char *file = fn && fn->file != MODEL_NONE ? m->files.items[fn->file].path
								       : "?";

			entry_name(m, e[i].key, name, sizeof(name));
			fprintf(out, "  %5.1f%% %10llu %6.1f%%  %-40s %s:%u\n", 100.0 * e[i].self / samples,
				(unsigned long long)e[i].self, 100.0 * e[i].total / samples, name, file,
				fn ? fn->line : 0);
		}
	}
	free(e);
}
