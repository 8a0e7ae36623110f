// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolizer: model images for mapped files, the vDSO and the kernel, and
 * model locations for (image, file-relative address) pairs.  The parts of
 * it are listed in symbols/symbolize_internal.h.
 */
#include "symbols/symbolize_internal.h"

#include <errno.h>
#include <unistd.h>

#include "lib/hashmix.h"
#include "symbols/debug_copies.h"
#include "symbols/debug_files.h"

#define DEFAULT_KALLSYMS "/proc/kallsyms"
#define KERNEL_NOTES "/sys/kernel/notes"
#define KERNEL_IMAGE_NAME "[kernel.kallsyms]"

/* ---- image keys ----------------------------------------------------------- */

static uint32_t key_find(const struct symbolizer *s, const char *key)
{
	struct image_key k = { key, hash_string(key) };
	const struct image_key_entry *e = image_keys_find(&s->keys, &k);

	return e ? e->id : MODEL_NONE;
}

/* Records key -> id; a key already recorded keeps its image. */
static void key_put(struct symbolizer *s, const char *key, uint32_t id)
{
	struct image_key k = { key, hash_string(key) };
	struct image_key_entry *e;
	bool fresh;

	e = sym_check_alloc(image_keys_upsert(&s->keys, &k, &fresh));
	if (!fresh)
		return;
	e->key = xstrdup(key);
	e->hash = k.hash;
	e->id = id;
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
	s->debug_root = xstrdup(DEBUG_FILES_ROOT);
	s->kallsyms_path = xstrdup(DEFAULT_KALLSYMS);
	/* read once: where decompressed debug files are kept (debug_copies.h) */
	if (getenv(DEBUG_COPIES_DIR_ENV) && getenv(DEBUG_COPIES_DIR_ENV)[0])
		s->cache_dir = xstrdup(getenv(DEBUG_COPIES_DIR_ENV));
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
	cfi_fde_index_close(&si->fdes);
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
	if (si->has_debug_copy)
		elf_file_close(&si->debug_copy);
	if (si->opened)
		elf_file_close(&si->file);
	free(si);
}

