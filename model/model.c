// SPDX-License-Identifier: GPL-2.0
/* The in-memory model of a run: construction, interning and lookups. */
#include "model/model.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "collector: out of memory (%zu bytes)\n", n);
		abort();
	}
	return q;
}

static char *xstrdup(const char *s)
{
	size_t n;
	char *d;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	d = xrealloc(NULL, n);
	memcpy(d, s, n);
	return d;
}

void *model_vec_grow(void *vec_items, size_t *len, size_t *cap, size_t size)
{
	void **items = vec_items;
	char *slot;

	if (*len == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;

		*items = xrealloc(*items, ncap * size);
		*cap = ncap;
	}
	slot = (char *)*items + *len * size;
	memset(slot, 0, size);
	(*len)++;
	return slot;
}

/* ---- spilled event vectors --------------------------------------------- */

/* Bytes of events a vector holds in memory before they go to its file. */
#define SPILL_CHUNK_BYTES (256 * 1024)

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= w;
	}
	return 0;
}

static int pread_all(int fd, void *buf, size_t n, off_t off)
{
	char *p = buf;

	while (n) {
		ssize_t r = pread(fd, p, n, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		n -= r;
		off += r;
	}
	return 0;
}

/* A sealed vector that gets one more element leaves its mapping for the
 * heap, where it can grow. */
static void spill_unmap(struct model_spill *sp, void *vec_items, size_t len, size_t size)
{
	void **items = vec_items;
	void *copy;

	if (!sp->map)
		return;
	copy = xrealloc(NULL, len * size);
	memcpy(copy, *items, len * size);
	munmap(sp->map, sp->map_bytes);
	sp->map = NULL;
	*items = copy;
}

/* One more element of a vector that may spill: a full chunk goes to the
 * file first, and the same memory takes the next chunk.  A failed write
 * (a full disk) keeps everything from then on in memory: nothing is lost. */
static void *spill_push(struct model_spill *sp, void *vec_items, size_t *len, size_t *cap,
			size_t size)
{
	void **items = vec_items;

	spill_unmap(sp, vec_items, *len, size);
	if (sp->active && !sp->failed && *len * size >= SPILL_CHUNK_BYTES) {
		if (write_all(sp->fd, *items, *len * size) == 0) {
			sp->spilled += *len;
			*len = 0;
		} else {
			sp->failed = true;
		}
	}
	return model_vec_grow(vec_items, len, cap, size);
}

static int spill_open(struct model_spill *sp, const char *dir)
{
	sp->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (sp->fd < 0)
		return -errno;
	sp->active = true;
	return 0;
}

static void spill_close(struct model_spill *sp)
{
	if (sp->active)
		close(sp->fd);
	sp->active = false;
	sp->fd = -1;
}

/* The whole vector in items[0..len) again: the file mapped (private and
 * writable: the events are sorted in place), or read back into memory when
 * a write or the mapping failed.  Returns how many events could not be
 * read back (0 but for an I/O error on the file). */
static size_t spill_seal(struct model_spill *sp, void *vec_items, size_t *len, size_t *cap,
		      size_t size)
{
	void **items = vec_items;
	size_t total = sp->spilled + *len;
	size_t lost = 0;
	char *buf;
	int err;

	if (!sp->active || !sp->spilled) {
		spill_close(sp);
		sp->spilled = 0;
		return 0;
	}
	if (!sp->failed && *len && write_all(sp->fd, *items, *len * size) == 0) {
		sp->spilled += *len;
		*len = 0;
	}
	if (!*len) {
		void *map = mmap(NULL, total * size, PROT_READ | PROT_WRITE, MAP_PRIVATE, sp->fd, 0);

		if (map != MAP_FAILED) {
			free(*items);
			*items = map;
			*len = *cap = total;
			sp->map = map;
			sp->map_bytes = total * size;
			sp->spilled = 0;
			spill_close(sp);
			return 0;
		}
	}
	buf = xrealloc(NULL, total * size);
	err = pread_all(sp->fd, buf, sp->spilled * size, 0);
	if (err) {
		/* keep what is still in memory; say how much is gone */
		fprintf(stderr, "collector: cannot read back %zu spilled events: %s\n",
			sp->spilled, strerror(-err));
		lost = sp->spilled;
		total -= sp->spilled;
		memcpy(buf, *items, *len * size);
	} else {
		memcpy(buf + sp->spilled * size, *items, *len * size);
	}
	free(*items);
	*items = buf;
	*len = *cap = total;
	sp->spilled = 0;
	spill_close(sp);
	return lost;
}

static void spill_free(struct model_spill *sp, void *items)
{
	if (sp->map)
		munmap(sp->map, sp->map_bytes);
	else
		free(items);
	sp->map = NULL;
	spill_close(sp);
}

int model_spill_events(struct model *m, const char *dir)
{
	int err;

	if ((err = spill_open(&m->samples_spill, dir)) ||
	    (err = spill_open(&m->switches_spill, dir)) ||
	    (err = spill_open(&m->trace_spill, dir)) ||
	    (err = spill_open(&m->trace_args_spill, dir))) {
		spill_close(&m->samples_spill);
		spill_close(&m->switches_spill);
		spill_close(&m->trace_spill);
		spill_close(&m->trace_args_spill);
		return err;
	}
	return 0;
}

#define SEAL(m, vec) \
	spill_seal(&(m)->vec##_spill, &(m)->vec.items, &(m)->vec.len, &(m)->vec.cap, \
		   sizeof(*(m)->vec.items))

int model_seal_events(struct model *m)
{
	size_t lost = SEAL(m, samples) + SEAL(m, switches) + SEAL(m, trace);

	lost += SEAL(m, trace_args);
	if (!lost)
		return 0;
	model_count_lost(m, "events not read back from the spill file", lost);
	return -EIO;
}

/* ---- hashing ---------------------------------------------------------- */

static uint64_t hash_bytes(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;

	/* FNV-1a */
	if (!h)
		h = 1469598103934665603ULL;
	while (n--) {
		h ^= *p++;
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return hash_bytes(h, &v, sizeof(v));
}

static void index_free(struct model_index *ix)
{
	free(ix->hashes);
	free(ix->ids);
	memset(ix, 0, sizeof(*ix));
}

static void index_insert_raw(struct model_index *ix, uint64_t h, uint32_t id)
{
	size_t mask = ix->cap - 1, i = h & mask;

	while (ix->ids[i] != MODEL_NONE)
		i = (i + 1) & mask;
	ix->hashes[i] = h;
	ix->ids[i] = id;
	ix->len++;
}

static void index_insert(struct model_index *ix, uint64_t h, uint32_t id)
{
	if ((ix->len + 1) * 2 > ix->cap) {
		struct model_index old = *ix;
		size_t i;

		ix->cap = old.cap ? old.cap * 2 : 64;
		ix->len = 0;
		ix->hashes = xrealloc(NULL, ix->cap * sizeof(*ix->hashes));
		ix->ids = xrealloc(NULL, ix->cap * sizeof(*ix->ids));
		memset(ix->ids, 0xff, ix->cap * sizeof(*ix->ids));
		for (i = 0; i < old.cap; i++)
			if (old.ids[i] != MODEL_NONE)
				index_insert_raw(ix, old.hashes[i], old.ids[i]);
		index_free(&old);
	}
	index_insert_raw(ix, h, id);
}

/*
 * Calls match(ctx, id) for every id stored under hash h until it returns
 * true; returns that id or MODEL_NONE.
 */
static uint32_t index_find(const struct model_index *ix, uint64_t h,
			   bool (*match)(const void *ctx, uint32_t id), const void *ctx)
{
	size_t mask, i;

	if (!ix->cap)
		return MODEL_NONE;
	mask = ix->cap - 1;
	for (i = h & mask; ix->ids[i] != MODEL_NONE; i = (i + 1) & mask)
		if (ix->hashes[i] == h && match(ctx, ix->ids[i]))
			return ix->ids[i];
	return MODEL_NONE;
}

/* ---- life cycle ------------------------------------------------------- */

void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->run.event = xstrdup("cpu-clock");
}

static void free_counters(struct model_counter *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].name);
	free(c);
}

