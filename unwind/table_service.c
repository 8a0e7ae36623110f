// SPDX-License-Identifier: GPL-2.0
/* --call-graph cfi: the requests for tables, their order, and the thread
 * that serves them. */
#include "unwind/table_service_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct unwind_service *unwind_service_new(const struct unwind_maps *maps,
					  struct table_cache *cache)
{
	struct unwind_service *us = calloc(1, sizeof(*us));

	if (!us) {
		table_cache_close(cache);
		return NULL;
	}
	us->maps = *maps;
	us->cache = cache;
	return us;
}

void unwind_service_free(struct unwind_service *us)
{
	if (!us)
		return;
	unwind_service_stop(us);
	images_free(us);
	processes_free(us);
	table_cache_close(us->cache);
	free(us->pending);
	free(us);
}

/* Process pid is to be served (once), the image that holds pc first (0:
 * none known). */
static void add_pending(struct unwind_service *us, pid_t pid, uint64_t pc)
{
	for (size_t i = 0; i < us->n_pending; i++) {
		if (us->pending[i].pid == pid) {
			if (pc)
				us->pending[i].hot_pc = pc;
			return;
		}
	}
	if (us->n_pending == us->cap_pending) {
		size_t cap = us->cap_pending ? 2 * us->cap_pending : 32;
		struct pending *v = realloc(us->pending, cap * sizeof(*v));

		if (!v)
			return; /* it asks again */
		us->pending = v;
		us->cap_pending = cap;
	}
	us->pending[us->n_pending++] = (struct pending){ .pid = pid, .hot_pc = pc,
							  .hot = NO_IMAGE };
	us->n_fresh++;
}

void unwind_service_share_maps(struct unwind_service *us, struct maps_store *store)
{
	us->shared_maps = store;
}

void unwind_service_add_process(struct unwind_service *us, pid_t pid)
{
	add_pending(us, pid, 0);
}

/* Process pid's mapping table from the images that have tables now,
 * built or in the cache on disk: nothing is built for it.  Its maps as
 * they were at asked_ns or later. */
static void serve_ready(struct unwind_service *us, pid_t pid, uint64_t asked_ns, uint64_t *count)
{
	bool complete;

	if (process_write(us, pid, asked_ns, &complete, NULL, true) == 0)
		(*count)++;
}

/* Process tgid exec'd, asked for its tables, or they were dropped. */
static void request(void *ctx, const struct collector_unwind_request *r)
{
	struct unwind_service *us = ctx;
	pid_t pid = r->hdr.tgid;
	size_t k;

	if (r->hdr.kind == COLLECTOR_EV_UNWIND_GONE) {
		process_drop(us, pid);
		return;
	}
	/* at exec: its executable and ld.so are mapped, with tables if they
	 * are built or cached (the libraries ld.so maps next ask in turn) */
	if (r->hdr.kind == COLLECTOR_EV_UNWIND_EXEC) {
		/* -a reads it late (bpf/sample.bpf.c): by then a shell's
		 * tool is gone */
		if (!process_gone(pid))
			serve_ready(us, pid, r->hdr.ktime_ns, &us->st.served_exec);
		return;
	}
	/* built for at its second request (the kernel side asks again 20 ms
	 * later while it still has no tables): the many processes of a busy
	 * system that live for a sample or two (a shell's tools) do not make
	 * the running programs wait behind their tables.  At the first, it
	 * gets what is built or cached: a build's compilers, run again and
	 * again, have theirs at once */
	for (k = 0; k < ASKED_ONCE && us->asked_once[k] != pid; k++)
		;
	if (k == ASKED_ONCE) {
		us->asked_once[us->n_asked_once++ % ASKED_ONCE] = pid;
		/* read now, not the decoder's reading: the decoder falls back
		 * on the service's readings once a process is gone (summed
		 * stacks decoded at the end), and needs one newer than its own:
		 * with the decoder's reading taken here too, test_perf_node's
		 * JIT frames went unresolved in 2 runs of about 50 under ASan */
		serve_ready(us, pid, MAPS_STORE_FRESH, &us->st.served_first);
		return;
	}
	add_pending(us, pid, r->pc);
}

/* Writes the mapping table of the pending processes from first on; keeps
 * those that still lack images. */
static void serve_pending(struct unwind_service *us, size_t first)
{
	size_t kept = first;

	for (size_t i = first; i < us->n_pending; i++) {
		bool complete;
		/* read again: its tables were written from an older reading */
		int err = process_write(us, us->pending[i].pid, MAPS_STORE_FRESH, &complete,
					&us->pending[i], false);

		if (!err && !complete)
			us->pending[kept++] = us->pending[i];
	}
	us->n_pending = kept;
	us->n_fresh = 0;
}

/* The smallest queued image, or NULL. */
static struct cfi_image *smallest_queued(struct unwind_service *us)
{
	struct cfi_image *best = NULL;

	for (size_t i = 0; i < us->n_images && us->n_queued; i++) {
		struct cfi_image *img = &us->images[i];

		if (img->state == IMAGE_QUEUED && (!best || img->file.size < best->file.size))
			best = img;
	}
	return best;
}

