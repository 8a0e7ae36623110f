/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The newest reading of a process's executable mappings (what both of
 * its users look at: code, for symbols and for unwind tables), shared
 * between threads: the unwind table service reads a process's maps at its exec and
 * at its requests, promptly, in its own thread, and puts each reading
 * here; the tracker decodes later (summed stacks at an interval's end),
 * when a short-lived process is gone and its maps can no longer be read,
 * and takes the reading from here instead.  Measured: under a build loop
 * (-a -F 499), 12% of the stacks were cut to one unknown frame because the
 * tracker had read a compiler's maps at its exec, before ld.so mapped its
 * libraries, and the compiler was gone when its stacks were decoded.
 *
 * The tracker also takes the service's readings while the process lives,
 * and the service the tracker's at an exec: the service reads a process's
 * maps at its exec to write its first tables, and the tracker reads them at
 * the same exec to decode its samples; one reading serves both
 * (maps_store_read).  At a request for tables the service reads anew, so
 * that a gone process's newest reading is the service's.  Measured: under
 * a build loop, the two readings at each exec were 21% of a continuous -a
 * run's CPU.
 *
 * A reading is procmaps_read_exec's: the kernel lists the executable
 * mappings alone (PROCMAP_QUERY), 7x cheaper than its text of them all.
 *
 * With the kernel's mmap records (lib/mmap_records.h, -a), readings are
 * kept current instead of read again: a process exec'd during the run is
 * followed from its exec (its mappings as the records place them), and
 * one that was running before from its first reading of /proc; a reading
 * then drains the records and copies.  Measured: /proc was 18% of the
 * collector's CPU under a build loop (opening the maps file, the ioctls),
 * read 1.8 times per exec; and a process gone before its first reading
 * (a compiler's 5 ms helper) has its mappings all the same.
 *
 * The store holds MAPS_STORE_SLOTS processes, the one first put the
 * longest ago making room; its functions lock it.  With -a the tracker
 * reads an exec'd process's maps at its first sample (the in-kernel sums
 * are read every second), so a slot must outlive that: a build loop
 * (about 100 new processes a second on 2 CPUs) keeps one 20 s; a few
 * KiB each (a short tool's dozen mappings and their paths).
 */
#ifndef COLLECTOR_MAPS_STORE_H
#define COLLECTOR_MAPS_STORE_H

#include <stdint.h>
#include <sys/types.h>

#include "lib/procmaps.h"

#define MAPS_STORE_SLOTS 2048

struct maps_store;

struct maps_store *maps_store_new(void);
void maps_store_free(struct maps_store *s);

/* Keeps a copy of maps, process pid's mappings as read at read_ns
 * (CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns), in place of an older
 * reading of pid. */
void maps_store_put(struct maps_store *s, pid_t pid, uint64_t read_ns, const struct procmaps *maps);

/* A copy of pid's reading (*out, which the caller frees with
 * procmaps_free) and when it was read, when one was made after
 * not_before_ns; 0, -ENOENT, or -ENOMEM. */
int maps_store_get(struct maps_store *s, pid_t pid, uint64_t not_before_ns, struct procmaps *out,
		   uint64_t *read_ns);

/* not_before_ns for a reading of /proc made now (and shared) */
#define MAPS_STORE_FRESH UINT64_MAX

/* Process pid's executable mappings as they are at not_before_ns or later
 * (*out, which the caller frees with procmaps_free): a copy of a reading
 * made since, else procmaps_read_exec() now, kept for the other thread;
 * the time of the reading in *read_ns when read_ns is not NULL.  s may be
 * NULL (read only).  0 or procmaps_read_exec()'s error. */
int maps_store_read(struct maps_store *s, pid_t pid, uint64_t not_before_ns, struct procmaps *out,
		    uint64_t *read_ns);

/* How many maps_store_read() calls read /proc, how many took a reading
 * made by the other thread, and how many one kept current by records. */
void maps_store_counts(struct maps_store *s, uint64_t *read, uint64_t *reused, uint64_t *followed);

/* From now on, drain(ctx) applies the records that came since its last
 * call through the four calls below, one drain at a time: before every
 * maps_store_read(), and at maps_store_refresh() (the run's loop, so
 * that records do not pile up unread). */
void maps_store_follow(struct maps_store *s, void (*drain)(void *ctx), void *ctx);
void maps_store_refresh(struct maps_store *s);

/* The records, in their time order (ns: CLOCK_MONOTONIC), each ignored
 * for a reading made after it.  An exec: pid has no mappings, and is
 * followed.  A fork: child has parent's mappings, followed if parent's
 * are (else a reading of an earlier process with child's pid is no
 * longer current); parent 0: none copied, for a child that execs next.  A mapping of a followed pid: placed over what was
 * there (procmaps_place); 0 or -ENOMEM (pid then no longer followed). */
void maps_store_exec(struct maps_store *s, pid_t pid, uint64_t ns);
void maps_store_fork(struct maps_store *s, pid_t child, pid_t parent, uint64_t ns);
int maps_store_map(struct maps_store *s, pid_t pid, uint64_t ns, const struct procmap_entry *e);
/* Records were lost: no reading is current any more (each is read from
 * /proc at its next maps_store_read(), and followed again). */
void maps_store_unfollow(struct maps_store *s);

#endif /* COLLECTOR_MAPS_STORE_H */
