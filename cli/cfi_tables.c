// SPDX-License-Identifier: GPL-2.0
/* --call-graph cfi: which unwind tables the BPF program gets. */
#include "cli/cfi_tables.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/hashmix.h"
#include "lib/idmap.h"
#include "lib/procmaps.h"
#include "loader/unwind_tables.h"
#include "symbols/cfi_table.h"
#include "symbols/debug_files.h"

/* The table rows are the BPF program's, field for field. */
_Static_assert(sizeof(struct cfi_row) == sizeof(struct collector_unwind_row), "row layout");
_Static_assert((int)CFI_ROW_NONE == (int)COLLECTOR_ROW_NONE &&
	       (int)CFI_ROW_RSP == (int)COLLECTOR_ROW_RSP &&
	       (int)CFI_ROW_RBP == (int)COLLECTOR_ROW_RBP &&
	       (int)CFI_ROW_PLT == (int)COLLECTOR_ROW_PLT &&
	       (int)CFI_ROW_SIGNAL == (int)COLLECTOR_ROW_SIGNAL &&
	       (int)CFI_ROW_END == (int)COLLECTOR_ROW_END, "row kinds");

/* Executable segments of an image with a table each (node has three). */
#define MAX_SEGS 4

/* EVICTED: built, then its space given to others (no live process mapped
 * it); queued again when a process maps it. */
enum image_state { IMAGE_QUEUED, IMAGE_READY, IMAGE_FAILED, IMAGE_EVICTED };

/* The table of one executable segment. */
struct cfi_seg {
	uint64_t offset, filesz;  /* the segment in the file */
	uint64_t vmo;             /* p_vaddr - p_offset */
	uint64_t table_base;      /* link-time address of the table's pc 0 */
	uint32_t first_page, n_pages; /* n_pages 0: no table */
	struct unwind_image_space space;
};

/* One image (a file, or the vDSO). */
struct cfi_image {
	uint64_t dev, inode;
	enum image_state state;
	struct elf_file file;     /* open while queued */
	struct elf_file debug;    /* its separate debug file, while queued */
	bool has_debug;
	struct cfi_seg segs[MAX_SEGS];
	uint32_t n_segs;
	uint32_t users;           /* processes whose mapping table lists it */
	uint64_t unused_since;    /* when users fell to 0 */
};

/* The images a process's mapping table lists (each counted in its users). */
struct user {
	pid_t pid;
	uint32_t n;
	uint32_t *imgs;
};

/* Processes remembered as having asked once. */
#define ASKED_ONCE 1024

/* Images a process waits for, remembered (beyond, it waits all the same). */
#define WAITED_MAX 8

#define NO_IMAGE UINT32_MAX

/* A process that asked and still lacks images. */
struct pending {
	pid_t pid;
	uint32_t n_waited;
	uint32_t waited[WAITED_MAX]; /* queued images it maps */
	uint64_t hot_pc;          /* where it was sampled without a table (0: unknown) */
	uint32_t hot;             /* the queued image that holds hot_pc, or NO_IMAGE */
};

struct cfi_tables {
	struct unwind_tables *ut;
	struct idmap by_file;     /* hash of (dev, inode) -> index in images */
	struct cfi_image *images;
	size_t n_images, cap_images;
	size_t n_queued;          /* images in state IMAGE_QUEUED */
	struct pending *pending;  /* processes whose mapping table lacks images */
	size_t n_pending, cap_pending;
	size_t n_fresh;           /* pending[n_pending - n_fresh ..]: not served yet */
	uint64_t served_ns;       /* when the pending processes were last served */
	pid_t asked_once[ASKED_ONCE]; /* processes that asked once lately (a ring) */
	size_t n_asked_once;
	struct user *users;       /* processes with a mapping table */
	size_t n_users, cap_users;
	struct idmap by_pid;      /* pid -> index in users */
	struct cfi_tables_stats st;
	uint64_t build_peak_bytes; /* a table's rows and pages while built, at most */
	pthread_t thread;
	bool running;
	volatile bool stop;
};

