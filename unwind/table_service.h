/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --call-graph cfi: which unwind tables the BPF program gets (the
 * OpenTelemetry eBPF profiler's process manager).  A table is built per
 * executable segment of an image (unwind/cfi_table.h), once per run,
 * kept by device and inode, and loaded into the maps once, through the
 * interface of unwind/unwind_maps.h (loader/ implements it), shared by
 * every process that maps it.
 *
 * A process's mapping table is written at its exec (a
 * COLLECTOR_EV_UNWIND_EXEC record: its executable and ld.so are mapped)
 * and when it asks (a sample without a table, or outside its known
 * mappings: a COLLECTOR_EV_UNWIND_MISS record), in a ring of their own.
 * At exec and at its first request it gets only what is ready: images
 * built, or whose tables the cache on disk holds (table_cache.h); the
 * mappings of the others are left out, so that a sample there asks again.
 * At its second request (20 ms on: the many processes of a busy system
 * that live for a sample or two get nothing built) it is written at once
 * with the images already built, and the images it still needs are built
 * shortest job first (the image it was sampled in first), so that one big
 * image (a browser, a JIT runtime) does not delay every small program's
 * tables, and its mapping table is written again as they come.  When the
 * maps are full, the images no live process maps are evicted (the longest
 * unused first).  Until then its frames there are walked by frame
 * pointer.  That is a thread's work, between unwind_service_start and
 * unwind_service_stop: the drain of the samples (hundreds of new
 * processes to resolve, in a system-wide run) does not delay it.  Nothing
 * else may be called in between.
 *
 * Before that, unwind_service_add_process names the -p processes, served
 * first as the thread starts (with sampling: a running process's samples
 * are not lost while its tables are built, they fall back and are
 * counted); a launched command's executable, interpreter and the
 * libraries it names are built before it is let go
 * (unwind_service_prepare_command).
 *
 * The parts: table_service.c (requests, scheduling, the thread),
 * table_images.c (the images: opening, debug files, building, eviction),
 * table_processes.c (a process's mappings into its mapping table),
 * table_cache.c (the tables kept on disk across runs: an image seen in an
 * earlier run gets its tables read, not built).
 */
#ifndef COLLECTOR_TABLE_SERVICE_H
#define COLLECTOR_TABLE_SERVICE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/table_cache.h"
#include "unwind/unwind_maps.h"

struct unwind_service;

/* NULL without memory.  maps is copied; what it points at must outlive
 * the service.  cache: the tables on disk (unwind/table_cache.h), or NULL;
 * the service closes it. */
struct unwind_service *unwind_service_new(const struct unwind_maps *maps,
					  struct table_cache *cache);
void unwind_service_free(struct unwind_service *us);

/* Builds and loads the tables of executable `path` and of what it will
 * map at once (its interpreter, its DT_NEEDED libraries found where ld.so
 * looks, lib/path.h). */
void unwind_service_prepare_command(struct unwind_service *us, const char *path);

/* Every reading of a process's maps the service makes is put in store
 * too (lib/maps_store.h), for the tracker; NULL: none.  Call before
 * unwind_service_start. */
struct maps_store;
void unwind_service_share_maps(struct unwind_service *us, struct maps_store *store);

/* Builds and loads the tables of the executable files process pid maps
 * now, by the paths its maps show (one in another mount namespace is
 * left for its first request): for a look too short to wait for them
 * (`collector stacks`, whose 0.1 s went by before python3.13's tables
 * under ASan, every sample of a running thread then a copy with no
 * Python frame). */
void unwind_service_prepare_process(struct unwind_service *us, pid_t pid);

/* Process pid (-p) gets its tables first when the thread starts. */
void unwind_service_add_process(struct unwind_service *us, pid_t pid);

/* The thread that serves the requests.  0 or a negative errno. */
int unwind_service_start(struct unwind_service *us);
/* Ends it (nothing when it was not started). */
void unwind_service_stop(struct unwind_service *us);

struct unwind_service_stats {
	uint64_t images, images_failed, rows, refreshes;
	uint64_t index_entries; /* the rows' page indexes, in the same maps */
	uint64_t open_failed;   /* images not opened when met (tried again later) */
	uint64_t images_built;  /* tables built from an image's CFI */
	uint64_t cache_hits;    /* tables read from the cache on disk */
	uint64_t cache_written; /* tables written to it */
	uint64_t cache_refused; /* files in it that did not validate (rebuilt) */
	/* mapping tables written from what was built or cached: at exec,
	 * at a first request */
	uint64_t served_exec, served_first;
	uint64_t debug_files;   /* images whose .debug_frame came from a debug file */
	uint64_t images_evicted, rows_evicted; /* space given to others */
	uint64_t images_no_space; /* tables not loaded: no space left */
	uint64_t build_ns;      /* building and loading tables */
	uint64_t map_bytes;     /* the kernel's arrays */
	uint64_t rows_max;
	uint64_t loader_bytes;  /* the thread's caches, and one table being built */
};
void unwind_service_get_stats(const struct unwind_service *us, struct unwind_service_stats *st);

#endif /* COLLECTOR_TABLE_SERVICE_H */
