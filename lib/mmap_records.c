// SPDX-License-Identifier: GPL-2.0
/* The kernel's mmap, exec and fork records, applied to a maps store
 * (lib/mmap_records.h). */
#include "lib/mmap_records.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/idmap.h"

/* Per CPU.  Measured under a build loop (50 execs a second): about 10
 * records of 100-150 bytes an exec, drained at every exec's reading and
 * twice a second; 64 pages hold a minute of that. */
#define RING_PAGES 64
/* The sample_id fields every record ends with (PERF_SAMPLE_TID and
 * PERF_SAMPLE_TIME): pid, tid, time. */
#define SAMPLE_ID_SIZE 16

/* The largest record read: a header, the fixed fields and a path. */
#define RECORD_MAX (sizeof(struct perf_event_header) + 64 + 4096 + SAMPLE_ID_SIZE)

/* A record read from a ring, kept until the drain has them all in order. */
struct pending {
	uint64_t ns;
	uint64_t seq; /* read order: the tie-break of equal times */
	uint32_t type;
	pid_t pid, parent;
	bool execs_next;        /* PERF_RECORD_FORK's: the child execs in this drain */
	struct procmap_entry e; /* PERF_RECORD_MMAP2's, e.path owned */
};

struct ring {
	int fd;
	void *base; /* the metadata page, then the data */
};

struct mmap_records {
	struct maps_store *store;
	struct ring *rings;
	int n_rings;
	size_t page, data_bytes;
	struct pending *pending;
	size_t n_pending, cap_pending;
	uint64_t seq;
	struct mmap_records_counts counts;
};

static int open_event(int cpu)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* nobody waits on these: no wake-up before the ring is
		 * nearly full */
		.watermark = 1,
		.wakeup_watermark = RING_PAGES * 4096 * 3 / 4,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Room for one more pending record: false without memory. */
static bool reserve(struct mmap_records *mr)
{
	size_t cap = mr->cap_pending ? mr->cap_pending * 2 : 256;
	struct pending *p;

	if (mr->n_pending < mr->cap_pending)
		return true;
	p = realloc(mr->pending, cap * sizeof(*p));
	if (!p)
		return false;
	mr->pending = p;
	mr->cap_pending = cap;
	return true;
}

/* The time of the sample_id fields at the record's end (pid, tid, time). */
static uint64_t trailer_time(const struct perf_event_header *h)
{
	uint64_t ns;

	memcpy(&ns, (const char *)h + h->size - sizeof(ns), sizeof(ns));
	return ns;
}

/* PERF_RECORD_MMAP2 into p->e: false for a record too short, or without
 * memory for its path. */
static bool parse_mmap2(const struct perf_event_header *h, struct pending *p)
{
	struct {
		uint32_t pid, tid;
		uint64_t addr, len, pgoff;
		uint32_t maj, min;
		uint64_t ino, ino_generation;
		uint32_t prot, flags;
	} f;
	const char *name = (const char *)(h + 1) + sizeof(f);
	size_t room, len;

	if (h->size < sizeof(*h) + sizeof(f) + SAMPLE_ID_SIZE)
		return false;
	memcpy(&f, h + 1, sizeof(f));
	room = h->size - sizeof(*h) - sizeof(f) - SAMPLE_ID_SIZE;
	len = strnlen(name, room);
	p->pid = (pid_t)f.pid;
	p->e = (struct procmap_entry){
		.start = f.addr,
		.end = f.addr + f.len,
		.pgoff = f.pgoff,
		.dev_major = f.maj,
		.dev_minor = f.min,
		.inode = f.ino,
		.read = f.prot & PROT_READ,
		.write = f.prot & PROT_WRITE,
		.exec = f.prot & PROT_EXEC,
		.shared = f.flags & MAP_SHARED,
	};
	/* anonymous code (a JIT's) is "//anon" here, nameless in /proc */
	if (len == 6 && memcmp(name, "//anon", 6) == 0)
		len = 0;
	p->e.deleted = procmaps_strip_deleted(name, &len);
	p->e.path = strndup(name, len);
	return p->e.path != NULL;
}