void symbolizer_free(struct symbolizer *s)
{
	struct image_key_entry *e;

	if (!s)
		return;
	for (size_t i = 0; i < s->n_images; i++)
		sym_image_free(s->images[i]);
	free(s->images);
	free(s->closed);
	free(s->slots);
	HASHTAB_FOR_EACH(&s->keys, e)
		free(e->key);
	image_keys_free(&s->keys);
	kallsyms_free(&s->ksyms);
	location_cache_free(s->loc_cache);
	sym_debuginfod_end(s);
	free(s->debug_root);
	free(s->kallsyms_path);
	free(s->cache_dir);
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

void symbolizer_set_kernel_namer(struct symbolizer *s, const struct kernel_namer *namer)
{
	s->namer = *namer;
}

struct sym_image *sym_peek_image(const struct symbolizer *s, uint32_t id)
{
	return id < s->n_images ? s->images[id] : NULL;
}

static void choose_symbols(struct sym_image *si);

struct sym_image *sym_get_image(const struct symbolizer *s, uint32_t id)
{
	struct sym_image *si = sym_peek_image(s, id);

	if (si && si->symbols_later) {
		si->symbols_later = false;
		choose_symbols(si);
		sym_release_pages(si);
	}
	return si;
}

static uint32_t add_image(struct symbolizer *s, const struct model_image *tmpl,
			  struct sym_image *si)
{
	uint32_t id = model_add_image(s->m, tmpl);

	if (id >= s->n_images) {
		size_t n = (size_t)id + 1;

		s->images = xrealloc(s->images, n * sizeof(*s->images));
		memset(s->images + s->n_images, 0, (n - s->n_images) * sizeof(*s->images));
		s->closed = xrealloc(s->closed, n * sizeof(*s->closed));
		memset(s->closed + s->n_images, 0, (n - s->n_images) * sizeof(*s->closed));
		s->slots = xrealloc(s->slots, n * sizeof(*s->slots));
		memset(s->slots + s->n_images, 0, (n - s->n_images) * sizeof(*s->slots));
		s->n_images = n;
	}
	s->images[id] = si;
	return id;
}

/* ---- images ----------------------------------------------------------------- */

void sym_release_pages(struct sym_image *si)
{
	if (si->opened)
		elf_file_release_pages(&si->file);
	if (si->has_debug)
		elf_file_release_pages(&si->debug);
	if (si->has_alt)
		elf_file_release_pages(&si->alt);
}

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

/* The facts of an opened ELF image that the model keeps. */
static void describe_elf(struct model_image *tmpl, const struct sym_image *si, bool crc)
{
	uint64_t vaddr, memsz;

	tmpl->is_et_exec = si->file.type == ET_EXEC;
	tmpl->has_symbols = si->syms.n > 0;
	/* the model holds 20 bytes (SHA-1, the GNU default); longer ids are cut */
	elf_file_build_id_hex(&si->file, tmpl->build_id, sizeof(tmpl->build_id));
	tmpl->dev = si->file.dev;
	tmpl->inode = si->file.inode;
	tmpl->mtime = si->file.mtime;
	tmpl->crc32 = crc ? elf_file_crc32(&si->file) : 0;
	tmpl->file_size = si->file.size;
	tmpl->entry = si->file.entry;
	if (elf_file_text_segment(&si->file, &vaddr, &memsz)) {
		tmpl->text_start = vaddr;
		tmpl->text_size = memsz;
	}
}

/* A file that cannot be read, or is not ELF: an image without symbols,
 * found again by the caller's dev+inode, else by its path. */
static uint32_t unreadable_image(struct symbolizer *s, const char *path, const char *caller_key,
				 uint64_t dev, uint64_t inode)
{
	struct model_image tmpl = { 0 };
	char *path_key = NULL;
	uint32_t id;

	if (!caller_key[0]) {
		path_key = xrealloc(NULL, strlen(path) + 3);
		sprintf(path_key, "p:%s", path);
		id = key_find(s, path_key);
		if (id != MODEL_NONE) {
			free(path_key);
			return id;
		}
	}
	tmpl.path = (char *)path;
	tmpl.kind = MODEL_IMAGE_ELF;
	tmpl.dev = dev;
	tmpl.inode = inode;
	id = add_image(s, &tmpl, NULL);
	key_put(s, caller_key[0] ? caller_key : path_key, id);
	/* known by its dev+inode: closed, so that the next process that maps
	 * it opens it (reopen_image()).  A process gone before its images were
	 * read (a script's `dirname`) left libc unnamed in every process of
	 * the run (test_java_walk's -- java, 2 runs in 6) */
	if (caller_key[0])
		s->closed[id] = true;
	free(path_key);
	model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNREADABLE_IMAGES, 1);
	return id;
}

/* Where the DWARF of an image is: its debug file, else the file itself
 * (through its namespace's root when it has a path there). */
static char *dwarf_path(const struct sym_image *si, const char *path, const char *open_path,
			const char *debug_path)
{
	char *p;

	if (debug_path)
		return xstrdup(debug_path);
	if (si->ns_prefix[0] && path[0] == '/') {
		/* not /proc/PID/map_files/..., whose directory means nothing */
		p = xrealloc(NULL, strlen(si->ns_prefix) + strlen(path) + 1);
		sprintf(p, "%s%s", si->ns_prefix, path);
		return p;
	}
	return xstrdup(open_path ? open_path : path);
}

/* What an opened ELF file needs before its addresses resolve: its debug
 * file, symbols (read at the first sym_get_image() when symbols_later)
 * and the path of its DWARF.  Returns the debug file's path (to free), or
 * NULL. */
static char *load_image(struct symbolizer *s, struct sym_image *si, const char *path,
			const char *open_path, bool symbols_later)
{
	char *debug_path = NULL;

	si->ns_prefix = sym_namespace_prefix(open_path);
	if (!elf_file_section(&si->file, ".debug_info"))
		debug_path = sym_find_debug_file(s, si, path);
	if (symbols_later)
		si->symbols_later = true;
	else
		choose_symbols(si);
	si->dwarf_path = dwarf_path(si, path, open_path, debug_path);
	return debug_path;
}

/* A closed image met again (symbolizer_forget_code()): opened from this
 * caller's path when it is the same file; else it stays closed, and its
 * addresses resolve to nothing.  Its symbols are read when an address of
 * it is resolved: a continuous run under a build loop reopened the
 * compilers at each of their execs after a cut, and sorting their symbols
 * again was 8.7% of its CPU, for processes mostly never sampled. */
