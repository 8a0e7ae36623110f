// SPDX-License-Identifier: GPL-2.0
/* Frames for the stack-shaped formats: naming and stack expansion. */
#include "formats/frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t frame_file_offset(const struct model *m, uint32_t image, uint64_t addr)
{
	for (size_t p = 0; p < m->processes.len; p++) {
		const struct model_process *proc = &m->processes.items[p];

		for (size_t i = 0; i < proc->maps.len; i++) {
			const struct model_mapping *mp = &proc->maps.items[i];
			uint64_t rel_start = mp->start - mp->bias;

			if (mp->image == image && mp->exec && addr >= rel_start &&
			    addr < mp->end - mp->bias)
				return mp->pgoff + (addr - rel_start);
		}
	}
	return 0;
}

const char *frame_basename(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

int frame_table_init(struct frame_table *t, const struct model *m)
{
	memset(t, 0, sizeof(*t));
	t->m = m;
	t->loc_first = malloc((m->locations.len + 1) * sizeof(*t->loc_first));
	t->loc_count = calloc(m->locations.len + 1, sizeof(*t->loc_count));
	t->function_frame = malloc((m->functions.len + 1) * sizeof(*t->function_frame));
	t->unknown_frame = malloc((m->images.len + 1) * sizeof(*t->unknown_frame));
	if (!t->loc_first || !t->loc_count || !t->function_frame || !t->unknown_frame) {
		frame_table_free(t);
		return -ENOMEM;
	}
	memset(t->loc_first, 0xff, (m->locations.len + 1) * sizeof(*t->loc_first));
	memset(t->function_frame, 0xff, (m->functions.len + 1) * sizeof(*t->function_frame));
	memset(t->unknown_frame, 0xff, (m->images.len + 1) * sizeof(*t->unknown_frame));
	return 0;
}

void frame_table_free(struct frame_table *t)
{
	free(t->frames.items);
	free(t->names.items);
	free(t->expansion.items);
	free(t->loc_first);
	free(t->loc_count);
	free(t->function_frame);
	free(t->unknown_frame);
	for (size_t i = 0; i < t->n_owned; i++)
		free(t->owned[i]);
	free(t->owned);
	frame_name_index_free(&t->name_index);
	memset(t, 0, sizeof(*t));
}

/* FNV-1a over the text and the kind, then mixed. */
static uint64_t name_hash(const char *s, uint8_t kind)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ kind;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return hash_mix64(h);
}

long frame_table_name(struct frame_table *t, const char *text, uint8_t kind)
{
	struct frame_name_key k = { text, kind, name_hash(text, kind), t->names.items };
	struct frame_name_entry *e = frame_name_index_find(&t->name_index, &k);
	struct frame_name *n;

	if (e)
		return e->id;
	e = frame_name_index_insert_hashed(&t->name_index, k.hash);
	if (!e)
		return -ENOMEM;
	n = MODEL_VEC_PUSH(t->names);
	n->text = text;
	n->kind = kind;
	e->hash = k.hash;
	e->id = (uint32_t)(t->names.len - 1);
	return e->id;
}

static uint8_t image_kind(const struct model *m, uint32_t image)
{
	const char *path;

	if (image >= m->images.len)
		return 0;
	switch (m->images.items[image].kind) {
	case MODEL_IMAGE_KERNEL:
		return FRAME_KERNEL;
	case MODEL_IMAGE_RUNTIME:
		/* a Java method is "_[j]" in folded stacks whether the walk
		 * found it interpreted or compiled, as async-profiler's
		 * annotated output marks it, and as a JIT frame named from a
		 * perf map is: flamegraph.pl --color=java colours it as Java
		 * (without, as C) */
		return FRAME_RUNTIME | (m->images.items[image].jit_methods ? FRAME_JIT : 0);
	case MODEL_IMAGE_ANON:
		/* anonymous executable memory ("[jit]", "[anon:NAME]") is
		 * generated code; "[vdso]" is compiled, "[unknown]" is outside
		 * every mapping */
		path = m->images.items[image].path;
		return path[0] != '[' || !strcmp(path, "[jit]") || !strncmp(path, "[anon", 5)
		       ? FRAME_JIT : 0;
	default:
		return 0;
	}
}

static long new_frame(struct frame_table *t, uint32_t function, uint32_t image,
		      const char *text, uint8_t kind)
{
	long name = frame_table_name(t, text, kind);
	struct frame *f;

	if (name < 0)
		return name;
	f = MODEL_VEC_PUSH(t->frames);
	f->function = function;
	f->image = image;
	f->name = (uint32_t)name;
	f->kind = kind;
	return (long)(t->frames.len - 1);
}

