// SPDX-License-Identifier: GPL-2.0
/* The in-memory model of a run: construction, interning and lookups. */
#include "model/model.h"
#include "lib/fdio.h"
#include "lib/userfs.h"

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

char *model_strdup(const char *s)
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
		if (fd_write_all(sp->fd, *items, *len * size) == 0) {
			sp->spilled += *len;
			*len = 0;
		} else {
			sp->failed = true;
		}
	}
	return model_vec_grow(vec_items, len, cap, size);
}

/* In the output directory, with the invoking user's rights (lib/userfs.h),
 * as everything created there. */
static int spill_open(struct model_spill *sp, const char *dir)
{
	int err = user_fs_enter();

	if (err)
		return err;
	sp->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	err = sp->fd < 0 ? -errno : 0;
	user_fs_leave();
	if (err)
		return err;
	sp->active = true;
	sp->failed = false;
	sp->spilled = 0;
	return 0;
}

static void spill_close(struct model_spill *sp)
{
	if (sp->active)
		close(sp->fd);
	sp->active = false;
	sp->fd = -1;
}

/* The whole vector in items[0..len) again: the file mapped (shared and
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
	if (!sp->failed && *len && fd_write_all(sp->fd, *items, *len * size) == 0) {
		sp->spilled += *len;
		*len = 0;
	}
	if (!*len) {
		/* shared: what sorting writes goes to the (unnamed) file's pages,
		 * which the kernel can write back and reclaim, not to private
		 * copies that stay in the collector's anonymous memory */
		void *map = mmap(NULL, total * size, PROT_READ | PROT_WRITE, MAP_SHARED, sp->fd, 0);

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
	model_lost_add(m, MODEL_LOST_SPILL_UNREAD, lost);
	return -EIO;
}

