/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The formats collector writes and reads, in the order they are written and
 * tried: a new format is a folder under formats/ and one line in the list
 * in registry.c.  A set of formats is a mask with bit i for the i-th.
 */
#ifndef COLLECTOR_REGISTRY_H
#define COLLECTOR_REGISTRY_H

#include "formats/format.h"

size_t formats_count(void);
const struct format *formats_get(size_t i);
/* The format named `name`, or NULL. */
const struct format *formats_by_name(const char *name);
/* The formats that apply to what the model holds. */
unsigned int formats_applicable(const struct model *m);
/* The formats that can be written from what `have` says (FORMAT_NEEDS_*):
 * formats_needing(FORMAT_NEEDS_SAMPLES) are the sampled profiles. */
unsigned int formats_needing(unsigned int have);
/* True when a format of `mask` needs something of `needs` (FORMAT_NEEDS_*). */
bool formats_need(unsigned int mask, unsigned int needs);
/* Whether a format of mask (0: every format) reads the context switches:
 * when none does, a run need not record them. */
bool formats_use_switches(unsigned int mask);
/* Whether a format of mask (0: every format) writes the samples in time
 * order: when none does, the kernel may sum them by stack. */
bool formats_need_time_order(unsigned int mask);
/* Whether any format of mask (0: all) writes the CRC-32 of the images'
 * files (struct format's needs_image_crc). */
bool formats_need_image_crc(unsigned int mask);
/* Parses "xray,sampler,..." into a mask; -EINVAL after a message naming
 * the unknown format and listing the known ones. */
int formats_parse(const char *list, unsigned int *mask);
/* "xray,sampler,..." (every format), for messages. */
const char *formats_names(void);
/* Writes every format in `mask`; returns 0 or the first error, having
 * tried every format. */
int formats_write(const struct model *m, unsigned int mask, const struct export_options *opts);
/* The format of a file (its first n bytes in head) or directory, or NULL. */
const struct format *formats_recognize(const char *path, const unsigned char *head, size_t n);

#endif /* COLLECTOR_REGISTRY_H */
