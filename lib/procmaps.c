// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/PID/maps parsing.  The kernel prints each mapping as
 *
 *   START-END PERMS PGOFF MAJOR:MINOR INODE [padding] PATH
 *
 * with hexadecimal START, END, PGOFF, MAJOR and MINOR, decimal INODE, and a
 * PATH that runs to the end of the line: it may contain spaces, may end in
 * " (deleted)", may be a pseudo name ("[vdso]", "[anon:name]") or absent.
 */
#include "lib/procmaps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/proc.h"

#define DELETED_SUFFIX " (deleted)"

/* Parses hex digits at *p (at least one); false on none or on overflow of
 * 64 bits. */
static bool parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int n = 0;

	while (s < end) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (v >> 60)
			return false;
		v = v << 4 | (uint64_t)d;
		s++;
		n++;
	}
	if (!n)
		return false;
	*p = s;
	*out = v;
	return true;
}

static bool parse_dec(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return false;
	while (s < end && *s >= '0' && *s <= '9') {
		uint64_t d = (uint64_t)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
		s++;
	}
	*p = s;
	*out = v;
	return true;
}

static bool expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return false;
	(*p)++;
	return true;
}

static bool parse_flag(const char **p, const char *end, char yes, char no, bool *out)
{
	if (*p >= end || (**p != yes && **p != no))
		return false;
	*out = **p == yes;
	(*p)++;
	return true;
}

bool procmaps_strip_deleted(const char *name, size_t *len)
{
	const size_t n = sizeof(DELETED_SUFFIX) - 1;

	if (*len < n || memcmp(name + *len - n, DELETED_SUFFIX, n) != 0)
		return false;
	*len -= n;
	return true;
}

/* Parses one line [p, end) (without its newline) into e. */
static int parse_line(const char *p, const char *end, struct procmap_entry *e)
{
	uint64_t major, minor;
	size_t plen;

	memset(e, 0, sizeof(*e));
	if (memchr(p, '\0', (size_t)(end - p)))
		return -EINVAL;
	if (!parse_hex(&p, end, &e->start) || !expect(&p, end, '-') ||
	    !parse_hex(&p, end, &e->end) || !expect(&p, end, ' '))
		return -EINVAL;
	if (e->end < e->start)
		return -EINVAL;
	if (!parse_flag(&p, end, 'r', '-', &e->read) || !parse_flag(&p, end, 'w', '-', &e->write) ||
	    !parse_flag(&p, end, 'x', '-', &e->exec) || !parse_flag(&p, end, 's', 'p', &e->shared) ||
	    !expect(&p, end, ' '))
		return -EINVAL;
	if (!parse_hex(&p, end, &e->pgoff) || !expect(&p, end, ' '))
		return -EINVAL;
	if (!parse_hex(&p, end, &major) || !expect(&p, end, ':') || !parse_hex(&p, end, &minor) ||
	    !expect(&p, end, ' '))
		return -EINVAL;
	if (major > UINT32_MAX || minor > UINT32_MAX)
		return -EINVAL;
	e->dev_major = (uint32_t)major;
	e->dev_minor = (uint32_t)minor;
	if (!parse_dec(&p, end, &e->inode))
		return -EINVAL;
	/* The path is separated by padding; no path at all is allowed. */
	if (p < end && *p != ' ')
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	plen = (size_t)(end - p);
	e->deleted = procmaps_strip_deleted(p, &plen);
	e->path = strndup(p, plen);
	if (!e->path)
		return -ENOMEM;
	return 0;
}

/* Room for one more entry in out (*cap allocated): 0 or -ENOMEM. */
static int reserve_entry(struct procmaps *out, size_t *cap)
{
	size_t ncap = *cap ? *cap * 2 : 32;
	void *n;

	if (out->n < *cap)
		return 0;
	n = realloc(out->entries, ncap * sizeof(*out->entries));
	if (!n)
		return -ENOMEM;
	out->entries = n;
	*cap = ncap;
	return 0;
}

int procmaps_parse(const char *text, size_t len, struct procmaps *out, size_t *bad_line)
{
	const char *p = text, *end = text + len;
	size_t cap = 0, line = 0;
	int err = 0;

	out->entries = NULL;
	out->n = 0;
	if (bad_line)
		*bad_line = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct procmap_entry *e;

		line++;
		err = reserve_entry(out, &cap);
		if (err)
			goto fail;
		e = &out->entries[out->n];
		err = parse_line(p, eol, e);
		if (err) {
			if (err == -EINVAL && bad_line)
				*bad_line = line;
			goto fail;
		}
		out->n++;
		p = nl ? nl + 1 : end;
	}
	return 0;
fail:
	procmaps_free(out);
	return err;
}