static void reopen_image(struct symbolizer *s, uint32_t id, struct sym_image *si,
			 const char *path, const char *open_path)
{
	const struct model_image *img = &s->m->images.items[id];
	char build_id[sizeof(img->build_id)];
	/* never read: first met through a process that could not open it */
	bool fresh = !img->build_id[0] && !img->file_size;
	char *debug_path;

	if (!si) {
		si = xcalloc(1, sizeof(*si));
		if (elf_file_open(&si->file, open_path ? open_path : path)) {
			free(si);
			/* an image counted unreadable once */
			if (!fresh)
				model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNREADABLE_IMAGES, 1);
			return;
		}
		si->opened = true;
	}
	elf_file_build_id_hex(&si->file, build_id, sizeof(build_id));
	if (img->build_id[0] ? strcmp(build_id, img->build_id) != 0
			     : si->file.dev != img->dev || si->file.inode != img->inode) {
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_IDENTITY_MISMATCH, 1);
		sym_image_free(si);
		return;
	}
	debug_path = load_image(s, si, path, open_path, !fresh);
	if (fresh) { /* described now, as add_image() would have */
		struct model_image *mi = &s->m->images.items[id];
		struct model_image d = *mi;

		describe_elf(&d, si, !s->no_image_crc);
		if (!d.debug_path)
			d.debug_path = model_strdup(debug_path);
		*mi = d;
	}
	free(debug_path);
	sym_release_pages(si);
	s->images[id] = si;
	s->closed[id] = false;
}

uint32_t symbolizer_open_image(const struct symbolizer *s, uint64_t dev, uint64_t inode)
{
	char key[64];
	uint32_t id;

	if (!dev && !inode)
		return MODEL_NONE;
	dev_key(key, sizeof(key), dev, inode);
	id = key_find(s, key);
	return id != MODEL_NONE && !s->closed[id] ? id : MODEL_NONE;
}

const struct elf_file *symbolizer_image_file(const struct symbolizer *s, uint32_t image)
{
	const struct sym_image *si = sym_peek_image(s, image);

	return si && si->opened ? &si->file : NULL;
}

uint32_t *symbolizer_image_slot(struct symbolizer *s, uint32_t image, unsigned int subscriber)
{
	/* the symbolizer's images: read, closed, or unreadable (closed) */
	if (image >= s->n_images || (!s->images[image] && !s->closed[image]) ||
	    subscriber >= SYMBOLIZER_IMAGE_SLOTS)
		return NULL;
	return &s->slots[image][subscriber];
}

uint32_t symbolizer_image(struct symbolizer *s, const char *path, const char *open_path,
			  uint64_t dev, uint64_t inode)
{
	struct model_image tmpl = { 0 };
	char caller_key[64], file_key[64], bid_key[2 + 2 * ELFINFO_MAX_BUILD_ID + 1];
	char *debug_path = NULL;
	struct sym_image *si;
	uint32_t id;

	if (!path)
		path = open_path ? open_path : "[unknown]";
	caller_key[0] = '\0';
	if (dev || inode) {
		dev_key(caller_key, sizeof(caller_key), dev, inode);
		id = key_find(s, caller_key);
		if (id != MODEL_NONE && s->closed[id])
			reopen_image(s, id, NULL, path, open_path);
		if (id != MODEL_NONE)
			return id;
	}
	si = xcalloc(1, sizeof(*si));
	if (elf_file_open(&si->file, open_path ? open_path : path)) {
		free(si);
		return unreadable_image(s, path, caller_key, dev, inode);
	}
	si->opened = true;

	/* The same file seen under another name or through another process. */
	dev_key(file_key, sizeof(file_key), si->file.dev, si->file.inode);
	id = key_find(s, file_key);
	bid_key[0] = '\0';
	if (id == MODEL_NONE && si->file.build_id_len) {
		memcpy(bid_key, "b:", 2);
		elf_file_build_id_hex(&si->file, bid_key + 2, sizeof(bid_key) - 2);
		id = key_find(s, bid_key);
	}
	if (id != MODEL_NONE) {
		if (caller_key[0])
			key_put(s, caller_key, id);
		key_put(s, file_key, id);
		if (s->closed[id])
			reopen_image(s, id, si, path, open_path);
		else
			sym_image_free(si);
		return id;
	}

	debug_path = load_image(s, si, path, open_path, false);
	sym_release_pages(si);
	/* the loader's dev/inode (from /proc/PID/maps) and the file we read
	 * should agree; when not, the file was probably replaced on disk */
	if ((dev || inode) && (dev != si->file.dev || inode != si->file.inode))
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_IDENTITY_MISMATCH, 1);

	tmpl.path = (char *)path;
	tmpl.debug_path = debug_path;
	tmpl.kind = MODEL_IMAGE_ELF;
	describe_elf(&tmpl, si, !s->no_image_crc);
	id = add_image(s, &tmpl, si);
	free(debug_path);
	key_put(s, file_key, id);
	if (caller_key[0])
		key_put(s, caller_key, id);
	if (bid_key[0])
		key_put(s, bid_key, id);
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
	struct sym_image *si = xcalloc(1, sizeof(*si));

	if (elf_file_own_vdso(&si->file)) {
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
	uint32_t id;

	sprintf(key, "s:%s", name);
	id = key_find(s, key);
	if (id == MODEL_NONE) {
		tmpl.path = (char *)name;
		tmpl.kind = MODEL_IMAGE_ANON;
		if (!strcmp(name, "[vdso]") && (si = load_own_vdso()))
			describe_elf(&tmpl, si, !s->no_image_crc);
		id = add_image(s, &tmpl, si);
		key_put(s, key, id);
	}
	free(key);
	return id;
}

