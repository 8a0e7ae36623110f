/* SPDX-License-Identifier: GPL-2.0 */
/* Choosing and running the exporters for a finished model. */
#ifndef COLLECTOR_EXPORT_H
#define COLLECTOR_EXPORT_H

#include "exporter.h"
#include "model.h"

/* The formats that apply to what the model holds. */
unsigned int export_applicable_formats(const struct model *m);
/* Parses "xray,sampler,..." into FORMAT_* bits; -EINVAL with a message. */
int export_parse_formats(const char *list, unsigned int *out);
/* Writes every format in `formats`; returns 0 or the first error, having
 * tried every format. */
int export_all(const struct model *m, unsigned int formats, const struct export_options *opts);

#endif /* COLLECTOR_EXPORT_H */
