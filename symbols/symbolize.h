/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbolizer: turns (image, file-relative address) into model locations
 * with function, source file:line and inlined frames.
 *
 * ELF .symtab and .dynsym through libelf (separate debug files found by
 * build-id under /usr/lib/debug/.build-id/xx/rest.debug or through
 * .gnu_debuglink), source lines and inlined frames through libdw, kernel
 * addresses through /proc/kallsyms.  Everything is cached per image (by
 * build-id, else device+inode, else path), never per process.
 */
#ifndef COLLECTOR_SYMBOLIZE_H
#define COLLECTOR_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct elf_file;

/* Not thread-safe: it writes into the model; one thread uses it. */
struct symbolizer;

struct symbolizer *symbolizer_new(struct model *m);
void symbolizer_free(struct symbolizer *s);

/* Where separate debug files live (default /usr/lib/debug): build-id
 * links under DIR/.build-id/, debuglink targets under DIR/<file's dir>/.
 * Call before the first symbolizer_image(). */
void symbolizer_set_debug_root(struct symbolizer *s, const char *dir);
/* The kallsyms file to read (default /proc/kallsyms), for tests.  Call
 * before the first symbolizer_kernel_image(). */
void symbolizer_set_kallsyms_path(struct symbolizer *s, const char *path);

/*
 * A way to name kernel addresses without reading kallsyms whole: the
 * kernel's own search (loader/kernel_names.h).  name() writes the "%pS"
 * text of addr, text() the kernel text's bounds; each returns 0 or a
 * negative errno, and when text() fails the symbolizer reads kallsyms.
 * Call before the first symbolizer_kernel_image().
 */
struct kernel_namer {
	int (*name)(void *ctx, uint64_t addr, char *text, size_t size);
	int (*text)(void *ctx, uint64_t *start, uint64_t *end);
	void *ctx;
};
void symbolizer_set_kernel_namer(struct symbolizer *s, const struct kernel_namer *namer);

/*
 * The model image for a mapped file, created (and its ELF facts read:
 * build-id, ET_EXEC, text segment, mtime, CRC-32, symbols) on first use.
 * `path` is the name to record (as /proc/PID/maps shows it); `open_path`
 * is where to read it from (/proc/PID/map_files/..., /proc/PID/root/...),
 * or NULL to open `path`.  dev/inode identify the file (0 if unknown).
 * Never fails: a file that cannot be read becomes an image without symbols.
 */
uint32_t symbolizer_image(struct symbolizer *s, const char *path, const char *open_path,
			  uint64_t dev, uint64_t inode);
/* The model image symbolizer_image() gives for dev/inode when it has it
 * open, else MODEL_NONE: the caller then works out where to open it from
 * (a test through /proc per process: measured, 5% of the collector's CPU
 * under a build loop, for images it had open nearly every time). */
uint32_t symbolizer_open_image(const struct symbolizer *s, uint64_t dev, uint64_t inode);

/*
 * An image's record, for the engine's other readers of it (the language
 * runtimes: a libpython's _PyRuntime, a libjvm.so's vmStructs): the file
 * is identified once (device and inode, else build-id: one model image
 * for every process and every name that maps it) and opened once, here,
 * and each reader keeps what it made of the image in a word of its own
 * in the record instead of a table of its own keyed by path.
 *
 * symbolizer_image_file(): the image's ELF file as symbolizer_image()
 * opened it (through the process's map_files or root: the right file in
 * another mount namespace, and after it was replaced on disk), or NULL
 * when it is not an ELF file it could read, or is closed (a continuous
 * run's image unused through an interval: the next symbolizer_image()
 * opens it again).  Read only; valid until the next call that opens or
 * closes images.
 *
 * symbolizer_image_slot(): subscriber's word (0 until it sets one) in the
 * record of image, a symbolizer_image() one; NULL for another image or a
 * subscriber past SYMBOLIZER_IMAGE_SLOTS.  Kept while the image is closed.
 */
#define SYMBOLIZER_IMAGE_SLOTS 8
const struct elf_file *symbolizer_image_file(const struct symbolizer *s, uint32_t image);
uint32_t *symbolizer_image_slot(struct symbolizer *s, uint32_t image, unsigned int subscriber);

