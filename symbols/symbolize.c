// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolizer: model images for mapped files and the kernel, and model
 * locations for (image, file-relative address) pairs.
 *
 * Per image we keep the mapped ELF file, the separate debug file if one was
 * found, a sorted table of function symbols, and (opened on first need) the
 * DWARF with a table of compile-unit address ranges.  libdw is used on the
 * ELF files as they are on disk (no load bias), so every address it returns
 * or takes is a link-time address, the same as the model's.
 */
#include "symbols/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "symbols/elfinfo.h"
#include "symbols/kallsyms.h"
#include "lib/procmaps.h"

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"
#define DEFAULT_KALLSYMS "/proc/kallsyms"
#define KERNEL_NOTES "/sys/kernel/notes"
#define KERNEL_IMAGE_NAME "[kernel.kallsyms]"
/* Deepest chain of inlined calls kept for one address. */
#define MAX_INLINES 64

/* One address range of one compile unit. */
struct cu_range {
	uint64_t lo, hi;
	Dwarf_Die cudie;
};

struct sym_image {
	bool opened;              /* file is valid */
	bool has_debug;           /* debug is valid */
	bool dwarf_tried;
	bool has_alt;
	struct elf_file file;
	struct elf_file debug;
	struct elf_file alt;      /* dwz supplementary file */
	char *dwarf_path;         /* the file that holds the DWARF */
	char *ns_prefix;          /* "/proc/PID/root" or "" */
	struct symtab syms;
	const struct elf_file *sym_file; /* which file the symbols come from */
	Elf_Scn *sym_scn;
	Dwarf *dwarf;
	Dwarf *alt_dwarf;
	struct cu_range *cus;
	size_t n_cus;
	/* per symbol: its DWARF subprogram (SUB_* state), made on first use */
	uint8_t *sub_state;
	Dwarf_Die *sub_dies;
};

/* String key -> image id, open addressing. */
struct key_map {
	char **keys;
	uint32_t *ids;
	size_t cap, len;
};

struct symbolizer {
	struct model *m;
	char *debug_root;
	char *kallsyms_path;
	struct sym_image **images; /* by model image id; NULL if not ours */
	size_t n_images;
	struct key_map keys;
	uint32_t kernel_image;
	struct kallsyms ksyms;
	uint64_t page_size;
};

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "collector: out of memory\n");
		abort();
	}
	return p;
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p) {
		fprintf(stderr, "collector: out of memory\n");
		abort();
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d) {
		fprintf(stderr, "collector: out of memory\n");
		abort();
	}
	return d;
}

static char *xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);

	if (!d) {
		fprintf(stderr, "collector: out of memory\n");
		abort();
	}
	return d;
}

/* ---- key map ------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return h;
}

static uint32_t key_find(const struct key_map *km, const char *key)
{
	size_t i;

	if (!km->cap)
		return MODEL_NONE;
	for (i = hash_str(key) & (km->cap - 1); km->keys[i]; i = (i + 1) & (km->cap - 1))
		if (!strcmp(km->keys[i], key))
			return km->ids[i];
	return MODEL_NONE;
}

static void key_insert_raw(struct key_map *km, char *key, uint32_t id)
{
	size_t i = hash_str(key) & (km->cap - 1);

	while (km->keys[i])
		i = (i + 1) & (km->cap - 1);
	km->keys[i] = key;
	km->ids[i] = id;
	km->len++;
}

static void key_put(struct key_map *km, const char *key, uint32_t id)
{
	if (key_find(km, key) != MODEL_NONE)
		return;
	if ((km->len + 1) * 2 > km->cap) {
		struct key_map old = *km;

		km->cap = old.cap ? old.cap * 2 : 64;
		km->len = 0;
		km->keys = xcalloc(km->cap, sizeof(*km->keys));
		km->ids = xcalloc(km->cap, sizeof(*km->ids));
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i])
				key_insert_raw(km, old.keys[i], old.ids[i]);
		free(old.keys);
		free(old.ids);
	}
	key_insert_raw(km, xstrdup(key), id);
}

static void key_map_free(struct key_map *km)
{
	for (size_t i = 0; i < km->cap; i++)
		free(km->keys[i]);
	free(km->keys);
	free(km->ids);
	memset(km, 0, sizeof(*km));
}

static void dev_key(char *buf, size_t size, uint64_t dev, uint64_t inode)
{
	snprintf(buf, size, "d:%llx:%llx", (unsigned long long)dev, (unsigned long long)inode);
}

/* ---- life cycle ----------------------------------------------------------- */

