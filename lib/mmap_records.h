/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's records of new code mappings, as perf takes them: a dummy
 * software event on every CPU, for every process, that counts nothing and
 * asks for PERF_RECORD_MMAP2 (each executable mapping made: mmap, and
 * mprotect adding PROT_EXEC; the kernel's own [vdso] and [uprobes] too),
 * PERF_RECORD_COMM at an exec and PERF_RECORD_FORK, each with its time
 * (CLOCK_MONOTONIC).  Each drain reads every CPU's ring, puts the records
 * in time order (a process's exec and its first mmap may be on two CPUs)
 * and applies them to a maps store (lib/maps_store.h), which drains
 * before each reading.
 *
 * What the records cannot say: a munmap (a mapping stays until another is
 * placed over it, as perf keeps it), and what was mapped before the run
 * (the store reads /proc once for such a process).  Records the kernel
 * could not write (a full ring) make every reading stale: each process's
 * maps are read from /proc again, once, and followed from there.
 */
#ifndef COLLECTOR_MMAP_RECORDS_H
#define COLLECTOR_MMAP_RECORDS_H

#include <stdint.h>

#include "lib/maps_store.h"

struct mmap_records;

/* Opens the records on every online CPU and makes them s's feed
 * (maps_store_follow).  0 or a negative errno (perf_event_open's: -EACCES
 * without CAP_PERFMON, -ENOMEM), *out then NULL and s as it was. */
int mmap_records_open(struct maps_store *s, struct mmap_records **out);
/* Takes the feed from the store, then closes; NULL is a no-op. */
void mmap_records_close(struct mmap_records *mr);

struct mmap_records_counts {
	uint64_t mmaps, execs, forks; /* records applied */
	uint64_t forks_exec;          /* forks whose child exec'd in the same drain: no copy */
	uint64_t lost;                /* records the kernel could not write */
};
void mmap_records_counts(struct mmap_records *mr, struct mmap_records_counts *out);

#endif /* COLLECTOR_MMAP_RECORDS_H */