uint32_t symbolizer_jit_image(struct symbolizer *s)
{
	struct model_image tmpl = { .path = "[jit]", .kind = MODEL_IMAGE_ANON };

	return add_image(s, &tmpl, NULL);
}

/*
 * kallsyms, read whole once: when there is no namer, or once it has named
 * KERNEL_NAMER_MAX addresses in one interval (or in a run without any):
 * reading the file costs about as much as that many calls of the namer,
 * 2.3 us each here, so past it the file is the cheaper.  Counted per
 * interval, not per run: the location cache keeps what earlier intervals
 * named, and a continuous -a run under a build loop names about 14 new
 * addresses a second; counted over the run (at 4 096), it read the file at
 * 290 s, whose parse held 25 MiB at once (the text, the symbols and their
 * sort) and kept 11 MiB for the rest of the run: the run's peak RSS.
 */
#define KERNEL_NAMER_MAX 20000

static void read_kallsyms(struct symbolizer *s)
{
	int err;

	if (s->ksyms_read)
		return;
	s->ksyms_read = true;
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
}

uint32_t symbolizer_kernel_image(struct symbolizer *s)
{
	struct model_image tmpl = { 0 };
	uint64_t stext = 0, etext = 0;

	if (s->kernel_image != MODEL_NONE)
		return s->kernel_image;
	s->use_namer = s->namer.name && s->namer.text(s->namer.ctx, &stext, &etext) == 0;
	if (!s->use_namer) {
		read_kallsyms(s);
		stext = s->ksyms.stext;
		etext = s->ksyms.etext;
	}
	tmpl.path = KERNEL_IMAGE_NAME;
	tmpl.kind = MODEL_IMAGE_KERNEL;
	tmpl.has_symbols = s->use_namer || s->ksyms.n > 0;
	tmpl.text_start = stext;
	if (etext > stext && stext)
		tmpl.text_size = etext - stext;
	kallsyms_read_build_id(KERNEL_NOTES, tmpl.build_id, sizeof(tmpl.build_id));
	s->kernel_image = add_image(s, &tmpl, NULL);
	return s->kernel_image;
}

uint64_t symbolizer_bias(struct symbolizer *s, uint32_t image, uint64_t start, uint64_t pgoff)
{
	struct sym_image *si = sym_peek_image(s, image);
	uint64_t bias;

	if (!si || !si->opened || !elf_file_bias(&si->file, start, pgoff, s->page_size, &bias))
		return 0;
	return bias;
}

