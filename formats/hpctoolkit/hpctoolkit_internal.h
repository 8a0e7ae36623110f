/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HPCToolkit database writer: what its four files share.
 *
 * The context tree is built once from the model's stacks (hpctoolkit_tree.c)
 * and the per-thread metric values are computed once from it
 * (hpctoolkit_values.c); meta.db (hpctoolkit_meta.c), profile.db and cct.db
 * (hpctoolkit_profile.c) and trace.db (hpctoolkit_trace.c) are then written
 * from these, through the byte buffer of hpctoolkit_buf.c.
 *
 * Two layouts (see the specs in ../shared/specs/):
 *   released  HPCToolkit 4.0 as hpcprof writes it and hpcviewer reads it
 *             (the default; the sizes follow the real writer).
 *   draft     the pre-release text given to this project
 *             (--hpctoolkit-layout=draft).  It contradicts itself; we decide:
 *             - every sz* field holds the END size of its table: {CI} 0x20,
 *               {TH} 0x18, {PI} 0x28 (the text says 22, 22 and 16);
 *             - profile.db's nProfiles is a u32 at 0x08 and szProfile a u8 at
 *               0x0c (the text puts szProfile at 0x0a, inside nProfiles);
 *             - the context tree has the draft's szRoots/pRoots and no entry
 *               points: the entry points become root contexts of lexical type
 *               function whose function has only a name ("main thread",
 *               "application thread", "unknown entry"), so every ctxId that
 *               carries values is still in the tree;
 *             - {Ctx} has no propagation field (flex starts at 0x18), {PI} no
 *               flags, the trace header no min/max timestamps, and the
 *               summary profile points at an empty identifier tuple (the
 *               draft makes no exception for it).
 */
#ifndef COLLECTOR_HPCTOOLKIT_INTERNAL_H
#define COLLECTOR_HPCTOOLKIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/format.h"
#include "lib/idmap.h"

/* ---- constants shared by the writer and the reader -------------------- */

#define HK_MAGIC "HPCTOOLKIT"
#define HK_MAJOR 4
#define HK_MINOR 0

/* identifier kinds, in the order hpcprof names them */
enum { HK_KIND_SUMMARY, HK_KIND_NODE, HK_KIND_RANK, HK_KIND_THREAD, HK_KIND_GPUDEVICE,
       HK_KIND_GPUCONTEXT, HK_KIND_GPUSTREAM, HK_KIND_CORE, HK_N_KINDS };

/* propagation scopes, in hpcprof's order; propMetricId = scope index */
enum { HK_SCOPE_POINT, HK_SCOPE_FUNCTION, HK_SCOPE_LEX_AWARE, HK_SCOPE_EXECUTION, HK_N_SCOPES };
/* {PS}.type */
enum { HK_PS_CUSTOM = 0, HK_PS_POINT = 1, HK_PS_EXECUTION = 2, HK_PS_TRANSITIVE = 3 };
/* summary combine functions; statMetricId = combine * HK_N_SCOPES + scope,
 * so that the sums have the ids hpcprof gives them (0..3) */
enum { HK_COMBINE_SUM, HK_COMBINE_MIN, HK_COMBINE_MAX, HK_N_COMBINES };
#define HK_N_STATS (HK_N_SCOPES * HK_N_COMBINES)

/* {Ctx}.relation and .lexicalType */
enum { HK_REL_LEXICAL = 0, HK_REL_CALL = 1, HK_REL_INLINED = 2 };
enum { HK_LEX_FUNCTION = 0, HK_LEX_LOOP = 1, HK_LEX_LINE = 2, HK_LEX_INSTRUCTION = 3 };
/* {Ctx}.flags */
#define HK_CTX_HAS_FUNCTION 0x1
#define HK_CTX_HAS_SRCLOC 0x2
#define HK_CTX_HAS_POINT 0x4
/* {Entry}.entryPoint */
enum { HK_ENTRY_UNKNOWN = 0, HK_ENTRY_MAIN = 1, HK_ENTRY_THREAD = 2, HK_N_ENTRIES };

