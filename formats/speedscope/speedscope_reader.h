/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of speedscope's file format (https://www.speedscope.app/
 * file-format-schema.json, draft-07), parsed with json-c.  It checks what
 * the schema says (types, required keys, the "$schema" constant, the unit
 * and profile type enums) and what speedscope's importer needs but the
 * schema cannot say:
 *   - a sampled profile has as many weights as samples, weights >= 0, and
 *     every frame index of a stack is an integer inside shared.frames;
 *   - an evented profile's events come in time order, each close event
 *     closes the innermost open frame and no frame is left open, and every
 *     event lies within [startValue, endValue];
 *   - activeProfileIndex, when given, is an index of profiles.
 * An error names where it is as a JSON path ("profiles[2]: ..."), or
 * the byte offset of a JSON syntax error.
 */
#ifndef COLLECTOR_SPEEDSCOPE_READER_H
#define COLLECTOR_SPEEDSCOPE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/infile.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

struct speedscope_profile {
	bool evented;
	const char *name;
	const char *unit;
	double start, end;
	size_t n;                 /* samples, or events */
	double total_weight;      /* sampled: sum of the weights */
	size_t max_depth;         /* deepest stack, or deepest nesting */
	size_t top_frame;         /* sampled: the frame with the most self weight */
	double top_self;
};

struct speedscope_file {
	void *root;               /* the json-c tree (struct json_object) */
	const char *name;         /* NULL when absent */
	const char *exporter;
	long active;              /* -1 when absent */
	size_t n_frames;
	const char **frame_names;
	size_t n_profiles;
	struct speedscope_profile *profiles;
};

/* Parses data[0..n).  Returns 0, -ENOMEM, or -EINVAL with err filled. */
int speedscope_parse(const char *data, size_t n, struct speedscope_file *s,
		     struct format_error *err);
int speedscope_read_file(const char *path, struct speedscope_file *s,
			 struct format_error *err);
void speedscope_file_free(struct speedscope_file *s);
void speedscope_print(const struct speedscope_file *s, FILE *out);

#endif /* COLLECTOR_SPEEDSCOPE_READER_H */
