/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The unwind service's state, shared by its parts (unwind/table_service.h
 * says which does what); no other folder includes this.
 */
#ifndef COLLECTOR_TABLE_SERVICE_INTERNAL_H
#define COLLECTOR_TABLE_SERVICE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "lib/clock.h"
#include "lib/idmap.h"
#include "lib/maps_store.h"
#include "lib/procmaps.h"
#include "symbols/elfinfo.h"
#include "unwind/table_service.h"

/* Executable segments of an image with a table each (node has three). */
#define MAX_SEGS 4

/* EVICTED: built, then its space given to others (no live process mapped
 * it); queued again when a process maps it.  UNBUILT: met by processes
 * served from what is ready only (at exec, at a first request), and not in
 * the cache on disk; queued when a process asks a second time. */
enum image_state { IMAGE_QUEUED, IMAGE_READY, IMAGE_FAILED, IMAGE_EVICTED, IMAGE_UNBUILT };

/* The table of one executable segment. */
struct cfi_seg {
	uint64_t offset, filesz;  /* the segment in the file */
	uint64_t vmo;             /* p_vaddr - p_offset */
	uint64_t table_base;      /* link-time address of the table's pc 0 */
	uint32_t first_page, n_pages; /* n_pages 0: no table */
	struct unwind_image_space space;
};

/* Where seg's table serves, as the program holds it by file and as a
 * process's mapping table places it: a mapping at file offset pgoff with
 * start <= pgoff < end has its table's pc 0 at runtime address
 * mapping start - pgoff + delta.  For a segment with a table (n_pages). */
static inline struct collector_unwind_image_seg seg_placement(const struct cfi_seg *seg)
{
	return (struct collector_unwind_image_seg){
		.start = seg->offset & ~4095ull,
		.end = seg->offset + seg->filesz,
		.delta = (int64_t)(seg->table_base - seg->vmo),
		.first_page = seg->first_page,
		.n_pages = seg->n_pages,
	};
}

/* One image (a file, or the vDSO). */
struct cfi_image {
	uint64_t dev, inode;
	enum image_state state;
	struct elf_file file;     /* open while queued */
	struct elf_file debug;    /* its separate debug file, while queued */
	bool has_debug;
	struct cfi_seg segs[MAX_SEGS];
	uint32_t n_segs;
	bool published;           /* in the program's table of images (set_image) */
	uint32_t users;           /* processes whose mapping table lists it */
	uint64_t unused_since;    /* when users fell to 0 */
};

/* The images a process's mapping table lists (each counted in its users). */
struct user {
	pid_t pid;
	uint32_t n;
	uint32_t *imgs;
};

/* Processes remembered as having asked once. */
#define ASKED_ONCE 1024

/* Images a process waits for, remembered (beyond, it waits all the same). */
#define WAITED_MAX 8

#define NO_IMAGE UINT32_MAX

/* A process that asked and still lacks images. */
struct pending {
	pid_t pid;
	uint32_t n_waited;
	uint32_t waited[WAITED_MAX]; /* queued images it maps */
	uint64_t hot_pc;          /* where it was sampled without a table (0: unknown) */
	uint32_t hot;             /* the queued image that holds hot_pc, or NO_IMAGE */
};

struct unwind_service {
	struct unwind_maps maps;
	struct maps_store *shared_maps; /* where readings of maps go, or NULL */
	struct table_cache *cache; /* NULL: tables built each run */
	struct idmap by_file;     /* hash of (dev, inode) -> index in images */
	struct cfi_image *images;
	size_t n_images, cap_images;
	size_t n_queued;          /* images in state IMAGE_QUEUED */
	struct pending *pending;  /* processes whose mapping table lacks images */
	size_t n_pending, cap_pending;
	size_t n_fresh;           /* pending[n_pending - n_fresh ..]: not served yet */
	uint64_t served_ns;       /* when the pending processes were last served */
	pid_t asked_once[ASKED_ONCE]; /* processes that asked once lately (a ring) */
	size_t n_asked_once;
	struct user *users;       /* processes with a mapping table */
	size_t n_users, cap_users;
	struct idmap by_pid;      /* pid -> index in users */
	struct unwind_service_stats st;
	uint64_t build_peak_bytes; /* a table's rows and pages while built, at most */
	pthread_t thread;
	bool running;
	volatile bool stop;
	int stop_fd;               /* an eventfd: unwind_service_stop wakes the thread */
};

/* The key of the vDSO, which no file holds. */
#define VDSO_DEV UINT64_MAX

/* table_images.c */

/* The index of the image of file (dev, inode), opened at path (its own
 * name `name` in namespace ns_prefix) and queued when it is new or was
 * evicted (or the collector's own vDSO for dev == VDSO_DEV); SIZE_MAX
 * without memory. */
size_t images_get(struct unwind_service *us, uint64_t dev, uint64_t inode, const char *path,
		  const char *name, const char *ns_prefix);
/* The same without building: an image that is new or was evicted gets its
 * tables from the cache on disk (or, missing there, becomes UNBUILT); the
 * vDSO's are built (a few rows).  The state of the image returned says
 * whether it has them. */
size_t images_get_ready(struct unwind_service *us, uint64_t dev, uint64_t inode, const char *path,
			const char *name, const char *ns_prefix);
/* The index of the known image of file (dev, inode) when images_get (or,
 * with ready_only, images_get_ready) would return it as it is, without
 * opening it; else SIZE_MAX (the caller then finds its path and gets it). */
size_t images_known(const struct unwind_service *us, uint64_t dev, uint64_t inode,
		    bool ready_only);
/* Builds and loads the tables of a queued image's executable segments
 * (read from the cache on disk when they are there). */
void images_build(struct unwind_service *us, struct cfi_image *img);
/* Frees the images (the maps' space is the caller's). */
void images_free(struct unwind_service *us);

/* table_processes.c */

/* Writes pid's mapping table from its maps as they were at not_before_ns
 * or later (the tracker's reading when it made one since: lib/maps_store.h);
 * *complete: every image it maps was built (those it waits for noted in
 * pp, if given).  ready_only: nothing is queued to be built (see
 * images_get_ready); the mappings of images without tables yet are left
 * out, so that a sample there asks again. */
int process_write(struct unwind_service *us, pid_t pid, uint64_t not_before_ns, bool *complete,
		  struct pending *pp, bool ready_only);
/* Process pid's mapping table is gone (exec, exit): its images are
 * released. */
void process_drop(struct unwind_service *us, pid_t pid);
/* Processes that exited without the news reaching us (their ring was
 * full) still hold their images: dropped, with their mapping tables. */
void process_drop_dead(struct unwind_service *us);
/* Whether process pid has exited and been reaped (kill(0) says ESRCH; a
 * zombie is not gone yet). */
bool process_gone(pid_t pid);
void processes_free(struct unwind_service *us);

#endif /* COLLECTOR_TABLE_SERVICE_INTERNAL_H */