/* structure sizes, released layout (hpcprof's) */
#define HK_SZ_METRIC 32
#define HK_SZ_SCOPE_INST 16
#define HK_SZ_SUMMARY 24
#define HK_SZ_SCOPE 16
#define HK_SZ_MODULE 16
#define HK_SZ_FILE 16
#define HK_SZ_FUNCTION 40
#define HK_SZ_ENTRY 32
#define HK_SZ_PROFILE 48
#define HK_SZ_CTXINFO 32
#define HK_SZ_TRACE 24
/* draft layout sizes (END rows of its tables) */
#define HK_DRAFT_SZ_METRIC 24
#define HK_DRAFT_SZ_SCOPE 24
#define HK_DRAFT_SZ_SUMMARY 16
#define HK_DRAFT_SZ_PROFILE 40

#define HK_CTX_HEAD 0x20       /* {Ctx} before flex, released */
#define HK_DRAFT_CTX_HEAD 0x18 /* draft: no propagation field */

/*
 * The metrics: one per event of the run, in event order (metric k is event
 * k), then, when the run has the wall-clock view (model_has_wall()), "wall
 * (sec)", the sum of its two events.  Names as hpcrun gives them: CPUTIME
 * (sec) for cpu-clock, "<event> (sec)" for the other clocks (off-cpu
 * too), the event's name for a count.  Values are the samples' weights,
 * ns as seconds for clocks.  Metric k's propagated values have the ids
 * k * HK_N_SCOPES + scope, its summary statistics k * HK_N_STATS +
 * combine * HK_N_SCOPES + scope, so that a context's values come out sorted
 * by id metric after metric, as both files want them.
 */
#define HK_MAX_METRICS (MODEL_MAX_EVENTS + 1)

struct hk_metric {
	char name[96];
	char description[160]; /* with the unit: hpcviewer's tooltip */
	char unit[32];         /* "s", "faults" */
	bool seconds;          /* weights are ns, written as seconds */
	bool wall;             /* the wall-clock view */
	uint64_t samples;      /* what the database holds: samples of known threads */
	uint64_t total;        /* their weights */
};

static inline uint16_t hk_prop_id(unsigned metric, unsigned scope)
{
	return metric * HK_N_SCOPES + scope;
}

static inline uint16_t hk_stat_id(unsigned metric, unsigned combine, unsigned scope)
{
	return metric * HK_N_STATS + combine * HK_N_SCOPES + scope;
}

const char *hk_kind_name(unsigned kind);
const char *hk_scope_name(unsigned scope);
const char *hk_entry_name(unsigned entry);

/* ---- a growable byte buffer for building sections --------------------- */

struct hk_buf {
	uint8_t *p;
	size_t len, cap;
	int err; /* first error (-ENOMEM), sticky */
};

void hk_buf_free(struct hk_buf *b);
/* Appends n bytes (zeros when data is NULL); returns the offset or 0 with
 * b->err set. */
size_t hk_buf_put(struct hk_buf *b, const void *data, size_t n);
size_t hk_buf_zero(struct hk_buf *b, size_t n);
void hk_buf_align(struct hk_buf *b, size_t a);
size_t hk_buf_str(struct hk_buf *b, const char *s);
void hk_buf_set(struct hk_buf *b, size_t off, const void *data, size_t n);
void hk_buf_set_u8(struct hk_buf *b, size_t off, uint8_t v);
void hk_buf_set_u16(struct hk_buf *b, size_t off, uint16_t v);
void hk_buf_set_u32(struct hk_buf *b, size_t off, uint32_t v);
void hk_buf_set_u64(struct hk_buf *b, size_t off, uint64_t v);
void hk_buf_set_f64(struct hk_buf *b, size_t off, double v);

/* ---- the context tree and values (hpctoolkit_tree.c, _values.c) ------- */

enum hk_node_kind { HK_NODE_ROOT, HK_NODE_ENTRY, HK_NODE_FUNCTION, HK_NODE_LINE, HK_NODE_INSN };

