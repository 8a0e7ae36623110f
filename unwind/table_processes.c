// SPDX-License-Identifier: GPL-2.0
/* --call-graph cfi: a process's executable mappings into its mapping
 * table, and the images it holds. */
#include "unwind/table_service_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The mapping table entry of e, an executable mapping of process pid:
 * ENTRY_WAIT when its image is not built yet (noted in pp, if given), or
 * with ready_only ENTRY_LEFT_OUT (no entry: a sample there asks). */
enum entry { ENTRY_DONE, ENTRY_WAIT, ENTRY_LEFT_OUT };
static enum entry map_entry(struct unwind_service *us, pid_t pid, const struct procmap_entry *e,
			    struct collector_unwind_map *m, struct pending *pp, uint32_t *image,
			    bool ready_only, int *map_files)
{
	size_t (*get)(struct unwind_service *, uint64_t, uint64_t, const char *, const char *,
		      const char *) = ready_only ? images_get_ready : images_get;
	struct cfi_image *img;
	char path[4096], ns[32];
	size_t i = SIZE_MAX;

	m->start = e->start;
	m->end = e->end;
	if (!strcmp(e->path, "[vdso]")) {
		i = get(us, VDSO_DEV, 0, NULL, NULL, "");
	} else if (procmap_is_file(e) &&
		   (i = images_known(us, procmap_dev(e), e->inode, ready_only)) == SIZE_MAX &&
		   procmaps_open_path(pid, e, path, sizeof(path), map_files) == 0) {
		/* the paths only for an image to open: their look-up, a
		 * faccessat of map_files, was 12% of the collector's CPU
		 * under a build loop (-a -F 99), and this snprintf 1% */
		snprintf(ns, sizeof(ns), "/proc/%d/root", (int)pid);
		i = get(us, procmap_dev(e), e->inode, path, e->path, ns);
	}
	*image = i == SIZE_MAX ? NO_IMAGE : i;
	if (i == SIZE_MAX)
		return ENTRY_DONE; /* no file (JIT code): frame-pointer steps */
	img = &us->images[i];
	if (img->state != IMAGE_READY && img->state != IMAGE_FAILED && ready_only) {
		*image = NO_IMAGE;
		return ENTRY_LEFT_OUT;
	}
	if (img->state == IMAGE_QUEUED) {
		/* its samples are copied for user space meanwhile */
		m->first_page = COLLECTOR_UNWIND_PENDING;
		if (pp && pp->n_waited < WAITED_MAX)
			pp->waited[pp->n_waited++] = i;
		if (pp && pp->hot_pc >= e->start && pp->hot_pc < e->end)
			pp->hot = i;
		return ENTRY_WAIT;
	}
	for (uint32_t s = 0; s < img->n_segs; s++) {
		struct collector_unwind_image_seg at;

		if (!img->segs[s].n_pages)
			continue;
		/* the same placement the program makes by file */
		at = seg_placement(&img->segs[s]);
		if (e->pgoff < at.start || e->pgoff >= at.end)
			continue;
		m->base = e->start - e->pgoff + (uint64_t)at.delta;
		m->first_page = at.first_page;
		m->n_pages = at.n_pages;
		break;
	}
	return ENTRY_DONE;
}

/* pid's entry in users, made when make (else NULL when it has none). */
static struct user *find_user(struct unwind_service *us, pid_t pid, bool make)
{
	uint32_t k = idmap_get(&us->by_pid, pid);

	if (k != UINT32_MAX && k < us->n_users && us->users[k].pid == pid)
		return &us->users[k];
	if (!make)
		return NULL;
	if (us->n_users == us->cap_users) {
		size_t cap = us->cap_users ? 2 * us->cap_users : 64;
		struct user *v = realloc(us->users, cap * sizeof(*v));

		if (!v)
			return NULL;
		us->users = v;
		us->cap_users = cap;
	}
	if (idmap_put(&us->by_pid, pid, us->n_users) != 0)
		return NULL;
	us->users[us->n_users] = (struct user){ .pid = pid };
	return &us->users[us->n_users++];
}

static void release_images(struct unwind_service *us, const uint32_t *imgs, uint32_t n)
{
	uint64_t now = monotonic_ns();

	for (uint32_t k = 0; k < n; k++) {
		struct cfi_image *img = &us->images[imgs[k]];

		if (img->users && !--img->users)
			img->unused_since = now;
	}
}

