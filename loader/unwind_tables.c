// SPDX-License-Identifier: GPL-2.0
/* --call-graph cfi: the unwind tables in the sampling program's maps. */
#include "loader/unwind_tables.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/extents.h"

/*
 * The arrays are written through a mapping made for each write and undone
 * after it, not kept: an mmap'ed BPF array is resident in whole from the
 * mmap on (the kernel maps every page at once), and the chunks a build
 * loop's images need (28 MiB) were 28 MiB of a long run's RSS, for rows
 * written once.  They are the kernel's memory either way (the summary's
 * "table maps" with -v, and COLLECTOR_CFI_TABLE_ROWS caps them).
 */
/* The rows: chunks of COLLECTOR_UNWIND_CHUNK_ROWS, added as images need
 * them up to max rows (space.size: the rows of the chunks made, or max). */
struct unwind_rows {
	int outer_fd;                  /* unwind_row_chunks */
	int fd[COLLECTOR_UNWIND_MAX_CHUNKS];
	uint32_t n_chunks;
	uint32_t max;
	struct extents space;
};

struct unwind_tables {
	struct unwind_rows rows; /* every image's rows, then its page index */
	int procs_fd;
	int images_fd;             /* unwind_images */
	struct bpf_session *session;
	struct ring_buffer *requests;
	void (*on_request)(void *ctx, const struct collector_unwind_request *r);
	void *request_ctx;
};

static int request_callback(void *ctx, void *data, size_t size)
{
	struct unwind_tables *t = ctx;
	const struct collector_unwind_request *r = data;

	if (size >= sizeof(*r) && t->on_request &&
	    (r->hdr.kind == COLLECTOR_EV_UNWIND_MISS || r->hdr.kind == COLLECTOR_EV_UNWIND_GONE ||
	     r->hdr.kind == COLLECTOR_EV_UNWIND_EXEC))
		t->on_request(t->request_ctx, r);
	return 0;
}

/* len bytes at byte off of an mmapable array fd, from src, through a
 * mapping of the pages they span.  0 or a negative errno. */
static int write_array(int fd, size_t off, const void *src, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), first = off & ~(page - 1);
	size_t bytes = (off + len - first + page - 1) & ~(page - 1);
	char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)first);

	if (mem == MAP_FAILED)
		return -errno;
	memcpy(mem + (off - first), src, len);
	munmap(mem, bytes);
	return 0;
}

#define CHUNK_BYTES ((size_t)COLLECTOR_UNWIND_CHUNK_ROWS * sizeof(struct collector_unwind_row))

/* One more chunk of rows, put in the program's array of maps: the space
 * grows by its rows (up to the cap).  0 or a negative errno. */
static int add_chunk(struct unwind_rows *r)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	uint32_t k = r->n_chunks, size;
	int fd, err;

	if (k == COLLECTOR_UNWIND_MAX_CHUNKS || r->space.size >= r->max)
		return -ENOSPC;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_chunk", sizeof(uint32_t),
			    sizeof(struct collector_unwind_row), COLLECTOR_UNWIND_CHUNK_ROWS, &opts);
	if (fd < 0)
		return -errno;
	/* the array of maps holds the chunk for the program, the fd for
	 * our writes */
	err = bpf_map_update_elem(r->outer_fd, &k, &fd, BPF_ANY) ? -errno : 0;
	if (err) {
		close(fd);
		return err;
	}
	r->fd[k] = fd;
	r->n_chunks++;
	size = (uint64_t)r->n_chunks * COLLECTOR_UNWIND_CHUNK_ROWS < r->max ?
		       r->n_chunks * COLLECTOR_UNWIND_CHUNK_ROWS : r->max;
	return k == 0 ? extents_init(&r->space, size) : extents_grow(&r->space, size);
}

int unwind_tables_open(struct unwind_tables **out, struct bpf_session *s, uint32_t max_rows)
{
	struct unwind_tables *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->rows.outer_fd = bpf_session_map_fd(s, "unwind_row_chunks");
	t->rows.max = max_rows;
	err = t->rows.outer_fd < 0 ? t->rows.outer_fd : max_rows ? add_chunk(&t->rows) : -EINVAL;
	t->procs_fd = bpf_session_map_fd(s, "unwind_procs");
	if (!err && t->procs_fd < 0)
		err = t->procs_fd;
	t->images_fd = bpf_session_map_fd(s, "unwind_images");
	if (!err && t->images_fd < 0)
		err = t->images_fd;
	t->session = s;
	if (!err) {
		t->requests = ring_buffer__new(bpf_session_map_fd(s, "unwind_requests"),
					       request_callback, t, NULL);
		if (!t->requests)
			err = -errno;
	}
	if (err) {
		unwind_tables_close(t);
		return err;
	}
	*out = t;
	return 0;
}

void unwind_tables_close(struct unwind_tables *t)
{
	if (!t)
		return;
	for (uint32_t k = 0; k < t->rows.n_chunks; k++)
		close(t->rows.fd[k]);
	extents_free(&t->rows.space);
	ring_buffer__free(t->requests);
	free(t);
}

/* Rows [r0, r0 + n) of the space, written from rows (they may span
 * chunks).  0 or a negative errno. */
