// SPDX-License-Identifier: GPL-2.0
/*
 * The summary's Java part (jvm_report.h): how the walks of the JVMs fared,
 * a JVM the walk does not know, and the Java methods by self samples (the
 * innermost Java method of a sample, inlined or not) and total samples.
 */
#include "runtimes/jvm/jvm_report.h"

#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"

#define TOP_JAVA 20
/* Functions of a stack looked at for their totals. */
#define MAX_SEEN 256

/* Per function (key: its id, or 1 << 32 | the location of a frame not
 * named), the samples it is the innermost Java method of (self) and those
 * it is in (total). */
struct java_entry {
	uint64_t key;
	uint64_t self;
	uint64_t total;
};

struct java_counts {
	MODEL_VEC(struct java_entry) entries;
	struct idmap index;
	uint64_t with_java, samples;
};

static bool is_java(const struct model *m, uint32_t loc)
{
	const struct model_image *img = &m->images.items[m->locations.items[loc].image];

	return img->kind == MODEL_IMAGE_RUNTIME && img->path && !strcmp(img->path, jvm_runtime.image);
}

static struct java_entry *entry_of(struct java_counts *c, uint64_t key)
{
	uint32_t e = idmap_get(&c->index, key);

	if (e == UINT32_MAX) {
		struct java_entry *ne = MODEL_VEC_PUSH(c->entries);

		ne->key = key;
		e = (uint32_t)(c->entries.len - 1);
		idmap_put(&c->index, key, e);
	}
	return &c->entries.items[e];
}

/* key counted in the stack's total once */
static void add_total(struct java_counts *c, uint64_t key, uint64_t n, uint64_t *seen,
		      size_t *n_seen)
{
	for (size_t k = 0; k < *n_seen; k++)
		if (seen[k] == key)
			return;
	entry_of(c, key)->total += n;
	if (*n_seen < MAX_SEEN)
		seen[(*n_seen)++] = key;
}

/* One stack's Java frames, n samples: each location's functions, its
 * innermost inlined one first. */
static void count_stack(struct java_counts *c, const struct model *m, const struct model_stack *s,
			uint64_t n)
{
	const uint32_t *frames = model_stack_frames(m, s);
	uint64_t seen[MAX_SEEN];
	size_t n_seen = 0;
	bool inner = true;

	for (uint32_t f = 0; f < s->n_frames; f++) {
		const struct model_location *l = &m->locations.items[frames[f]];
		uint64_t key = l->function != MODEL_NONE ? l->function : (1ULL << 32 | frames[f]);

		if (!is_java(m, frames[f]))
			continue;
		for (uint32_t k = l->n_inlines; k > 0; k--) {
			uint64_t ik = m->inlines.items[l->inlines + k - 1].function;

			if (inner) {
				entry_of(c, ik)->self += n;
				inner = false;
			}
			add_total(c, ik, n, seen, &n_seen);
		}
		if (inner) {
			entry_of(c, key)->self += n;
			inner = false;
		}
		add_total(c, key, n, seen, &n_seen);
	}
	if (!inner)
		c->with_java += n;
}

static int count(const struct model *m, struct java_counts *c)
{
	uint64_t *per_stack = calloc(m->stacks.len ? m->stacks.len : 1, sizeof(*per_stack));

	memset(c, 0, sizeof(*c));
	if (!per_stack)
		return -1;
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *sm = &m->samples.items[i];

		if (model_event_samples(model_event(m, sm->event))) {
			per_stack[sm->stack]++;
			c->samples++;
		}
	}
	for (size_t i = 0; i < m->stacks.len; i++)
		if (per_stack[i])
			count_stack(c, m, &m->stacks.items[i], per_stack[i]);
	free(per_stack);
	return 0;
}

static void counts_free(struct java_counts *c)
{
	free(c->entries.items);
	idmap_free(&c->index);
}

static void print_releases(FILE *out, const struct jvm_procs_stats *st)
{
	if (!st || !st->n_releases)
		return;
	fprintf(out, " (JDK ");
	for (uint32_t i = 0; i < st->n_releases; i++)
		fprintf(out, "%s%s", i ? ", " : "", st->releases[i]);
	fprintf(out, ")");
}

