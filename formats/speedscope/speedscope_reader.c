// SPDX-License-Identifier: GPL-2.0
/* Reader of speedscope files (speedscope_reader.h), on json-c. */
#include "formats/speedscope/speedscope_reader.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "formats/jsonin.h"

/* An error at a JSON path ("profiles[2]: "). */
static int fail(struct format_error *err, const char *where, const char *fmt, ...)
{
	char reason[sizeof(err->reason)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	return format_fail(err, FORMAT_NO_OFFSET, "%s%s", where, reason);
}

static bool is_number(json_object *o)
{
	return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double);
}

/* A required number, string or array member of object o. */
static int member(json_object *o, const char *key, json_type type, json_object **out,
		  const char *where, struct format_error *err)
{
	if (!json_object_object_get_ex(o, key, out))
		return fail(err, where, "'%s' is missing", key);
	if (type == json_type_double ? !is_number(*out) : !json_object_is_type(*out, type))
		return fail(err, where, "'%s' is not a%s %s", key, type == json_type_array ? "n" : "",
			    type == json_type_double ? "number" : json_type_to_name(type));
	return 0;
}

/* A frame index: an integer inside the frames. */
static bool frame_index(json_object *o, size_t n_frames, size_t *out)
{
	double d;

	if (!is_number(o))
		return false;
	d = json_object_get_double(o);
	if (d < 0 || d >= (double)n_frames || d != floor(d))
		return false;
	*out = (size_t)d;
	return true;
}

static int check_frames(struct speedscope_file *s, json_object *root, struct format_error *err)
{
	json_object *shared, *frames;
	int rc;

	rc = member(root, "shared", json_type_object, &shared, "", err);
	if (!rc)
		rc = member(shared, "frames", json_type_array, &frames, "shared: ", err);
	if (rc)
		return rc;
	s->n_frames = json_object_array_length(frames);
	s->frame_names = calloc(s->n_frames + 1, sizeof(*s->frame_names));
	if (!s->frame_names)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_frames; i++) {
		json_object *f = json_object_array_get_idx(frames, i), *v;
		char where[64];

		snprintf(where, sizeof(where), "shared.frames[%zu]: ", i);
		if (!json_object_is_type(f, json_type_object))
			return fail(err, where, "not an object");
		rc = member(f, "name", json_type_string, &v, where, err);
		if (rc)
			return rc;
		s->frame_names[i] = json_object_get_string(v);
		if (json_object_object_get_ex(f, "file", &v) && !json_object_is_type(v, json_type_string))
			return fail(err, where, "'file' is not a string");
		if ((json_object_object_get_ex(f, "line", &v) && !is_number(v)) ||
		    (json_object_object_get_ex(f, "col", &v) && !is_number(v)))
			return fail(err, where, "'line' or 'col' is not a number");
	}
	return 0;
}

static int check_sampled(const struct speedscope_file *s, json_object *p,
			 struct speedscope_profile *info, const char *where,
			 struct format_error *err)
{
	json_object *samples, *weights;
	double *self = NULL;
	int rc;

	rc = member(p, "samples", json_type_array, &samples, where, err);
	if (!rc)
		rc = member(p, "weights", json_type_array, &weights, where, err);
	if (rc)
		return rc;
	info->n = json_object_array_length(samples);
	if (json_object_array_length(weights) != info->n)
		return fail(err, where, "%zu samples but %zu weights", info->n,
			    json_object_array_length(weights));
	self = calloc(s->n_frames + 1, sizeof(*self));
	if (!self)
		return -ENOMEM;
	for (size_t i = 0; i < info->n && !rc; i++) {
		json_object *stack = json_object_array_get_idx(samples, i);
		json_object *wo = json_object_array_get_idx(weights, i);
		size_t depth, f = 0;
		double w;

		if (!json_object_is_type(stack, json_type_array)) {
			rc = fail(err, where, "samples[%zu] is not an array", i);
			break;
		}
		if (!is_number(wo) || (w = json_object_get_double(wo)) < 0 || !isfinite(w)) {
			rc = fail(err, where, "weights[%zu] is not a number >= 0", i);
			break;
		}
		depth = json_object_array_length(stack);
		for (size_t k = 0; k < depth; k++)
			if (!frame_index(json_object_array_get_idx(stack, k), s->n_frames, &f)) {
				rc = fail(err, where, "samples[%zu][%zu] is not an index of "
					  "shared.frames (%zu frames)", i, k, s->n_frames);
				break;
			}
		if (depth > info->max_depth)
			info->max_depth = depth;
		info->total_weight += w;
		if (depth)
			self[f] += w;
	}
	for (size_t f = 0; f < s->n_frames; f++)
		if (self[f] > info->top_self) {
			info->top_self = self[f];
			info->top_frame = f;
		}
	free(self);
	return rc;
}