struct symbolizer *symbolizer_new(struct model *m)
{
	struct symbolizer *s = xcalloc(1, sizeof(*s));
	long page = sysconf(_SC_PAGESIZE);

	s->m = m;
	s->debug_root = xstrdup(DEFAULT_DEBUG_ROOT);
	s->kallsyms_path = xstrdup(DEFAULT_KALLSYMS);
	s->kernel_image = MODEL_NONE;
	s->page_size = page > 0 ? (uint64_t)page : 4096;
	return s;
}

static void sym_image_free(struct sym_image *si)
{
	if (!si)
		return;
	if (si->dwarf)
		dwarf_end(si->dwarf);
	if (si->alt_dwarf)
		dwarf_end(si->alt_dwarf);
	symtab_free(&si->syms);
	free(si->sub_state);
	free(si->sub_dies);
	free(si->cus);
	free(si->dwarf_path);
	free(si->ns_prefix);
	if (si->has_alt)
		elf_file_close(&si->alt);
	if (si->has_debug)
		elf_file_close(&si->debug);
	if (si->opened)
		elf_file_close(&si->file);
	free(si);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_images; i++)
		sym_image_free(s->images[i]);
	free(s->images);
	key_map_free(&s->keys);
	kallsyms_free(&s->ksyms);
	free(s->debug_root);
	free(s->kallsyms_path);
	free(s);
}

void symbolizer_set_debug_root(struct symbolizer *s, const char *dir)
{
	free(s->debug_root);
	s->debug_root = xstrdup(dir);
}

void symbolizer_set_kallsyms_path(struct symbolizer *s, const char *path)
{
	free(s->kallsyms_path);
	s->kallsyms_path = xstrdup(path);
}

static struct sym_image *get_image(const struct symbolizer *s, uint32_t id)
{
	return id < s->n_images ? s->images[id] : NULL;
}

static uint32_t add_image(struct symbolizer *s, const struct model_image *tmpl,
			  struct sym_image *si)
{
	uint32_t id = model_add_image(s->m, tmpl);

	if (id >= s->n_images) {
		size_t n = (size_t)id + 1;

		s->images = xrealloc(s->images, n * sizeof(*s->images));
		memset(s->images + s->n_images, 0, (n - s->n_images) * sizeof(*s->images));
		s->n_images = n;
	}
	s->images[id] = si;
	return id;
}

/* ---- separate debug files --------------------------------------------------- */

/*
 * Files of another mount namespace are opened through /proc/PID/root; so
 * are the debug files beside them.  "/proc/PID/root" for an open_path
 * under /proc/PID/map_files or /proc/PID/root, else "".
 */
static char *namespace_prefix(const char *open_path)
{
	const char *p;
	char buf[64];
	size_t digits;

	if (!open_path || strncmp(open_path, "/proc/", 6))
		return xstrdup("");
	p = open_path + 6;
	digits = strspn(p, "0123456789");
	if (!digits || digits > 20 ||
	    (strncmp(p + digits, "/map_files/", 11) && strncmp(p + digits, "/root/", 6)))
		return xstrdup("");
	snprintf(buf, sizeof(buf), "/proc/%.*s/root", (int)digits, p);
	return xstrdup(buf);
}

static bool same_build_id(const struct elf_file *a, const uint8_t *id, size_t len)
{
	return a->build_id_len == len && !memcmp(a->build_id, id, len);
}

/*
 * Opens candidate as the debug file of si->file if it is one: not the file
 * itself, the same build-id when both have one, and the CRC the debuglink
 * asks for (when check_crc).
 */
static bool try_debug_file(struct sym_image *si, const char *candidate, bool check_crc,
			   uint32_t crc)
{
	struct elf_file d;

	if (access(candidate, R_OK))
		return false;
	if (elf_file_open(&d, candidate))
		return false;
	if ((d.dev == si->file.dev && d.inode == si->file.inode) ||
	    (si->file.build_id_len && d.build_id_len &&
	     !same_build_id(&d, si->file.build_id, si->file.build_id_len)) ||
	    (check_crc && elf_file_crc32(&d) != crc)) {
		elf_file_close(&d);
		return false;
	}
	si->debug = d;
	si->has_debug = true;
	return true;
}

