// SPDX-License-Identifier: GPL-2.0
/* --call-graph cfi: the images whose tables the service builds, and the
 * space they take in the maps. */
#include "unwind/table_service_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "lib/hashmix.h"
#include "lib/path.h"
#include "lib/procmaps.h"
#include "unwind/cfi_table.h"
#include "symbols/debug_files.h"
#include "unwind/table_cache.h"

_Static_assert(CFI_PAGE_SHIFT == COLLECTOR_UNWIND_PAGE_SHIFT,
	       "the BPF program's page index is the one the tables are built with");

/* The table rows are the BPF program's, field for field. */
_Static_assert(sizeof(struct cfi_row) == sizeof(struct collector_unwind_row), "row layout");
_Static_assert((int)CFI_ROW_NONE == (int)COLLECTOR_ROW_NONE &&
	       (int)CFI_ROW_RSP == (int)COLLECTOR_ROW_RSP &&
	       (int)CFI_ROW_RBP == (int)COLLECTOR_ROW_RBP &&
	       (int)CFI_ROW_PLT == (int)COLLECTOR_ROW_PLT &&
	       (int)CFI_ROW_SIGNAL == (int)COLLECTOR_ROW_SIGNAL &&
	       (int)CFI_ROW_END == (int)COLLECTOR_ROW_END, "row kinds");

_Static_assert(MAX_SEGS == COLLECTOR_UNWIND_IMAGE_SEGS, "an image's segments, here and there");
_Static_assert(VDSO_DEV == COLLECTOR_UNWIND_VDSO_DEV, "the vDSO's key, here and there");

/* img's key in the program's table of images: its device as the kernel
 * encodes it (the major and minor numbers of the maps, glibc's encoding
 * here). */
static struct collector_unwind_image_key program_key(const struct cfi_image *img)
{
	if (img->dev == VDSO_DEV)
		return (struct collector_unwind_image_key){ COLLECTOR_UNWIND_VDSO_DEV, 0 };
	return (struct collector_unwind_image_key){
		((uint64_t)major(img->dev) << 20) | minor(img->dev), img->inode };
}

/* img's tables (or that it has none), by file, for the program to find
 * without a process's mapping table (bpf/unwind_learn.bpf.h). */
static void publish(struct unwind_service *us, struct cfi_image *img)
{
	struct collector_unwind_image_key key = program_key(img);
	struct collector_unwind_image v = { 0 };

	if (!us->maps.ops->set_image)
		return;
	for (uint32_t s = 0; s < img->n_segs; s++) {
		const struct cfi_seg *seg = &img->segs[s];

		if (!seg->n_pages)
			continue; /* no table: frame-pointer steps there */
		v.segs[v.n_segs++] = seg_placement(seg);
	}
	img->published = us->maps.ops->set_image(us->maps.maps, &key, &v) == 0;
}

static void close_files(struct cfi_image *img)
{
	elf_file_close(&img->file);
	if (img->has_debug)
		elf_file_close(&img->debug);
	img->has_debug = false;
}

void images_free(struct unwind_service *us)
{
	for (size_t i = 0; i < us->n_images; i++)
		if (us->images[i].state == IMAGE_QUEUED)
			close_files(&us->images[i]);
	idmap_free(&us->by_file);
	free(us->images);
}

/* The image no live process maps that has been unused the longest, other
 * than keep, or NULL. */
static struct cfi_image *oldest_unused(struct unwind_service *us, const struct cfi_image *keep)
{
	struct cfi_image *best = NULL;

	for (size_t i = 0; i < us->n_images; i++) {
		struct cfi_image *img = &us->images[i];

		if (img != keep && img->state == IMAGE_READY && !img->users &&
		    (!best || img->unused_since < best->unused_since))
			best = img;
	}
	return best;
}

/* Gives the space of img's tables back; it is built again when a process
 * maps it again. */
static void evict(struct unwind_service *us, struct cfi_image *img)
{
	if (img->published && us->maps.ops->forget_image) {
		struct collector_unwind_image_key key = program_key(img);

		us->maps.ops->forget_image(us->maps.maps, &key);
		img->published = false;
	}
	for (uint32_t s = 0; s < img->n_segs; s++) {
		if (!img->segs[s].n_pages)
			continue;
		us->maps.ops->remove_image(us->maps.maps, &img->segs[s].space);
		us->st.rows_evicted += img->segs[s].space.n_rows;
	}
	img->n_segs = 0;
	img->state = IMAGE_EVICTED;
	us->st.images_evicted++;
}

