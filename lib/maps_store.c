// SPDX-License-Identifier: GPL-2.0
/* The newest reading of each process's maps, shared (lib/maps_store.h). */
#include "lib/maps_store.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/idmap.h"

struct maps_slot {
	pid_t pid;           /* 0: empty */
	uint64_t read_ns;    /* records older than this are in maps already */
	bool followed;       /* kept current by the records since read_ns */
	struct procmaps maps;
};

/* Slots found through by_pid (a linear search of the slots in every get
 * and put was 3% of the collector's CPU under a build loop, -a -F 99);
 * a new pid takes the slot after the last one taken, round the ring:
 * the one whose process was first put the longest ago. */
struct maps_store {
	pthread_mutex_t lock;
	uint64_t read, reused; /* maps_store_read()'s */
	uint64_t followed;     /* its answers kept current by records */
	/* the kernel's mmap records (maps_store_follow): feed_lock makes one
	 * drain, and a reading of /proc, at a time; drained_ns is when the
	 * last drain began, the time of every followed reading */
	void (*drain)(void *ctx);
	void *feed;
	pthread_mutex_t feed_lock;
	uint64_t drained_ns;
	struct idmap by_pid;   /* pid -> slot, UINT32_MAX when it has none */
	uint32_t next;         /* the slot a new pid takes */
	struct maps_slot slots[MAPS_STORE_SLOTS];
};

/* pid's slot, or NULL. */
static struct maps_slot *find_slot(struct maps_store *s, pid_t pid)
{
	uint32_t k = idmap_get(&s->by_pid, (uint64_t)pid);

	return k < MAPS_STORE_SLOTS && s->slots[k].pid == pid ? &s->slots[k] : NULL;
}

