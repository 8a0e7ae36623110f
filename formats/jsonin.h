/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsing a whole JSON text with json-c for the readers (speedscope, the
 * flame graph page's data): strict RFC 8259 (no comments, no trailing
 * commas, no NaN), nesting at most JSON_MAX_DEPTH deep, nothing but
 * white space after the value, and inputs past 2 GiB fed in pieces (json-c
 * takes an int length).
 */
#ifndef COLLECTOR_FORMATS_JSONIN_H
#define COLLECTOR_FORMATS_JSONIN_H

#include <stddef.h>

#include "formats/infile.h"

struct json_object;

#define JSON_MAX_DEPTH 64

/* Returns 0 with *root set (free it with json_object_put), -ENOMEM, or
 * -EINVAL with err filled (the offset in data, what json-c said). */
int json_parse_strict(const char *data, size_t n, struct json_object **root,
		      struct format_error *err);

#endif /* COLLECTOR_FORMATS_JSONIN_H */
