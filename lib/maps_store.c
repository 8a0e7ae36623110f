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
	uint64_t read_ns;
	struct procmaps maps;
};

/* Slots found through by_pid (a linear search of the slots in every get
 * and put was 3% of the collector's CPU under a build loop, -a -F 99);
 * a new pid takes the slot after the last one taken, round the ring:
 * the one whose process was first put the longest ago. */
struct maps_store {
	pthread_mutex_t lock;
	uint64_t read, reused; /* maps_store_read()'s */
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

	if (s && pthread_mutex_init(&s->lock, NULL) != 0) {
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

void maps_store_put(struct maps_store *s, pid_t pid, uint64_t read_ns, const struct procmaps *maps)
{
	struct procmaps copy;
	struct maps_slot *slot = NULL;

	if (!s || pid <= 0 || !copy_maps(maps, &copy))
		return;
	pthread_mutex_lock(&s->lock);
	slot = find_slot(s, pid);
	if (!slot) {
		uint32_t k = s->next;

		if (idmap_put(&s->by_pid, (uint64_t)pid, k) != 0) {
			pthread_mutex_unlock(&s->lock);
			procmaps_free(&copy);
			return;
		}
		s->next = (k + 1) % MAPS_STORE_SLOTS;
		slot = &s->slots[k];
		if (slot->pid)
			idmap_put(&s->by_pid, (uint64_t)slot->pid, UINT32_MAX);
		slot->pid = 0;
	}
	if (slot->pid == pid && slot->read_ns > read_ns) {
		procmaps_free(&copy); /* an older reading than the one kept */
	} else {
		procmaps_free(&slot->maps);
		slot->pid = pid;
		slot->read_ns = read_ns;
		slot->maps = copy;
	}
	pthread_mutex_unlock(&s->lock);
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
	if (c && c->read_ns >= not_before_ns) {
		err = copy_maps(&c->maps, out) ? 0 : -ENOMEM;
		if (!err && read_ns)
			*read_ns = c->read_ns;
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int maps_store_read(struct maps_store *s, pid_t pid, uint64_t not_before_ns, struct procmaps *out,
		    uint64_t *read_ns)
{
	uint64_t now;
	int err;

	if (maps_store_get(s, pid, not_before_ns, out, read_ns) == 0) {
		pthread_mutex_lock(&s->lock);
		s->reused++;
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	now = monotonic_ns();
	err = procmaps_read_exec(pid, out);
	if (err)
		return err;
	if (read_ns)
		*read_ns = now;
	if (!s)
		return 0;
	/* a process that has exited (a zombie) lists nothing: not kept over
	 * a reading that listed its mappings */
	if (out->n)
		maps_store_put(s, pid, now, out);
	pthread_mutex_lock(&s->lock);
	s->read++;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void maps_store_counts(struct maps_store *s, uint64_t *read, uint64_t *reused)
{
	*read = *reused = 0;
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	*read = s->read;
	*reused = s->reused;
	pthread_mutex_unlock(&s->lock);
}
