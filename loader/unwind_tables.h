/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: the unwind tables in the sampling program's maps
 * (bpf/unwind.bpf.h): images' rows and page indexes appended to the two
 * arrays through shared mappings of them, and each process's executable
 * mappings written to unwind_procs.  Rows are never moved or freed during
 * a run: an image is added once and shared by every process that maps it
 * (the caller keeps the cache); when the arrays are full an image gets no
 * table and its frames are walked by frame pointer.
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

/*
 * Appends one image's table: rows[0..n_rows), and pages[0..n_pages]
 * (n_pages + 1 entries: pages[p] the row holding at page p's start, as
 * symbols/cfi_table.h builds them, relative to rows).  *first_page is
 * where its pages went, for struct collector_unwind_map.  Returns 0,
 * -ENOSPC when the arrays cannot hold it, or -EINVAL.
 */
int unwind_tables_add_image(struct unwind_tables *t, const struct collector_unwind_row *rows,
			    uint32_t n_rows, const uint32_t *pages, uint32_t n_pages,
			    uint32_t *first_page);

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
