/* SPDX-License-Identifier: GPL-2.0 */
/* Callgrind profiles (callgrind.out.<pid>): the writer and `collector dump`'s hooks; the reader is callgrind_reader.h. */
#ifndef COLLECTOR_CALLGRIND_H
#define COLLECTOR_CALLGRIND_H

#include "formats/format.h"

extern const struct format callgrind_format;

int callgrind_write(const struct model *m, const struct export_options *opts);
bool callgrind_recognize(const char *path, const unsigned char *head, size_t n);
int callgrind_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_CALLGRIND_H */
