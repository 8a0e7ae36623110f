/* SPDX-License-Identifier: GPL-2.0 */
/* HPCToolkit databases (hpctoolkit/): the writer and `collector dump`'s hooks; the reader is hpctoolkit_reader.h. */
#ifndef COLLECTOR_HPCTOOLKIT_H
#define COLLECTOR_HPCTOOLKIT_H

#include "formats/format.h"

extern const struct format hpctoolkit_format;

int hpctoolkit_write(const struct model *m, const struct export_options *opts);
bool hpctoolkit_recognize(const char *path, const unsigned char *head, size_t n);
int hpctoolkit_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_HPCTOOLKIT_H */