static int build_id_path(char *buf, size_t size, const char *prefix, const char *root,
			 const uint8_t *id, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char rest[2 * ELFINFO_MAX_BUILD_ID + 1];
	size_t i;
	int n;

	if (len < 2 || len > ELFINFO_MAX_BUILD_ID)
		return -EINVAL;
	for (i = 1; i < len; i++) {
		rest[2 * (i - 1)] = hex[id[i] >> 4];
		rest[2 * (i - 1) + 1] = hex[id[i] & 15];
	}
	rest[2 * (len - 1)] = '\0';
	n = snprintf(buf, size, "%s%s/.build-id/%02x/%s.debug", prefix, root, id[0], rest);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The directory part of path ("." when none, "" for the root). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return xstrndup(path, (size_t)(slash - path));
}

/* Looks for the separate debug file of si->file: by build-id under the
 * debug root, then by .gnu_debuglink beside the file, in .debug/ beside it
 * and under the debug root (as gdb does).  Returns the path used. */
static char *find_debug_file(struct symbolizer *s, struct sym_image *si, const char *path)
{
	const char *roots[2] = { "", si->ns_prefix };
	char cand[4096];
	const char *link;
	uint32_t crc;

	for (int r = 0; r < (si->ns_prefix[0] ? 2 : 1); r++) {
		if (si->file.build_id_len &&
		    !build_id_path(cand, sizeof(cand), roots[r], s->debug_root, si->file.build_id,
				   si->file.build_id_len) &&
		    try_debug_file(si, cand, false, 0))
			return xstrdup(cand);
	}
	if (elf_file_debuglink(&si->file, &link, &crc) && !strchr(link, '/')) {
		char *dir = dir_of(path);
		const char *sep = dir[0] == '/' || !dir[0] ? "" : "/";
		char *found = NULL;

		if ((size_t)snprintf(cand, sizeof(cand), "%s%s/%s", si->ns_prefix, dir, link) <
			    sizeof(cand) &&
		    try_debug_file(si, cand, true, crc))
			found = xstrdup(cand);
		else if ((size_t)snprintf(cand, sizeof(cand), "%s%s/.debug/%s", si->ns_prefix, dir,
					  link) < sizeof(cand) &&
			 try_debug_file(si, cand, true, crc))
			found = xstrdup(cand);
		else if ((size_t)snprintf(cand, sizeof(cand), "%s%s%s/%s", s->debug_root, sep, dir,
					  link) < sizeof(cand) &&
			 try_debug_file(si, cand, true, crc))
			found = xstrdup(cand);
		free(dir);
		return found;
	}
	return NULL;
}

/* ---- images ----------------------------------------------------------------- */

static void choose_symbols(struct sym_image *si)
{
	Elf_Scn *scn = NULL;

	if (si->has_debug && (scn = elf_file_symbols(&si->debug, SHT_SYMTAB)))
		si->sym_file = &si->debug;
	else if ((scn = elf_file_symbols(&si->file, SHT_SYMTAB)) ||
		 (scn = elf_file_symbols(&si->file, SHT_DYNSYM)))
		si->sym_file = &si->file;
	si->sym_scn = scn;
	if (scn && symtab_build(&si->syms, si->sym_file, scn)) {
		fprintf(stderr, "collector: out of memory\n");
		abort();
	}
}

