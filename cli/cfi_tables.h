/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: which unwind tables the BPF program gets.  A table is
 * built per executable segment of an image (symbols/cfi_table.h), once per
 * run, cached by device and inode, and loaded into the maps once
 * (loader/unwind_tables.h), shared by every process that maps it.
 *
 * A process's mapping table is written when it asks (its first sample, or
 * a sample outside its known mappings: a COLLECTOR_EV_UNWIND_MISS record
 * in a ring of its own), at once with the images already built; the
 * images it still needs are built shortest job first (the image it was
 * sampled in first), so that one big image (a browser, a JIT runtime)
 * does not delay every small program's tables, and its mapping table is
 * written again as they come.  When the maps are full, the images no live
 * process maps are evicted (the longest unused first).  Until then its
 * frames there are walked by frame pointer.  That is a thread's work,
 * between cfi_tables_start and cfi_tables_stop: the drain of the samples
 * (hundreds of new processes to resolve, in a system-wide run) does not
 * delay it.  Nothing else may be called in between.
 *
 * Before that, cfi_tables_add_process names the -p processes, served
 * first as the thread starts (with sampling: a running process's samples
 * are not lost while its tables are built, they fall back and are
 * counted); a launched command's executable, interpreter and the
 * libraries it names are built before it is let go
 * (cfi_tables_prepare_command).
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

/* Process pid (-p) gets its tables first when the thread starts. */
void cfi_tables_add_process(struct cfi_tables *ct, pid_t pid);

/* The thread that serves the requests.  0 or a negative errno. */
int cfi_tables_start(struct cfi_tables *ct);
/* Ends it (nothing when it was not started). */
void cfi_tables_stop(struct cfi_tables *ct);

struct cfi_tables_stats {
	uint64_t images, images_failed, rows, refreshes;
	uint64_t debug_files;   /* images whose .debug_frame came from a debug file */
	uint64_t images_evicted, rows_evicted; /* space given to others */
	uint64_t images_no_space; /* tables not loaded: no space left */
	uint64_t build_ns;      /* building and loading tables */
	uint64_t map_bytes;     /* the kernel's arrays */
	uint64_t rows_max;
	uint64_t loader_bytes;  /* the thread's caches, and one table being built */
};
void cfi_tables_get_stats(const struct cfi_tables *ct, struct cfi_tables_stats *st);

#endif /* COLLECTOR_CFI_TABLES_H */