void model_free(struct model *m)
{
	size_t i;

	for (i = 0; i < m->images.len; i++) {
		free(m->images.items[i].path);
		free(m->images.items[i].debug_path);
	}
	for (i = 0; i < m->files.len; i++)
		free(m->files.items[i].path);
	for (i = 0; i < m->functions.len; i++)
		free(m->functions.items[i].name);
	for (i = 0; i < m->processes.len; i++) {
		free(m->processes.items[i].cmdline);
		free(m->processes.items[i].exe);
		free(m->processes.items[i].maps.items);
	}
	free(m->images.items);
	free(m->files.items);
	free(m->functions.items);
	free(m->inlines.items);
	free(m->locations.items);
	free(m->frames.items);
	free(m->stacks.items);
	free(m->processes.items);
	free(m->threads.items);
	spill_free(&m->samples_spill, m->samples.items);
	spill_free(&m->switches_spill, m->switches.items);
	free(m->traced.items);
	spill_free(&m->trace_spill, m->trace.items);
	spill_free(&m->trace_args_spill, m->trace_args.items);
	free(m->func_stats.items);
	free(m->energy.items);
	free_counters(m->lost.items, m->lost.len);
	free_counters(m->stats.items, m->stats.len);
	free(m->run.command_line);
	free(m->run.event);
	index_free(&m->file_index);
	index_free(&m->function_index);
	index_free(&m->location_index);
	index_free(&m->stack_index);
	memset(m, 0, sizeof(*m));
}