/* The key of the vDSO, which no file holds. */
#define VDSO_DEV UINT64_MAX

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void close_files(struct cfi_image *img)
{
	elf_file_close(&img->file);
	if (img->has_debug)
		elf_file_close(&img->debug);
	img->has_debug = false;
}

struct cfi_tables *cfi_tables_new(struct bpf_session *s)
{
	struct cfi_tables *ct = calloc(1, sizeof(*ct));
	int err;

	if (!ct)
		return NULL;
	err = unwind_tables_open(&ct->ut, s);
	if (err) {
		fprintf(stderr, "collector: cannot map the unwind tables: %s\n", strerror(-err));
		free(ct);
		return NULL;
	}
	return ct;
}

void cfi_tables_free(struct cfi_tables *ct)
{
	if (!ct)
		return;
	cfi_tables_stop(ct);
	for (size_t i = 0; i < ct->n_images; i++)
		if (ct->images[i].state == IMAGE_QUEUED)
			close_files(&ct->images[i]);
	unwind_tables_close(ct->ut);
	for (size_t i = 0; i < ct->n_users; i++)
		free(ct->users[i].imgs);
	free(ct->users);
	idmap_free(&ct->by_pid);
	idmap_free(&ct->by_file);
	free(ct->images);
	free(ct->pending);
	free(ct);
}

/* The image no live process maps that has been unused the longest, other
 * than keep, or NULL. */
static struct cfi_image *oldest_unused(struct cfi_tables *ct, const struct cfi_image *keep)
{
	struct cfi_image *best = NULL;

	for (size_t i = 0; i < ct->n_images; i++) {
		struct cfi_image *img = &ct->images[i];

		if (img != keep && img->state == IMAGE_READY && !img->users &&
		    (!best || img->unused_since < best->unused_since))
			best = img;
	}
	return best;
}

/* Gives the space of img's tables back; it is built again when a process
 * maps it again. */
static void evict(struct cfi_tables *ct, struct cfi_image *img)
{
	for (uint32_t s = 0; s < img->n_segs; s++) {
		if (!img->segs[s].n_pages)
			continue;
		unwind_tables_remove_image(ct->ut, &img->segs[s].space);
		ct->st.rows_evicted += img->segs[s].space.n_rows;
	}
	img->n_segs = 0;
	img->state = IMAGE_EVICTED;
	ct->st.images_evicted++;
}

static void drop_user(struct cfi_tables *ct, pid_t pid);

/* Processes that exited without the news reaching us (their ring was
 * full) still hold their images: dropped, with their mapping tables. */
static void drop_dead_users(struct cfi_tables *ct)
{
	for (size_t i = ct->n_users; i-- > 0;) {
		pid_t pid = ct->users[i].pid;

		if (kill(pid, 0) != 0 && errno == ESRCH) {
			unwind_tables_forget_process(ct->ut, pid);
			drop_user(ct, pid);
		}
	}
}

/*
 * Loads table t of image img into the maps; when no free range holds it,
 * the images no live process maps are evicted, the longest unused first,
 * until one does.  The space is given back lazily, when wanted, not when
 * an image's last process exits: the arrays are allocated whole at start,
 * so freeing earlier saves nothing, and a program run again and again (a
 * build's compilers, a shell loop) finds its tables still there.
 */
static int add_table(struct cfi_tables *ct, struct cfi_image *img, const struct cfi_table *t,
		     struct unwind_image_space *sp)
{
	const struct collector_unwind_row *rows = (const struct collector_unwind_row *)t->rows;
	bool swept = false;
	int err;

