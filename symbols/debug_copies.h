/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Debug files whose DWARF sections are compressed (SHF_COMPRESSED: every
 * Debian -dbg and -dbgsym package's), kept once decompressed.
 *
 * libdw inflates every compressed debug section of a file when the file
 * is opened for DWARF (dwarf_begin_elf), whatever is looked up in it:
 * libc6-dbg's 2.3 MB of .debug_info and the rest for the two libc frames
 * under main in every stack, 28% of the collector's CPU in a 1 s run on a
 * small loop (perf: inflate under dwarf_begin_elf).  So the first run that
 * opens such a file writes a copy of it with its sections decompressed
 * (libelf's elf_compress, as eu-elfcompress -t none does), and the later
 * runs map the copy, whose sections libdw reads as they are.
 *
 * The copies are in the "debug" folder of the collector's cache directory
 * (COLLECTOR_CACHE_DIR, else /var/cache/collector, opened as lib/safedir.h
 * says: nothing is read or written where another user can write), one per
 * debug file, named by its build-id; a copy whose build-id is not its
 * name's, or not a regular file of the collector's user, is not used.  A
 * copy used is touched; past DEBUG_COPIES_MAX_BYTES in all, the least
 * recently used are removed when a copy is written.
 */
#ifndef COLLECTOR_DEBUG_COPIES_H
#define COLLECTOR_DEBUG_COPIES_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/elfinfo.h"

/* What the copies may take on disk, in all. */
#define DEBUG_COPIES_MAX_BYTES (1024ULL << 20)
/* The environment variable naming the cache directory (as the unwind
 * tables' cache, unwind/table_cache.h). */
#define DEBUG_COPIES_DIR_ENV "COLLECTOR_CACHE_DIR"
#define DEBUG_COPIES_DEFAULT_DIR "/var/cache/collector"

/* Whether debug file f has a compressed debug section. */
bool debug_copy_needed(const struct elf_file *f);

/* The decompressed copy of debug file f (which must have a build-id) into
 * *out, made now when there is none: 0, or a negative errno (the caller
 * then reads f itself).  dir: the cache directory, NULL for the
 * default. */
int debug_copy_open(const char *dir, const struct elf_file *f, struct elf_file *out);

#endif /* COLLECTOR_DEBUG_COPIES_H */