void model_set_command_line(struct model *m, const char *cmdline)
{
	free(m->run.command_line);
	m->run.command_line = xstrdup(cmdline);
}

/* ---- images, files, functions ----------------------------------------- */

uint32_t model_add_image(struct model *m, const struct model_image *tmpl)
{
	struct model_image *img = MODEL_VEC_PUSH(m->images);

	*img = *tmpl;
	img->path = xstrdup(tmpl->path ? tmpl->path : "[unknown]");
	img->debug_path = xstrdup(tmpl->debug_path);
	return m->images.len - 1;
}

struct file_key {
	const struct model *m;
	const char *path;
};

static bool file_match(const void *ctx, uint32_t id)
{
	const struct file_key *k = ctx;

	return strcmp(k->m->files.items[id].path, k->path) == 0;
}

uint32_t model_intern_file(struct model *m, const char *path)
{
	struct file_key k = { m, path };
	uint64_t h = hash_bytes(0, path, strlen(path));
	uint32_t id = index_find(&m->file_index, h, file_match, &k);

	if (id != MODEL_NONE)
		return id;
	MODEL_VEC_PUSH(m->files)->path = xstrdup(path);
	id = m->files.len - 1;
	index_insert(&m->file_index, h, id);
	return id;
}

struct function_key {
	const struct model *m;
	uint32_t image;
	const char *name;
	uint64_t entry;
};

static bool function_match(const void *ctx, uint32_t id)
{
	const struct function_key *k = ctx;
	const struct model_function *f = &k->m->functions.items[id];

	return f->image == k->image && f->entry == k->entry && strcmp(f->name, k->name) == 0;
}

uint32_t model_intern_function(struct model *m, uint32_t image, const char *name,
			       uint64_t entry, uint64_t size, uint32_t file, uint32_t line)
{
	struct function_key k = { m, image, name, entry };
	uint64_t h = hash_u64(hash_u64(hash_bytes(0, name, strlen(name)), image), entry);
	uint32_t id = index_find(&m->function_index, h, function_match, &k);
	struct model_function *f;

	if (id != MODEL_NONE) {
		f = &m->functions.items[id];
		/* a later lookup may know more (debug info) */
		if (f->file == MODEL_NONE && file != MODEL_NONE) {
			f->file = file;
			f->line = line;
		}
		if (!f->size)
			f->size = size;
		return id;
	}
	f = MODEL_VEC_PUSH(m->functions);
	f->name = xstrdup(name);
	f->image = image;
	f->entry = entry;
	f->size = size;
	f->file = file;
	f->line = line;
	id = m->functions.len - 1;
	index_insert(&m->function_index, h, id);
	return id;
}

/* ---- locations and stacks --------------------------------------------- */

struct location_key {
	const struct model *m;
	uint32_t image;
	uint64_t addr;
};

static bool location_match(const void *ctx, uint32_t id)
{
	const struct location_key *k = ctx;
	const struct model_location *l = &k->m->locations.items[id];

	return l->image == k->image && l->addr == k->addr;
}

static uint64_t location_hash(uint32_t image, uint64_t addr)
{
	return hash_u64(hash_u64(0, image), addr);
}

uint32_t model_find_location(const struct model *m, uint32_t image, uint64_t addr)
{
	struct location_key k = { m, image, addr };

	return index_find(&m->location_index, location_hash(image, addr), location_match, &k);
}