static int check_evented(const struct speedscope_file *s, json_object *p,
			 struct speedscope_profile *info, const char *where,
			 struct format_error *err)
{
	json_object *events;
	size_t *open = NULL, depth = 0;
	double last = -INFINITY;
	int rc;

	rc = member(p, "events", json_type_array, &events, where, err);
	if (rc)
		return rc;
	info->n = json_object_array_length(events);
	open = malloc((info->n + 1) * sizeof(*open));
	if (!open)
		return -ENOMEM;
	for (size_t i = 0; i < info->n && !rc; i++) {
		json_object *e = json_object_array_get_idx(events, i), *type, *frame, *at;
		const char *t;
		size_t f;
		double when;

		if (!json_object_is_type(e, json_type_object) ||
		    member(e, "type", json_type_string, &type, where, err) ||
		    member(e, "at", json_type_double, &at, where, err) ||
		    !json_object_object_get_ex(e, "frame", &frame)) {
			rc = fail(err, where, "events[%zu] is not an object with type, frame and at", i);
			break;
		}
		t = json_object_get_string(type);
		when = json_object_get_double(at);
		if (!frame_index(frame, s->n_frames, &f))
			rc = fail(err, where, "events[%zu].frame is not an index of shared.frames", i);
		else if (!isfinite(when) || when < last)
			rc = fail(err, where, "events[%zu] at %.17g comes before the event ahead of it",
				  i, when);
		else if (when < info->start || when > info->end)
			rc = fail(err, where, "events[%zu] at %.17g is outside [startValue, endValue]",
				  i, when);
		else if (!strcmp(t, "O"))
			open[depth++] = f;
		else if (strcmp(t, "C"))
			rc = fail(err, where, "events[%zu].type is '%.8s', not O or C", i, t);
		else if (!depth || open[depth - 1] != f)
			rc = fail(err, where, "events[%zu] closes frame %zu, which is not the "
				  "innermost open frame", i, f);
		else
			depth--;
		if (depth > info->max_depth)
			info->max_depth = depth;
		last = when;
	}
	if (!rc && depth)
		rc = fail(err, where, "%zu frames are still open at the end", depth);
	free(open);
	return rc;
}

static int check_profile(struct speedscope_file *s, json_object *p, size_t i,
			 struct format_error *err)
{
	static const char *const units[] = { "bytes", "microseconds", "milliseconds",
					     "nanoseconds", "none", "seconds" };
	struct speedscope_profile *info = &s->profiles[i];
	json_object *type, *name, *unit, *start, *end;
	char where[64];
	size_t u;
	int rc;

	snprintf(where, sizeof(where), "profiles[%zu]: ", i);
	if (!json_object_is_type(p, json_type_object))
		return fail(err, where, "not an object");
	rc = member(p, "type", json_type_string, &type, where, err);
	if (!rc)
		rc = member(p, "name", json_type_string, &name, where, err);
	if (!rc)
		rc = member(p, "unit", json_type_string, &unit, where, err);
	if (!rc)
		rc = member(p, "startValue", json_type_double, &start, where, err);
	if (!rc)
		rc = member(p, "endValue", json_type_double, &end, where, err);
	if (rc)
		return rc;
	info->name = json_object_get_string(name);
	info->unit = json_object_get_string(unit);
	info->start = json_object_get_double(start);
	info->end = json_object_get_double(end);
	for (u = 0; u < sizeof(units) / sizeof(units[0]) && strcmp(units[u], info->unit); u++)
		;
	if (u == sizeof(units) / sizeof(units[0]))
		return fail(err, where, "unit '%.20s' is not one of speedscope's", info->unit);
	if (!strcmp(json_object_get_string(type), "sampled"))
		return check_sampled(s, p, info, where, err);
	if (strcmp(json_object_get_string(type), "evented"))
		return fail(err, where, "type is '%.20s', not sampled or evented",
			    json_object_get_string(type));
	info->evented = true;
	return check_evented(s, p, info, where, err);
}

