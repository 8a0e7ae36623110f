/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The symbolizer's own parts, shared by its files and by no one else:
 *
 *   symbolize.c     the symbolizer: images (ELF files, the vDSO, the
 *                   kernel), the keys that find an image again, locations
 *   debug_files.c   separate debug files: by build-id, .gnu_debuglink,
 *                   and the dwz supplementary file (.gnu_debugaltlink)
 *   dwarf_lines.c   an ELF address into a location: its symbol, and from
 *                   the DWARF its source line and chain of inlined calls
 *   symbol_match.c  function symbols by name, for --trace
 *   demangle.c      model functions named by their demangled symbols
 *   fde_functions.c stripped code: the .eh_frame FDE as the function
 *   debuginfod.c    debug files by build-id from debuginfod servers
 *   location_cache.c continuous runs: resolved addresses kept across cuts
 *
 * Per image we keep the mapped ELF file, the separate debug file if one was
 * found, a sorted table of function symbols, and (opened on first need) the
 * DWARF with a table of compile-unit address ranges.  libdw is used on the
 * ELF files as they are on disk (no load bias), so every address it returns
 * or takes is a link-time address, the same as the model's.
 */
#ifndef COLLECTOR_SYMBOLIZE_INTERNAL_H
#define COLLECTOR_SYMBOLIZE_INTERNAL_H

#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hashtab.h"
#include "symbols/cfi_entries.h"
#include "symbols/elfinfo.h"
#include "symbols/kallsyms.h"
#include "symbols/symbolize.h"

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
	bool has_debug_copy;      /* debug_copy is valid */
	struct elf_file file;
	struct elf_file debug;
	struct elf_file debug_copy; /* debug decompressed (debug_copies.h) */
	struct elf_file alt;      /* dwz supplementary file */
	char *dwarf_path;         /* the file that holds the DWARF */
	char *ns_prefix;          /* "/proc/PID/root" or "" */
	struct symtab syms;
	const struct elf_file *sym_file; /* which file the symbols come from */
	Elf_Scn *sym_scn;
	bool symbols_later;       /* syms not read yet (sym_get_image reads them) */
	uint32_t used_in;         /* code_epoch + 1 of the last interval it resolved in */
	Dwarf *dwarf;
	Dwarf *alt_dwarf;
	struct cfi_fde_index fdes; /* .eh_frame's FDEs, for stripped code */
	bool fdes_read;
	struct cu_range *cus;
	size_t n_cus;
	/* per symbol: its DWARF subprogram (SUB_* state), made on first use */
	uint8_t *sub_state;
	Dwarf_Die *sub_dies;
};

/* What finds an image again: "d:DEV:INODE", "b:BUILD-ID", "p:PATH" (a file
 * that could not be read), "s:NAME" (a special mapping) -> model image. */
struct image_key_entry {
	char *key;
	uint64_t hash;
	uint32_t id;
};

struct image_key {
	const char *key;
	uint64_t hash;
};

static inline uint64_t image_key_entry_hash(const struct image_key_entry *e)
{
	return e->hash;
}

static inline uint64_t image_key_hash(const struct image_key *k)
{
	return k->hash;
}

static inline bool image_key_match(const struct image_key_entry *e, const struct image_key *k)
{
	return e->hash == k->hash && strcmp(e->key, k->key) == 0;
}

HASHTAB_DEFINE(image_keys, struct image_key_entry, struct image_key, image_key_entry_hash,
	       image_key_hash, image_key_match)

struct symbolizer {
	struct model *m;
	char *debug_root;
	char *kallsyms_path;
	struct sym_image **images; /* by model image id; NULL if not ours */
	bool *closed;              /* by model image id: an ELF image to open again */
	/* by model image id: each subscriber's word (symbolizer_image_slot),
	 * kept while the image is closed and opened again */
	uint32_t (*slots)[SYMBOLIZER_IMAGE_SLOTS];
	size_t n_images;
	struct image_keys keys;
	uint32_t kernel_image;
	struct kallsyms ksyms;
	bool ksyms_read;           /* kallsyms read (or tried) */
	struct kernel_namer namer; /* name NULL: none */
	bool use_namer;            /* kernel addresses named by the namer */
	size_t namer_calls;        /* since the last interval cut */
	uint64_t page_size;
	bool no_demangle;          /* --no-demangle: names as the symbols spell them */
	bool no_image_crc;         /* model images' crc32 left 0 */
	struct location_cache *loc_cache; /* continuous runs: see location_cache.c */
	uint32_t code_epoch;       /* model_forget_code() cuts so far */
	struct debuginfod_client *debuginfod; /* made on first need */
	bool debuginfod_tried;
	char *cache_dir;           /* COLLECTOR_CACHE_DIR, or NULL: the default */
};