/*
 * Loads table t of image img into the maps; when no free range holds it,
 * the images no live process maps are evicted, the longest unused first,
 * until one does.  The space is given back lazily, when wanted, not when
 * an image's last process exits: the arrays are allocated whole at start,
 * so freeing earlier saves nothing, and a program run again and again (a
 * build's compilers, a shell loop) finds its tables still there.
 */
static int add_table(struct unwind_service *us, struct cfi_image *img, const struct cfi_table *t,
		     struct unwind_image_space *sp)
{
	const struct collector_unwind_row *rows = (const struct collector_unwind_row *)t->rows;
	bool swept = false;
	int err;

	for (;;) {
		struct cfi_image *victim;

		err = us->maps.ops->add_image(us->maps.maps, rows, t->n_rows, t->pages, t->n_pages,
					      sp);
		if (err != -ENOSPC)
			return err;
		victim = oldest_unused(us, img);
		if (!victim && !swept) {
			process_drop_dead(us);
			swept = true;
			victim = oldest_unused(us, img);
		}
		if (!victim) {
			us->st.images_no_space++;
			return err;
		}
		evict(us, victim);
	}
}

/* The cache's name for img's tables. */
static void image_key(const struct cfi_image *img, char *key)
{
	const struct elf_file *f = &img->file;

	table_cache_key(key, f->build_id, f->build_id_len, f->dev, f->inode, f->mtime, f->size,
			img->has_debug);
}

/* Loads the table of segment cs into the maps as img's next segment. */
static void load_seg(struct unwind_service *us, struct cfi_image *img,
		     const struct table_cache_seg *cs)
{
	struct cfi_seg *seg = &img->segs[img->n_segs++];
	struct cfi_table t = {
		.base = cs->base,
		.rows = (struct cfi_row *)cs->rows,
		.n_rows = cs->n_rows,
		.pages = (uint32_t *)cs->pages,
		.n_pages = cs->n_pages,
	};

	memset(seg, 0, sizeof(*seg));
	seg->offset = cs->offset;
	seg->filesz = cs->filesz;
	seg->vmo = cs->vmo;
	if (!cs->n_rows)
		return; /* no table: frame-pointer steps there */
	if (add_table(us, img, &t, &seg->space) == 0) {
		seg->table_base = t.base;
		seg->first_page = seg->space.first_page;
		seg->n_pages = t.n_pages;
		us->st.rows += t.n_rows;
		us->st.index_entries += t.n_pages;
	}
}

/* img's tables from the cache; false when it has none that validate. */
static bool load_cached(struct unwind_service *us, struct cfi_image *img, const char *key)
{
	struct table_cache_entry e;
	int err = table_cache_read(us->cache, key, &e);

	if (err) {
		us->st.cache_refused += err == -EINVAL;
		return false;
	}
	for (uint32_t s = 0; s < e.n_segs && s < MAX_SEGS; s++)
		load_seg(us, img, &e.segs[s]);
	table_cache_release(&e);
	us->st.cache_hits++;
	return true;
}

/* Builds the tables of img's executable segments from its CFI into
 * segs[0..*n) (tables[s] those with a table), and loads them. */
static void build_tables(struct unwind_service *us, struct cfi_image *img,
			 struct table_cache_seg *segs, struct cfi_table *tables)
{
	const struct elf_file *f = &img->file;

	for (size_t i = 0; i < f->n_loads && img->n_segs < MAX_SEGS; i++) {
		const struct elf_segment *ld = &f->loads[i];
		uint32_t s = img->n_segs;
		struct cfi_table *t = &tables[s];
		size_t bytes;

		if (!(ld->flags & PF_X))
			continue;
		segs[s] = (struct table_cache_seg){ .offset = ld->offset, .filesz = ld->filesz,
						    .vmo = ld->vaddr - ld->offset };
		memset(t, 0, sizeof(*t));
		if (cfi_table_build(t, f, ld, img->has_debug ? &img->debug : NULL) == 0) {
			segs[s].base = t->base;
			segs[s].n_rows = t->n_rows;
			segs[s].n_pages = t->n_pages;
			segs[s].rows = (const struct collector_unwind_row *)t->rows;
			segs[s].pages = t->pages;
		}
		/* the image files are mapped, not read: their pages are the
		 * page cache's, given back when they are closed */
		bytes = t->n_rows * sizeof(*t->rows) + (t->n_pages + 1) * sizeof(*t->pages);
		if (bytes > us->build_peak_bytes)
			us->build_peak_bytes = bytes;
		load_seg(us, img, &segs[s]);
	}
}