	for (;;) {
		struct cfi_image *victim;

		err = unwind_tables_add_image(ct->ut, rows, t->n_rows, t->pages, t->n_pages, sp);
		if (err != -ENOSPC)
			return err;
		victim = oldest_unused(ct, img);
		if (!victim && !swept) {
			drop_dead_users(ct);
			swept = true;
			victim = oldest_unused(ct, img);
		}
		if (!victim) {
			ct->st.images_no_space++;
			return err;
		}
		evict(ct, victim);
	}
}

/* Builds and loads the tables of a queued image's executable segments. */
static void build_image(struct cfi_tables *ct, struct cfi_image *img)
{
	const struct elf_file *f = &img->file;
	uint64_t t0 = now_ns();

	for (size_t i = 0; i < f->n_loads && img->n_segs < MAX_SEGS; i++) {
		const struct elf_segment *ld = &f->loads[i];
		struct cfi_seg *seg = &img->segs[img->n_segs];
		struct cfi_table t;

		if (!(ld->flags & PF_X))
			continue;
		memset(seg, 0, sizeof(*seg));
		seg->offset = ld->offset;
		seg->filesz = ld->filesz;
		seg->vmo = ld->vaddr - ld->offset;
		img->n_segs++;
		if (cfi_table_build(&t, f, ld, img->has_debug ? &img->debug : NULL) != 0)
			continue; /* no table: frame-pointer steps there */
		/* the image files are mapped, not read: their pages are the
		 * page cache's, given back when they are closed */
		if (t.n_rows * sizeof(*t.rows) + (t.n_pages + 1) * sizeof(*t.pages) >
		    ct->build_peak_bytes)
			ct->build_peak_bytes = t.n_rows * sizeof(*t.rows) +
					       (t.n_pages + 1) * sizeof(*t.pages);
		if (add_table(ct, img, &t, &seg->space) == 0) {
			seg->table_base = t.base;
			seg->first_page = seg->space.first_page;
			seg->n_pages = t.n_pages;
			ct->st.rows += t.n_rows;
		}
		cfi_table_free(&t);
	}
	img->state = img->n_segs ? IMAGE_READY : IMAGE_FAILED;
	ct->st.images_failed += img->state == IMAGE_FAILED;
	close_files(img);
	ct->n_queued--;
	ct->st.build_ns += now_ns() - t0;
}

/* An image without .debug_frame of its own: the one of its separate
 * debug file, if there is one (a program built without unwind tables and
 * stripped has its CFI only there).  name is the image's own path, in the
 * mount namespace ns_prefix ("/proc/PID/root", or "" for ours). */
static void find_debug_file(struct cfi_tables *ct, struct cfi_image *img, const char *name,
			    const char *ns_prefix)
{
	char *found;

	if (!name || name[0] != '/' || cfi_has_debug_frame(&img->file))
		return;
	found = debug_file_find(&img->file, name, ns_prefix, DEBUG_FILES_ROOT, &img->debug);
	if (!found)
		return;
	free(found);
	img->has_debug = cfi_has_debug_frame(&img->debug);
	if (!img->has_debug)
		elf_file_close(&img->debug);
	ct->st.debug_files += img->has_debug;
}

/* The index of the image of file (dev, inode), opened at path (its own
 * name `name` in namespace ns_prefix) and queued when it is new (or the
 * collector's own vDSO for dev == VDSO_DEV); SIZE_MAX without memory. */