/* Allocation that cannot fail: the symbolizer writes into the model, which
 * cannot be partially built (model/model.h aborts the same way). */
/* The pages of si's files out of the resident set (elf_file_release_pages):
 * after what reads a file whole (its symbols sorted, its FDEs listed), and
 * at each interval's cut. */
void sym_release_pages(struct sym_image *si);

static inline void *sym_check_alloc(void *p)
{
	if (!p) {
		fprintf(stderr, "collector: out of memory\n");
		abort();
	}
	return p;
}

static inline void *xcalloc(size_t n, size_t size)
{
	return sym_check_alloc(calloc(n ? n : 1, size ? size : 1));
}

static inline void *xrealloc(void *p, size_t size)
{
	return sym_check_alloc(realloc(p, size ? size : 1));
}

static inline char *xstrdup(const char *s)
{
	return sym_check_alloc(strdup(s));
}

static inline char *xstrndup(const char *s, size_t n)
{
	return sym_check_alloc(strndup(s, n));
}

/* symbolize.c: the image of a model image id, or NULL when it is not an
 * ELF image of ours. */
/* Image id's record (NULL: none, or closed), its symbols read first when
 * they were left for later; sym_peek_image() leaves them. */
struct sym_image *sym_get_image(const struct symbolizer *s, uint32_t id);
struct sym_image *sym_peek_image(const struct symbolizer *s, uint32_t id);

/* debug_files.c */
/* "/proc/PID/root" for an open_path under /proc/PID/map_files or
 * /proc/PID/root (files of another mount namespace), else "". */
char *sym_namespace_prefix(const char *open_path);
/* Opens the separate debug file of si->file into si->debug if there is one;
 * returns its path (to free), or NULL.  path is the image's own name. */
char *sym_find_debug_file(struct symbolizer *s, struct sym_image *si, const char *path);
/* Opens candidate into si->debug if it is the debug file of si->file (not
 * the file itself, the same build-id, the CRC asked when check_crc). */
bool sym_try_debug_file(struct sym_image *si, const char *candidate, bool check_crc,
			uint32_t crc);
/* Opens the dwz supplementary file that f (the file with the DWARF) names,
 * and attaches its DWARF to si->dwarf. */
void sym_open_alt(struct symbolizer *s, struct sym_image *si, const struct elf_file *f);

/* dwarf_lines.c: the location of link-time address addr of an ELF image. */
uint32_t sym_resolve_elf(struct symbolizer *s, uint32_t image, struct sym_image *si,
			 uint64_t addr);

/* fde_functions.c: the function "IMAGE+0xSTART" of the .eh_frame FDE
 * that contains link-time address addr, or MODEL_NONE when none does. */
uint32_t sym_fde_function(struct symbolizer *s, uint32_t image, struct sym_image *si,
			  uint64_t addr);

/* location_cache.c: what was resolved, kept across model_forget_code()
 * for the kernel and the ELF images in use.  location_cache_cut() reads
 * the model's code tables before they are emptied and returns the new
 * cache (old is freed); location_cache_find() interns (image, addr) back
 * into the model from it (epoch: the cuts so far), MODEL_NONE when it is
 * not there.  An address not met for LOCATION_CACHE_KEEP_CUTS intervals
 * leaves the cache, though its image is still in use. */
#define LOCATION_CACHE_KEEP_CUTS 6
struct location_cache;
struct location_cache *location_cache_cut(struct symbolizer *s, struct location_cache *old,
					  const bool *in_use, size_t n);
uint32_t location_cache_find(struct symbolizer *s, struct location_cache *c, uint32_t image,
			     uint64_t addr, uint32_t epoch);
size_t location_cache_len(const struct location_cache *c);
void location_cache_free(struct location_cache *c);

/* debuginfod.c: the debug file of si->file from the servers of
 * DEBUGINFOD_URLS (none when unset), opened into si->debug; its path (to
 * free) or NULL.  sym_debuginfod_end() ends the client. */
char *sym_debuginfod_fetch(struct symbolizer *s, struct sym_image *si);
void sym_debuginfod_end(struct symbolizer *s);

#endif /* COLLECTOR_SYMBOLIZE_INTERNAL_H */