uint32_t symbolizer_image(struct symbolizer *s, const char *path, const char *open_path,
			  uint64_t dev, uint64_t inode)
{
	struct model_image tmpl = { 0 };
	char caller_key[64], file_key[64], bid_key[2 + 2 * ELFINFO_MAX_BUILD_ID + 1];
	char *path_key = NULL, *debug_path = NULL;
	struct sym_image *si;
	uint64_t vaddr, memsz;
	uint32_t id;

	if (!path)
		path = open_path ? open_path : "[unknown]";
	caller_key[0] = '\0';
	if (dev || inode) {
		dev_key(caller_key, sizeof(caller_key), dev, inode);
		id = key_find(&s->keys, caller_key);
		if (id != MODEL_NONE)
			return id;
	}
	si = xcalloc(1, sizeof(*si));
	if (elf_file_open(&si->file, open_path ? open_path : path)) {
		/* Unreadable, or not ELF: an image without symbols. */
		if (!caller_key[0]) {
			path_key = xrealloc(NULL, strlen(path) + 3);
			sprintf(path_key, "p:%s", path);
			id = key_find(&s->keys, path_key);
			if (id != MODEL_NONE) {
				free(path_key);
				free(si);
				return id;
			}
		}
		free(si);
		tmpl.path = (char *)path;
		tmpl.kind = MODEL_IMAGE_ELF;
		tmpl.dev = dev;
		tmpl.inode = inode;
		id = add_image(s, &tmpl, NULL);
		key_put(&s->keys, caller_key[0] ? caller_key : path_key, id);
		free(path_key);
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNREADABLE_IMAGES, 1);
		return id;
	}
	si->opened = true;

	/* The same file seen under another name or through another process. */
	dev_key(file_key, sizeof(file_key), si->file.dev, si->file.inode);
	id = key_find(&s->keys, file_key);
	bid_key[0] = '\0';
	if (id == MODEL_NONE && si->file.build_id_len) {
		memcpy(bid_key, "b:", 2);
		elf_file_build_id_hex(&si->file, bid_key + 2, sizeof(bid_key) - 2);
		id = key_find(&s->keys, bid_key);
	}
	if (id != MODEL_NONE) {
		if (caller_key[0])
			key_put(&s->keys, caller_key, id);
		key_put(&s->keys, file_key, id);
		sym_image_free(si);
		return id;
	}

	si->ns_prefix = namespace_prefix(open_path);
	if (!elf_file_section(&si->file, ".debug_info"))
		debug_path = find_debug_file(s, si, path);
	choose_symbols(si);
	if (debug_path) {
		si->dwarf_path = xstrdup(debug_path);
	} else if (si->ns_prefix[0] && path[0] == '/') {
		/* not /proc/PID/map_files/..., whose directory means nothing */
		si->dwarf_path = xrealloc(NULL, strlen(si->ns_prefix) + strlen(path) + 1);
		sprintf(si->dwarf_path, "%s%s", si->ns_prefix, path);
	} else {
		si->dwarf_path = xstrdup(open_path ? open_path : path);
	}
	/* the loader's dev/inode (from /proc/PID/maps) and the file we read
	 * should agree; when not, the file was probably replaced on disk */
	if ((dev || inode) && (dev != si->file.dev || inode != si->file.inode))
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_IDENTITY_MISMATCH, 1);

	tmpl.path = (char *)path;
	tmpl.debug_path = debug_path;
	tmpl.kind = MODEL_IMAGE_ELF;
	tmpl.is_et_exec = si->file.type == ET_EXEC;
	tmpl.has_symbols = si->syms.n > 0;
	/* the model holds 20 bytes (SHA-1, the GNU default); longer ids are cut */
	elf_file_build_id_hex(&si->file, tmpl.build_id, sizeof(tmpl.build_id));
	tmpl.dev = si->file.dev;
	tmpl.inode = si->file.inode;
	tmpl.mtime = si->file.mtime;
	tmpl.crc32 = elf_file_crc32(&si->file);
	tmpl.file_size = si->file.size;
	if (elf_file_text_segment(&si->file, &vaddr, &memsz)) {
		tmpl.text_start = vaddr;
		tmpl.text_size = memsz;
	}
	id = add_image(s, &tmpl, si);
	free(debug_path);
	key_put(&s->keys, file_key, id);
	if (caller_key[0])
		key_put(&s->keys, caller_key, id);
	if (bid_key[0])
		key_put(&s->keys, bid_key, id);
	return id;
}

/*
 * The vDSO is the same image in every 64-bit process of this kernel, so we
 * read our own (a copy: nothing on disk holds it).  Its symbols make
 * samples in clock_gettime & co. resolve; file-relative addresses are
 * offsets from its ELF header, as for a shared library.
 */
static struct sym_image *load_own_vdso(void)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	const struct procmap_entry *e;
	struct sym_image *si;
	struct procmaps maps;
	bool ok;

	if (!base || procmaps_read(getpid(), &maps))
		return NULL;
	si = xcalloc(1, sizeof(*si));
	e = procmaps_find(&maps, base);
	ok = e && e->start == base && !strcmp(e->path, "[vdso]") &&
	     !elf_file_from_memory(&si->file, (const void *)(uintptr_t)base,
				   (size_t)(e->end - e->start));
	procmaps_free(&maps);
	if (!ok) {
		free(si);
		return NULL;
	}
	si->opened = true;
	si->ns_prefix = xstrdup("");
	si->dwarf_path = xstrdup("[vdso]");
	choose_symbols(si);
	return si;
}