struct maps_store *maps_store_new(void)
{
	struct maps_store *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (pthread_mutex_init(&s->lock, NULL) != 0) {
		free(s);
		return NULL;
	}
	if (pthread_mutex_init(&s->feed_lock, NULL) != 0) {
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return s;
}

void maps_store_free(struct maps_store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < MAPS_STORE_SLOTS; i++)
		procmaps_free(&s->slots[i].maps);
	idmap_free(&s->by_pid);
	pthread_mutex_destroy(&s->feed_lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* A deep copy of in; false without memory (*out then empty). */
static bool copy_maps(const struct procmaps *in, struct procmaps *out)
{
	out->n = 0;
	out->entries = calloc(in->n ? in->n : 1, sizeof(*out->entries));
	if (!out->entries)
		return false;
	for (size_t i = 0; i < in->n; i++) {
		out->entries[i] = in->entries[i];
		out->entries[i].path = strdup(in->entries[i].path ? in->entries[i].path : "");
		if (!out->entries[i].path) {
			procmaps_free(out);
			return false;
		}
		out->n++;
	}
	return true;
}

/* pid's slot, taking the one first put the longest ago for a new pid;
 * NULL without memory.  Under the lock. */
static struct maps_slot *take_slot(struct maps_store *s, pid_t pid)
{
	struct maps_slot *slot = find_slot(s, pid);
	uint32_t k = s->next;

	if (slot)
		return slot;
	if (idmap_put(&s->by_pid, (uint64_t)pid, k) != 0)
		return NULL;
	s->next = (k + 1) % MAPS_STORE_SLOTS;
	slot = &s->slots[k];
	if (slot->pid)
		idmap_put(&s->by_pid, (uint64_t)slot->pid, UINT32_MAX);
	procmaps_free(&slot->maps);
	slot->pid = 0;
	slot->followed = false;
	return slot;
}

/* Keeps copy (taken) as pid's reading at read_ns unless a newer one is
 * kept; followed: records after read_ns will keep it current.  Under the
 * lock. */
static void keep_locked(struct maps_store *s, pid_t pid, uint64_t read_ns, struct procmaps *copy,
			bool followed)
{
	struct maps_slot *slot = take_slot(s, pid);

	if (!slot || (slot->pid == pid && slot->read_ns > read_ns)) {
		procmaps_free(copy); /* an older reading than the one kept */
		return;
	}
	procmaps_free(&slot->maps);
	slot->pid = pid;
	slot->read_ns = read_ns;
	slot->followed = followed;
	slot->maps = *copy;
}

static void put_copy(struct maps_store *s, pid_t pid, uint64_t read_ns, struct procmaps *copy,
		     bool followed)
{
	pthread_mutex_lock(&s->lock);
	keep_locked(s, pid, read_ns, copy, followed);
	pthread_mutex_unlock(&s->lock);
}

void maps_store_put(struct maps_store *s, pid_t pid, uint64_t read_ns, const struct procmaps *maps)
{
	struct procmaps copy;

	if (!s || pid <= 0 || !copy_maps(maps, &copy))
		return;
	put_copy(s, pid, read_ns, &copy, false);
}

int maps_store_get(struct maps_store *s, pid_t pid, uint64_t not_before_ns, struct procmaps *out,
		   uint64_t *read_ns)
{
	const struct maps_slot *c;
	int err = -ENOENT;

	out->entries = NULL;
	out->n = 0;
	if (!s)
		return err;
	pthread_mutex_lock(&s->lock);
	c = find_slot(s, pid);
	if (c && (c->followed ? s->drained_ns : c->read_ns) >= not_before_ns) {
		err = copy_maps(&c->maps, out) ? 0 : -ENOMEM;
		if (!err && read_ns)
			*read_ns = c->followed ? s->drained_ns : c->read_ns;
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* The records drained (under feed_lock): the followed readings are
 * current as of the time returned. */
static uint64_t drain_locked(struct maps_store *s)
{
	uint64_t now = monotonic_ns();

	s->drain(s->feed);
	pthread_mutex_lock(&s->lock);
	s->drained_ns = now;
	pthread_mutex_unlock(&s->lock);
	return now;
}

/* pid's maps read from /proc now (*now: when), kept for the other thread
 * (s may be NULL): followed, the records keep the reading current. */
static int read_proc(struct maps_store *s, pid_t pid, bool followed, struct procmaps *out,
		     uint64_t *now)
{
	struct procmaps copy;
	int err;

	*now = monotonic_ns();
	err = procmaps_read_exec(pid, out);
	if (err || !s)
		return err;
	/* a process that has exited (a zombie) lists nothing: not kept over
	 * a reading that listed its mappings */
	if (out->n && copy_maps(out, &copy))
		put_copy(s, pid, *now, &copy, followed);
	pthread_mutex_lock(&s->lock);
	s->read++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* With the records (under feed_lock): after a drain, a followed reading
 * is current; else /proc, read while no drain runs (a record drained
 * between the reading and its put would be lost to it), and followed from
 * then on. */
static int read_followed(struct maps_store *s, pid_t pid, struct procmaps *out, uint64_t *read_ns)
{
	const struct maps_slot *c;
	uint64_t now = drain_locked(s);
	int err = -ENOENT;

	pthread_mutex_lock(&s->lock);
	c = find_slot(s, pid);
	if (c && c->followed) {
		err = copy_maps(&c->maps, out) ? 0 : -ENOMEM;
		s->followed += !err;
	}
	pthread_mutex_unlock(&s->lock);
	if (err == -ENOENT)
		err = read_proc(s, pid, true, out, &now);
	if (!err && read_ns)
		*read_ns = now;
	return err;
}

int maps_store_read(struct maps_store *s, pid_t pid, uint64_t not_before_ns, struct procmaps *out,
		    uint64_t *read_ns)
{
	uint64_t now;
	int err;

	if (s) {
		pthread_mutex_lock(&s->feed_lock);
		if (s->drain) {
			err = read_followed(s, pid, out, read_ns);
			pthread_mutex_unlock(&s->feed_lock);
			return err;
		}
		pthread_mutex_unlock(&s->feed_lock);
	}
	if (maps_store_get(s, pid, not_before_ns, out, read_ns) == 0) {
		pthread_mutex_lock(&s->lock);
		s->reused++;
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	err = read_proc(s, pid, false, out, &now);
	if (!err && read_ns)
		*read_ns = now;
	return err;
}

void maps_store_follow(struct maps_store *s, void (*drain)(void *ctx), void *ctx)
{
	pthread_mutex_lock(&s->feed_lock);
	s->drain = drain;
	s->feed = ctx;
	pthread_mutex_unlock(&s->feed_lock);
	if (!drain)
		maps_store_unfollow(s); /* nothing keeps them current now */
}

void maps_store_refresh(struct maps_store *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->feed_lock);
	if (s->drain)
		drain_locked(s);
	pthread_mutex_unlock(&s->feed_lock);
}

void maps_store_exec(struct maps_store *s, pid_t pid, uint64_t ns)
{
	struct procmaps none = { 0 };

	put_copy(s, pid, ns, &none, true);
}

void maps_store_fork(struct maps_store *s, pid_t child, pid_t parent, uint64_t ns)
{
	struct maps_slot *from, *slot;
	struct procmaps copy;

	pthread_mutex_lock(&s->lock);
	from = parent ? find_slot(s, parent) : NULL;
	if (from && from->followed && copy_maps(&from->maps, &copy)) {
		keep_locked(s, child, ns, &copy, true);
	} else if ((slot = find_slot(s, child))) {
		/* a reading of a process that had child's pid before is not
		 * this one's */
		slot->followed = false;
	}
	pthread_mutex_unlock(&s->lock);
}

int maps_store_map(struct maps_store *s, pid_t pid, uint64_t ns, const struct procmap_entry *e)
{
	struct maps_slot *slot;
	int err = 0;

	pthread_mutex_lock(&s->lock);
	slot = find_slot(s, pid);
	if (slot && slot->followed && ns >= slot->read_ns && (err = procmaps_place(&slot->maps, e)))
		slot->followed = false; /* without memory: /proc again */
	pthread_mutex_unlock(&s->lock);
	return err;
}

void maps_store_unfollow(struct maps_store *s)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < MAPS_STORE_SLOTS; i++)
		s->slots[i].followed = false;
	pthread_mutex_unlock(&s->lock);
}

void maps_store_counts(struct maps_store *s, uint64_t *read, uint64_t *reused, uint64_t *followed)
{
	*read = *reused = *followed = 0;
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	*read = s->read;
	*reused = s->reused;
	*followed = s->followed;
	pthread_mutex_unlock(&s->lock);
}