static size_t get_image(struct cfi_tables *ct, uint64_t dev, uint64_t inode, const char *path,
			const char *name, const char *ns_prefix)
{
	uint64_t key = hash_pair(dev, inode);
	uint32_t id = idmap_get(&ct->by_file, key);
	struct cfi_image *img;
	int err;

	if (id != UINT32_MAX && ct->images[id].dev == dev && ct->images[id].inode == inode) {
		img = &ct->images[id];
		if (img->state == IMAGE_EVICTED &&
		    (dev == VDSO_DEV ? elf_file_own_vdso(&img->file)
				     : elf_file_open(&img->file, path)) == 0) {
			find_debug_file(ct, img, name, ns_prefix);
			img->state = IMAGE_QUEUED;
			ct->n_queued++;
		}
		return id;
	}
	if (ct->n_images == ct->cap_images) {
		size_t cap = ct->cap_images ? 2 * ct->cap_images : 64;
		struct cfi_image *v = realloc(ct->images, cap * sizeof(*v));

		if (!v)
			return SIZE_MAX;
		ct->images = v;
		ct->cap_images = cap;
	}
	if (idmap_put(&ct->by_file, key, ct->n_images) != 0)
		return SIZE_MAX;
	img = &ct->images[ct->n_images];
	memset(img, 0, sizeof(*img));
	img->dev = dev;
	img->inode = inode;
	/* opened now (a process's map_files go with it), built later */
	err = dev == VDSO_DEV ? elf_file_own_vdso(&img->file) : elf_file_open(&img->file, path);
	if (!err)
		find_debug_file(ct, img, name, ns_prefix);
	img->state = err ? IMAGE_FAILED : IMAGE_QUEUED;
	ct->n_queued += !err;
	ct->st.images++;
	ct->st.images_failed += err != 0;
	return ct->n_images++;
}

static void add_file(struct cfi_tables *ct, const char *path)
{
	struct stat st;
	size_t i;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	i = get_image(ct, st.st_dev, st.st_ino, path, path, "");
	if (i != SIZE_MAX && ct->images[i].state == IMAGE_QUEUED)
		build_image(ct, &ct->images[i]);
}

/* A DT_NEEDED name in the directories ld.so searches by default. */
static int add_needed(void *ctx, const char *name)
{
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					    "/lib64", "/usr/lib64", "/lib", "/usr/lib" };
	char path[4096];

	if (strchr(name, '/')) {
		add_file(ctx, name);
		return 0;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
		if (access(path, R_OK) == 0) {
			add_file(ctx, path);
			break;
		}
	}
	return 0;
}

void cfi_tables_prepare_command(struct cfi_tables *ct, const char *path)
{
	struct elf_file f;
	GElf_Phdr ph;
	size_t n = 0;

	add_file(ct, path);
	if (elf_file_open(&f, path) != 0)
		return;
	elf_getphdrnum(f.elf, &n);
	for (size_t i = 0; i < n; i++) {
		if (gelf_getphdr(f.elf, i, &ph) && ph.p_type == PT_INTERP &&
		    ph.p_offset < f.size && ph.p_filesz <= f.size - ph.p_offset &&
		    memchr((char *)f.map + ph.p_offset, 0, ph.p_filesz))
			add_file(ct, (char *)f.map + ph.p_offset);
	}
	/* the libraries it names (theirs come when the process asks) */
	elf_file_for_each_needed(&f, add_needed, ct);
	elf_file_close(&f);
}

/* The mapping table entry of e, an executable mapping of process pid;
 * false when its image is not built yet (noted in pp, if given). */
static bool map_entry(struct cfi_tables *ct, pid_t pid, const struct procmap_entry *e,
		      struct collector_unwind_map *m, struct pending *pp, uint32_t *image)
{
	struct cfi_image *img;
	char path[4096], ns[32];
	size_t i = SIZE_MAX;