uint32_t symbolizer_special_image(struct symbolizer *s, const char *name)
{
	struct model_image tmpl = { 0 };
	char *key = xrealloc(NULL, strlen(name) + 3);
	struct sym_image *si = NULL;
	uint64_t vaddr, memsz;
	uint32_t id;

	sprintf(key, "s:%s", name);
	id = key_find(&s->keys, key);
	if (id == MODEL_NONE) {
		tmpl.path = (char *)name;
		tmpl.kind = MODEL_IMAGE_ANON;
		if (!strcmp(name, "[vdso]") && (si = load_own_vdso())) {
			tmpl.has_symbols = si->syms.n > 0;
			elf_file_build_id_hex(&si->file, tmpl.build_id, sizeof(tmpl.build_id));
			tmpl.crc32 = elf_file_crc32(&si->file);
			tmpl.file_size = si->file.size;
			if (elf_file_text_segment(&si->file, &vaddr, &memsz)) {
				tmpl.text_start = vaddr;
				tmpl.text_size = memsz;
			}
		}
		id = add_image(s, &tmpl, si);
		key_put(&s->keys, key, id);
	}
	free(key);
	return id;
}

uint32_t symbolizer_kernel_image(struct symbolizer *s)
{
	struct model_image tmpl = { 0 };
	int err;

	if (s->kernel_image != MODEL_NONE)
		return s->kernel_image;
	err = kallsyms_read(&s->ksyms, s->kallsyms_path);
	if (err) {
		fprintf(stderr, "collector: %s: %s; kernel frames stay unresolved\n",
			s->kallsyms_path, strerror(-err));
		model_stat_add(s->m, MODEL_STAT_KALLSYMS_UNREADABLE, 1);
	} else if (s->ksyms.restricted) {
		fprintf(stderr, "collector: %s gives no addresses (kernel.kptr_restrict); "
				"kernel frames stay unresolved\n", s->kallsyms_path);
		model_stat_add(s->m, MODEL_STAT_KALLSYMS_RESTRICTED, 1);
	}
	tmpl.path = KERNEL_IMAGE_NAME;
	tmpl.kind = MODEL_IMAGE_KERNEL;
	tmpl.has_symbols = s->ksyms.n > 0;
	tmpl.text_start = s->ksyms.stext;
	if (s->ksyms.etext > s->ksyms.stext && s->ksyms.stext)
		tmpl.text_size = s->ksyms.etext - s->ksyms.stext;
	kallsyms_read_build_id(KERNEL_NOTES, tmpl.build_id, sizeof(tmpl.build_id));
	s->kernel_image = add_image(s, &tmpl, NULL);
	return s->kernel_image;
}

uint64_t symbolizer_bias(struct symbolizer *s, uint32_t image, uint64_t start, uint64_t pgoff)
{
	struct sym_image *si = get_image(s, image);
	uint64_t bias;

	if (!si || !si->opened || !elf_file_bias(&si->file, start, pgoff, s->page_size, &bias))
		return 0;
	return bias;
}

/* ---- DWARF ---------------------------------------------------------------- */

static int cmp_cu_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/*
 * Our own table of compile-unit ranges: dwarf_addrdie relies on
 * .debug_aranges, which not every compiler emits.
 */
static void index_units(struct sym_image *si)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	size_t cap = 0;

	while (dwarf_get_units(si->dwarf, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		cu = next;
		if (unit_type != DW_UT_compile)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (si->n_cus == cap) {
				cap = cap ? cap * 2 : 64;
				si->cus = xrealloc(si->cus, cap * sizeof(*si->cus));
			}
			si->cus[si->n_cus].lo = lo;
			si->cus[si->n_cus].hi = hi;
			si->cus[si->n_cus].cudie = cudie;
			si->n_cus++;
		}
	}
	if (si->n_cus)
		qsort(si->cus, si->n_cus, sizeof(*si->cus), cmp_cu_range);
}

