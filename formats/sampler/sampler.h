/* SPDX-License-Identifier: GPL-2.0 */
/* sampler full profiles (sampler/<comm>.<pid>.prof): the writer and `collector dump`'s hooks; the reader is sampler_reader.h. */
#ifndef COLLECTOR_SAMPLER_H
#define COLLECTOR_SAMPLER_H

#include "formats/format.h"

extern const struct format sampler_format;

int sampler_write(const struct model *m, const struct export_options *opts);
bool sampler_recognize(const char *path, const unsigned char *head, size_t n);
int sampler_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_SAMPLER_H */