	m->start = e->start;
	m->end = e->end;
	snprintf(ns, sizeof(ns), "/proc/%d/root", (int)pid);
	if (!strcmp(e->path, "[vdso]"))
		i = get_image(ct, VDSO_DEV, 0, NULL, NULL, "");
	else if (procmap_is_file(e) && procmaps_open_path(pid, e, path, sizeof(path)) == 0)
		i = get_image(ct, procmap_dev(e), e->inode, path, e->path, ns);
	*image = i == SIZE_MAX ? NO_IMAGE : i;
	if (i == SIZE_MAX)
		return true; /* no file (JIT code): frame-pointer steps */
	img = &ct->images[i];
	if (img->state == IMAGE_QUEUED) {
		/* its samples are copied for user space meanwhile */
		m->first_page = COLLECTOR_UNWIND_PENDING;
		if (pp && pp->n_waited < WAITED_MAX)
			pp->waited[pp->n_waited++] = i;
		if (pp && pp->hot_pc >= e->start && pp->hot_pc < e->end)
			pp->hot = i;
		return false;
	}
	for (uint32_t s = 0; s < img->n_segs; s++) {
		const struct cfi_seg *seg = &img->segs[s];

		if (!seg->n_pages || e->pgoff < (seg->offset & ~4095ull) ||
		    e->pgoff >= seg->offset + seg->filesz)
			continue;
		/* runtime address of link-time address L: start + L - (vmo + pgoff) */
		m->base = e->start + seg->table_base - (seg->vmo + e->pgoff);
		m->first_page = seg->first_page;
		m->n_pages = seg->n_pages;
		break;
	}
	return true;
}

/* pid's entry in users, made when make (else NULL when it has none). */
static struct user *find_user(struct cfi_tables *ct, pid_t pid, bool make)
{
	uint32_t k = idmap_get(&ct->by_pid, pid);

	if (k != UINT32_MAX && k < ct->n_users && ct->users[k].pid == pid)
		return &ct->users[k];
	if (!make)
		return NULL;
	if (ct->n_users == ct->cap_users) {
		size_t cap = ct->cap_users ? 2 * ct->cap_users : 64;
		struct user *v = realloc(ct->users, cap * sizeof(*v));

		if (!v)
			return NULL;
		ct->users = v;
		ct->cap_users = cap;
	}
	if (idmap_put(&ct->by_pid, pid, ct->n_users) != 0)
		return NULL;
	ct->users[ct->n_users] = (struct user){ .pid = pid };
	return &ct->users[ct->n_users++];
}

static void release_images(struct cfi_tables *ct, const uint32_t *imgs, uint32_t n)
{
	uint64_t now = now_ns();

	for (uint32_t k = 0; k < n; k++) {
		struct cfi_image *img = &ct->images[imgs[k]];

		if (img->users && !--img->users)
			img->unused_since = now;
	}
}

/* Process pid's mapping table is gone (exec, exit): its images are
 * released. */
static void drop_user(struct cfi_tables *ct, pid_t pid)
{
	struct user *u = find_user(ct, pid, false);
	size_t k;

	if (!u)
		return;
	release_images(ct, u->imgs, u->n);
	free(u->imgs);
	/* the last entry takes its place */
	k = u - ct->users;
	ct->users[k] = ct->users[--ct->n_users];
	if (k < ct->n_users)
		idmap_put(&ct->by_pid, ct->users[k].pid, k);
	idmap_put(&ct->by_pid, pid, UINT32_MAX);
}

/* Process pid's mapping table lists imgs[0..n) now (n distinct). */
static void set_user(struct cfi_tables *ct, pid_t pid, const uint32_t *imgs, uint32_t n)
{
	struct user *u = find_user(ct, pid, true);
	uint32_t *copy = malloc((n ? n : 1) * sizeof(*copy));

	if (!u || !copy) {
		free(copy); /* not counted: its images may be evicted under it */
		return;
	}
	/* the new ones counted before the old ones released: an image in
	 * both never looks unused */
	for (uint32_t k = 0; k < n; k++)
		ct->images[imgs[k]].users++;
	memcpy(copy, imgs, n * sizeof(*copy));
	release_images(ct, u->imgs, u->n);
	free(u->imgs);
	u->imgs = copy;
	u->n = n;
}

/* Writes pid's mapping table; *complete: every image it maps was built
 * (those it waits for noted in pp, if given). */
static int set_process(struct cfi_tables *ct, pid_t pid, bool *complete,
		       struct pending *pp)
{
	struct collector_unwind_proc *p;
	uint32_t imgs[COLLECTOR_UNWIND_MAX_MAPS], n_imgs = 0;
	struct procmaps maps;
	uint64_t t0 = now_ns();
	int err = procmaps_read(pid, &maps);

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