long frame_table_function(struct frame_table *t, uint32_t function)
{
	const struct model *m = t->m;
	const char *display, *linkage;
	long id;

	if (function >= m->functions.len)
		return -EINVAL;
	if (t->function_frame[function] != MODEL_NONE)
		return t->function_frame[function];
	frame_function_names(m, function, &display, &linkage);
	id = new_frame(t, function, m->functions.items[function].image,
		       display && *display ? display : "[unnamed]",
		       image_kind(m, m->functions.items[function].image));
	if (id >= 0)
		t->function_frame[function] = (uint32_t)id;
	return id;
}

static long unknown_frame(struct frame_table *t, uint32_t image)
{
	const struct model *m = t->m;
	const char *base;
	char *text, **owned;
	long id;

	if (image >= m->images.len)
		image = (uint32_t)m->images.len; /* the slot past the end: no image */
	if (t->unknown_frame[image] != MODEL_NONE)
		return t->unknown_frame[image];
	base = image < m->images.len ? frame_basename(m->images.items[image].path) : "unknown";
	if (*base == '[') /* "[kernel.kallsyms]", "[vdso]" are bracketed already */
		text = strdup(base);
	else if ((text = malloc(strlen(base) + 3)))
		sprintf(text, "[%s]", base);
	owned = realloc(t->owned, (t->n_owned + 1) * sizeof(*owned));
	if (!text || !owned) {
		free(text);
		if (owned)
			t->owned = owned;
		return -ENOMEM;
	}
	t->owned = owned;
	t->owned[t->n_owned++] = text;
	id = new_frame(t, MODEL_NONE, image, text, image_kind(m, image) | FRAME_UNKNOWN);
	if (id >= 0)
		t->unknown_frame[image] = (uint32_t)id;
	return id;
}

/* The frames of a location, root first: its out-of-line function, then
 * the functions inlined into it, outermost first. */
static int expand_location(struct frame_table *t, uint32_t loc)
{
	const struct model *m = t->m;
	const struct model_location *l = &m->locations.items[loc];
	size_t first = t->expansion.len;
	long id;

	if (l->function == MODEL_NONE || l->function >= m->functions.len) {
		id = unknown_frame(t, l->image);
		if (id < 0)
			return (int)id;
		*MODEL_VEC_PUSH(t->expansion) = (uint32_t)id;
	} else {
		const struct model_inline *in = model_location_inlines(m, l);
		uint32_t n = l->n_inlines < 254 ? l->n_inlines : 254;

		id = frame_table_function(t, l->function);
		if (id < 0)
			return (int)id;
		*MODEL_VEC_PUSH(t->expansion) = (uint32_t)id;
		for (uint32_t i = 0; i < n; i++) {
			id = frame_table_function(t, in[i].function);
			if (id < 0)
				return (int)id;
			*MODEL_VEC_PUSH(t->expansion) = (uint32_t)id;
		}
	}
	t->loc_first[loc] = (uint32_t)first;
	t->loc_count[loc] = (uint8_t)(t->expansion.len - first);
	return 0;
}

long frame_table_stack(struct frame_table *t, uint32_t stack, uint32_t *out, size_t cap)
{
	const struct model *m = t->m;
	const struct model_stack *s;
	const uint32_t *locs;
	size_t n = 0;

	if (stack >= m->stacks.len)
		return 0;
	s = &m->stacks.items[stack];
	locs = model_stack_frames(m, s);
	/* frames are numbered root first, as a reader of the list expects */
	for (uint32_t i = s->n_frames; i-- > 0;) {
		if (locs[i] < m->locations.len && t->loc_first[locs[i]] == MODEL_NONE) {
			int err = expand_location(t, locs[i]);

			if (err)
				return err;
		}
	}
	/* leaf first in the model: fill out[] from its end, then move down */
	for (uint32_t i = 0; i < s->n_frames && n < cap; i++) {
		uint32_t loc = locs[i];
		const uint32_t *ids;

		if (loc >= m->locations.len)
			continue;
		ids = t->expansion.items + t->loc_first[loc];
		for (uint32_t k = t->loc_count[loc]; k-- > 0 && n < cap;)
			out[cap - 1 - n++] = ids[k];
	}
	memmove(out, out + cap - n, n * sizeof(*out));
	return (long)n;
}

size_t frame_table_max_depth(const struct model *m)
{
	size_t max = 0;

	for (size_t i = 0; i < m->stacks.len; i++) {
		const struct model_stack *s = &m->stacks.items[i];
		const uint32_t *locs = model_stack_frames(m, s);
		size_t d = 0;

		for (uint32_t k = 0; k < s->n_frames; k++)
			if (locs[k] < m->locations.len)
				d += 1 + m->locations.items[locs[k]].n_inlines;
		if (d > max)
			max = d;
	}
	return max;
}

void frame_put_folded_name(FILE *fp, const struct frame_name *n)
{
	for (const char *c = n->text; *c; c++)
		fputc(*c == ';' ? ':' : (*c == '\n' || *c == '\r') ? ' ' : *c, fp);
	if (n->kind & FRAME_KERNEL)
		fputs("_[k]", fp);
	else if (n->kind & FRAME_JIT)
		fputs("_[j]", fp);
}
