/* SPDX-License-Identifier: GPL-2.0 */
/* DCPI per-image profiles (dcpi/<image>.prof): the writer and `collector dump`'s hooks; the reader is dcpi_reader.h. */
#ifndef COLLECTOR_DCPI_H
#define COLLECTOR_DCPI_H

#include "formats/format.h"

extern const struct format dcpi_format;

int dcpi_write(const struct model *m, const struct export_options *opts);
bool dcpi_recognize(const char *path, const unsigned char *head, size_t n);
int dcpi_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_DCPI_H */
