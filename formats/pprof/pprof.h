/* SPDX-License-Identifier: GPL-2.0 */
/* pprof profiles (profile.pb.gz): the writer and `collector dump`'s hooks; the reader is pprof_reader.h. */
#ifndef COLLECTOR_PPROF_H
#define COLLECTOR_PPROF_H

#include "formats/format.h"

extern const struct format pprof_format;

int pprof_write(const struct model *m, const struct export_options *opts);
bool pprof_recognize(const char *path, const unsigned char *head, size_t n);
int pprof_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_PPROF_H */
