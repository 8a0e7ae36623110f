// SPDX-License-Identifier: GPL-2.0
/* --call-graph cfi: which unwind tables the BPF program gets. */
#include "cli/cfi_tables.h"

#include <errno.h>
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

/* The table rows are the BPF program's, field for field. */
_Static_assert(sizeof(struct cfi_row) == sizeof(struct collector_unwind_row), "row layout");
_Static_assert((int)CFI_ROW_NONE == (int)COLLECTOR_ROW_NONE &&
	       (int)CFI_ROW_RSP == (int)COLLECTOR_ROW_RSP &&
	       (int)CFI_ROW_RBP == (int)COLLECTOR_ROW_RBP &&
	       (int)CFI_ROW_PLT == (int)COLLECTOR_ROW_PLT &&
	       (int)CFI_ROW_SIGNAL == (int)COLLECTOR_ROW_SIGNAL &&
	       (int)CFI_ROW_END == (int)COLLECTOR_ROW_END, "row kinds");

/* One image, loaded or not. */
struct cfi_image {
	uint64_t dev, inode;
	int err;              /* 0: loaded; else why there is no table */
	uint64_t table_base;  /* link-time address of the table's pc 0 */
	uint64_t vmo;         /* text segment's p_vaddr - p_offset */
	uint32_t first_page, n_pages;
};

struct cfi_tables {
	struct unwind_tables *ut;
	struct idmap by_file;  /* hash of (dev, inode) -> index in images */
	struct cfi_image *images;
	size_t n_images, cap_images;
	struct cfi_tables_stats st;
};

/* The key of the vDSO, which no file holds. */
#define VDSO_DEV UINT64_MAX

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
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
	unwind_tables_close(ct->ut);
	idmap_free(&ct->by_file);
	free(ct->images);
	free(ct);
}

/* Loads f's table into the maps; fills img. */
static int load_image(struct cfi_tables *ct, const struct elf_file *f, struct cfi_image *img)
{
	struct cfi_table t;
	uint64_t vaddr, memsz;
	int err;

	if (!elf_file_text_segment(f, &vaddr, &memsz))
		return -ENOENT;
	for (size_t i = 0; i < f->n_loads; i++)
		if (f->loads[i].vaddr == vaddr)
			img->vmo = vaddr - f->loads[i].offset;
	err = cfi_table_build(&t, f);
	if (err)
		return err;
	err = unwind_tables_add_image(ct->ut, (const struct collector_unwind_row *)t.rows,
				      t.n_rows, t.pages, t.n_pages, &img->first_page);
	if (!err) {
		img->table_base = t.base;
		img->n_pages = t.n_pages;
		ct->st.rows += t.n_rows;
	}
	cfi_table_free(&t);
	return err;
}

/* The image of file (dev, inode), opened at path when it is new (or the
 * collector's own vDSO for dev == VDSO_DEV); NULL without memory. */
static struct cfi_image *get_image(struct cfi_tables *ct, uint64_t dev, uint64_t inode,
				   const char *path)
{
	uint64_t key = hash_pair(dev, inode), t0;
	uint32_t id = idmap_get(&ct->by_file, key);
	struct cfi_image *img;
	struct elf_file f;

	if (id != UINT32_MAX && ct->images[id].dev == dev && ct->images[id].inode == inode)
		return &ct->images[id];
	if (ct->n_images == ct->cap_images) {
		size_t cap = ct->cap_images ? 2 * ct->cap_images : 64;
		struct cfi_image *v = realloc(ct->images, cap * sizeof(*v));

		if (!v)
			return NULL;
		ct->images = v;
		ct->cap_images = cap;
	}
	if (idmap_put(&ct->by_file, key, ct->n_images) != 0)
		return NULL;
	img = &ct->images[ct->n_images++];
	memset(img, 0, sizeof(*img));
	img->dev = dev;
	img->inode = inode;
	t0 = now_ns();
	img->err = dev == VDSO_DEV ? elf_file_own_vdso(&f) : elf_file_open(&f, path);
	if (!img->err) {
		img->err = load_image(ct, &f, img);
		elf_file_close(&f);
	}
	ct->st.build_ns += now_ns() - t0;
	ct->st.images++;
	ct->st.images_failed += img->err != 0;
	return img;
}

static void add_file(struct cfi_tables *ct, const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		get_image(ct, st.st_dev, st.st_ino, path);
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

/* The mapping table entry of e, an executable mapping of process pid. */
static void map_entry(struct cfi_tables *ct, pid_t pid, const struct procmap_entry *e,
		      struct collector_unwind_map *m)
{
	struct cfi_image *img = NULL;
	char path[4096];

	m->start = e->start;
	m->end = e->end;
	if (!strcmp(e->path, "[vdso]"))
		img = get_image(ct, VDSO_DEV, 0, NULL);
	else if (procmap_is_file(e) && procmaps_open_path(pid, e, path, sizeof(path)) == 0)
		img = get_image(ct, procmap_dev(e), e->inode, path);
	if (!img || img->err)
		return; /* no table: frame-pointer steps */
	/* runtime address of link-time address L: start + L - (vmo + pgoff) */
	m->base = e->start + img->table_base - (img->vmo + e->pgoff);
	m->first_page = img->first_page;
	m->n_pages = img->n_pages;
}

int cfi_tables_refresh(struct cfi_tables *ct, pid_t pid)
{
	struct collector_unwind_proc *p;
	struct procmaps maps;
	uint64_t t0 = now_ns();
	int err = procmaps_read(pid, &maps);

	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p) {
		procmaps_free(&maps);
		return -ENOMEM;
	}
	/* the kernel lists mappings sorted by address, as the program wants */
	for (size_t i = 0; i < maps.n && p->n_maps < COLLECTOR_UNWIND_MAX_MAPS; i++)
		if (maps.entries[i].exec)
			map_entry(ct, pid, &maps.entries[i], &p->maps[p->n_maps++]);
	err = unwind_tables_set_process(ct->ut, pid, p);
	if (getenv("CFI_DEBUG")) {
		fprintf(stderr, "refresh %d: %u maps, err %d\n", pid, p->n_maps, err);
		for (uint32_t i = 0; i < p->n_maps; i++)
			fprintf(stderr, "  %lx-%lx base %lx pages %u+%u\n", (long)p->maps[i].start, (long)p->maps[i].end, (long)p->maps[i].base, p->maps[i].first_page, p->maps[i].n_pages);
	}
	free(p);
	procmaps_free(&maps);
	ct->st.refreshes++;
	ct->st.build_ns += now_ns() - t0;
	return err;
}

void cfi_tables_get_stats(const struct cfi_tables *ct, struct cfi_tables_stats *st)
{
	struct unwind_tables_usage u;

	*st = ct->st;
	unwind_tables_usage(ct->ut, &u);
	st->map_bytes = u.map_bytes;
	st->rows_max = u.max_rows;
}
