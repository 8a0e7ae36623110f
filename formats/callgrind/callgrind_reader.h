/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of Callgrind profile files (format version 1, one part).
 *
 * The whole file is parsed into plain structs: the header, then one record
 * per cost line (self cost) or per calls= pair (call cost).  Name
 * compression and subposition compression are resolved.  Besides the
 * format's grammar, the reader enforces what the real readers need (see
 * /work/shared/specs/README.md): `events:` within the first 2047 bytes
 * (KCachegrind's format detection), `events:` before `summary:`, no tabs,
 * `version:` below 2, a cost line after every `calls=`, event names that fit
 * the grammar's Name, and `totals:` equal to the sum of all self costs.
 * Malformed input is rejected with the byte offset and the reason.
 */
#ifndef COLLECTOR_CALLGRIND_READER_H
#define COLLECTOR_CALLGRIND_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/infile.h"

#define CALLGRIND_NO_NAME UINT32_MAX

enum callgrind_record_kind {
	CALLGRIND_COST = 0, /* a self cost line */
	CALLGRIND_CALL = 1, /* a calls= line and the cost line after it */
};

/*
 * One cost line.  Names are indexes into callgrind_profile.names
 * (CALLGRIND_NO_NAME when the file never set them).  `file` is the source
 * file the line belongs to (fi=/fe= when given, else fl=); `fn_file` is the
 * fl= the function was opened under.
 */
struct callgrind_record {
	enum callgrind_record_kind kind;
	uint32_t object, fn_file, file, function;
	uint64_t addr;         /* 0 unless positions include instr */
	uint64_t line;         /* 0 unless positions include line */
	size_t costs;          /* index of the first of n_events in profile.costs */
	size_t offset;         /* byte offset of the cost line in the file */
	/* CALLGRIND_CALL only */
	uint32_t called_object, called_file, called_function;
	uint64_t calls;
	uint64_t target_addr, target_line;
};

struct callgrind_desc {
	char *type;            /* e.g. "Trigger" */
	char *value;
};

struct callgrind_profile {
	bool has_format_line;  /* "# callgrind format" */
	unsigned version;      /* 1 when absent */
	char *creator;         /* NULL when absent */
	char *cmd;
	bool has_pid;
	uint64_t pid;
	bool pos_instr, pos_line;
	size_t n_events;
	char **events;         /* short names */
	char **event_long;     /* long names from event: lines, NULL when none */
	size_t n_desc;
	struct callgrind_desc *desc;
	uint64_t *summary;     /* n_events values, NULL when absent */
	uint64_t *totals;      /* n_events values, NULL when absent */
	uint64_t *self_sum;    /* n_events values: the sum of all self cost lines */
	size_t n_jumps;        /* jump=/jcnd= lines (validated, not kept) */

	size_t n_names;
	char **names;          /* every distinct object, file and function name */
	size_t n_records;
	struct callgrind_record *records;
	uint64_t *costs;       /* n_records * n_events */
};

/* Parses data[0..n).  Returns 0, -ENOMEM, or -EINVAL with err filled. */
int callgrind_parse(const char *data, size_t n, struct callgrind_profile *p,
		    struct format_error *err);
/* Reads and parses a file; -errno when it cannot be read. */
int callgrind_read_file(const char *path, struct callgrind_profile *p,
			struct format_error *err);
void callgrind_profile_free(struct callgrind_profile *p);

static inline const uint64_t *callgrind_record_costs(const struct callgrind_profile *p,
						     const struct callgrind_record *r)
{
	return p->costs + r->costs;
}

static inline const char *callgrind_name(const struct callgrind_profile *p, uint32_t id)
{
	return id == CALLGRIND_NO_NAME ? "(none)" : p->names[id];
}

#endif /* COLLECTOR_CALLGRIND_READER_H */