/* One record into the pending ones (those the store has no use for are
 * left out); false without memory. */
static bool take(struct mmap_records *mr, const struct perf_event_header *h)
{
	struct pending *p;
	uint32_t ids[4];

	if (h->type == PERF_RECORD_LOST) {
		uint64_t lost[2];

		if (h->size >= sizeof(*h) + sizeof(lost)) {
			memcpy(lost, h + 1, sizeof(lost));
			__atomic_fetch_add(&mr->counts.lost, lost[1], __ATOMIC_RELAXED);
		}
		maps_store_unfollow(mr->store);
		return true;
	}
	if (h->size < sizeof(*h) + sizeof(ids) + SAMPLE_ID_SIZE)
		return true; /* none of ours */
	if (!reserve(mr))
		return false;
	p = &mr->pending[mr->n_pending];
	memset(p, 0, sizeof(*p));
	memcpy(ids, h + 1, sizeof(ids));
	p->type = h->type;
	p->seq = mr->seq++;
	p->ns = trailer_time(h);
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (!parse_mmap2(h, p))
			return false;
		break;
	case PERF_RECORD_COMM:
		if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
			return true; /* a thread renamed */
		p->pid = (pid_t)ids[0];
		break;
	case PERF_RECORD_FORK:
		/* pid, ppid, tid, ptid: a new thread has its parent's pid */
		if (ids[0] == ids[1])
			return true;
		p->pid = (pid_t)ids[0];
		p->parent = (pid_t)ids[1];
		break;
	default:
		return true;
	}
	mr->n_pending++;
	return true;
}

/* Every record in ring r into the pending ones, the ring then emptied;
 * false without memory (what was read stays pending). */