/* The kernel image ([kernel.kallsyms]), created on first use. */
uint32_t symbolizer_kernel_image(struct symbolizer *s);

/*
 * An anonymous or special mapping ("[vdso]", "[anon]", JIT), by name.
 * "[vdso]" gets the symbols of the collector's own vDSO (the same image in
 * every 64-bit process; wrong for 32-bit ones): symbolizer_bias() gives
 * the mapping's start, and addresses are offsets into the vDSO image.
 * "[uprobes]" (the kernel's uprobe trampoline) and "[vsyscall]" resolve to
 * one function of that name.  Other special images resolve nothing.
 */
uint32_t symbolizer_special_image(struct symbolizer *s, const char *name);

/* A new image "[jit]" (anonymous executable memory of one process, whose
 * functions the caller names): each call makes another. */
uint32_t symbolizer_jit_image(struct symbolizer *s);

/*
 * Load bias of a mapping of `image` at runtime address `start` with file
 * offset `pgoff`: runtime address - file-relative address, from the
 * program header whose file range contains pgoff.  0 for ET_EXEC and for
 * images whose headers cannot be read.
 *
 * Exact for executable mappings and for the first mapping (pgoff 0).  A
 * non-executable mapping can be ambiguous: two segments may start in the
 * same file page (.rodata and the RELRO data typically do), and then the
 * executable segment, else the first, is assumed.  Every mapping of one
 * load shares one bias, so take it from the executable mapping.
 */
uint64_t symbolizer_bias(struct symbolizer *s, uint32_t image, uint64_t start, uint64_t pgoff);

/*
 * The model location of file-relative address `addr` in `image`, interning
 * its function, source file and inlined frames in the model.  An address
 * that resolves to nothing still gets a location (function MODEL_NONE).
 */
uint32_t symbolizer_location(struct symbolizer *s, uint32_t image, uint64_t addr);

/*
 * The model function of symbol `name` (as the ELF file spells it) of
 * `image`: named by its demangled form (C++, Rust), the symbol kept as its
 * linkage name, unless symbolizer_set_demangle(s, false) (--no-demangle).
 */
uint32_t symbolizer_function(struct symbolizer *s, uint32_t image, const char *name,
			     uint64_t entry, uint64_t size, uint32_t file, uint32_t line);
/* Demangle names (the default) or keep them as the symbols spell them. */
void symbolizer_set_demangle(struct symbolizer *s, bool demangle);

/* Whether each ELF image's model_image.crc32 is computed (the default):
 * the whole file read, for formats that name an image by it (DCPI); a run
 * without them leaves it 0, "unknown" (a build's cc1 is 33 MB, read at
 * each of its opens). */
void symbolizer_set_image_crc(struct symbolizer *s, bool crc);

/*
 * Continuous runs, just before the model's code tables are emptied
 * (model_forget_code()): what the interval resolved for the kernel and the
 * ELF images in use (in_use[id], for the model image ids below n) is kept,
 * so that the next intervals intern it again without looking it up (its
 * function, source line and inlined calls); the function ids cached with
 * the symbols are dropped, and the ELF images not in use are closed: their
 * file, symbols, DWARF and kept locations leave memory.  A closed image
 * keeps its model image and its keys; the next symbolizer_image() call
 * that finds it opens it again (from that call's path, checked to be the
 * same file: build-id, else device and inode).
 */
void symbolizer_forget_code(struct symbolizer *s, const bool *in_use, size_t n);

/* Symbol lookup by name for --trace: calls fn for every FUNC symbol of the
 * image's file (symtab, else dynsym) whose name matches the glob pattern.
 * Returns the number of matches or a negative errno. */
struct symbolizer_symbol {
	const char *name;
	uint64_t addr;       /* file-relative */
	uint64_t size;
	uint64_t file_offset; /* offset in the file, for uprobes */
};
int symbolizer_match_functions(struct symbolizer *s, uint32_t image, const char *glob,
			       int (*fn)(void *ctx, const struct symbolizer_symbol *sym),
			       void *ctx);

#endif /* COLLECTOR_SYMBOLIZE_H */