/* One context; its ctxId is its index in hk_tree.nodes (0 = global root). */
struct hk_node {
	uint32_t parent;
	uint8_t kind;       /* enum hk_node_kind */
	uint8_t relation;   /* HK_REL_* to the parent */
	uint16_t entry;     /* HK_ENTRY_* for HK_NODE_ENTRY */
	uint32_t function;  /* model function id, or MODEL_NONE */
	uint32_t file;      /* model file id, or MODEL_NONE */
	uint32_t line;
	uint32_t image;     /* model image id, or MODEL_NONE */
	uint64_t addr;      /* file-relative */
};

/* The contexts by content: a node's id beside its full hash, so that a probe
 * reads a node (tens of MB of them, each read a cache miss) only when the
 * hashes agree, and growing the index reads none.  12 bytes a slot. */
struct __attribute__((packed)) hk_node_slot {
	uint64_t hash;
	uint32_t id;
};

struct hk_node_key {
	const struct hk_node *node;
	uint64_t hash;
	const struct hk_node *nodes; /* the tree's, for the comparison */
};

static inline uint64_t hk_node_key_hash(const struct hk_node_key *k)
{
	return k->hash;
}

static inline uint64_t hk_node_slot_hash(const struct hk_node_slot *e)
{
	return e->hash;
}

static inline bool hk_node_slot_match(const struct hk_node_slot *e, const struct hk_node_key *k)
{
	const struct hk_node *a = &k->nodes[e->id], *b = k->node;

	return e->hash == k->hash && a->parent == b->parent && a->kind == b->kind &&
	       a->relation == b->relation && a->entry == b->entry &&
	       a->function == b->function && a->file == b->file && a->line == b->line &&
	       a->image == b->image && a->addr == b->addr;
}

HASHTAB_DEFINE(hk_node_index, struct hk_node_slot, struct hk_node_key, hk_node_slot_hash,
	       hk_node_key_hash, hk_node_slot_match)

/* One thread's profile: profile index = position in hk_tree.threads + 1. */
struct hk_thread {
	uint32_t thread;    /* model thread id */
	uint32_t rank;      /* dense process index */
	uint32_t index;     /* thread index within its process */
	size_t first_value; /* into hk_tree.values */
	size_t n_values;    /* value records (contexts with a value) */
	uint64_t n_trace;   /* trace elements */
	uint64_t trace_off; /* file offset of its trace line */
};

/* A context with a value in one thread.  Its values, ns (0 = none) of
 * every metric in the point, function and execution scopes, are
 * hk_tree.ns[(value index * n_metrics + metric) * 3 + hk_value_slot()]:
 * lex_aware equals function without loop contexts, and a copy of it would
 * be a fifth of the writer's largest table.  Read them with hk_value_ns(). */
struct hk_value {
	uint32_t ctx;
	uint32_t prof;
};

static inline unsigned hk_value_slot(unsigned scope)
{
	return scope == HK_SCOPE_POINT ? 0 : scope == HK_SCOPE_EXECUTION ? 2 : 1;
}

/* Summary statistics of one metric at one context over threads (ns;
 * min/max over the threads that have a non-zero value, as hpcprof does). */
struct hk_stat {
	uint64_t ns[HK_N_COMBINES][HK_N_SCOPES];
};

/* The weight of one event's samples at one (profile, leaf context). */
struct hk_leaf_weight {
	uint32_t prof, ctx;
	uint64_t ns;
	uint32_t event;
};

struct hk_tree {
	const struct model *m;
	bool draft;
	struct hk_node *nodes;
	size_t n_nodes, cap_nodes;
	uint32_t entry_ctx[HK_N_ENTRIES]; /* 0 when unused */

	/* the contexts by content, and call_frame()'s memo: (context << 32 |
	 * location) -> the context of the frame's callee */
	struct hk_node_index index;
	struct idmap memo;

	/* leaf context of (stack, entry point), 0 until computed */
	uint32_t *leaf;
	size_t n_stacks;

	struct hk_thread *threads;
	size_t n_threads;
	uint32_t n_ranks;
	uint32_t *thread_prof; /* model thread id -> profile index */
	uint8_t *thread_entry; /* model thread id -> its stacks' HK_ENTRY_* */