void symbolizer_forget_code(struct symbolizer *s, const bool *in_use, size_t n)
{
	uint32_t interval = s->code_epoch + 1;

	/* what the interval resolved, kept for the images still in use */
	s->loc_cache = location_cache_cut(s, s->loc_cache, in_use, n);
	s->code_epoch++;
	s->namer_calls = 0;
	for (size_t i = 0; i < s->ksyms.n; i++)
		s->ksyms.syms[i].function = MODEL_NONE;
	for (size_t id = 0; id < s->n_images; id++) {
		struct sym_image *si = s->images[id];
		const struct model_image *img = &s->m->images.items[id];

		if (!si)
			continue;
		/* kept too when it resolved in the interval that ends, though no
		 * live process maps it now: a build's compilers, run again and
		 * again, were closed at every cut and opened again after it,
		 * their symbols and FDEs read and sorted anew (19% of a
		 * continuous -a run's CPU under a build loop); closed when an
		 * interval passes without them */
		if ((id < n && in_use[id]) || si->used_in == interval ||
		    img->kind != MODEL_IMAGE_ELF || !si->opened) {
			for (size_t k = 0; k < si->syms.n; k++)
				si->syms.syms[k].function = MODEL_NONE;
			/* the next interval reads what it needs again (its
			 * locations mostly come from the kept cache) */
			sym_release_pages(si);
			continue;
		}
		sym_image_free(si);
		s->images[id] = NULL;
		s->closed[id] = true;
	}
}

/* ---- locations ------------------------------------------------------------- */

/* The function of kernel address addr named by the namer, MODEL_NONE when
 * it names none. */
static uint32_t namer_function(struct symbolizer *s, uint32_t image, uint64_t addr)
{
	char text[512], name[512];
	uint64_t entry;

	s->namer_calls++;
	if (s->namer.name(s->namer.ctx, addr, text, sizeof(text)) != 0 ||
	    !kallsyms_parse_named(text, addr, name, sizeof(name), &entry))
		return MODEL_NONE;
	return symbolizer_function(s, image, name, entry, 0, MODEL_NONE, 0);
}

static uint32_t resolve_kernel(struct symbolizer *s, uint32_t image, uint64_t addr)
{
	struct ksym *k;
	uint32_t function = MODEL_NONE;

	if (s->use_namer && s->namer_calls >= KERNEL_NAMER_MAX) {
		s->use_namer = false;
		read_kallsyms(s);
	}
	if (s->use_namer) {
		function = namer_function(s, image, addr);
		if (function == MODEL_NONE)
			model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNRESOLVED_LOCATIONS, 1);
		return model_intern_location(s->m, image, addr, function, MODEL_NONE, 0, NULL,
					     0);
	}
	k = kallsyms_lookup(&s->ksyms, addr);
	if (k) {
		if (k->function == MODEL_NONE)
			k->function = symbolizer_function(s, image, k->name, k->addr, 0,
							  MODEL_NONE, 0);
		function = k->function;
	} else {
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNRESOLVED_LOCATIONS, 1);
	}
	return model_intern_location(s->m, image, addr, function, MODEL_NONE, 0, NULL, 0);
}

/* Code the kernel maps into a process under a name of its own: the uprobe
 * trampoline ("[uprobes]", where a probed function's breakpoint is single-
 * stepped out of line) and the legacy vsyscall page.  Each is one function
 * named after its mapping; other special images resolve nothing. */
static uint32_t kernel_provided_function(struct symbolizer *s, uint32_t image)
{
	static const char *const names[] = { "[uprobes]", "[vsyscall]" };
	const struct model_image *img = &s->m->images.items[image];

	if (img->kind != MODEL_IMAGE_ANON)
		return MODEL_NONE;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(img->path, names[i]))
			return model_intern_function(s->m, image, names[i], 0, 0, MODEL_NONE, 0);
	return MODEL_NONE;
}

uint32_t symbolizer_location(struct symbolizer *s, uint32_t image, uint64_t addr)
{
	uint32_t function;
	uint32_t loc = model_find_location(s->m, image, addr);
	struct sym_image *si;

	if (loc != MODEL_NONE)
		return loc;
	si = sym_peek_image(s, image);
	if (si)
		si->used_in = s->code_epoch + 1; /* kept at the cut that ends it */
	loc = location_cache_find(s, s->loc_cache, image, addr, s->code_epoch);
	if (loc != MODEL_NONE)
		return loc;
	if (image == s->kernel_image)
		return resolve_kernel(s, image, addr);
	si = sym_get_image(s, image);
	if (si && si->opened)
		return sym_resolve_elf(s, image, si, addr);
	function = kernel_provided_function(s, image);
	if (function == MODEL_NONE)
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNRESOLVED_LOCATIONS, 1);
	return model_intern_location(s->m, image, addr, function, MODEL_NONE, 0, NULL, 0);
}
