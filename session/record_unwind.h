/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi's part of a run (session/session.c): the unwind tables' maps
 * and their service (unwind/table_service.h), the store of maps readings
 * that the service and the decoder share (lib/maps_store.h), with -a the
 * kernel's mmap records that keep those readings current
 * (lib/mmap_records.h), and their figures for the summary.
 */
#ifndef COLLECTOR_RECORD_UNWIND_H
#define COLLECTOR_RECORD_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_session;
struct model;
struct tracker;

struct record_unwind {
	struct unwind_tables *tables;   /* the BPF maps the service writes */
	struct unwind_service *service; /* NULL: not --call-graph cfi */
	struct maps_store *shared_maps; /* NULL without memory: each reads /proc */
	struct mmap_records *records;   /* -a, once sampling runs */
};

/* The tables' maps of session bpf (max_rows rows) and their service,
 * sharing its readings of maps with tracker t; 0 or a negative errno,
 * said on stderr. */
int record_unwind_open(struct record_unwind *ru, struct bpf_session *bpf, uint32_t max_rows,
		       struct tracker *t);
/* -a: every process exec'd from now on followed through the kernel's
 * records (a message, and /proc, when they cannot be opened); tracker t
 * then reads an exec'd process's maps at its first sample. */
void record_unwind_follow_mmaps(struct record_unwind *ru, struct tracker *t);
/* The run's loop: the records read, so that they do not pile up. */
void record_unwind_refresh(struct record_unwind *ru);
/* Stops the service; with verbose, its figures into m's summary. */
void record_unwind_finish(struct record_unwind *ru, struct model *m, bool verbose);
void record_unwind_close(struct record_unwind *ru);

#endif /* COLLECTOR_RECORD_UNWIND_H */