	struct hk_metric metrics[HK_MAX_METRICS];
	unsigned n_metrics;
	unsigned wall_metric;   /* n_metrics when the run has no wall view */
	bool wall_event[HK_MAX_METRICS]; /* event k's weights are part of it */
	uint32_t trace_event;   /* the event whose samples make the traces */

	struct hk_value *values; /* grouped by thread, then sorted by ctx */
	uint64_t *ns;            /* their values: see struct hk_value */
	size_t n_values;
	/* values by context: ctx c's are values[ctx_values[ctx_first[c] ..
	 * ctx_first[c + 1])], in profile order */
	uint32_t *ctx_first;     /* n_nodes + 1 */
	uint32_t *ctx_values;    /* n_values */

	/* per-node child lists (CSR), built after the tree is complete */
	uint32_t *child_start; /* n_nodes + 1 */
	uint32_t *children;

	uint64_t n_samples;     /* of every event */
};

static inline uint64_t hk_value_ns(const struct hk_tree *t, size_t value, unsigned metric,
				   unsigned scope)
{
	return t->ns[(value * t->n_metrics + metric) * 3 + hk_value_slot(scope)];
}

/* What metric k's value of ns is in the database: seconds or a count. */
static inline double hk_metric_value(const struct hk_tree *t, unsigned metric, uint64_t ns)
{
	return t->metrics[metric].seconds ? ns / 1e9 : (double)ns;
}

int hk_tree_build(struct hk_tree *t, const struct model *m, bool draft);
void hk_tree_free(struct hk_tree *t);
/* The steps of hk_tree_build() that compute the values (hpctoolkit_values.c):
 * profiles in (process, thread) order; the sample weights summed by
 * (profile, leaf context), building the tree as stacks are met; the sums
 * propagated up the tree; the values listed by context. */
int hk_order_threads(struct hk_tree *t);
int hk_collect_leaves(struct hk_tree *t, struct hk_leaf_weight **out, size_t *n_out);
int hk_propagate(struct hk_tree *t, const struct hk_leaf_weight *lw, size_t n_lw);
int hk_order_values(struct hk_tree *t);
/* The metrics of t->m's events (hpctoolkit_values.c). */
void hk_list_metrics(struct hk_tree *t);
/* summary statistics of a metric at a context over the threads (computed:
 * a table of them would be 96 bytes per context and metric) */
void hk_ctx_stat(const struct hk_tree *t, uint32_t ctx, unsigned metric, struct hk_stat *st);
/* context of a sample's stack in its thread */
uint32_t hk_sample_ctx(struct hk_tree *t, const struct model_sample *s);
/* propagation bitmask of a context (bit 0: the function scope passes) */
static inline uint16_t hk_node_propagation(const struct hk_node *n)
{
	return (n->kind == HK_NODE_LINE || n->kind == HK_NODE_INSN) &&
	       n->relation == HK_REL_LEXICAL;
}

/* ---- the files ---------------------------------------------------------- */

/* src_paths[file id]: path of the copy relative to the database, or NULL */
int hk_write_meta(const struct hk_tree *t, const struct export_options *opts,
		  const char *relpath, char *const *src_paths);
int hk_write_profile(const struct hk_tree *t, const struct export_options *opts,
		     const char *relpath);
int hk_write_cct(const struct hk_tree *t, const struct export_options *opts,
		 const char *relpath);
int hk_write_trace(struct hk_tree *t, const struct export_options *opts, const char *relpath);

/* write the common file header and section table */
void hk_file_header(uint8_t *hdr, const char *format);
/* Starts b as a file of the given format (4 letters) whose section table
 * is header_len bytes and whose first section is a header { pointer,
 * count, entry size } followed by n zeroed entries of entry_size bytes:
 * returns the offset of the entries. */
size_t hk_buf_start_file(struct hk_buf *b, const char *format, size_t header_len, uint32_t n,
			 uint8_t entry_size);

#endif /* COLLECTOR_HPCTOOLKIT_INTERNAL_H */
