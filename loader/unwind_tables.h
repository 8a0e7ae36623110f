/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: the unwind tables in the sampling program's maps
 * (bpf/unwind.bpf.h), behind the unwind service's interface
 * (unwind/unwind_maps.h): images' rows and page indexes written through
 * shared mappings of the arrays that hold them, and each process's executable
 * mappings written to unwind_procs.  An image is added once and shared by
 * every process that maps it (the caller keeps the cache).  Its space is
 * taken from a free list of each array (lib/extents.h) and given back
 * when the caller removes it (no process maps it any more): rows are never
 * moved while in use, since the BPF program reads them without a lock.
 * The rows are kept in chunks (bpf/collector.h): one at the start, another
 * added whenever no free range is long enough, up to a cap; at the cap
 * the caller removes images or the image gets no table (its frames are
 * walked by frame pointer).
 */
#ifndef COLLECTOR_UNWIND_TABLES_H
#define COLLECTOR_UNWIND_TABLES_H

#include <stdint.h>
#include <stddef.h>

#include "bpf/collector.h"
#include "loader/bpf_session.h"
#include "unwind/unwind_maps.h"

struct unwind_tables;

/* Maps the arrays of a session opened with cfg.cfi, the rows to grow up
 * to max_rows.  0 or a negative errno. */
int unwind_tables_open(struct unwind_tables **out, struct bpf_session *s, uint32_t max_rows);
void unwind_tables_close(struct unwind_tables *t);


/* The maps behind the unwind service's interface (unwind/unwind_maps.h):
 * out->maps is t. */
void unwind_tables_maps(struct unwind_tables *t, struct unwind_maps *out);

#endif /* COLLECTOR_UNWIND_TABLES_H */