void process_drop(struct unwind_service *us, pid_t pid)
{
	struct user *u = find_user(us, pid, false);
	size_t k;

	if (!u)
		return;
	release_images(us, u->imgs, u->n);
	free(u->imgs);
	/* the last entry takes its place */
	k = u - us->users;
	us->users[k] = us->users[--us->n_users];
	if (k < us->n_users)
		idmap_put(&us->by_pid, us->users[k].pid, k);
	idmap_put(&us->by_pid, pid, UINT32_MAX);
}

bool process_gone(pid_t pid)
{
	return kill(pid, 0) != 0 && errno == ESRCH;
}

/* Process pid's table taken back from the program, and dropped, when the
 * process is gone. */
static void drop_if_gone(struct unwind_service *us, pid_t pid)
{
	if (process_gone(pid)) {
		us->maps.ops->forget_process(us->maps.maps, pid);
		process_drop(us, pid);
	}
}

void process_drop_dead(struct unwind_service *us)
{
	for (size_t i = us->n_users; i-- > 0;)
		drop_if_gone(us, us->users[i].pid);
}

void processes_free(struct unwind_service *us)
{
	for (size_t i = 0; i < us->n_users; i++)
		free(us->users[i].imgs);
	free(us->users);
	idmap_free(&us->by_pid);
}

/* Process pid's mapping table lists imgs[0..n) now (n distinct). */
static void set_user(struct unwind_service *us, pid_t pid, const uint32_t *imgs, uint32_t n)
{
	struct user *u = find_user(us, pid, true);
	uint32_t *copy = malloc((n ? n : 1) * sizeof(*copy));

	if (!u || !copy) {
		free(copy); /* not counted: its images may be evicted under it */
		return;
	}
	/* the new ones counted before the old ones released: an image in
	 * both never looks unused */
	for (uint32_t k = 0; k < n; k++)
		us->images[imgs[k]].users++;
	memcpy(copy, imgs, n * sizeof(*copy));
	release_images(us, u->imgs, u->n);
	free(u->imgs);
	u->imgs = copy;
	u->n = n;
}

int process_write(struct unwind_service *us, pid_t pid, uint64_t not_before_ns, bool *complete,
		  struct pending *pp, bool ready_only)
{
	struct collector_unwind_proc *p;
	uint32_t imgs[COLLECTOR_UNWIND_MAX_MAPS], n_imgs = 0;
	struct procmaps maps;
	int map_files = -1;
	uint64_t t0 = monotonic_ns();
	int err = maps_store_read(us->shared_maps, pid, not_before_ns, &maps, NULL);

	*complete = true;
	if (pp) {
		pp->n_waited = 0;
		pp->hot = NO_IMAGE;
	}
	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p) {
		procmaps_free(&maps);
		return -ENOMEM;
	}
	/* the kernel lists mappings sorted by address, as the program wants */
	for (size_t i = 0; i < maps.n && p->n_maps < COLLECTOR_UNWIND_MAX_MAPS; i++) {
		uint32_t img;
		bool seen = false;
		enum entry got;

		if (!maps.entries[i].exec)
			continue;
		got = map_entry(us, pid, &maps.entries[i], &p->maps[p->n_maps], pp, &img,
				ready_only, &map_files);
		*complete &= got == ENTRY_DONE;
		p->n_maps += got != ENTRY_LEFT_OUT;
		if (img == NO_IMAGE)
			continue;
		/* an image's segments are listed one after another */
		for (uint32_t k = 0; k < n_imgs && !seen; k++)
			seen = imgs[k] == img;
		if (!seen)
			imgs[n_imgs++] = img;
	}
	/* counted before the table is written: no image it lists is evicted
	 * while the program may read it */
	set_user(us, pid, imgs, n_imgs);
	err = us->maps.ops->set_process(us->maps.maps, pid, p);
	if (err == -E2BIG) {
		/* the map is full: of processes gone whose exit came before
		 * their table (a zombie still answers kill(0)) */
		process_drop_dead(us);
		err = us->maps.ops->set_process(us->maps.maps, pid, p);
	}
	/* gone before its table was written (its maps from the kernel's
	 * records outlive it): the program's exit, which forgets a
	 * process's table, has come and gone */
	if (!err)
		drop_if_gone(us, pid);
	free(p);
	procmaps_free(&maps);
	us->st.refreshes++;
	us->st.build_ns += monotonic_ns() - t0;
	return err;
}
