// SPDX-License-Identifier: GPL-2.0
/* The list of formats, and choosing and running them. */
#include "formats/registry.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* One line per format: its folder defines NAME_format (struct format). */
#define FORMATS(X) \
	X(xray)        \
	X(sampler)     \
	X(dcpi)        \
	X(hpctoolkit)  \
	X(callgrind)   \
	X(otlp)        /* before pprof: recognized by name, as pprof's .pb */ \
	X(pprof)       \
	X(flamegraph)  \
	X(speedscope)  \
	X(folded)      /* last: recognized by its first line, not by magic */

#define DECLARE(name) extern const struct format name##_format;
FORMATS(DECLARE)
#define ENTRY(name) &name##_format,
static const struct format *const registry[] = { FORMATS(ENTRY) };

#define N_FORMATS (sizeof(registry) / sizeof(registry[0]))

size_t formats_count(void)
{
	return N_FORMATS;
}

const struct format *formats_get(size_t i)
{
	return i < N_FORMATS ? registry[i] : NULL;
}

const struct format *formats_by_name(const char *name)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (strcmp(registry[i]->name, name) == 0)
			return registry[i];
	return NULL;
}

unsigned int formats_needing(unsigned int have)
{
	unsigned int mask = 0;

	for (size_t i = 0; i < N_FORMATS; i++)
		if (registry[i]->needs & have)
			mask |= 1u << i;
	return mask;
}

unsigned int formats_applicable(const struct model *m)
{
	return formats_needing((m->samples.len ? FORMAT_NEEDS_SAMPLES : 0) |
			       (m->trace.len ? FORMAT_NEEDS_TRACE_EVENTS : 0));
}

bool formats_need(unsigned int mask, unsigned int needs)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if ((mask & 1u << i) && (registry[i]->needs & needs))
			return true;
	return false;
}

/* Whether a format of mask (0: every format) has the bool at byte offset
 * flag of struct format set. */
static bool any_format_with(unsigned int mask, size_t flag)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if ((!mask || (mask & 1u << i)) && *(const bool *)((const char *)registry[i] + flag))
			return true;
	return false;
}

bool formats_use_switches(unsigned int mask)
{
	return any_format_with(mask, offsetof(struct format, uses_switches));
}

bool formats_need_time_order(unsigned int mask)
{
	return any_format_with(mask, offsetof(struct format, samples_in_time_order));
}

bool formats_need_image_crc(unsigned int mask)
{
	return any_format_with(mask, offsetof(struct format, needs_image_crc));
}

const char *formats_names(void)
{
	static char names[256];

	if (!names[0])
		for (size_t i = 0; i < N_FORMATS; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? "," : "", registry[i]->name);
	return names;
}

int formats_parse(const char *list, unsigned int *mask)
{
	const char *p = list;

	*mask = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < N_FORMATS; i++)
			if (strlen(registry[i]->name) == n && strncmp(p, registry[i]->name, n) == 0)
				break;
		if (i == N_FORMATS) {
			fprintf(stderr, "collector: unknown format '%.*s'; choose from %s\n", (int)n,
				p, formats_names());
			return -EINVAL;
		}
		*mask |= 1u << i;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!*mask) {
		fprintf(stderr, "collector: -f needs at least one format\n");
		return -EINVAL;
	}
	return 0;
}

/* A one-event format in a run of several events: the first event's file
 * where it always is, each other event's under DIR/<event>/. */
static int write_each_event(const struct format *fmt, const struct model *m,
			    const struct export_options *opts)
{
	int first_err = 0;

	for (uint32_t ev = 0; ev < model_event_count(m); ev++) {
		struct export_options eo = *opts;
		char name[80], dir[PATH_MAX];
		struct model view;
		int err;

		if (ev) {
			export_file_name(name, sizeof(name), model_event(m, ev)->name,
					 strlen(model_event(m, ev)->name), "event");
			snprintf(dir, sizeof(dir), "%s/%s", opts->dir, name);
			err = export_mkdir(opts, name);
			if (err) {
				first_err = first_err ? first_err : err;
				continue;
			}
			eo.dir = dir;
		}
		err = model_event_view(m, ev, &view);
		if (!err) {
			if (view.samples.len)
				err = fmt->write(&view, &eo);
			model_event_view_free(&view);
		}
		if (err && !first_err)
			first_err = err;
	}
	return first_err;
}

int formats_write(const struct model *m, unsigned int mask, const struct export_options *opts)
{
	int first_err = 0;

	for (size_t i = 0; i < N_FORMATS; i++) {
		int err;

		if (!(mask & 1u << i))
			continue;
		if (registry[i]->one_event && model_event_count(m) > 1)
			err = write_each_event(registry[i], m, opts);
		else
			err = registry[i]->write(m, opts);
		if (err) {
			fprintf(stderr, "collector: writing the %s output failed: %s\n",
				registry[i]->name, strerror(-err));
			if (!first_err)
				first_err = err;
		} else if (!opts->quiet) {
			fprintf(stderr, "collector: wrote %s output under %s\n", registry[i]->name,
				opts->dir);
		}
	}
	return first_err;
}

const struct format *formats_recognize(const char *path, const unsigned char *head, size_t n)
{
	for (size_t i = 0; i < N_FORMATS; i++)
		if (registry[i]->recognize(path, head, n))
			return registry[i];
	return NULL;
}