uint32_t model_intern_location(struct model *m, uint32_t image, uint64_t addr,
			       uint32_t function, uint32_t file, uint32_t line,
			       const struct model_inline *inl, uint32_t n_inl)
{
	uint32_t id = model_find_location(m, image, addr);
	struct model_location *l;

	if (id != MODEL_NONE)
		return id;
	l = MODEL_VEC_PUSH(m->locations);
	l->image = image;
	l->addr = addr;
	l->function = function;
	l->file = file;
	l->line = line;
	l->n_inlines = n_inl;
	l->inlines = m->inlines.len;
	id = m->locations.len - 1;
	for (uint32_t i = 0; i < n_inl; i++)
		*MODEL_VEC_PUSH(m->inlines) = inl[i];
	index_insert(&m->location_index, location_hash(image, addr), id);
	return id;
}

struct stack_key {
	const struct model *m;
	const uint32_t *frames;
	uint32_t n_frames, n_kernel;
	bool truncated;
};

static bool stack_match(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	const struct model_stack *s = &k->m->stacks.items[id];

	return s->n_frames == k->n_frames && s->n_kernel == k->n_kernel &&
	       s->truncated == k->truncated &&
	       (!k->n_frames ||
		memcmp(model_stack_frames(k->m, s), k->frames, k->n_frames * sizeof(uint32_t)) == 0);
}

uint32_t model_intern_stack(struct model *m, const uint32_t *frames, uint32_t n_frames,
			    uint32_t n_kernel, bool truncated)
{
	struct stack_key k = { m, frames, n_frames, n_kernel, truncated };
	uint64_t h = hash_u64(hash_u64(hash_bytes(0, frames, n_frames * sizeof(uint32_t)),
				       n_kernel), truncated);
	uint32_t id = index_find(&m->stack_index, h, stack_match, &k);
	struct model_stack *s;

	if (id != MODEL_NONE)
		return id;
	s = MODEL_VEC_PUSH(m->stacks);
	s->n_frames = n_frames;
	s->n_kernel = n_kernel;
	s->truncated = truncated;
	s->frames = m->frames.len;
	id = m->stacks.len - 1;
	for (uint32_t i = 0; i < n_frames; i++)
		*MODEL_VEC_PUSH(m->frames) = frames[i];
	index_insert(&m->stack_index, h, id);
	return id;
}

/* ---- processes, threads, events --------------------------------------- */

uint32_t model_add_process(struct model *m, pid_t pid, pid_t ppid, uint32_t generation,
			   const char *comm, const char *cmdline, const char *exe)
{
	struct model_process *p = MODEL_VEC_PUSH(m->processes);

	p->pid = pid;
	p->ppid = ppid;
	p->generation = generation;
	if (comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->cmdline = xstrdup(cmdline);
	p->exe = xstrdup(exe);
	p->exe_image = MODEL_NONE;
	return m->processes.len - 1;
}

uint32_t model_add_mapping(struct model *m, uint32_t process, const struct model_mapping *map)
{
	struct model_process *p = &m->processes.items[process];

	*MODEL_VEC_PUSH(p->maps) = *map;
	return p->maps.len - 1;
}

uint32_t model_add_thread(struct model *m, uint32_t process, pid_t tid, const char *comm)
{
	struct model_thread *t = MODEL_VEC_PUSH(m->threads);

	t->tid = tid;
	t->process = process;
	if (comm)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return m->threads.len - 1;
}

#define SPILL_PUSH(m, vec) \
	((__typeof__((m)->vec.items))spill_push(&(m)->vec##_spill, &(m)->vec.items, \
						&(m)->vec.len, &(m)->vec.cap, \
						sizeof(*(m)->vec.items)))

struct model_sample *model_add_sample(struct model *m)
{
	return SPILL_PUSH(m, samples);
}

struct model_switch *model_add_switch(struct model *m)
{
	return SPILL_PUSH(m, switches);
}

uint32_t model_add_traced_function(struct model *m, uint32_t image, uint64_t addr,
				   uint32_t function)
{
	struct model_traced_function *t = MODEL_VEC_PUSH(m->traced);

	t->image = image;
	t->addr = addr;
	t->function = function;
	return m->traced.len - 1;
}

struct model_trace_event *model_add_trace_event(struct model *m, const uint64_t *args,
						 uint8_t n_args)
{
	/* an index over the whole vector, spilled part included */
	size_t first = m->trace_args_spill.spilled + m->trace_args.len;
	struct model_trace_event *e;

	if (n_args > MODEL_MAX_ARGS)
		n_args = MODEL_MAX_ARGS;
	for (uint8_t i = 0; i < n_args; i++)
		*SPILL_PUSH(m, trace_args) = args[i];
	e = SPILL_PUSH(m, trace);
	e->args = first;
	e->n_args = n_args;
	return e;
}

struct model_func_stats *model_add_func_stats(struct model *m)
{
	return MODEL_VEC_PUSH(m->func_stats);
}

/* ---- counters ---------------------------------------------------------- */

static void count(void *vec_items, size_t *len, size_t *cap, const char *name, uint64_t value)
{
	struct model_counter **items = vec_items, *c;

	for (size_t i = 0; i < *len; i++) {
		if (strcmp((*items)[i].name, name) == 0) {
			(*items)[i].value += value;
			return;
		}
	}
	c = model_vec_grow(items, len, cap, sizeof(*c));
	c->name = xstrdup(name);
	c->value = value;
}

void model_count_lost(struct model *m, const char *cause, uint64_t value)
{
	count(&m->lost.items, &m->lost.len, &m->lost.cap, cause, value);
}

void model_count_stat(struct model *m, const char *name, uint64_t value)
{
	count(&m->stats.items, &m->stats.len, &m->stats.cap, name, value);
}

uint64_t model_total_lost(const struct model *m)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < m->lost.len; i++)
		sum += m->lost.items[i].value;
	return sum;
}