/* Past any real process's maps (a few MB at the most). */
#define MAPS_MAX_BYTES (1u << 30)

int procmaps_read(pid_t pid, struct procmaps *out)
{
	char path[64], *buf;
	size_t len;
	int err;

	out->entries = NULL;
	out->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	err = proc_read_all(path, MAPS_MAX_BYTES, &buf, &len);
	/* a process that exits while we read gives ESRCH */
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = procmaps_parse(buf, len, out, NULL);
	free(buf);
	return err;
}

/* ---- the executable mappings, asked of the kernel ---------------------- */

/* include/uapi/linux/fs.h of Linux 6.11 (Debian 12's headers predate it) */
struct procmap_query_args {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start, vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define PROCMAP_QUERY_IOCTL _IOWR(0x66, 17, struct procmap_query_args)
#define PQ_VMA_READABLE 0x01
#define PQ_VMA_WRITABLE 0x02
#define PQ_VMA_EXECUTABLE 0x04
#define PQ_VMA_SHARED 0x08
#define PQ_COVERING_OR_NEXT_VMA 0x10

/* 1: the ioctl works here, 0: not yet known, -1: it does not */
static atomic_int query_state;

bool procmaps_query_used(void)
{
	return atomic_load(&query_state) > 0;
}

static int push_entry(struct procmaps *out, size_t *cap, const struct procmap_query_args *q,
		      const char *name)
{
	struct procmap_entry *e;
	size_t len = q->vma_name_size ? strnlen(name, q->vma_name_size) : 0;

	if (reserve_entry(out, cap) != 0)
		return -ENOMEM;
	e = &out->entries[out->n];
	memset(e, 0, sizeof(*e));
	e->start = q->vma_start;
	e->end = q->vma_end;
	e->pgoff = q->vma_offset;
	e->dev_major = q->dev_major;
	e->dev_minor = q->dev_minor;
	e->inode = q->inode;
	e->read = q->vma_flags & PQ_VMA_READABLE;
	e->write = q->vma_flags & PQ_VMA_WRITABLE;
	e->exec = q->vma_flags & PQ_VMA_EXECUTABLE;
	e->shared = q->vma_flags & PQ_VMA_SHARED;
	/* named as the text names it, " (deleted)" and all */
	e->deleted = procmaps_strip_deleted(name, &len);
	e->path = strndup(name, len);
	if (!e->path)
		return -ENOMEM;
	out->n++;
	return 0;
}

/* The executable mappings through the ioctl; -ENOTTY where the kernel has
 * none, -ENAMETOOLONG for a name past PATH_MAX (then the text). */
static int query_exec(pid_t pid, struct procmaps *out)
{
	char path[64], name[4096 + sizeof(DELETED_SUFFIX)];
	uint64_t addr = 0;
	size_t cap = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	for (;;) {
		struct procmap_query_args q = {
			.size = sizeof(q),
			.query_flags = PQ_COVERING_OR_NEXT_VMA | PQ_VMA_EXECUTABLE,
			.query_addr = addr,
			.vma_name_addr = (uint64_t)(uintptr_t)name,
			.vma_name_size = sizeof(name),
		};

		if (ioctl(fd, PROCMAP_QUERY_IOCTL, &q) != 0) {
			err = -errno;
			/* past the last one; an exited process has no mm */
			if (err == -ENOENT || (err == -ESRCH && addr == 0))
				err = 0;
			break;
		}
		err = push_entry(out, &cap, &q, name);
		if (err || q.vma_end <= addr)
			break;
		addr = q.vma_end;
	}
	close(fd);
	if (err == -EINVAL)
		err = -ENOTTY; /* an older kernel's answer to an unknown ioctl */
	return err;
}

/* The text's executable entries, in place. */
static void keep_exec(struct procmaps *maps)
{
	size_t k = 0;

	for (size_t i = 0; i < maps->n; i++) {
		if (maps->entries[i].exec)
			maps->entries[k++] = maps->entries[i];
		else
			free(maps->entries[i].path);
	}
	maps->n = k;
}

int procmaps_read_exec(pid_t pid, struct procmaps *out)
{
	int err;

	out->entries = NULL;
	out->n = 0;
	if (atomic_load(&query_state) >= 0) {
		err = query_exec(pid, out);
		if (err != -ENOTTY && err != -ENAMETOOLONG) {
			if (!err)
				atomic_store(&query_state, 1);
			if (err)
				procmaps_free(out);
			return err;
		}
		procmaps_free(out);
		if (err == -ENOTTY)
			atomic_store(&query_state, -1);
	}
	err = procmaps_read(pid, out);
	if (!err)
		keep_exec(out);
	return err;
}

int procmaps_find_exec_file(pid_t pid, bool (*match)(const char *path, void *ctx), void *ctx,
			    char *out, size_t size)
{
	struct procmaps maps;
	int err = procmaps_read_exec(pid, &maps);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < maps.n && err; i++) {
		const struct procmap_entry *e = &maps.entries[i];

		if (!procmap_is_file(e) || !match(e->path, ctx))
			continue;
		err = (size_t)snprintf(out, size, "%s", e->path) < size ? 0 : -ENAMETOOLONG;
	}
	procmaps_free(&maps);
	return err;
}

