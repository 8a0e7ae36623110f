/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: the unwind tables in the sampling program's maps
 * (bpf/unwind.bpf.h): images' rows and page indexes appended to the two
 * arrays through shared mappings of them, and each process's executable
 * mappings written to unwind_procs.  An image is added once and shared by
 * every process that maps it (the caller keeps the cache).  Its space is
 * taken from a free list of each array (lib/extents.h) and given back
 * when the caller removes it (no process maps it any more): rows are never
 * moved while in use, since the BPF program reads them without a lock.
 * When no free range is long enough, the caller removes images or the
 * image gets no table (its frames are walked by frame pointer).
 */
#ifndef COLLECTOR_UNWIND_TABLES_H
#define COLLECTOR_UNWIND_TABLES_H

#include <stdint.h>
#include <stddef.h>

#include "bpf/collector.h"
#include "loader/bpf_session.h"

struct unwind_tables;

/* Maps the arrays of a session opened with cfg.cfi.  0 or a negative errno. */
int unwind_tables_open(struct unwind_tables **out, struct bpf_session *s);
void unwind_tables_close(struct unwind_tables *t);

/* The environment variable that sets the rows the tables hold (pages a
 * quarter of that), for tests of a full table space. */
#define UNWIND_TABLES_ROWS_ENV "COLLECTOR_CFI_TABLE_ROWS"

/* *rows and *pages (the sizes a session is opened with) as the
 * environment sets them, else left alone. */
void unwind_tables_size(unsigned int *rows, unsigned int *pages);

/* Where an image's table is in the arrays. */
struct unwind_image_space {
	uint32_t first_row, n_rows;
	uint32_t first_page, n_pages; /* first_page: for struct collector_unwind_map */
};

/*
 * Adds one image's table: rows[0..n_rows), and pages[0..n_pages]
 * (n_pages + 1 entries: pages[p] the row holding at page p's start, as
 * symbols/cfi_table.h builds them, relative to rows), into free space.
 * *out says where it went.  Returns 0, -ENOSPC when no free range of the
 * arrays can hold it, -EINVAL, or -ENOMEM.
 */
int unwind_tables_add_image(struct unwind_tables *t, const struct collector_unwind_row *rows,
			    uint32_t n_rows, const uint32_t *pages, uint32_t n_pages,
			    struct unwind_image_space *out);
/* Gives an image's space back; no mapping table may point at it (the
 * caller has rewritten or dropped those of the processes that mapped it). */
void unwind_tables_remove_image(struct unwind_tables *t, const struct unwind_image_space *sp);

/* Sets (replaces) process tgid's mappings. */
int unwind_tables_set_process(struct unwind_tables *t, uint32_t tgid,
			      const struct collector_unwind_proc *p);
void unwind_tables_forget_process(struct unwind_tables *t, uint32_t tgid);

/* The requests for tables and the news of dropped ones (struct
 * collector_unwind_request, in a ring of their own): an fd that epoll
 * reports readable when a request comes, and their reading, fn called with
 * each. */
int unwind_tables_requests_fd(struct unwind_tables *t);
int unwind_tables_read_requests(struct unwind_tables *t,
				void (*fn)(void *ctx, const struct collector_unwind_request *r),
				void *ctx);

struct unwind_tables_usage {
	uint64_t rows, max_rows, pages, max_pages;
	uint64_t map_bytes;  /* the two arrays, as allocated in the kernel */
};
void unwind_tables_usage(const struct unwind_tables *t, struct unwind_tables_usage *u);

#endif /* COLLECTOR_UNWIND_TABLES_H */