/* Attaches the dwz supplementary file named by .gnu_debugaltlink. */
static void open_alt(struct symbolizer *s, struct sym_image *si, const struct elf_file *f)
{
	const char *alt_path;
	const uint8_t *bid;
	size_t bid_len;
	char cand[4096];
	bool ok = false;

	if (!elf_file_debugaltlink(f, &alt_path, &bid, &bid_len))
		return;
	if (alt_path[0] == '/') {
		ok = (size_t)snprintf(cand, sizeof(cand), "%s%s", si->ns_prefix, alt_path) <
			     sizeof(cand) &&
		     !elf_file_open(&si->alt, cand);
	} else {
		char *dir = dir_of(si->dwarf_path);

		ok = (size_t)snprintf(cand, sizeof(cand), "%s/%s", dir, alt_path) < sizeof(cand) &&
		     !elf_file_open(&si->alt, cand);
		free(dir);
	}
	if (ok && !same_build_id(&si->alt, bid, bid_len)) {
		elf_file_close(&si->alt);
		ok = false;
	}
	if (!ok && !build_id_path(cand, sizeof(cand), "", s->debug_root, bid, bid_len))
		ok = !elf_file_open(&si->alt, cand);
	if (!ok)
		return;
	si->has_alt = true;
	si->alt_dwarf = dwarf_begin_elf(si->alt.elf, DWARF_C_READ, NULL);
	if (si->alt_dwarf)
		dwarf_setalt(si->dwarf, si->alt_dwarf);
}

static Dwarf *get_dwarf(struct symbolizer *s, struct sym_image *si)
{
	const struct elf_file *f = NULL;

	if (si->dwarf_tried)
		return si->dwarf;
	si->dwarf_tried = true;
	if (si->has_debug && (si->dwarf = dwarf_begin_elf(si->debug.elf, DWARF_C_READ, NULL)))
		f = &si->debug;
	else if ((si->dwarf = dwarf_begin_elf(si->file.elf, DWARF_C_READ, NULL)))
		f = &si->file;
	if (!si->dwarf)
		return NULL;
	open_alt(s, si, f);
	index_units(si);
	return si->dwarf;
}

static Dwarf_Die *find_cu(struct sym_image *si, uint64_t addr)
{
	size_t lo = 0, hi = si->n_cus;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (si->cus[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges rarely overlap; look back a little for an enclosing one */
	for (size_t k = 0; k < 4 && lo > 0; k++, lo--)
		if (addr < si->cus[lo - 1].hi)
			return &si->cus[lo - 1].cudie;
	return NULL;
}

/* The name to show for a DWARF function: its linkage (symbol) name, which
 * is what ELF symbols give, else its source name. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_diename(die);
	return name;
}

static void die_decl(struct symbolizer *s, Dwarf_Die *die, uint32_t *file, uint32_t *line)
{
	const char *path = dwarf_decl_file(die);
	int l = 0;

	*file = MODEL_NONE;
	*line = 0;
	if (path) {
		*file = model_intern_file(s->m, path);
		if (dwarf_decl_line(die, &l) == 0 && l > 0)
			*line = (uint32_t)l;
	}
}

/* The model function of symbol e (decl from DWARF die when given). */
static uint32_t symbol_function(struct symbolizer *s, uint32_t image, struct symtab_entry *e,
				Dwarf_Die *die)
{
	uint32_t file = MODEL_NONE, line = 0;
	const char *name = e->name, *at = strchr(name, '@');
	char *copy = NULL;

	if (e->function != MODEL_NONE &&
	    (!die || s->m->functions.items[e->function].file != MODEL_NONE))
		return e->function;
	/* "memcpy@@GLIBC_2.14": symbol versions are not part of the name */
	if (at && at != name)
		name = copy = xstrndup(name, (size_t)(at - name));
	if (die)
		die_decl(s, die, &file, &line);
	e->function = model_intern_function(s->m, image, name, e->addr, e->size, file, line);
	free(copy);
	return e->function;
}

/* A function known only from DWARF (no symbol covers the address). */
static uint32_t dwarf_function(struct symbolizer *s, uint32_t image, Dwarf_Die *die)
{
	const char *name = die_name(die);
	Dwarf_Addr lo = 0, hi = 0;
	uint32_t file, line;

	if (!name)
		return MODEL_NONE;
	if (dwarf_entrypc(die, &lo))
		lo = 0;
	if (dwarf_lowpc(die, &lo) == 0 && dwarf_highpc(die, &hi) == 0 && hi < lo)
		hi = 0;
	die_decl(s, die, &file, &line);
	return model_intern_function(s->m, image, name, lo, hi > lo ? hi - lo : 0, file, line);
}

/* The function of an inlined call: the out-of-line copy's when the image
 * has exactly one symbol of that name, else an entry-less function. */
static uint32_t inlined_function(struct symbolizer *s, uint32_t image, struct sym_image *si,
				 Dwarf_Die *die)
{
	const char *name = die_name(die);
	struct symtab_entry *e;
	uint32_t file, line;

	if (!name)
		name = "[unknown]";
	e = symtab_find_unique(&si->syms, name);
	if (e)
		return symbol_function(s, image, e, die);
	die_decl(s, die, &file, &line);
	return model_intern_function(s->m, image, name, 0, 0, file, line);
}

static void call_site(struct symbolizer *s, Dwarf_Die *cudie, Dwarf_Die *die,
		      struct model_inline *inl)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx, line;
	Dwarf_Files *files;
	size_t n_files;

	inl->call_file = MODEL_NONE;
	inl->call_line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) == 0 &&
	    dwarf_getsrcfiles(cudie, &files, &n_files) == 0 && idx < n_files) {
		const char *path = dwarf_filesrc(files, idx, NULL, NULL);

		if (path && strcmp(path, "???"))
			inl->call_file = model_intern_file(s->m, path);
	}
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line) == 0 &&
	    line <= UINT32_MAX)
		inl->call_line = (uint32_t)line;
}