void jvm_report_walks(FILE *out, const struct model *m, const struct jvm_procs_stats *st)
{
	uint64_t walked = model_named_stat_value(m, JVM_STAT_WALKED);
	uint64_t unsupported = model_named_stat_value(m, JVM_STAT_UNSUPPORTED);
	uint64_t no_blob = model_named_stat_value(m, JVM_STAT_NO_BLOB);
	uint64_t bad = model_named_stat_value(m, JVM_STAT_BAD_FRAME);
	uint64_t limit = model_named_stat_value(m, JVM_STAT_LIMIT);
	struct java_counts c;

	if (walked) {
		if (count(m, &c))
			return;
		fprintf(out, "  java            %llu JVM%s walked", (unsigned long long)walked,
			walked == 1 ? "" : "s");
		print_releases(out, st);
		fprintf(out, "; %llu of %llu samples (%.1f%%) with Java frames; %llu walks, %llu "
			"stopped early (%llu no code blob at the pc, %llu a bad frame or a read "
			"failed, %llu at the frame limit); %llu frames unnamed (code freed or "
			"reused before it was named)\n",
			(unsigned long long)c.with_java, (unsigned long long)c.samples,
			c.samples ? 100.0 * c.with_java / c.samples : 0.0,
			(unsigned long long)model_named_stat_value(m, JVM_STAT_WALKS),
			(unsigned long long)(no_blob + bad + limit), (unsigned long long)no_blob,
			(unsigned long long)bad, (unsigned long long)limit,
			(unsigned long long)model_named_stat_value(m, JVM_STAT_FRAMES_UNNAMED));
		counts_free(&c);
	}
	if (unsupported)
		fprintf(out, "  java            %llu JVM%s the walk does not know%s%s: %s JIT code "
			"is named by perf map, %s interpreted frames stay native\n",
			(unsigned long long)unsupported, unsupported == 1 ? "" : "s",
			st && st->last_reason[0] ? (unsupported == 1 ? ": " : ", the last: ") : "",
			st ? st->last_reason : "", unsupported == 1 ? "its" : "their",
			unsupported == 1 ? "its" : "their");
}

/* The name of an entry: its function, or "[unknown]" and the frame's key. */
static void entry_name(const struct model *m, uint64_t key, char *buf, size_t size)
{
	if (key >> 32)
		snprintf(buf, size, "[unknown] [java]+0x%llx",
			 (unsigned long long)m->locations.items[(uint32_t)key].addr);
	else
		snprintf(buf, size, "%s", m->functions.items[key].name);
}

static int by_self(const void *a, const void *b)
{
	const struct java_entry *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

void jvm_report_tables(FILE *out, const struct model *m)
{
	struct java_counts c;
	char name[256];

	if (!model_named_stat_value(m, JVM_STAT_WALKED) || count(m, &c))
		return;
	if (c.entries.len && c.samples) {
		qsort(c.entries.items, c.entries.len, sizeof(*c.entries.items), by_self);
		fprintf(out, "\nTop Java methods (self: the innermost Java method, inlined or "
			"not):\n");
		fprintf(out, "  %6s %10s %7s  %-50s %s\n", "self%", "samples", "total%", "method",
			"file:line");
		for (size_t i = 0; i < c.entries.len && i < TOP_JAVA; i++) {
			const struct java_entry *e = &c.entries.items[i];
			const struct model_function *fn = e->key >> 32 ? NULL
								      : &m->functions.items[e->key];
			const char *file = fn && fn->file != MODEL_NONE ? m->files.items[fn->file].path
								       : "?";

			entry_name(m, e->key, name, sizeof(name));
			fprintf(out, "  %5.1f%% %10llu %6.1f%%  %-50s %s:%u\n",
				100.0 * e->self / c.samples, (unsigned long long)e->self,
				100.0 * e->total / c.samples, name, file, fn ? fn->line : 0);
		}
	}
	counts_free(&c);
}