		if (!maps.entries[i].exec)
			continue;
		*complete &= map_entry(ct, pid, &maps.entries[i], &p->maps[p->n_maps++], pp,
				       &img);
		if (img == NO_IMAGE)
			continue;
		/* an image's segments are listed one after another */
		bool seen = false;

		for (uint32_t k = 0; k < n_imgs && !seen; k++)
			seen = imgs[k] == img;
		if (!seen)
			imgs[n_imgs++] = img;
	}
	/* counted before the table is written: no image it lists is evicted
	 * while the program may read it */
	set_user(ct, pid, imgs, n_imgs);
	err = unwind_tables_set_process(ct->ut, pid, p);
	free(p);
	procmaps_free(&maps);
	ct->st.refreshes++;
	ct->st.build_ns += now_ns() - t0;
	return err;
}

/* Process pid is to be served (once), the image that holds pc first (0:
 * none known). */
static void add_pending(struct cfi_tables *ct, pid_t pid, uint64_t pc)
{
	for (size_t i = 0; i < ct->n_pending; i++) {
		if (ct->pending[i].pid == pid) {
			if (pc)
				ct->pending[i].hot_pc = pc;
			return;
		}
	}
	if (ct->n_pending == ct->cap_pending) {
		size_t cap = ct->cap_pending ? 2 * ct->cap_pending : 32;
		struct pending *v = realloc(ct->pending, cap * sizeof(*v));

		if (!v)
			return; /* it asks again */
		ct->pending = v;
		ct->cap_pending = cap;
	}
	ct->pending[ct->n_pending++] = (struct pending){ .pid = pid, .hot_pc = pc,
							  .hot = NO_IMAGE };
	ct->n_fresh++;
}

void cfi_tables_add_process(struct cfi_tables *ct, pid_t pid)
{
	add_pending(ct, pid, 0);
}

/* Process tgid asked for its tables, or they were dropped. */
static void request(void *ctx, const struct collector_unwind_request *r)
{
	struct cfi_tables *ct = ctx;
	pid_t pid = r->hdr.tgid;
	size_t k;

	if (r->hdr.kind == COLLECTOR_EV_UNWIND_GONE) {
		drop_user(ct, pid);
		return;
	}
	/* served at its second request (the kernel side asks again 20 ms
	 * later while it still has no tables): the many processes of a busy
	 * system that live for a sample or two (a shell's tools) do not make
	 * the running programs wait behind their tables */
	for (k = 0; k < ASKED_ONCE && ct->asked_once[k] != pid; k++)
		;
	if (k == ASKED_ONCE) {
		ct->asked_once[ct->n_asked_once++ % ASKED_ONCE] = pid;
		return;
	}
	add_pending(ct, pid, r->pc);
}

/* Writes the mapping table of the pending processes from first on; keeps
 * those that still lack images. */
static void serve_pending(struct cfi_tables *ct, size_t first)
{
	size_t kept = first;

	for (size_t i = first; i < ct->n_pending; i++) {
		bool complete;
		int err = set_process(ct, ct->pending[i].pid, &complete, &ct->pending[i]);

		if (!err && !complete)
			ct->pending[kept++] = ct->pending[i];
	}
	ct->n_pending = kept;
	ct->n_fresh = 0;
}

/* The smallest queued image, or NULL. */
static struct cfi_image *smallest_queued(struct cfi_tables *ct)
{
	struct cfi_image *best = NULL;