uint64_t model_counter_value(const struct model *m, int lost, const char *name)
{
	const struct model_counter *c = lost ? m->lost.items : m->stats.items;
	size_t n = lost ? m->lost.len : m->stats.len;

	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0)
			return c[i].value;
	return 0;
}

/* ---- lookups ----------------------------------------------------------- */

const char *model_location_name(const struct model *m, uint32_t location)
{
	const struct model_location *l = &m->locations.items[location];

	if (l->function == MODEL_NONE)
		return NULL;
	return m->functions.items[l->function].name;
}

const struct model_mapping *model_find_mapping(const struct model *m, uint32_t process,
					       uint64_t addr)
{
	const struct model_process *p = &m->processes.items[process];

	/* newest first: a later mapping replaces an earlier one at the address */
	for (size_t i = p->maps.len; i-- > 0;) {
		const struct model_mapping *mp = &p->maps.items[i];

		if (addr >= mp->start && addr < mp->end)
			return mp;
	}
	return NULL;
}

/* ---- ordering ---------------------------------------------------------- */

/* Records arrive per CPU ring in order but interleave across CPUs; a merge
 * sort keeps equal timestamps in arrival order. */
static void merge_sort(void *base, size_t n, size_t size, size_t key_off)
{
	char *a = base, *tmp;
	size_t width;

	if (n < 2)
		return;
	tmp = xrealloc(NULL, n * size);
	for (width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi) {
				uint64_t ti, tj;

				memcpy(&ti, a + i * size + key_off, sizeof(ti));
				memcpy(&tj, a + j * size + key_off, sizeof(tj));
				if (tj < ti)
					memcpy(tmp + k++ * size, a + j++ * size, size);
				else
					memcpy(tmp + k++ * size, a + i++ * size, size);
			}
			while (i < mid)
				memcpy(tmp + k++ * size, a + i++ * size, size);
			while (j < hi)
				memcpy(tmp + k++ * size, a + j++ * size, size);
		}
		memcpy(a, tmp, n * size);
	}
	free(tmp);
}

static bool sorted(const void *base, size_t n, size_t size, size_t key_off)
{
	const char *a = base;

	for (size_t i = 1; i < n; i++) {
		uint64_t t0, t1;

		memcpy(&t0, a + (i - 1) * size + key_off, sizeof(t0));
		memcpy(&t1, a + i * size + key_off, sizeof(t1));
		if (t1 < t0)
			return false;
	}
	return true;
}

#define SORT_VEC(vec, type, field)                                                   \
	do {                                                                         \
		if (!sorted((vec).items, (vec).len, sizeof(type), offsetof(type, field))) \
			merge_sort((vec).items, (vec).len, sizeof(type),             \
				   offsetof(type, field));                           \
	} while (0)

void model_sort_by_time(struct model *m)
{
	SORT_VEC(m->samples, struct model_sample, time_ns);
	SORT_VEC(m->switches, struct model_switch, time_ns);
	SORT_VEC(m->trace, struct model_trace_event, time_ns);
}
