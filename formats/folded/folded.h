/* SPDX-License-Identifier: GPL-2.0 */
/* Folded stacks (collector.folded): the writer and `collector dump`'s hooks; the reader is folded_reader.h. */
#ifndef COLLECTOR_FOLDED_H
#define COLLECTOR_FOLDED_H

#include "formats/format.h"

extern const struct format folded_format;

int folded_write(const struct model *m, const struct export_options *opts);
bool folded_recognize(const char *path, const unsigned char *head, size_t n);
int folded_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_FOLDED_H */
