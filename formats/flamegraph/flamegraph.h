/* SPDX-License-Identifier: GPL-2.0 */
/* Flame graph page (flamegraph.html): the writer and `collector dump`'s hooks; the reader is flamegraph_reader.h. */
#ifndef COLLECTOR_FLAMEGRAPH_H
#define COLLECTOR_FLAMEGRAPH_H

#include "formats/format.h"

extern const struct format flamegraph_format;

int flamegraph_write(const struct model *m, const struct export_options *opts);
bool flamegraph_recognize(const char *path, const unsigned char *head, size_t n);
int flamegraph_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_FLAMEGRAPH_H */
