/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: which unwind tables the BPF program gets.  An image's
 * table (symbols/cfi_table.h) is built once per run, cached by device and
 * inode, and loaded into the maps once (loader/unwind_tables.h), shared
 * by every process that maps it; a process's mapping table is written
 * when it asks (its first sample, or a sample outside its known mappings:
 * a COLLECTOR_EV_UNWIND_MISS record), and for -p before sampling starts.
 * A launched command's executable, its interpreter and the libraries it
 * names are loaded before it is let go.
 */
#ifndef COLLECTOR_CFI_TABLES_H
#define COLLECTOR_CFI_TABLES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "loader/bpf_session.h"

struct cfi_tables;

/* NULL without memory or when the session's maps cannot be mapped (with
 * a message). */
struct cfi_tables *cfi_tables_new(struct bpf_session *s);
void cfi_tables_free(struct cfi_tables *ct);

/* Builds and loads the tables of executable `path` and of what it will
 * map at once (its interpreter, its DT_NEEDED libraries found in the
 * usual directories). */
void cfi_tables_prepare_command(struct cfi_tables *ct, const char *path);

/* Reads process pid's mappings again and gives it their tables.
 * 0 or a negative errno (-ESRCH: gone). */
int cfi_tables_refresh(struct cfi_tables *ct, pid_t pid);

struct cfi_tables_stats {
	uint64_t images, images_failed, rows, refreshes;
	uint64_t build_ns;      /* building and loading tables */
	uint64_t map_bytes;     /* the kernel's arrays */
	uint64_t rows_max;
};
void cfi_tables_get_stats(const struct cfi_tables *ct, struct cfi_tables_stats *st);

#endif /* COLLECTOR_CFI_TABLES_H */