/* The image to build next: of the waiting process with the least left to
 * build (shortest job first: the waits add up to the least), the one its
 * PC was sampled in, else its smallest; or else the smallest queued (an
 * image of processes that have exited since).  A small program gets its
 * tables within a few images' time, however many big ones (a browser, an
 * interpreter, a JIT runtime) are waiting; and new processes keep coming
 * in a busy system, so newest-first would leave a running one waiting for
 * long.  The hot image first: its samples are most of the process's (an
 * interpreter's loop, a library's hot function), they get whole stacks
 * an image or more sooner. */
static struct cfi_image *next_image(struct unwind_service *us)
{
	struct cfi_image *pick = NULL;
	uint64_t least = UINT64_MAX;

	for (size_t i = 0; i < us->n_pending; i++) {
		const struct pending *pp = &us->pending[i];
		struct cfi_image *small = NULL;
		uint64_t left = 0;

		for (uint32_t k = 0; k < pp->n_waited; k++) {
			struct cfi_image *img = &us->images[pp->waited[k]];

			if (img->state != IMAGE_QUEUED)
				continue;
			left += img->file.size;
			if (!small || img->file.size < small->file.size)
				small = img;
		}
		if (pp->hot != NO_IMAGE && us->images[pp->hot].state == IMAGE_QUEUED)
			small = &us->images[pp->hot];
		if (small && left < least) {
			pick = small;
			least = left;
		}
	}
	return pick ? pick : smallest_queued(us);
}

/* Serves the requests (read first from their ring): mapping tables from
 * what is built, then images built, smallest first, for about budget_ns.
 * Returns true while work is left. */
static bool work(struct unwind_service *us, uint64_t budget_ns)
{
	uint64_t now = monotonic_ns(), end = now + budget_ns;
	struct cfi_image *img;
	bool built = false;

	us->maps.ops->read_requests(us->maps.maps, request, us);
	/* new requests at once, from the images already built */
	if (us->n_fresh)
		serve_pending(us, us->n_pending - us->n_fresh);
	if (!us->n_pending)
		return false;
	/* an image at least, however long it takes, so that work advances */
	while ((img = next_image(us))) {
		images_build(us, img);
		built = true;
		if ((now = monotonic_ns()) >= end)
			break;
	}
	/* reading every waiting process's maps again costs: not more often
	 * than every few milliseconds while images are being built */
	if (built && (!us->n_queued || now >= us->served_ns + 5000000)) {
		serve_pending(us, 0);
		us->served_ns = now;
	}
	return us->n_pending != 0;
}

/* Images built between two looks at the requests, at most (and one image). */
#define WORK_SLICE_NS 20000000ULL
/* With nothing to do the thread sleeps until a request or the stop: a
 * wake-up every 50 ms to look at the stop flag was 0.07% of a core, 70%
 * of the collector's CPU in user space on a -p run at 999 Hz (and twice
 * bpftrace's). */
static void *worker(void *arg)
{
	struct unwind_service *us = arg;
	struct pollfd pfd[2] = {
		{ .fd = us->maps.ops->requests_fd(us->maps.maps), .events = POLLIN },
		{ .fd = us->stop_fd, .events = POLLIN },
	};
	bool left = true; /* the -p processes, at once */

	while (!us->stop) {
		if (!left)
			poll(pfd, 2, -1);
		left = work(us, WORK_SLICE_NS);
	}
	return NULL;
}

int unwind_service_start(struct unwind_service *us)
{
	int err;

	us->stop = false;
	us->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (us->stop_fd < 0) {
		err = errno;
		fprintf(stderr, "collector: cannot start the unwind tables' thread: %s\n",
			strerror(err));
		return -err;
	}
	err = pthread_create(&us->thread, NULL, worker, us);
	if (err) {
		close(us->stop_fd);
		us->stop_fd = -1;
		fprintf(stderr, "collector: cannot start the unwind tables' thread: %s\n",
			strerror(err));
		return -err;
	}
	us->running = true;
	return 0;
}

void unwind_service_stop(struct unwind_service *us)
{
	if (!us || !us->running)
		return;
	us->stop = true;
	if (eventfd_write(us->stop_fd, 1) != 0)
		fprintf(stderr, "collector: cannot wake the unwind tables' thread: %s\n",
			strerror(errno));
	pthread_join(us->thread, NULL);
	close(us->stop_fd);
	us->stop_fd = -1;
	us->running = false;
}

void unwind_service_get_stats(const struct unwind_service *us, struct unwind_service_stats *st)
{
	struct unwind_maps_usage u;

	*st = us->st;
	us->maps.ops->usage(us->maps.maps, &u);
	st->map_bytes = u.map_bytes;
	st->rows_max = u.max_rows;
	st->loader_bytes = us->build_peak_bytes + us->cap_images * sizeof(*us->images) +
			   us->cap_users * sizeof(*us->users) +
			   us->cap_pending * sizeof(*us->pending) +
			   (us->by_file.cap + us->by_pid.cap) * (sizeof(struct idmap_entry) + 1);
	for (size_t i = 0; i < us->n_users; i++)
		st->loader_bytes += us->users[i].n * sizeof(uint32_t);
}
