/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of HPCToolkit databases (meta.db, profile.db, cct.db, trace.db),
 * released v4.0 layout and this project's draft layout (see
 * hpctoolkit_internal.h for the draft decisions).  Every structure is
 * parsed into plain arrays; every pointer, count and size is checked
 * against its section and the file, every sorted array for order.
 */
#ifndef COLLECTOR_HPCTOOLKIT_READER_H
#define COLLECTOR_HPCTOOLKIT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HKR_NONE UINT32_MAX

struct hkr_module {
	uint32_t flags;
	char *path;
};

struct hkr_file {
	uint32_t flags; /* bit 0: copied */
	char *path;
};

struct hkr_function {
	char *name;      /* NULL when pName is 0 */
	uint32_t module; /* index, or HKR_NONE */
	uint64_t offset;
	uint32_t file;   /* index, or HKR_NONE */
	uint32_t line;
	uint32_t flags;
};

struct hkr_scope {
	char *name;
	uint8_t type;       /* released only; 0xff in the draft */
	uint8_t prop_index; /* released only */
};

struct hkr_scope_inst {
	uint32_t scope; /* index in hkr_db.scopes */
	uint16_t prop_id;
};

struct hkr_summary {
	uint32_t scope;
	char *formula;
	uint8_t combine;
	uint16_t stat_id;
};

struct hkr_metric {
	char *name;
	size_t n_insts;
	struct hkr_scope_inst *insts;
	size_t n_summaries;
	struct hkr_summary *summaries;
};

/* One context (or entry point), in pre-order. */
struct hkr_context {
	uint32_t id;
	uint32_t parent;  /* index in hkr_db.contexts, HKR_NONE for the top */
	uint32_t depth;
	bool is_entry;    /* a released {Entry} */
	uint16_t entry_point;
	char *pretty_name;
	uint8_t flags, relation, lexical_type, n_flex;
	uint16_t propagation;
	uint32_t function, file, module; /* indexes, or HKR_NONE */
	uint32_t line;
	uint64_t offset;
	uint32_t n_children;
	uint32_t first_child; /* children are contexts[first_child..+n_children) */
	uint64_t at;          /* file offset of the structure */
};

struct hkr_id {
	uint8_t kind;
	uint16_t flags;
	uint32_t logical;
	uint64_t physical;
};

struct hkr_pval {
	uint32_t ctx;
	uint16_t metric;
	double value;
};

struct hkr_profile {
	bool has_tuple;
	uint32_t flags; /* released: bit 0 isSummary */
	uint16_t n_ids;
	struct hkr_id *ids;
	size_t n_ctxs;
	size_t n_values;
	struct hkr_pval *values; /* by ctx, then metric */
};

struct hkr_cval {
	uint16_t metric;
	uint32_t prof;
	double value;
};

struct hkr_ctx_values {
	uint16_t n_metrics;
	size_t n_values;
	struct hkr_cval *values; /* by metric, then profile */
};

struct hkr_elem {
	uint64_t timestamp;
	uint32_t ctx;
};

struct hkr_trace {
	uint32_t prof;
	size_t n;
	struct hkr_elem *elems;
};

struct hkr_db {
	bool draft;

	bool has_meta;
	char *title, *description;
	size_t n_kinds;
	char **kind_names;
	size_t n_scopes;
	struct hkr_scope *scopes;
	size_t n_metrics;
	struct hkr_metric *metrics;
	size_t n_modules;
	struct hkr_module *modules;
	size_t n_files;
	struct hkr_file *files;
	size_t n_functions;
	struct hkr_function *functions;
	size_t n_contexts;
	struct hkr_context *contexts;
	uint32_t *ctx_order; /* indexes into contexts, sorted by id */

	bool has_profile;
	size_t n_profiles;
	struct hkr_profile *profiles;

	bool has_cct;
	size_t n_cct;
	struct hkr_ctx_values *cct; /* by ctxId */

	bool has_trace;
	bool has_range;
	uint64_t min_ts, max_ts;
	size_t n_traces;
	struct hkr_trace *traces;
};

/*
 * Each reads one file into db (which must start zeroed and may hold the
 * others).  On malformed input: prints "PATH: offset N: reason" on errf
 * (if not NULL) and returns -EINVAL; -errno when the file cannot be read.
 * The layout (released or draft) is recognized from the file.
 */
int hkr_read_meta(const char *path, struct hkr_db *db, FILE *errf);
int hkr_read_profile(const char *path, struct hkr_db *db, FILE *errf);
int hkr_read_cct(const char *path, struct hkr_db *db, FILE *errf);
int hkr_read_trace(const char *path, struct hkr_db *db, FILE *errf);
/* All four files of a database directory, and the checks across them. */
int hkr_read_dir(const char *dir, struct hkr_db *db, FILE *errf);
/* Same on a memory image of one file (format told by its header). */
int hkr_read_mem(const char *name, const uint8_t *data, size_t size, struct hkr_db *db,
		 FILE *errf);
void hkr_free(struct hkr_db *db);

/* Index in db->contexts of a ctxId, or HKR_NONE (binary search). */
uint32_t hkr_find_context(const struct hkr_db *db, uint32_t id);
/* A value of a profile (metric id), 0 when absent. */
double hkr_profile_value(const struct hkr_profile *p, uint32_t ctx, uint16_t metric);

#endif /* COLLECTOR_HPCTOOLKIT_READER_H */