#define DROP(m, vec)                                                  \
	do {                                                          \
		spill_free(&(m)->vec##_spill, (m)->vec.items);        \
		(m)->vec.items = NULL;                                \
		(m)->vec.len = (m)->vec.cap = 0;                      \
	} while (0)

int model_drop_events(struct model *m, const char *spill_dir)
{
	DROP(m, samples);
	DROP(m, switches);
	DROP(m, trace);
	DROP(m, trace_args);
	/* an aggregated event's occurrences are the dropped samples' */
	for (size_t i = 0; i < m->events.len; i++)
		if (m->events.items[i].aggregated)
			m->events.items[i].occurrences = 0;
	if (m->energy.len > 1) {
		m->energy.items[0] = m->energy.items[m->energy.len - 1];
		m->energy.len = 1;
	}
	return spill_dir ? model_spill_events(m, spill_dir) : 0;
}

/* ---- indexes ------------------------------------------------------------ */

/* A new index entry; the model cannot be partially built, so out of
 * memory aborts, as everywhere in the model. */
static void *index_entry_or_abort(void *e)
{
	if (!e) {
		fprintf(stderr, "collector: out of memory (model index)\n");
		abort();
	}
	return e;
}

static inline uint64_t index_entry_hash(const struct model_index_entry *e)
{
	return e->hash;
}

/* Keys carry their hash, computed once per call. */
struct file_key {
	const struct model *m;
	const char *path;
	uint64_t hash;
};

static inline uint64_t file_key_hash(const struct file_key *k)
{
	return k->hash;
}

static inline bool file_match(const struct model_index_entry *e, const struct file_key *k)
{
	return e->hash == k->hash && strcmp(k->m->files.items[e->id].path, k->path) == 0;
}

HASHTAB_FUNCS(file_index, struct model_index, struct model_index_entry, struct file_key,
	      index_entry_hash, file_key_hash, file_match)

struct function_key {
	const struct model *m;
	uint32_t image;
	const char *name;
	uint64_t entry;
	uint64_t hash;
};

static inline uint64_t function_key_hash(const struct function_key *k)
{
	return k->hash;
}

static inline bool function_match(const struct model_index_entry *e,
				  const struct function_key *k)
{
	const struct model_function *f = &k->m->functions.items[e->id];

	return e->hash == k->hash && f->image == k->image && f->entry == k->entry &&
	       strcmp(f->name, k->name) == 0;
}

HASHTAB_FUNCS(function_index, struct model_index, struct model_index_entry, struct function_key,
	      index_entry_hash, function_key_hash, function_match)

struct stack_key {
	const struct model *m;
	const uint32_t *frames;
	uint32_t n_frames, n_kernel;
	bool truncated;
	uint64_t hash;
};

static inline uint64_t stack_key_hash(const struct stack_key *k)
{
	return k->hash;
}

static inline bool stack_match(const struct model_index_entry *e, const struct stack_key *k)
{
	const struct model_stack *s = &k->m->stacks.items[e->id];

	return e->hash == k->hash && s->n_frames == k->n_frames && s->n_kernel == k->n_kernel &&
	       s->truncated == k->truncated &&
	       (!k->n_frames ||
		memcmp(model_stack_frames(k->m, s), k->frames, k->n_frames * sizeof(uint32_t)) == 0);
}

HASHTAB_FUNCS(stack_index, struct model_index, struct model_index_entry, struct stack_key,
	      index_entry_hash, stack_key_hash, stack_match)

struct location_key {
	uint32_t image;
	uint64_t addr;
};

static inline uint64_t location_hash(uint32_t image, uint64_t addr)
{
	return hash_finish(hash_word(image, addr));
}

static inline uint64_t location_entry_hash(const struct model_location_entry *e)
{
	return location_hash(e->image, e->addr);
}

static inline uint64_t location_key_hash(const struct location_key *k)
{
	return location_hash(k->image, k->addr);
}

static inline bool location_match(const struct model_location_entry *e,
				  const struct location_key *k)
{
	return e->addr == k->addr && e->image == k->image;
}

HASHTAB_FUNCS(location_index, struct model_location_index, struct model_location_entry,
	      struct location_key, location_entry_hash, location_key_hash, location_match)

/* ---- life cycle ------------------------------------------------------- */

void model_init(struct model *m)
{
	memset(m, 0, sizeof(*m));
	m->run.event = model_strdup("cpu-clock");
}

static void free_counters(struct model_counter *c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(c[i].name);
	free(c);
}

#define MODEL_VEC_FREE(vec) \
	do { \
		free((vec).items); \
		(vec).items = NULL; \
		(vec).len = (vec).cap = 0; \
	} while (0)

void model_forget_code(struct model *m)
{
	for (size_t i = 0; i < m->files.len; i++)
		free(m->files.items[i].path);
	for (size_t i = 0; i < m->functions.len; i++) {
		free(m->functions.items[i].name);
		free(m->functions.items[i].linkage_name);
	}
	MODEL_VEC_FREE(m->files);
	MODEL_VEC_FREE(m->functions);
	MODEL_VEC_FREE(m->inlines);
	MODEL_VEC_FREE(m->locations);
	MODEL_VEC_FREE(m->frames);
	MODEL_VEC_FREE(m->stacks);
	file_index_free(&m->file_index);
	function_index_free(&m->function_index);
	location_index_free(&m->location_index);
	stack_index_free(&m->stack_index);
}

void model_free(struct model *m)
{
	size_t i;

	model_forget_code(m);
	for (i = 0; i < m->images.len; i++) {
		free(m->images.items[i].path);
		free(m->images.items[i].debug_path);
		free(m->images.items[i].frame_type);
	}
	for (i = 0; i < m->processes.len; i++)
		model_process_clear(&m->processes.items[i]);
	free(m->images.items);
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
	for (i = 0; i < m->run.n_attributes; i++) {
		free(m->run.attributes[i].key);
		free(m->run.attributes[i].value);
	}
	free(m->run.attributes);
	model_events_free(m);
	memset(m, 0, sizeof(*m));
}

void model_set_command_line(struct model *m, const char *cmdline)
{
	free(m->run.command_line);
	m->run.command_line = model_strdup(cmdline);
}

/* ---- images, files, functions ----------------------------------------- */

uint32_t model_add_image(struct model *m, const struct model_image *tmpl)
{
	struct model_image *img = MODEL_VEC_PUSH(m->images);

	*img = *tmpl;
	img->path = model_strdup(tmpl->path ? tmpl->path : "[unknown]");
	img->debug_path = model_strdup(tmpl->debug_path);
	img->frame_type = model_strdup(tmpl->frame_type);
	return m->images.len - 1;
}

uint32_t model_intern_file(struct model *m, const char *path)
{
	struct file_key k = { m, path, hash_string(path) };
	struct model_index_entry *e = file_index_find_hashed(&m->file_index, k.hash, &k);

	if (e)
		return e->id;
	MODEL_VEC_PUSH(m->files)->path = model_strdup(path);
	e = index_entry_or_abort(file_index_insert_hashed(&m->file_index, k.hash));
	e->hash = k.hash;
	e->id = m->files.len - 1;
	return e->id;
}

uint32_t model_intern_function(struct model *m, uint32_t image, const char *name,
			       uint64_t entry, uint64_t size, uint32_t file, uint32_t line)
{
	struct function_key k = {
		m, image, name, entry,
		hash_finish(hash_word(hash_word(hash_string(name), image), entry)),
	};
	struct model_index_entry *e = function_index_find_hashed(&m->function_index, k.hash, &k);
	struct model_function *f;

	if (e) {
		f = &m->functions.items[e->id];
		/* a later lookup may know more (debug info) */
		if (f->file == MODEL_NONE && file != MODEL_NONE) {
			f->file = file;
			f->line = line;
		}
		if (!f->size)
			f->size = size;
		return e->id;
	}
	f = MODEL_VEC_PUSH(m->functions);
	f->name = model_strdup(name);
	f->image = image;
	f->entry = entry;
	f->size = size;
	f->file = file;
	f->line = line;
	e = index_entry_or_abort(function_index_insert_hashed(&m->function_index, k.hash));
	e->hash = k.hash;
	e->id = m->functions.len - 1;
	return e->id;
}

void model_function_set_linkage(struct model *m, uint32_t function, const char *linkage)
{
	struct model_function *f = &m->functions.items[function];

	if (!f->linkage_name && linkage && strcmp(linkage, f->name) != 0)
		f->linkage_name = model_strdup(linkage);
}

/* ---- locations and stacks --------------------------------------------- */

uint32_t model_find_location(const struct model *m, uint32_t image, uint64_t addr)
{
	struct location_key k = { image, addr };
	const struct model_location_entry *e = location_index_find(&m->location_index, &k);

	return e ? e->id : MODEL_NONE;
}

uint32_t model_intern_location(struct model *m, uint32_t image, uint64_t addr,
			       uint32_t function, uint32_t file, uint32_t line,
			       const struct model_inline *inl, uint32_t n_inl)
{
	struct location_key k = { image, addr };
	struct model_location_entry *e;
	struct model_location *l;
	bool fresh;

	e = index_entry_or_abort(location_index_upsert(&m->location_index, &k, &fresh));
	if (!fresh)
		return e->id;
	e->image = image;
	e->addr = addr;
	e->id = m->locations.len;
	l = MODEL_VEC_PUSH(m->locations);
	l->image = image;
	l->addr = addr;
	l->function = function;
	l->file = file;
	l->line = line;
	l->n_inlines = n_inl;
	l->inlines = m->inlines.len;
	for (uint32_t i = 0; i < n_inl; i++)
		*MODEL_VEC_PUSH(m->inlines) = inl[i];
	return e->id;
}

uint32_t model_intern_stack(struct model *m, const uint32_t *frames, uint32_t n_frames,
			    uint32_t n_kernel, bool truncated)
{
	struct stack_key k = {
		m, frames, n_frames, n_kernel, truncated,
		hash_bytes((uint64_t)n_kernel << 1 | truncated, frames,
			   n_frames * sizeof(uint32_t)),
	};
	struct model_index_entry *e = stack_index_find_hashed(&m->stack_index, k.hash, &k);
	struct model_stack *s;

	if (e)
		return e->id;
	s = MODEL_VEC_PUSH(m->stacks);
	s->n_frames = n_frames;
	s->n_kernel = n_kernel;
	s->truncated = truncated;
	s->frames = m->frames.len;
	for (uint32_t i = 0; i < n_frames; i++)
		*MODEL_VEC_PUSH(m->frames) = frames[i];
	e = index_entry_or_abort(stack_index_insert_hashed(&m->stack_index, k.hash));
	e->hash = k.hash;
	e->id = m->stacks.len - 1;
	return e->id;
}

/* ---- events (processes and threads: model/tasks.c) ------------------- */

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

/* ---- lookups ----------------------------------------------------------- */

const char *model_location_name(const struct model *m, uint32_t location)
{
	const struct model_location *l = &m->locations.items[location];

	if (l->function == MODEL_NONE)
		return NULL;
	return m->functions.items[l->function].name;
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

/* Elements one ring delivers out of time order are a few places from where
 * they belong (CPUs reserve their records in the ring moments after they
 * take their time), so an insertion sort puts them back in place with no
 * memory of its own, where the merge sort needs a second copy of the whole
 * vector: 576 MB for an interval of a system-wide run with 100 000 context
 * switches a second.  Stable.  It gives up (the vector still a permutation
 * of itself) when an element would move more than MAX_SHIFT places. */
#define MAX_SHIFT 4096
#define ELEMENT_BYTES_MAX 64

static bool sort_nearly_sorted(void *base, size_t n, size_t size, size_t key_off)
{
	char *a = base, held[ELEMENT_BYTES_MAX];

	if (size > sizeof(held))
		return false;
	for (size_t i = 1; i < n; i++) {
		uint64_t t, prev;
		size_t j = i;

		memcpy(&t, a + i * size + key_off, sizeof(t));
		memcpy(&prev, a + (i - 1) * size + key_off, sizeof(prev));
		if (prev <= t)
			continue;
		memcpy(held, a + i * size, size);
		do {
			if (i - j == MAX_SHIFT)
				break;
			memcpy(a + j * size, a + (j - 1) * size, size);
			j--;
			if (j == 0)
				break;
			memcpy(&prev, a + (j - 1) * size + key_off, sizeof(prev));
		} while (prev > t);
		memcpy(a + j * size, held, size);
		if (i - j == MAX_SHIFT && j > 0 && prev > t)
			return false;
	}
	return true;
}

#define SORT_VEC(vec, type, field)                                                   \
	do {                                                                         \
		_Static_assert(sizeof(type) <= ELEMENT_BYTES_MAX, "sort_nearly_sorted"); \
		if (!sort_nearly_sorted((vec).items, (vec).len, sizeof(type),        \
					offsetof(type, field)))                      \
			merge_sort((vec).items, (vec).len, sizeof(type),             \
				   offsetof(type, field));                           \
	} while (0)

void model_sort_by_time(struct model *m)
{
	SORT_VEC(m->samples, struct model_sample, time_ns);
	SORT_VEC(m->switches, struct model_switch, time_ns);
	SORT_VEC(m->trace, struct model_trace_event, time_ns);
}
