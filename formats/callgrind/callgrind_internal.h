/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Callgrind writer: what its parts share (the file's layout and the choices
 * made are described at the top of callgrind.c).
 *
 *   callgrind_aggregate.c  the whole model summed once: samples by (process,
 *                          stack), traced calls by (process, caller, callee)
 *   callgrind_items.c      one process's output lines ("items"): built from
 *                          its stacks and traced calls, placed and sorted
 *   callgrind_text.c       the buffered text writer, name compression, the
 *                          ob=/fl=/fn= blocks and cost lines
 *   callgrind.c            the header, one file per process, the entry point
 *
 * A "group" is what Callgrind calls a function: a model function id, all
 * unsymbolized code of one image, or the samples that have no stack.
 */
#ifndef COLLECTOR_CALLGRIND_INTERNAL_H
#define COLLECTOR_CALLGRIND_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/format.h"
#include "lib/idmap.h"

/* ---- a growable array of fixed-size elements ----------------------------- */

struct vec {
	void *items;
	size_t len, cap, size;
};

/* A new zeroed element at the end; NULL on ENOMEM. */
void *vec_push(struct vec *v);
void vec_free(struct vec *v);

/* ---- function groups ------------------------------------------------------ */

#define GROUP_UNKNOWN_TAG (1ULL << 32)
#define GROUP_NOSTACK (2ULL << 32)

static inline uint64_t group_unknown(uint32_t image)
{
	return GROUP_UNKNOWN_TAG | image;
}

static inline bool group_is_unknown(uint64_t g)
{
	return (g >> 32) == 1;
}

/* The group of a location (GROUP_NOSTACK for none), of a traced function. */
uint64_t location_group(const struct model *m, uint32_t loc);
uint64_t traced_group(const struct model *m, uint32_t tf);
/* Image of a group; UINT32_MAX for the no-stack group. */
uint32_t group_image(const struct model *m, uint64_t g);

/* ---- aggregates of the whole model (callgrind_aggregate.c) ---------------- */

/* Samples of one (process, stack). */
struct stack_agg {
	uint32_t process, stack;
	uint64_t samples;                 /* of every event */
	uint64_t weight[MODEL_MAX_EVENTS]; /* by event, in its unit */
};

/* Traced calls of one process: parent traced function (or MODEL_NONE when
 * no traced call encloses it) -> traced function. */
struct trace_pair {
	uint32_t process, parent, child;
	uint64_t calls, ns;
};

struct trace_self {
	uint32_t process, func;
	uint64_t ns;
};

/* Per process counters for the desc: lines. */
struct proc_info {
	uint64_t samples, truncated;
	uint64_t trace_unmatched; /* exits without their entry, entries without exit */
	bool has_trace_events;
};

struct aggregates {
	struct vec stacks;       /* struct stack_agg, sorted by (process, stack) */
	struct vec pairs;        /* struct trace_pair, sorted by process */
	struct vec selfs;        /* struct trace_self, sorted by process */
	struct proc_info *procs; /* per model process */
};

/* Fills ag (zeroed, with procs allocated): 0 or -ENOMEM. */
int aggregate_samples(const struct model *m, struct aggregates *ag);
int aggregate_trace(const struct model *m, struct aggregates *ag);

/* ---- one process's items (callgrind_items.c) ------------------------------ */

/* Cost columns: Samples (of every event), one per run event (its weight,
 * in its unit; the first: Ns for the default cpu-clock), WallNs at
 * proc_ctx.ev_wall when the run has the wall view (model_has_wall()), then
 * TracedNs at proc_ctx.ev_traced. */
enum { EV_SAMPLES = 0, EV_FIRST_EVENT = 1, N_EV = 3 + MODEL_MAX_EVENTS };

enum item_kind { ITEM_SELF = 0, ITEM_CALL = 1 };

/*
 * One output line: a self cost line, or a calls= line with its cost line.
 * Call sites are locations; a traced call with no sampled edge has no
 * location and sits at the caller's entry address.
 */
struct item {
	uint64_t group;
	uint64_t callee;     /* ITEM_CALL */
	uint32_t loc;        /* MODEL_NONE: at the group's entry */
	uint32_t file;       /* source file of the line, MODEL_NONE = "???" */
	uint32_t rank;       /* 0 for the group's home file, else file + 1 */
	uint32_t image;      /* group_image(), for ordering by object */
	uint64_t addr;
	uint64_t line;
	uint64_t calls;
	uint64_t cost[N_EV];
	uint8_t kind;
	bool dead;           /* merged into another item */
	bool exact;          /* calls is an exact traced count */
};