/* How deep inlined calls and blocks may nest (hostile DWARF is bounded). */
#define MAX_SCOPE_DEPTH 256

static bool has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) ||
	       dwarf_hasattr(die, DW_AT_entry_pc);
}

/*
 * Appends to chain[0..max) the inlined calls inside parent whose ranges
 * contain addr, outermost first, descending through blocks (and through
 * blocks that have no ranges of their own).  Returns true when a child of
 * parent contained addr.
 */
static bool walk_scopes(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *chain, uint32_t *n,
			uint32_t max, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (dwarf_haspc(&child, addr) == 1) {
			if (tag == DW_TAG_inlined_subroutine && *n < max)
				chain[(*n)++] = child;
			walk_scopes(&child, addr, chain, n, max, depth + 1);
			return true;
		}
		if (tag != DW_TAG_inlined_subroutine && !has_pc_attrs(&child) &&
		    walk_scopes(&child, addr, chain, n, max, depth + 1))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/*
 * The concrete DW_TAG_subprogram containing addr, through libdw's scope
 * search.  dwarf_getscopes follows an inlined call into its abstract
 * definition's scopes; the concrete chain (innermost first) comes from
 * dwarf_getscopes_die on the innermost scope.
 */
static bool find_subprogram(Dwarf_Die *cudie, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Die *scopes = NULL, *chain = NULL;
	int n = dwarf_getscopes(cudie, addr, &scopes), n_chain = 0;
	bool found = false;

	if (n > 0)
		n_chain = dwarf_getscopes_die(&scopes[0], &chain);
	for (int i = 0; i < n_chain && !found; i++) {
		if (dwarf_tag(&chain[i]) == DW_TAG_subprogram) {
			*out = chain[i];
			found = true;
		}
	}
	free(scopes);
	free(chain);
	return found;
}

enum { SUB_UNKNOWN = 0, SUB_FOUND, SUB_NONE };

/*
 * The subprogram DIE containing addr.  The scope search walks the whole
 * compile unit, so its answer is kept per symbol: later addresses of the
 * same function only walk that function's own DIEs.
 */
static Dwarf_Die *subprogram_at(struct sym_image *si, Dwarf_Die *cudie, uint64_t addr,
				struct symtab_entry *sym, Dwarf_Die *tmp)
{
	size_t idx;

	if (!sym)
		return find_subprogram(cudie, addr, tmp) ? tmp : NULL;
	idx = (size_t)(sym - si->syms.syms);
	if (!si->sub_state) {
		si->sub_state = xcalloc(si->syms.n, sizeof(*si->sub_state));
		si->sub_dies = xcalloc(si->syms.n, sizeof(*si->sub_dies));
	}
	switch (si->sub_state[idx]) {
	case SUB_NONE:
		return NULL;
	case SUB_FOUND:
		if (dwarf_haspc(&si->sub_dies[idx], addr) == 1)
			return &si->sub_dies[idx];
		/* one symbol over two DWARF functions: search, keep the first */
		return find_subprogram(cudie, addr, tmp) ? tmp : NULL;
	default:
		break;
	}
	if (!find_subprogram(cudie, addr, &si->sub_dies[idx])) {
		si->sub_state[idx] = SUB_NONE;
		return NULL;
	}
	si->sub_state[idx] = SUB_FOUND;
	return &si->sub_dies[idx];
}

static uint32_t resolve_elf(struct symbolizer *s, uint32_t image, struct sym_image *si,
			    uint64_t addr)
{
	struct symtab_entry *sym = symtab_lookup(&si->syms, addr);
	struct model_inline inl[MAX_INLINES];
	Dwarf_Die chain[MAX_INLINES], *cudie = NULL, *sub = NULL, tmp;
	uint32_t function = MODEL_NONE, file = MODEL_NONE, line = 0, n_inl = 0;

	if (get_dwarf(s, si))
		cudie = find_cu(si, addr);
	if (cudie) {
		Dwarf_Line *dl = dwarf_getsrc_die(cudie, addr);
		int ln;

		if (dl) {
			const char *src = dwarf_linesrc(dl, NULL, NULL);

			if (src)
				file = model_intern_file(s->m, src);
			if (dwarf_lineno(dl, &ln) == 0 && ln > 0)
				line = (uint32_t)ln;
		}
		sub = subprogram_at(si, cudie, addr, sym, &tmp);
		if (sub)
			walk_scopes(sub, addr, chain, &n_inl, MAX_INLINES, 0);
		for (uint32_t i = 0; i < n_inl; i++) {
			inl[i].function = inlined_function(s, image, si, &chain[i]);
			call_site(s, cudie, &chain[i], &inl[i]);
		}
	}
	if (sym)
		function = symbol_function(s, image, sym, sub);
	else if (sub)
		function = dwarf_function(s, image, sub);
	if (function == MODEL_NONE)
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNRESOLVED_LOCATIONS, 1);
	return model_intern_location(s->m, image, addr, function, file, line, inl, n_inl);
}