void procmaps_free(struct procmaps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		free(maps->entries[i].path);
	free(maps->entries);
	maps->entries = NULL;
	maps->n = 0;
}

/* x cut to [start, end) (a piece of it left beside a new mapping), with
 * path as its path. */
static struct procmap_entry piece(const struct procmap_entry *x, uint64_t start, uint64_t end,
				  char *path)
{
	struct procmap_entry p = *x;

	p.pgoff += start - x->start;
	p.start = start;
	p.end = end;
	p.path = path;
	return p;
}

/*
 * In place: the entries e overlaps, [i, j), give way to e and the pieces
 * of them outside it, and the entries after them move.  A new list each
 * time (calloc'd, every entry copied) was 2.5% of a continuous -a run's
 * CPU under a build loop: every mmap record of a followed process.
 */
int procmaps_place(struct procmaps *maps, const struct procmap_entry *e)
{
	struct procmap_entry *ent = maps->entries, head = { 0 }, tail = { 0 };
	size_t n = maps->n, lo = 0, hi = n, i, j, add, k;
	char *path, *split_path = NULL; /* the second piece's path, when e splits one */
	bool has_head, has_tail, split;

	if (e->start >= e->end)
		return -EINVAL;
	/* sorted and disjoint, so their ends are sorted too: the first entry
	 * that ends after e starts */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ent[mid].end <= e->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	i = lo;
	for (j = i; j < n && ent[j].start < e->end; j++)
		;
	has_head = i < j && ent[i].start < e->start;
	has_tail = i < j && ent[j - 1].end > e->end;
	split = has_head && has_tail && i + 1 == j;
	add = has_head + 1 + has_tail;
	path = strdup(e->path ? e->path : "");
	if (split && path)
		split_path = strdup(ent[i].path);
	if (!path || (split && !split_path))
		goto nomem;
	if (n - (j - i) + add > n) {
		ent = realloc(ent, (n - (j - i) + add) * sizeof(*ent));
		if (!ent)
			goto nomem;
		maps->entries = ent;
	}
	if (has_head)
		head = piece(&ent[i], ent[i].start, e->start, ent[i].path);
	if (has_tail)
		tail = piece(&ent[j - 1], e->end, ent[j - 1].end,
			     split ? split_path : ent[j - 1].path);
	/* the covered entries' paths, but those the pieces keep */
	for (k = i; k < j; k++)
		if (!(k == i && has_head) && !(k == j - 1 && has_tail && !split))
			free(ent[k].path);
	memmove(&ent[i + add], &ent[j], (n - j) * sizeof(*ent));
	k = i;
	if (has_head)
		ent[k++] = head;
	ent[k++] = piece(e, e->start, e->end, path);
	if (has_tail)
		ent[k++] = tail;
	maps->n = n - (j - i) + add;
	return 0;
nomem:
	free(path);
	free(split_path);
	return -ENOMEM;
}

const struct procmap_entry *procmaps_find(const struct procmaps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct procmap_entry *e = &maps->entries[mid];

		if (addr < e->start)
			hi = mid;
		else if (addr >= e->end)
			lo = mid + 1;
		else
			return e;
	}
	return NULL;
}

int procmaps_map_files_path(pid_t pid, uint64_t start, uint64_t end, char *buf, size_t size)
{
	int n = snprintf(buf, size, "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)start, (unsigned long long)end);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int procmaps_open_path(pid_t pid, const struct procmap_entry *e, char *buf, size_t size,
		       int *map_files)
{
	int n, usable;

	if (!procmap_is_file(e))
		return -EINVAL;
	if (procmaps_map_files_path(pid, e->start, e->end, buf, size))
		return -ENAMETOOLONG;
	/* effective rights: access() would drop the capabilities that let a
	 * collector with file capabilities open map_files */
	if (map_files && *map_files >= 0)
		usable = *map_files;
	else
		usable = faccessat(AT_FDCWD, buf, R_OK, AT_EACCESS) == 0;
	if (map_files)
		*map_files = usable;
	if (usable)
		return 0;
	n = snprintf(buf, size, "/proc/%d/root%s", (int)pid, e->path);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}