static int write_rows(struct unwind_rows *r, uint32_t r0, const struct collector_unwind_row *rows,
		      uint32_t n)
{
	while (n) {
		uint32_t k = r0 >> COLLECTOR_UNWIND_CHUNK_SHIFT;
		uint32_t at = r0 & (COLLECTOR_UNWIND_CHUNK_ROWS - 1);
		uint32_t len = COLLECTOR_UNWIND_CHUNK_ROWS - at < n ? COLLECTOR_UNWIND_CHUNK_ROWS - at : n;
		int err = write_array(r->fd[k], (size_t)at * sizeof(*rows), rows,
				      (size_t)len * sizeof(*rows));

		if (err)
			return err;
		rows += len;
		r0 += len;
		n -= len;
	}
	return 0;
}

/* A free range of n rows, adding chunks while none is that long: the
 * space follows what the run's images need; -ENOSPC at the cap (the
 * caller then evicts what no process maps). */
static int get_rows(struct unwind_rows *r, uint32_t n, uint32_t *r0)
{
	int err;

	while ((err = extents_get(&r->space, n, r0)) == -ENOSPC && add_chunk(r) == 0)
		;
	return err;
}

_Static_assert(sizeof(struct collector_unwind_page) == sizeof(struct collector_unwind_row),
	       "a page index entry takes a row's place in the chunks");

/* An image's rows and, right after them in the same space, its page
 * index: one range, so that the index grows with the chunks as the rows
 * do (a separate array was sized once, before the run, for 2 GiB of
 * text at 4 KiB a page, and 256-byte pages would need 16 times that). */
static int add_image(void *maps, const struct collector_unwind_row *rows, uint32_t n_rows,
		     const uint32_t *pages, uint32_t n_pages, struct unwind_image_space *out)
{
	struct unwind_tables *t = maps;
	struct collector_unwind_page *page_mem;
	uint32_t r0;
	int err;

	if (!n_rows || !n_pages || n_rows > UINT32_MAX - n_pages)
		return -EINVAL;
	for (uint32_t p = 0; p < n_pages; p++)
		if (pages[p] >= n_rows || pages[p + 1] >= n_rows || pages[p + 1] < pages[p])
			return -EINVAL;
	page_mem = malloc(n_pages * sizeof(*page_mem));
	if (!page_mem)
		return -ENOMEM;
	err = get_rows(&t->rows, n_rows + n_pages, &r0);
	if (err) {
		free(page_mem);
		return err;
	}
	/* rows first, then the pages that point at them: a program that
	 * finds the pages finds the rows written (the pages are found only
	 * through a mapping table written after this) */
	err = write_rows(&t->rows, r0, rows, n_rows);
	if (!err) {
		for (uint32_t p = 0; p < n_pages; p++) {
			page_mem[p].first = r0 + pages[p];
			page_mem[p].last = r0 + pages[p + 1];
		}
		err = write_rows(&t->rows, r0 + n_rows, (const struct collector_unwind_row *)page_mem,
				 n_pages);
	}
	free(page_mem);
	if (err) {
		extents_put(&t->rows.space, r0, n_rows + n_pages);
		return err;
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*out = (struct unwind_image_space){ r0, n_rows, r0 + n_rows, n_pages };
	return 0;
}

static void remove_image(void *maps, const struct unwind_image_space *sp)
{
	struct unwind_tables *t = maps;

	extents_put(&t->rows.space, sp->first_row, sp->n_rows + sp->n_pages);
}

static int set_process(void *maps, uint32_t tgid, const struct collector_unwind_proc *p)
{
	struct unwind_tables *t = maps;

	return bpf_map_update_elem(t->procs_fd, &tgid, p, BPF_ANY) ? -errno : 0;
}

static void forget_process(void *maps, uint32_t tgid)
{
	struct unwind_tables *t = maps;

	bpf_map_delete_elem(t->procs_fd, &tgid);
}

static int set_image(void *maps, const struct collector_unwind_image_key *key,
		     const struct collector_unwind_image *img)
{
	struct unwind_tables *t = maps;

	return bpf_map_update_elem(t->images_fd, key, img, BPF_ANY) ? -errno : 0;
}

static void forget_image(void *maps, const struct collector_unwind_image_key *key)
{
	struct unwind_tables *t = maps;

	bpf_map_delete_elem(t->images_fd, key);
	/* the program's learned mappings may point at its rows: dropped,
	 * and a program that read the old epoch has ended (a run takes
	 * microseconds) before the caller gives its rows to another */
	bpf_session_next_unwind_epoch(t->session);
	usleep(1000);
}

static int requests_fd(void *maps)
{
	struct unwind_tables *t = maps;

	return ring_buffer__epoll_fd(t->requests);
}

static int read_requests(void *maps, unwind_request_fn *fn, void *ctx)
{
	struct unwind_tables *t = maps;
	int n;

	t->on_request = fn;
	t->request_ctx = ctx;
	n = ring_buffer__consume(t->requests);
	t->on_request = NULL;
	return n;
}

static void usage(const void *maps, struct unwind_maps_usage *u)
{
	const struct unwind_tables *t = maps;

	u->rows = t->rows.space.used;
	u->max_rows = t->rows.space.size;
	u->map_bytes = t->rows.n_chunks * CHUNK_BYTES;
}

static const struct unwind_maps_ops ops = {
	.add_image = add_image,
	.remove_image = remove_image,
	.set_process = set_process,
	.forget_process = forget_process,
	.set_image = set_image,
	.forget_image = forget_image,
	.requests_fd = requests_fd,
	.read_requests = read_requests,
	.usage = usage,
};

void unwind_tables_maps(struct unwind_tables *t, struct unwind_maps *out)
{
	out->ops = &ops;
	out->maps = t;
}