void images_build(struct unwind_service *us, struct cfi_image *img)
{
	struct table_cache_seg segs[MAX_SEGS];
	struct cfi_table tables[MAX_SEGS];
	bool cacheable = us->cache && img->dev != VDSO_DEV;
	uint64_t t0 = monotonic_ns();
	char key[TABLE_CACHE_KEY_MAX];

	if (cacheable)
		image_key(img, key);
	if (!cacheable || !load_cached(us, img, key)) {
		build_tables(us, img, segs, tables);
		us->st.images_built++;
		if (cacheable && table_cache_write(us->cache, key, segs, img->n_segs) == 0)
			us->st.cache_written++;
		for (uint32_t s = 0; s < img->n_segs; s++)
			cfi_table_free(&tables[s]);
	}
	img->state = img->n_segs ? IMAGE_READY : IMAGE_FAILED;
	us->st.images_failed += img->state == IMAGE_FAILED;
	publish(us, img);
	close_files(img);
	us->n_queued--;
	us->st.build_ns += monotonic_ns() - t0;
}

/* An image without .debug_frame of its own: the one of its separate
 * debug file, if there is one (a program built without unwind tables and
 * stripped has its CFI only there).  name is the image's own path, in the
 * mount namespace ns_prefix ("/proc/PID/root", or "" for ours). */
static void find_debug_file(struct unwind_service *us, struct cfi_image *img, const char *name,
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
	us->st.debug_files += img->has_debug;
}

/* img's file from path (a process's /proc path to it); when that fails
 * (the process has exited: a build's short steps), from name, the path
 * its maps gave, when that is the same file here (device and inode).
 * Measured: under a build loop, libc met first through a compiler step
 * gone by then failed to open, and stayed without a table for the run: 89%
 * of a 20 s -a run's stacks ended in __libc_start_call_main. */
static int open_image(struct cfi_image *img, const char *path, const char *name)
{
	int err;

	if (img->dev == VDSO_DEV)
		return elf_file_own_vdso(&img->file);
	err = elf_file_open(&img->file, path);
	if (!err || !name || name[0] != '/' || elf_file_open(&img->file, name) != 0)
		return err;
	if (img->file.dev == img->dev && img->file.inode == img->inode)
		return 0;
	elf_file_close(&img->file);
	return err;
}

size_t images_get(struct unwind_service *us, uint64_t dev, uint64_t inode, const char *path,
		  const char *name, const char *ns_prefix)
{
	uint64_t key = hash_pair(dev, inode);
	uint32_t id = idmap_get(&us->by_file, key);
	struct cfi_image *img;
	int err;

	if (id != UINT32_MAX && us->images[id].dev == dev && us->images[id].inode == inode) {
		img = &us->images[id];
		if ((img->state == IMAGE_EVICTED || img->state == IMAGE_UNBUILT) &&
		    open_image(img, path, name) == 0) {
			find_debug_file(us, img, name, ns_prefix);
			img->state = IMAGE_QUEUED;
			us->n_queued++;
		}
		return id;
	}
	if (us->n_images == us->cap_images) {
		size_t cap = us->cap_images ? 2 * us->cap_images : 64;
		struct cfi_image *v = realloc(us->images, cap * sizeof(*v));

		if (!v)
			return SIZE_MAX;
		us->images = v;
		us->cap_images = cap;
	}
	if (idmap_put(&us->by_file, key, us->n_images) != 0)
		return SIZE_MAX;
	img = &us->images[us->n_images];
	memset(img, 0, sizeof(*img));
	img->dev = dev;
	img->inode = inode;
	/* opened now (a process's map_files go with it), built later; one
	 * that cannot be opened is tried again when a process maps it */
	err = open_image(img, path, name);
	if (!err)
		find_debug_file(us, img, name, ns_prefix);
	img->state = err ? IMAGE_UNBUILT : IMAGE_QUEUED;
	us->n_queued += !err;
	us->st.images++;
	us->st.open_failed += err != 0;
	return us->n_images++;
}

