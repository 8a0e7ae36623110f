// SPDX-License-Identifier: GPL-2.0
/* Choosing and running the exporters. */
#include "export.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "options.h"

static const struct {
	const char *name;
	unsigned int bit;
	int (*write)(const struct model *m, const struct export_options *opts);
} formats[] = {
	{ "xray", FORMAT_XRAY, xray_write },
	{ "sampler", FORMAT_SAMPLER, sampler_write },
	{ "dcpi", FORMAT_DCPI, dcpi_write },
	{ "hpctoolkit", FORMAT_HPCTOOLKIT, hpctoolkit_write },
	{ "callgrind", FORMAT_CALLGRIND, callgrind_write },
};

#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

unsigned int export_applicable_formats(const struct model *m)
{
	unsigned int f = 0;

	if (m->samples.len)
		f |= FORMAT_SAMPLER | FORMAT_DCPI | FORMAT_HPCTOOLKIT | FORMAT_CALLGRIND;
	if (m->trace.len)
		f |= FORMAT_XRAY | FORMAT_CALLGRIND;
	return f;
}

int export_parse_formats(const char *list, unsigned int *out)
{
	const char *p = list;

	*out = 0;
	while (*p) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < N_FORMATS; i++)
			if (strlen(formats[i].name) == n && strncmp(p, formats[i].name, n) == 0)
				break;
		if (i == N_FORMATS) {
			fprintf(stderr, "collector: unknown format '%.*s'; choose from "
				"xray,sampler,dcpi,hpctoolkit,callgrind\n", (int)n, p);
			return -EINVAL;
		}
		*out |= formats[i].bit;
		p += n;
		if (*p == ',')
			p++;
	}
	if (!*out) {
		fprintf(stderr, "collector: -f needs at least one format\n");
		return -EINVAL;
	}
	return 0;
}

int export_all(const struct model *m, unsigned int which, const struct export_options *opts)
{
	int first_err = 0;

	for (size_t i = 0; i < N_FORMATS; i++) {
		int err;

		if (!(which & formats[i].bit))
			continue;
		err = formats[i].write(m, opts);
		if (err) {
			fprintf(stderr, "collector: writing the %s output failed: %s\n",
				formats[i].name, strerror(-err));
			if (!first_err)
				first_err = err;
		} else if (!opts->quiet) {
			fprintf(stderr, "collector: wrote %s output under %s\n", formats[i].name,
				opts->dir);
		}
	}
	return first_err;
}