static bool read_ring(struct mmap_records *mr, struct ring *r)
{
	struct perf_event_mmap_page *meta = r->base;
	const char *data = (const char *)r->base + mr->page;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	_Alignas(8) char copy[RECORD_MAX];
	bool ok = true;

	while (tail < head && ok) {
		const struct perf_event_header *h = (const void *)(data + tail % mr->data_bytes);
		size_t at = tail % mr->data_bytes;
		struct perf_event_header top;

		/* a header does not wrap: records are 8-byte aligned */
		memcpy(&top, h, sizeof(top));
		if (top.size < sizeof(top))
			break; /* cannot be: the ring is the kernel's */
		if (at + top.size > mr->data_bytes) {
			size_t first = mr->data_bytes - at;

			if (top.size > sizeof(copy)) {
				tail += top.size;
				continue;
			}
			memcpy(copy, data + at, first);
			memcpy(copy + first, data, top.size - first);
			h = (const void *)copy;
		}
		ok = top.size <= RECORD_MAX ? take(mr, h) : true;
		tail += top.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return ok;
}

static int by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void apply(struct mmap_records *mr, const struct pending *p)
{
	switch (p->type) {
	case PERF_RECORD_MMAP2:
		maps_store_map(mr->store, p->pid, p->ns, &p->e);
		__atomic_fetch_add(&mr->counts.mmaps, 1, __ATOMIC_RELAXED);
		break;
	case PERF_RECORD_COMM:
		maps_store_exec(mr->store, p->pid, p->ns);
		__atomic_fetch_add(&mr->counts.execs, 1, __ATOMIC_RELAXED);
		break;
	case PERF_RECORD_FORK:
		/* a child that execs next: its copy would be thrown away */
		maps_store_fork(mr->store, p->pid, p->execs_next ? 0 : p->parent, p->ns);
		__atomic_fetch_add(&mr->counts.forks, 1, __ATOMIC_RELAXED);
		if (p->execs_next)
			__atomic_fetch_add(&mr->counts.forks_exec, 1, __ATOMIC_RELAXED);
		break;
	}
}

/*
 * Marks each fork whose child execs later in this drain (sorted): a shell
 * or make forks and execs at once, and copying the parent's mappings for
 * the child (its paths each strdup'd) was 1.5% of a continuous -a run's
 * CPU under a build loop, for copies the exec threw away.  Walked from
 * the end: an exec of pid is ahead of every earlier record of pid until a
 * fork made pid (records before it are an earlier process's).
 */
static void mark_forks_that_exec(struct mmap_records *mr)
{
	struct idmap next = { 0 };

	for (size_t i = mr->n_pending; i-- > 0;) {
		struct pending *p = &mr->pending[i];

		if (p->type == PERF_RECORD_COMM) {
			idmap_put(&next, (uint64_t)p->pid, 1);
		} else if (p->type == PERF_RECORD_FORK) {
			p->execs_next = idmap_get(&next, (uint64_t)p->pid) == 1;
			idmap_put(&next, (uint64_t)p->pid, 0);
		}
	}
	idmap_free(&next);
}

/* The store's feed: called under its feed lock, one drain at a time. */
static void drain(void *ctx)
{
	struct mmap_records *mr = ctx;
	bool ok = true;

	for (int i = 0; i < mr->n_rings; i++)
		ok &= read_ring(mr, &mr->rings[i]);
	if (mr->n_pending > 1)
		qsort(mr->pending, mr->n_pending, sizeof(*mr->pending), by_time);
	mark_forks_that_exec(mr);
	for (size_t i = 0; i < mr->n_pending; i++) {
		apply(mr, &mr->pending[i]);
		free(mr->pending[i].e.path);
	}
	mr->n_pending = 0;
	/* records left unread for want of memory: as if the kernel lost them */
	if (!ok)
		maps_store_unfollow(mr->store);
}

static void close_rings(struct mmap_records *mr)
{
	for (int i = 0; i < mr->n_rings; i++) {
		if (mr->rings[i].base)
			munmap(mr->rings[i].base, mr->page + mr->data_bytes);
		close(mr->rings[i].fd);
	}
	free(mr->rings);
	mr->rings = NULL;
	mr->n_rings = 0;
}

int mmap_records_open(struct maps_store *s, struct mmap_records **out)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	struct mmap_records *mr = calloc(1, sizeof(*mr));
	int err = 0;

	*out = NULL;
	if (!mr || cpus < 1 || !(mr->rings = calloc((size_t)cpus, sizeof(*mr->rings)))) {
		free(mr);
		return -ENOMEM;
	}
	mr->store = s;
	mr->page = (size_t)sysconf(_SC_PAGESIZE);
	mr->data_bytes = RING_PAGES * mr->page;
	for (int cpu = 0; cpu < cpus; cpu++) {
		struct ring *r = &mr->rings[mr->n_rings];
		int fd = open_event(cpu);

		if (fd == -ENODEV || fd == -EINVAL)
			continue; /* a CPU that is not online */
		if (fd < 0) {
			err = fd;
			break;
		}
		r->fd = fd;
		mr->n_rings++;
		r->base = mmap(NULL, mr->page + mr->data_bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fd, 0);
		if (r->base == MAP_FAILED) {
			r->base = NULL;
			err = -errno;
			break;
		}
	}
	if (!err && !mr->n_rings)
		err = -ENODEV;
	if (err) {
		close_rings(mr);
		free(mr);
		return err;
	}
	maps_store_follow(s, drain, mr);
	*out = mr;
	return 0;
}

void mmap_records_close(struct mmap_records *mr)
{
	if (!mr)
		return;
	maps_store_follow(mr->store, NULL, NULL);
	close_rings(mr);
	for (size_t i = 0; i < mr->n_pending; i++)
		free(mr->pending[i].e.path);
	free(mr->pending);
	free(mr);
}

void mmap_records_counts(struct mmap_records *mr, struct mmap_records_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (!mr)
		return;
	out->mmaps = __atomic_load_n(&mr->counts.mmaps, __ATOMIC_RELAXED);
	out->execs = __atomic_load_n(&mr->counts.execs, __ATOMIC_RELAXED);
	out->forks = __atomic_load_n(&mr->counts.forks, __ATOMIC_RELAXED);
	out->forks_exec = __atomic_load_n(&mr->counts.forks_exec, __ATOMIC_RELAXED);
	out->lost = __atomic_load_n(&mr->counts.lost, __ATOMIC_RELAXED);
}
