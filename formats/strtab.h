/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A protobuf string table (pprof's string_table, OTLP's dictionary
 * string_table): index 0 is "", every other string once, in the order
 * first asked for, made valid UTF-8 (protobuf strings must be; a path or a
 * symbol need not be).  The strings themselves are the caller's and must
 * outlive the table, except those handed to strtab_own().
 */
#ifndef COLLECTOR_STRTAB_H
#define COLLECTOR_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "formats/frames.h"
#include "model/model.h"

struct strtab {
	struct frame_table names;   /* string i + 1 is names.names.items[i] */
	char **owned;               /* strings made for the table */
	size_t n_owned;
	int err;                    /* the first error (-ENOMEM), 0 if none */
};

/* 0 or -ENOMEM. */
int strtab_init(struct strtab *t, const struct model *m);
void strtab_free(struct strtab *t);
/* The index of s (0 for NULL and ""); 0 and t->err set on ENOMEM. */
int64_t strtab_id(struct strtab *t, const char *s);
/* Keeps s (malloc'd) until the table is freed and returns it; NULL (and
 * t->err) when s is NULL or on ENOMEM. */
char *strtab_own(struct strtab *t, char *s);
/* The index of a string made like printf. */
int64_t strtab_printf(struct strtab *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* How many strings, "" included. */
static inline size_t strtab_count(const struct strtab *t)
{
	return t->names.names.len + 1;
}
/* The strings, "" first, in a new array of strtab_count() to free (the
 * strings stay the table's), or NULL on ENOMEM. */
char **strtab_array(const struct strtab *t);

#endif /* COLLECTOR_STRTAB_H */
