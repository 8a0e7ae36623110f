/* SPDX-License-Identifier: GPL-2.0 */
/* speedscope profiles (speedscope.json): the writer and `collector dump`'s hooks; the reader is speedscope_reader.h. */
#ifndef COLLECTOR_SPEEDSCOPE_H
#define COLLECTOR_SPEEDSCOPE_H

#include "formats/format.h"

extern const struct format speedscope_format;

int speedscope_write(const struct model *m, const struct export_options *opts);
bool speedscope_recognize(const char *path, const unsigned char *head, size_t n);
int speedscope_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_SPEEDSCOPE_H */
