/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Frames for the stack-shaped formats (pprof, folded stacks, flame graph,
 * speedscope): what a function is called, and a model stack turned into a
 * list of frames root first, with each inlined call a frame of its own.
 *
 * A frame is a function (resolved code), or "unknown code of an image"
 * (all of an image's unresolved addresses are one frame, as the FlameGraph
 * tools' stackcollapse-perf makes them "[image]").  Frames are numbered
 * densely as they are first met; frames whose printed names are equal
 * (static functions of one name in two images) share a name id, so that
 * the name-keyed formats (folded, flame graph) merge them as the
 * FlameGraph tools do, while speedscope keeps them apart.
 *
 * Names: frame_function_names() is the one place that says what a model
 * function is called (display) and what the linker calls it (linkage).
 */
#ifndef COLLECTOR_FORMATS_FRAMES_H
#define COLLECTOR_FORMATS_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/hashtab.h"
#include "lib/idmap.h"
#include "model/model.h"

/* The two names of a model function: the one to show (demangled) and the
 * symbol as the ELF file spells it (the same when nothing was demangled). */
static inline void frame_function_names(const struct model *m, uint32_t function,
					const char **display, const char **linkage)
{
	const struct model_function *f = &m->functions.items[function];

	*display = f->name;
	*linkage = f->linkage_name ? f->linkage_name : f->name;
}

/* Line k of location l, as pprof and OTLP list a location's lines: k = 0
 * the innermost inlined function, k = l->n_inlines the out-of-line one,
 * each with where that function is at the address (the call site of the
 * next inner one).  For a location with a function only. */
static inline void frame_location_line(const struct model *m, const struct model_location *l,
				       uint32_t k, uint32_t *function, uint32_t *line)
{
	const struct model_inline *in = model_location_inlines(m, l);
	uint32_t n = l->n_inlines;

	*function = k < n ? in[n - 1 - k].function : l->function;
	*line = k == 0 ? l->line : in[n - k].call_line;
}

/* The file offset of file-relative address addr of an image, from a
 * process's executable mapping of it; 0 when none says. */
uint64_t frame_file_offset(const struct model *m, uint32_t image, uint64_t addr);

enum frame_kind_bits {
	FRAME_KERNEL = 1 << 0,  /* kernel code: "_[k]" in folded names */
	FRAME_JIT = 1 << 1,     /* anonymous code (JIT, [vdso]), or a method of a
				 * runtime that compiles its methods (with
				 * FRAME_RUNTIME): "_[j]" */
	FRAME_UNKNOWN = 1 << 2, /* no symbol covers the address */
	FRAME_PROCESS = 1 << 3, /* not code: a process name as the root frame */
	FRAME_RUNTIME = 1 << 4, /* a language runtime's frame ("[python]" image) */
};

struct frame {
	uint32_t function;      /* model function, or MODEL_NONE when unknown */
	uint32_t image;
	uint32_t name;          /* name id: index in frame_table.names */
	uint8_t kind;           /* enum frame_kind_bits */
};

struct frame_name {
	const char *text;       /* a function's display name or "[basename]" */
	uint8_t kind;           /* the kind of the first frame with this name */
};

struct frame_name_entry {
	uint64_t hash;
	uint32_t id;
};

struct frame_name_key {
	const char *text;
	uint8_t kind;
	uint64_t hash;
	const struct frame_name *names;
};

static inline uint64_t frame_name_entry_hash(const struct frame_name_entry *e)
{
	return e->hash;
}

static inline uint64_t frame_name_key_hash(const struct frame_name_key *k)
{
	return k->hash;
}

static inline bool frame_name_match(const struct frame_name_entry *e,
				    const struct frame_name_key *k)
{
	return e->hash == k->hash && k->names[e->id].kind == k->kind &&
	       strcmp(k->names[e->id].text, k->text) == 0;
}

HASHTAB_DEFINE(frame_name_index, struct frame_name_entry, struct frame_name_key,
	       frame_name_entry_hash, frame_name_key_hash, frame_name_match)

struct frame_table {
	const struct model *m;
	MODEL_VEC(struct frame) frames;
	MODEL_VEC(struct frame_name) names;
	MODEL_VEC(uint32_t) expansion;  /* frame ids of every location, root first */
	uint32_t *loc_first;            /* per location: index in expansion, or NONE */
	uint8_t *loc_count;             /* per location: frames it expands to */
	uint32_t *function_frame;       /* per function: frame id, or NONE */
	uint32_t *unknown_frame;        /* per image: frame id of its unknown code */
	char **owned;                   /* "[basename]" strings made here */
	size_t n_owned;
	struct frame_name_index name_index;
};

/* Returns 0 or -ENOMEM.  Frames are made lazily, as stacks are expanded. */
int frame_table_init(struct frame_table *t, const struct model *m);
void frame_table_free(struct frame_table *t);

/* The frames of model stack `stack`, root first (user frames from the
 * thread's start down, then kernel frames down to the sampled kernel
 * instruction), into out[0..cap).  Returns how many there are (at most
 * cap; a longer stack loses its root-most frames, never the leaf), or
 * -ENOMEM.  A sample without a stack (MODEL_NONE) has 0 frames. */
long frame_table_stack(struct frame_table *t, uint32_t stack, uint32_t *out, size_t cap);

/* The name id of `text` (kept by the caller while the table lives) with
 * kind bits `kind`, added when new: a process name as a root frame, say.
 * Returns the id or -ENOMEM. */
long frame_table_name(struct frame_table *t, const char *text, uint8_t kind);

/* The frame id of model function `function` (made when new), or a
 * negative errno. */
long frame_table_function(struct frame_table *t, uint32_t function);

/* The most frames a stack can expand to (its locations and their inlined
 * calls), for sizing the array frame_table_stack fills. */
size_t frame_table_max_depth(const struct model *m);

/*
 * Dense ids for 64-bit keys (samples grouped by stack and thread, tree
 * nodes by parent and name): the id stored under key, or, when the key is
 * new, `next` (the caller then adds its entry) with *fresh set.  Returns
 * the id or -ENOMEM.
 */
static inline long frames_group_id(struct idmap *index, uint64_t key, uint32_t next, bool *fresh)
{
	struct idmap_entry *e = idmap_upsert(index, &key, fresh);

	if (!e)
		return -ENOMEM;
	if (*fresh) {
		e->key = key;
		e->val = next;
	}
	return e->val;
}

/* Writes the frame's name with its kind's suffix ("_[k]", "_[j]") as the
 * FlameGraph tools mark frames, ';' and line breaks replaced (they would
 * split a folded line). */
void frame_put_folded_name(FILE *fp, const struct frame_name *n);

/* The base name of a path ("/usr/lib/libc.so.6" -> "libc.so.6"). */
const char *frame_basename(const char *path);

#endif /* COLLECTOR_FORMATS_FRAMES_H */
