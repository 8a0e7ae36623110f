/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Callgrind reader: what its parts share.  callgrind_tokens.c reads the
 * tokens of a line (numbers, subpositions, costs, names with their
 * compression); callgrind_reader.c reads the lines, one handler per kind,
 * and checks the whole; callgrind_dump.c is `collector dump`'s part.
 *
 * Every token reader returns 0, -ENOMEM, or -EINVAL after fail() has put
 * the byte offset and the reason into the caller's error.
 */
#ifndef COLLECTOR_CALLGRIND_PARSER_H
#define COLLECTOR_CALLGRIND_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "formats/callgrind/callgrind_reader.h"
#include "lib/idmap.h"

/* KCachegrind recognizes the format by "events:" at a line start within
 * the first 2047 bytes. */
#define KCACHEGRIND_SNIFF_BYTES 2047
#define MAX_EVENTS 64

enum name_kind { NAME_OB = 0, NAME_FL = 1, NAME_FN = 2 };

/* Interned names: (bytes) -> id in callgrind_profile.names; an entry keeps
 * its hash, which recomputing would need the name for. */
struct name_key {
	const char *s;
	size_t n;
	uint64_t hash;
	char *const *names;
};

struct name_entry {
	uint64_t hash;
	uint32_t id;
};

static inline uint64_t name_key_hash(const struct name_key *k)
{
	return k->hash;
}

static inline uint64_t name_entry_hash(const struct name_entry *e)
{
	return e->hash;
}

static inline bool name_match(const struct name_entry *e, const struct name_key *k)
{
	const char *have = k->names[e->id];

	return e->hash == k->hash && strlen(have) == k->n && !memcmp(have, k->s, k->n);
}

HASHTAB_DEFINE(name_index, struct name_entry, struct name_key, name_entry_hash, name_key_hash,
	       name_match)

/* event: Name [= formula] [: long name]; long names are kept for events
 * defined before events: (callgrind_annotate accepts them only there). */
struct pending_event {
	char *name, *long_name;
};

struct parser {
	const char *data;
	size_t n;
	struct callgrind_profile *p;
	struct format_error *err;

	size_t names_cap, records_cap, costs_cap;
	struct name_index names;     /* name -> id */
	struct idmap compressed[3];  /* (id) -> name id, per kind */

	/* current position */
	uint32_t ob, fl, file, fn;
	uint32_t cob, cfi, cfn;
	uint64_t addr, line;
	bool body;                      /* events: seen */
	size_t totals_off;              /* where totals: stands */
	uint64_t *tmp_costs;

	/* the lines read so far */
	size_t lineno;
	struct pending_event pe[MAX_EVENTS];
	size_t n_pe;
	struct callgrind_record pending_call;
	bool call_pending, jump_pending, saw_body_line;
	size_t call_off;
};

/* One line of the file: s moves over it as tokens are read. */
struct cursor {
	const char *s;   /* current character */
	const char *end; /* end of the line (excluding '\n') */
	size_t base;     /* file offset of the line start */
	const char *line;
};

static inline size_t cur_off(const struct cursor *c)
{
	return c->base + (size_t)(c->s - c->line);
}

static inline void skip_spaces(struct cursor *c)
{
	while (c->s < c->end && *c->s == ' ')
		c->s++;
}

static inline bool has_prefix(const struct cursor *c, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(c->end - c->s) >= n && !memcmp(c->s, prefix, n);
}

int cg_fail(struct parser *ps, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
char *cg_dup_range(const char *s, size_t n);
/* The rest of the line, leading spaces skipped, as a new string. */
char *cg_rest_of_line(struct cursor *c);
/* Name := letters and digits, a letter first. */
bool cg_is_name(const char *s, size_t n);

/* Number := HexNumber | Digit+ ; rejects overflow. */
int cg_number(struct parser *ps, struct cursor *c, uint64_t *v);
/* The subpositions selected by positions:, relative to (ps->addr, ps->line). */
int cg_positions(struct parser *ps, struct cursor *c, uint64_t *addr, uint64_t *line);
/* Reads n_events costs (fewer means zeros) into ps->tmp_costs. */
int cg_costs(struct parser *ps, struct cursor *c);
/* PositionName := ( "(" Number ")" )? (Space* NoNewLineChar*)?; the name's
 * id (interned, compression resolved) into *id. */
int cg_name(struct parser *ps, struct cursor *c, enum name_kind kind, uint32_t *id);

#endif /* COLLECTOR_CALLGRIND_PARSER_H */
