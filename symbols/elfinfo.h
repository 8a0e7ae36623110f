/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One ELF file mapped read-only into memory, with the facts the symbolizer
 * needs: type, loadable segments, build-id, debug links, CRC-32, and its
 * sorted table of function symbols.
 *
 * The one way the collector opens an ELF file.  A path that is not a
 * regular file is refused without blocking.
 *
 * The file is mmap'ed and its descriptor closed at once, so that keeping
 * hundreds of images open costs address space, not file descriptors, and so
 * that a file opened through /proc/PID/map_files stays readable after the
 * process is gone.
 *
 * elfinfo.c opens the file and reads its facts; elf_symbols.c walks its
 * symbol tables and builds the sorted function table.
 */
#ifndef COLLECTOR_ELFINFO_H
#define COLLECTOR_ELFINFO_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELFINFO_MAX_BUILD_ID 64 /* bytes */

struct elf_segment {
	uint64_t vaddr, memsz;
	uint64_t offset, filesz;
	uint32_t flags;       /* PF_R | PF_W | PF_X */
};

struct elf_file {
	void *map;
	size_t size;
	bool copied;          /* map is a malloc'ed copy, not an mmap */
	char *path;           /* as opened (NULL for a copy) */
	Elf *elf;
	uint16_t type;        /* ET_EXEC, ET_DYN, ... */
	uint64_t entry;       /* e_entry, link-time; 0 when none */
	uint64_t dev, inode;  /* from fstat */
	int64_t mtime;
	struct elf_segment *loads; /* PT_LOAD headers in file order */
	size_t n_loads;
	uint8_t build_id[ELFINFO_MAX_BUILD_ID];
	size_t build_id_len;  /* 0: none */
};

/* Opens and maps `path`.  Returns 0, a negative errno, or -ENOEXEC for a
 * file that is not a valid ELF file.  On error *f is left empty. */
int elf_file_open(struct elf_file *f, const char *path);
/* The same, also giving the file's open descriptor (the caller closes it)
 * to a library that wants one, such as libdw's Dwfl reporting: the file it
 * reads is the one opened here. */
int elf_file_open_with_fd(struct elf_file *f, const char *path, int *fd);
/* The same on an ELF image in memory (copied), such as the vDSO. */
int elf_file_from_memory(struct elf_file *f, const void *data, size_t size);
/* The collector's own vDSO, copied from its mapping (the same image in
 * every 64-bit process of this kernel; nothing on disk holds it).
 * Returns 0, -ENOENT when there is none, or a negative errno. */
int elf_file_own_vdso(struct elf_file *f);
void elf_file_close(struct elf_file *f);
/* The file's pages out of the process's resident set (they stay in the
 * page cache and come back at their next read): for an image kept open
 * while seldom read, whose pages read once would count in the RSS for as
 * long as it stays open (a long run's symbolizer: 45 MiB of 156). */
void elf_file_release_pages(struct elf_file *f);

/* Lower-case hex of the build-id into out[2 * len + 1]; "" when none. */
void elf_file_build_id_hex(const struct elf_file *f, char *out, size_t size);

/* CRC-32 (zlib, as .gnu_debuglink uses it) of the whole file, read from
 * the file rather than through the mapping, so that computing it does not
 * make every page of the file resident in the collector (through the
 * mapping when the file no longer opens, its pages released after). */
uint32_t elf_file_crc32(const struct elf_file *f);

/* The first executable PT_LOAD; false when there is none. */
bool elf_file_text_segment(const struct elf_file *f, uint64_t *vaddr, uint64_t *memsz);

/* File offset of link-time address vaddr, through the PT_LOAD whose file
 * image contains it (what uprobes need); false when no segment does. */
bool elf_file_vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *offset);

/*
 * Load bias of a mapping at runtime address `start` of file offset pgoff
 * (page-aligned, as in /proc/PID/maps): runtime - link-time address, from
 * the PT_LOAD that the mapping comes from.  0 for ET_EXEC; false when no
 * segment covers pgoff.
 */
bool elf_file_bias(const struct elf_file *f, uint64_t start, uint64_t pgoff, uint64_t page_size,
		   uint64_t *bias);

/* The section named `name`, or NULL. */
Elf_Scn *elf_file_section(const struct elf_file *f, const char *name);

/* .gnu_debuglink: the file name (NUL-terminated inside the section) and
 * its CRC-32.  false when absent or malformed. */
bool elf_file_debuglink(const struct elf_file *f, const char **name, uint32_t *crc);

/* .gnu_debugaltlink (dwz): the path of the supplementary file and its
 * build-id.  false when absent or malformed. */
bool elf_file_debugaltlink(const struct elf_file *f, const char **path, const uint8_t **build_id,
			   size_t *build_id_len);

/* Calls fn for every DT_NEEDED name of the dynamic section, in order.
 * Stops at and returns fn's first non-zero return; else 0. */
int elf_file_for_each_needed(const struct elf_file *f,
			     int (*fn)(void *ctx, const char *name), void *ctx);
/* The symbol table of type SHT_SYMTAB or SHT_DYNSYM with at least one
 * entry, or NULL. */
Elf_Scn *elf_file_symbols(const struct elf_file *f, uint32_t sh_type);

/* Calls fn for every defined function symbol (STT_FUNC or STT_GNU_IFUNC)
 * of symbol table scn that lies in an executable section.  Stops at and
 * returns fn's first non-zero return; else 0. */
int elf_file_for_each_function(const struct elf_file *f, Elf_Scn *scn,
			       int (*fn)(void *ctx, const char *name, const GElf_Sym *sym),
			       void *ctx);

/* ---- the sorted function table used for address lookups ----------------- */

struct symtab_entry {
	uint64_t addr;
	uint64_t end;         /* exclusive; from st_size, or the next symbol */
	const char *name;     /* points into the ELF file's string table */
	uint64_t size;        /* st_size (0 when the symbol has none) */
	uint32_t function;    /* model function id, MODEL_NONE until interned */
	uint8_t bind;
	uint16_t n_tied;      /* aliases tied with it, its name not chosen yet */
	uint32_t tied_first;  /* their names: symtab.tied[tied_first..] */
};

struct symtab {
	struct symtab_entry *syms;
	size_t n;
	uint32_t *by_name;    /* indexes sorted by name, built on demand */
	const char **tied;    /* the names of tied aliases (symtab_entry) */
	size_t n_tied;
};

/* Builds the table from symbol table scn of f (aliases at one address are
 * merged, keeping global over weak over local, then a named one, then the
 * lowest name).  No name is read here: aliases tied that far are chosen
 * between at the first look-up, and the string table's pages are read for
 * the functions looked up only.  Returns 0 or -ENOMEM. */
int symtab_build(struct symtab *t, const struct elf_file *f, Elf_Scn *scn);
void symtab_free(struct symtab *t);
/* The named function containing addr, or NULL. */
struct symtab_entry *symtab_lookup(const struct symtab *t, uint64_t addr);
/* The only function named `name`, or NULL when none or several. */
struct symtab_entry *symtab_find_unique(struct symtab *t, const char *name);

/* ---- reading the file itself ---------------------------------------------- */

/*
 * A new read-only descriptor of the file f was opened from, for reading it
 * with read(2) or pread(2) rather than through the mapping (reading a large
 * file through the mapping makes every page of it resident in the
 * collector).  -ESTALE when the path now names another file (device, inode
 * or size differ), -EINVAL for a copy made from memory, or a negative errno.
 * The caller closes it.
 */
int elf_file_reopen(const struct elf_file *f);

#endif /* COLLECTOR_ELFINFO_H */