	for (size_t i = 0; i < ct->n_images && ct->n_queued; i++) {
		struct cfi_image *img = &ct->images[i];

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
static struct cfi_image *next_image(struct cfi_tables *ct)
{
	struct cfi_image *pick = NULL;
	uint64_t least = UINT64_MAX;

	for (size_t i = 0; i < ct->n_pending; i++) {
		const struct pending *pp = &ct->pending[i];
		struct cfi_image *small = NULL;
		uint64_t left = 0;

		for (uint32_t k = 0; k < pp->n_waited; k++) {
			struct cfi_image *img = &ct->images[pp->waited[k]];

			if (img->state != IMAGE_QUEUED)
				continue;
			left += img->file.size;
			if (!small || img->file.size < small->file.size)
				small = img;
		}
		if (pp->hot != NO_IMAGE && ct->images[pp->hot].state == IMAGE_QUEUED)
			small = &ct->images[pp->hot];
		if (small && left < least) {
			pick = small;
			least = left;
		}
	}
	return pick ? pick : smallest_queued(ct);
}

/* Serves the requests (read first from their ring): mapping tables from
 * what is built, then images built, smallest first, for about budget_ns.
 * Returns true while work is left. */
static bool work(struct cfi_tables *ct, uint64_t budget_ns)
{
	uint64_t now = now_ns(), end = now + budget_ns;
	struct cfi_image *img;
	bool built = false;

	unwind_tables_read_requests(ct->ut, request, ct);
	/* new requests at once, from the images already built */
	if (ct->n_fresh)
		serve_pending(ct, ct->n_pending - ct->n_fresh);
	if (!ct->n_pending)
		return false;
	/* an image at least, however long it takes, so that work advances */
	while ((img = next_image(ct))) {
		build_image(ct, img);
		built = true;
		if ((now = now_ns()) >= end)
			break;
	}
	/* reading every waiting process's maps again costs: not more often
	 * than every few milliseconds while images are being built */
	if (built && (!ct->n_queued || now >= ct->served_ns + 5000000)) {
		serve_pending(ct, 0);
		ct->served_ns = now;
	}
	return ct->n_pending != 0;
}

/* Images built between two looks at the requests, at most (and one image). */
#define WORK_SLICE_NS 20000000ULL
/* How long the thread sleeps with nothing to do, at most: the time
 * cfi_tables_stop may wait for it. */
#define IDLE_WAIT_MS 50

static void *worker(void *arg)
{
	struct cfi_tables *ct = arg;
	struct pollfd pfd = { .fd = unwind_tables_requests_fd(ct->ut), .events = POLLIN };
	bool left = true; /* the -p processes, at once */

	while (!ct->stop) {
		if (!left)
			poll(&pfd, 1, IDLE_WAIT_MS);
		left = work(ct, WORK_SLICE_NS);
	}
	return NULL;
}

int cfi_tables_start(struct cfi_tables *ct)
{
	int err;

	ct->stop = false;
	err = pthread_create(&ct->thread, NULL, worker, ct);
	if (err) {
		fprintf(stderr, "collector: cannot start the unwind tables' thread: %s\n",
			strerror(err));
		return -err;
	}
	ct->running = true;
	return 0;
}

void cfi_tables_stop(struct cfi_tables *ct)
{
	if (!ct || !ct->running)
		return;
	ct->stop = true;
	pthread_join(ct->thread, NULL);
	ct->running = false;
}

void cfi_tables_get_stats(const struct cfi_tables *ct, struct cfi_tables_stats *st)
{
	struct unwind_tables_usage u;

	*st = ct->st;
	unwind_tables_usage(ct->ut, &u);
	st->map_bytes = u.map_bytes;
	st->rows_max = u.max_rows;
	st->loader_bytes = ct->build_peak_bytes + ct->cap_images * sizeof(*ct->images) +
			   ct->cap_users * sizeof(*ct->users) +
			   ct->cap_pending * sizeof(*ct->pending) +
			   (ct->by_file.cap + ct->by_pid.cap) * (sizeof(struct idmap_entry) + 1);
	for (size_t i = 0; i < ct->n_users; i++)
		st->loader_bytes += ct->users[i].n * sizeof(uint32_t);
}
