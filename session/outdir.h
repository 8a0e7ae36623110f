/* SPDX-License-Identifier: GPL-2.0 */
/* The output directory of a run: its default name, and making it ready. */
#ifndef COLLECTOR_OUTDIR_H
#define COLLECTOR_OUTDIR_H

#include <stddef.h>

/* collector-YYYYMMDD-HHMMSS, local time. */
void outdir_default_name(char *buf, size_t size);
/* A fresh output directory: created here, or an existing empty one that is
 * a real directory (never a symlink), with the invoking user's rights
 * (lib/userfs.h): what he could not create is refused, and what is created
 * is his.  0, or a negative errno after a message saying what to do. */
int outdir_make(const char *dir);

#endif /* COLLECTOR_OUTDIR_H */