/* A call edge of a stack: (call site, callee group) -> its item. */
struct edge_key {
	uint32_t site;
	uint32_t item; /* add_stack(): the edge's item */
	uint64_t callee;
};

/* The edge index's entries: 16 bytes, the item beside the key. */
struct edge_entry {
	uint64_t callee;
	uint32_t site;
	uint32_t item;
};

static inline uint64_t edge_key_hash(const struct edge_key *k)
{
	return hash_pair(k->callee, k->site);
}

static inline uint64_t edge_entry_hash(const struct edge_entry *e)
{
	return hash_pair(e->callee, e->site);
}

static inline bool edge_match(const struct edge_entry *e, const struct edge_key *k)
{
	return e->callee == k->callee && e->site == k->site;
}

HASHTAB_DEFINE(edge_index, struct edge_entry, struct edge_key, edge_entry_hash, edge_key_hash,
	       edge_match)

struct proc_ctx {
	const struct model *m;
	struct vec items;         /* struct item */
	uint32_t *self_ix;        /* loc (MODEL_NONE: the last) -> item */
	struct edge_index edge_ix;
	struct idmap home;        /* group -> home file, for functions without one */
	struct edge_key *scratch;
	size_t scratch_cap;
	uint64_t unattributed_calls;
	uint32_t n_events;        /* model_event_count() */
	uint32_t ev_wall;         /* the WallNs column, 0 when none */
	bool wall_event[MODEL_MAX_EVENTS]; /* model_wall_event() */
	uint32_t ev_traced;       /* the TracedNs column: after the others */
};

static inline struct item *item_at(struct proc_ctx *pc, uint32_t i)
{
	return (struct item *)pc->items.items + i;
}

/*
 * The items of one process in file order, from its stack sums
 * ag->stacks[s_begin..s_end) and (when the run traced functions) its traced
 * calls: each placed (address, line, file), each group given its home file.
 * 0 or -ENOMEM; free with proc_ctx_free().
 */
int build_items(struct proc_ctx *pc, const struct model *m, const struct aggregates *ag,
		uint32_t process, size_t s_begin, size_t s_end, bool traced);
void proc_ctx_free(struct proc_ctx *pc);
/* The file a group's fn= block opens in. */
uint32_t home_file(const struct proc_ctx *pc, uint64_t g);

/* ---- text output (callgrind_text.c) --------------------------------------- */

/*
 * Compressed name ids: a dense array for the model's ids (every call line
 * names an object, a file and a function, so these lookups are many), a
 * hash map for the few keys beyond (unknown groups, bad ids).
 */
struct name_ids {
	uint32_t *dense; /* 0: no id yet */
	size_t n_dense;
	struct idmap rest;
	uint32_t next;   /* last id given */
};

/*
 * Text goes through the writer's own buffer, flushed to the FILE in large
 * pieces: a file is millions of short tokens, and a locked stdio call per
 * character or number cost more than formatting them.
 */
#define OUT_BUF_SIZE (256u << 10)

struct writer {
	FILE *fp;
	char *buf;                /* OUT_BUF_SIZE bytes */
	size_t len;
	const struct model *m;
	struct name_ids ob_ids, fl_ids, fn_ids;
	uint64_t prev_addr, prev_line;
	bool fresh;               /* next position absolute */
	struct idmap renamed;     /* groups whose name needs its address */
};

/* The buffer and name ids of a writer for m (fp set by the caller): 0 or
 * -ENOMEM.  writer_free() releases them. */
int writer_init(struct writer *w, const struct model *m);
void writer_free(struct writer *w);
/* Write errors stick to the FILE, and outfile_commit() reports them. */
void w_flush(struct writer *w);
void w_putc(struct writer *w, char c);
void w_puts(struct writer *w, const char *s);
void put_u64(struct writer *w, uint64_t v);
/* " v0 v1 ...\n" without the trailing zero costs (missing ones read as 0). */
void put_costs(struct writer *w, const uint64_t *cost, int n_ev);
/* Marks the functions that share (object, file, name) with another. */
int find_homonyms(struct writer *w, struct proc_ctx *pc);
/* The ob=/fl=/fn= blocks with their cost and calls= lines. */
int write_body(struct writer *w, struct proc_ctx *pc, int n_ev);

#endif /* COLLECTOR_CALLGRIND_INTERNAL_H */
