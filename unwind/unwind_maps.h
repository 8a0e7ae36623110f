/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: the one interface between the unwind service
 * (unwind/table_service.h) and the sampling program's maps, as the
 * OpenTelemetry eBPF profiler's processmanager/ebpfapi: loader/ implements
 * it (loader/unwind_tables.h, the only libbpf user), cli/ hands it over,
 * and unwind/ never sees libbpf.  A test can implement it with plain
 * memory.
 *
 * An image's table (rows and a page index, unwind/cfi_table.h) is added
 * once and shared by every process that maps it; each process's
 * executable mappings are written as one struct collector_unwind_proc.
 * Each image's table is also written by file (set_image), for the program
 * to map a process's PCs itself before its table is written.  Rows are
 * never moved while in use (the BPF program reads them without a lock):
 * an image's space is given back only when the caller has rewritten every
 * mapping table that pointed at it, and forgotten the image (forget_image).
 */
#ifndef COLLECTOR_UNWIND_MAPS_H
#define COLLECTOR_UNWIND_MAPS_H

#include <stdint.h>

#include "bpf/collector.h"

/* Where an image's table is in the arrays. */
struct unwind_image_space {
	uint32_t first_row, n_rows;
	/* the page index, in the same space after the rows: first_page is
	 * for struct collector_unwind_map */
	uint32_t first_page, n_pages;
};

struct unwind_maps_usage {
	uint64_t rows, max_rows; /* rows and page index entries */
	uint64_t map_bytes;  /* the arrays, as allocated in the kernel */
};

typedef void unwind_request_fn(void *ctx, const struct collector_unwind_request *r);

struct unwind_maps_ops {
	/* Adds rows[0..n_rows) and the page index pages[0..n_pages] (n_pages
	 * + 1 entries: pages[p] the row holding at page p's start, relative
	 * to rows) into free space; *out says where.  0, -ENOSPC when no free range holds
	 * it, -EINVAL, or -ENOMEM. */
	int (*add_image)(void *maps, const struct collector_unwind_row *rows, uint32_t n_rows,
			 const uint32_t *pages, uint32_t n_pages, struct unwind_image_space *out);
	/* Gives an image's space back (no mapping table points at it). */
	void (*remove_image)(void *maps, const struct unwind_image_space *sp);
	/* Sets (replaces) process tgid's mappings; 0 or a negative errno. */
	int (*set_process)(void *maps, uint32_t tgid, const struct collector_unwind_proc *p);
	void (*forget_process)(void *maps, uint32_t tgid);
	/* Sets (replaces) the table of an image by file, for the program
	 * to find without a process's table (bpf/unwind_learn.bpf.h); 0 or
	 * a negative errno.  Optional, as forget_image. */
	int (*set_image)(void *maps, const struct collector_unwind_image_key *key,
			 const struct collector_unwind_image *img);
	/* The image's table is about to be given back: the program no longer
	 * finds it, nor any mapping it learned before (of any image). */
	void (*forget_image)(void *maps, const struct collector_unwind_image_key *key);
	/* The requests for tables and the news of dropped ones: an fd that
	 * poll reports readable when one comes, and their reading (fn called
	 * with each); the number read or a negative errno. */
	int (*requests_fd)(void *maps);
	int (*read_requests)(void *maps, unwind_request_fn *fn, void *ctx);
	void (*usage)(const void *maps, struct unwind_maps_usage *u);
};

struct unwind_maps {
	const struct unwind_maps_ops *ops;
	void *maps;  /* the implementation's, passed to each op */
};

#endif /* COLLECTOR_UNWIND_MAPS_H */