static uint32_t resolve_kernel(struct symbolizer *s, uint32_t image, uint64_t addr)
{
	struct ksym *k = kallsyms_lookup(&s->ksyms, addr);
	uint32_t function = MODEL_NONE;

	if (k) {
		if (k->function == MODEL_NONE)
			k->function = model_intern_function(s->m, image, k->name, k->addr, 0,
							    MODEL_NONE, 0);
		function = k->function;
	} else {
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNRESOLVED_LOCATIONS, 1);
	}
	return model_intern_location(s->m, image, addr, function, MODEL_NONE, 0, NULL, 0);
}

uint32_t symbolizer_location(struct symbolizer *s, uint32_t image, uint64_t addr)
{
	uint32_t loc = model_find_location(s->m, image, addr);
	struct sym_image *si;

	if (loc != MODEL_NONE)
		return loc;
	if (image == s->kernel_image)
		return resolve_kernel(s, image, addr);
	si = get_image(s, image);
	if (si && si->opened)
		return resolve_elf(s, image, si, addr);
	model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNRESOLVED_LOCATIONS, 1);
	return model_intern_location(s->m, image, addr, MODEL_NONE, MODEL_NONE, 0, NULL, 0);
}

/* ---- lookup by name ------------------------------------------------------- */

struct match_ctx {
	struct sym_image *si;
	const char *glob;
	int (*fn)(void *ctx, const struct symbolizer_symbol *sym);
	void *ctx;
	int count;
};

static int match_cb(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct match_ctx *c = ctx;
	struct symbolizer_symbol out;
	int ret;

	if (fnmatch(c->glob, name, 0))
		return 0;
	out.name = name;
	out.addr = sym->st_value;
	out.size = sym->st_size;
	/* offsets come from the file itself: a debug file's segments hold no bytes */
	if (!elf_file_vaddr_to_offset(&c->si->file, sym->st_value, &out.file_offset))
		return 0;
	ret = c->fn(c->ctx, &out);
	if (ret < 0)
		return ret;
	c->count++;
	return 0;
}

int symbolizer_match_functions(struct symbolizer *s, uint32_t image, const char *glob,
			       int (*fn)(void *ctx, const struct symbolizer_symbol *sym),
			       void *ctx)
{
	struct sym_image *si = get_image(s, image);
	struct match_ctx c = { si, glob, fn, ctx, 0 };
	int ret;

	if (image == s->kernel_image && image != MODEL_NONE)
		return -EOPNOTSUPP;
	if (!si || !si->opened || !si->sym_scn)
		return 0;
	ret = elf_file_for_each_function(si->sym_file, si->sym_scn, match_cb, &c);
	return ret < 0 ? ret : c.count;
}