/* Ends a queued image's wait with the tables of the cache on disk, or
 * without tables (UNBUILT) when it has none. */
static void try_cache(struct unwind_service *us, struct cfi_image *img)
{
	char key[TABLE_CACHE_KEY_MAX];
	uint64_t t0 = monotonic_ns();

	if (img->dev == VDSO_DEV) {
		images_build(us, img);
		return;
	}
	if (us->cache) {
		image_key(img, key);
		if (load_cached(us, img, key)) {
			img->state = img->n_segs ? IMAGE_READY : IMAGE_FAILED;
			us->st.images_failed += img->state == IMAGE_FAILED;
			publish(us, img);
		} else {
			img->state = IMAGE_UNBUILT;
		}
	} else {
		img->state = IMAGE_UNBUILT;
	}
	close_files(img);
	us->n_queued--;
	us->st.build_ns += monotonic_ns() - t0;
}

size_t images_known(const struct unwind_service *us, uint64_t dev, uint64_t inode,
		    bool ready_only)
{
	uint32_t id = idmap_get(&us->by_file, hash_pair(dev, inode));
	const struct cfi_image *img;

	if (id == UINT32_MAX || id >= us->n_images)
		return SIZE_MAX;
	img = &us->images[id];
	if (img->dev != dev || img->inode != inode || img->state == IMAGE_EVICTED ||
	    (!ready_only && img->state == IMAGE_UNBUILT))
		return SIZE_MAX;
	return id;
}

size_t images_get_ready(struct unwind_service *us, uint64_t dev, uint64_t inode, const char *path,
			const char *name, const char *ns_prefix)
{
	uint32_t id = idmap_get(&us->by_file, hash_pair(dev, inode));
	size_t i;

	/* built, failed, queued (for a process that asked twice), or known
	 * to be missing from the cache: as they are */
	if (id != UINT32_MAX && us->images[id].dev == dev && us->images[id].inode == inode &&
	    us->images[id].state != IMAGE_EVICTED)
		return id;
	i = images_get(us, dev, inode, path, name, ns_prefix);
	if (i != SIZE_MAX && us->images[i].state == IMAGE_QUEUED)
		try_cache(us, &us->images[i]);
	return i;
}

static void add_file(struct unwind_service *us, const char *path)
{
	struct stat st;
	size_t i;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	i = images_get(us, st.st_dev, st.st_ino, path, path, "");
	if (i != SIZE_MAX && us->images[i].state == IMAGE_QUEUED)
		images_build(us, &us->images[i]);
}

/* procmaps_find_exec_file()'s visit of each executable file mapping (ctx
 * the service): its table built, and no match, so that every mapping is
 * visited. */
static bool add_mapped(const char *path, void *ctx)
{
	add_file(ctx, path);
	return false;
}

void unwind_service_prepare_process(struct unwind_service *us, pid_t pid)
{
	char unused[8];

	procmaps_find_exec_file(pid, add_mapped, us, unused, sizeof(unused));
}

/* A DT_NEEDED name where ld.so looks for it. */
static int add_needed(void *ctx, const char *name)
{
	char path[4096];

	if (path_find_library(name, path, sizeof(path)) == 0)
		add_file(ctx, path);
	return 0;
}

void unwind_service_prepare_command(struct unwind_service *us, const char *path)
{
	struct elf_file f;
	GElf_Phdr ph;
	size_t n = 0;

	add_file(us, path);
	if (elf_file_open(&f, path) != 0)
		return;
	elf_getphdrnum(f.elf, &n);
	for (size_t i = 0; i < n; i++) {
		if (gelf_getphdr(f.elf, i, &ph) && ph.p_type == PT_INTERP &&
		    ph.p_offset < f.size && ph.p_filesz <= f.size - ph.p_offset &&
		    memchr((char *)f.map + ph.p_offset, 0, ph.p_filesz))
			add_file(us, (char *)f.map + ph.p_offset);
	}
	/* the libraries it names (theirs come when the process asks) */
	elf_file_for_each_needed(&f, add_needed, us);
	elf_file_close(&f);
}
