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

struct unwind_array {
	int fd;
	void *mem;           /* the whole array, shared with the kernel */
	size_t bytes;
	uint32_t max;
	struct extents space;
};

struct unwind_tables {
	struct unwind_array rows, pages;
	int procs_fd;
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

static int array_map(struct unwind_array *a, int fd, size_t value_size)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);

	if (fd < 0)
		return fd;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
		return -errno;
	if (info.value_size != value_size)
		return -EINVAL;
	a->fd = fd;
	a->max = info.max_entries;
	/* array values are 8-byte aligned; ours are 8 bytes */
	a->bytes = ((size_t)info.max_entries * value_size + page - 1) & ~((size_t)page - 1);
	a->mem = mmap(NULL, a->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (a->mem == MAP_FAILED) {
		a->mem = NULL;
		return -errno;
	}
	return extents_init(&a->space, a->max);
}

int unwind_tables_open(struct unwind_tables **out, struct bpf_session *s)
{
	struct unwind_tables *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	err = array_map(&t->rows, bpf_session_map_fd(s, "unwind_rows"),
			sizeof(struct collector_unwind_row));
	if (!err)
		err = array_map(&t->pages, bpf_session_map_fd(s, "unwind_pages"),
				sizeof(struct collector_unwind_page));
	t->procs_fd = bpf_session_map_fd(s, "unwind_procs");
	if (!err && t->procs_fd < 0)
		err = t->procs_fd;
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
	if (t->rows.mem)
		munmap(t->rows.mem, t->rows.bytes);
	if (t->pages.mem)
		munmap(t->pages.mem, t->pages.bytes);
	extents_free(&t->rows.space);
	extents_free(&t->pages.space);
	ring_buffer__free(t->requests);
	free(t);
}

static int add_image(void *maps, const struct collector_unwind_row *rows, uint32_t n_rows,
		     const uint32_t *pages, uint32_t n_pages, struct unwind_image_space *out)
{
	struct unwind_tables *t = maps;
	struct collector_unwind_row *row_mem = t->rows.mem;
	struct collector_unwind_page *page_mem = t->pages.mem;
	uint32_t r0, p0;
	int err;

	if (!n_rows || !n_pages)
		return -EINVAL;
	for (uint32_t p = 0; p < n_pages; p++)
		if (pages[p] >= n_rows || pages[p + 1] >= n_rows || pages[p + 1] < pages[p])
			return -EINVAL;
	err = extents_get(&t->rows.space, n_rows, &r0);
	if (err)
		return err;
	err = extents_get(&t->pages.space, n_pages, &p0);
	if (err) {
		extents_put(&t->rows.space, r0, n_rows);
		return err;
	}
	/* rows first, then the pages that point at them: a program that
	 * finds the pages finds the rows written (the pages are found only
	 * through a mapping table written after this) */
	memcpy(row_mem + r0, rows, (size_t)n_rows * sizeof(*rows));
	for (uint32_t p = 0; p < n_pages; p++) {
		page_mem[p0 + p].first = r0 + pages[p];
		page_mem[p0 + p].last = r0 + pages[p + 1];
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	*out = (struct unwind_image_space){ r0, n_rows, p0, n_pages };
	return 0;
}

static void remove_image(void *maps, const struct unwind_image_space *sp)
{
	struct unwind_tables *t = maps;

	extents_put(&t->rows.space, sp->first_row, sp->n_rows);
	extents_put(&t->pages.space, sp->first_page, sp->n_pages);
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

void unwind_tables_size(unsigned int *rows, unsigned int *pages)
{
	const char *env = getenv(UNWIND_TABLES_ROWS_ENV);
	char *end;
	unsigned long n;

	if (!env || !env[0])
		return;
	n = strtoul(env, &end, 10);
	if (*end || n < 16 || n > (1ul << 26)) {
		fprintf(stderr, "collector: %s=%s ignored: a number of rows from 16 to %lu\n",
			UNWIND_TABLES_ROWS_ENV, env, 1ul << 26);
		return;
	}
	*rows = n;
	*pages = n / 4; /* as the defaults: about a page of text per 4 rows */
}

static void usage(const void *maps, struct unwind_maps_usage *u)
{
	const struct unwind_tables *t = maps;

	u->rows = t->rows.space.used;
	u->max_rows = t->rows.max;
	u->pages = t->pages.space.used;
	u->max_pages = t->pages.max;
	u->map_bytes = t->rows.bytes + t->pages.bytes;
}

static const struct unwind_maps_ops ops = {
	.add_image = add_image,
	.remove_image = remove_image,
	.set_process = set_process,
	.forget_process = forget_process,
	.requests_fd = requests_fd,
	.read_requests = read_requests,
	.usage = usage,
};

void unwind_tables_maps(struct unwind_tables *t, struct unwind_maps *out)
{
	out->ops = &ops;
	out->maps = t;
}