static int check_file(struct speedscope_file *s, json_object *root, struct format_error *err)
{
	json_object *v, *profiles;
	int rc;

	if (!json_object_is_type(root, json_type_object))
		return fail(err, "", "the top level is not an object");
	rc = member(root, "$schema", json_type_string, &v, "", err);
	if (rc)
		return rc;
	if (strcmp(json_object_get_string(v), SPEEDSCOPE_SCHEMA))
		return fail(err, "", "'$schema' is not %s", SPEEDSCOPE_SCHEMA);
	v = NULL;
	if (json_object_object_get_ex(root, "name", &v) && !json_object_is_type(v, json_type_string))
		return fail(err, "", "'name' is not a string");
	s->name = v ? json_object_get_string(v) : NULL;
	v = NULL;
	if (json_object_object_get_ex(root, "exporter", &v) &&
	    !json_object_is_type(v, json_type_string))
		return fail(err, "", "'exporter' is not a string");
	s->exporter = v ? json_object_get_string(v) : NULL;
	rc = check_frames(s, root, err);
	if (!rc)
		rc = member(root, "profiles", json_type_array, &profiles, "", err);
	if (rc)
		return rc;
	s->n_profiles = json_object_array_length(profiles);
	s->profiles = calloc(s->n_profiles + 1, sizeof(*s->profiles));
	if (!s->profiles)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_profiles && !rc; i++)
		rc = check_profile(s, json_object_array_get_idx(profiles, i), i, err);
	s->active = -1;
	if (!rc && json_object_object_get_ex(root, "activeProfileIndex", &v)) {
		size_t a;

		if (!frame_index(v, s->n_profiles, &a))
			return fail(err, "", "activeProfileIndex is not an index of profiles");
		s->active = (long)a;
	}
	return rc;
}

int speedscope_parse(const char *data, size_t n, struct speedscope_file *s,
		     struct format_error *err)
{
	json_object *root;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = json_parse_strict(data, n, &root, err);
	if (rc)
		return rc;
	s->root = root;
	rc = check_file(s, root, err);
	if (rc)
		speedscope_file_free(s);
	return rc;
}

static int parse_cb(const unsigned char *data, size_t n, void *obj, struct format_error *err)
{
	return speedscope_parse((const char *)data, n, obj, err);
}

int speedscope_read_file(const char *path, struct speedscope_file *s,
			 struct format_error *err)
{
	return format_parse_file(path, err, parse_cb, s);
}

void speedscope_file_free(struct speedscope_file *s)
{
	if (s->root)
		json_object_put(s->root);
	free(s->frame_names);
	free(s->profiles);
	memset(s, 0, sizeof(*s));
}

void speedscope_print(const struct speedscope_file *s, FILE *out)
{
	fprintf(out, "name %s\nexporter %s\nframes %zu\nprofiles %zu\nactive %ld\n",
		s->name ? s->name : "-", s->exporter ? s->exporter : "-", s->n_frames,
		s->n_profiles, s->active);
	for (size_t i = 0; i < s->n_profiles; i++) {
		const struct speedscope_profile *p = &s->profiles[i];

		fprintf(out, "profile %zu %s \"%s\" %s [%.17g, %.17g]", i,
			p->evented ? "evented" : "sampled", p->name, p->unit, p->start, p->end);
		if (p->evented)
			fprintf(out, " events %zu max_depth %zu\n", p->n, p->max_depth);
		else
			fprintf(out, " samples %zu weight %.17g max_depth %zu top_self %s (%.17g)\n",
				p->n, p->total_weight, p->max_depth,
				p->top_self > 0 ? s->frame_names[p->top_frame] : "-", p->top_self);
	}
}
