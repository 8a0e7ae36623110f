/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Separate debug files on this machine: the one way the collector finds
 * the debug file of an ELF image, for its symbols and lines (the
 * symbolizer, which also asks debuginfod servers) and for its
 * .debug_frame (the unwind tables, unwind/cfi_table.h).
 *
 * Looked for as gdb does: by build-id under the debug root
 * (ROOT/.build-id/xx/yyyy.debug), then by .gnu_debuglink beside the file,
 * in .debug/ beside it and under the debug root.  A candidate is taken only
 * when it is not the file itself, has the file's build-id when both have
 * one, and the CRC the debuglink asks for.  Files of another mount
 * namespace (ns_prefix "/proc/PID/root") are looked for there first.
 */
#ifndef COLLECTOR_DEBUG_FILES_H
#define COLLECTOR_DEBUG_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/elfinfo.h"

/* Where distributions install debug files. */
#define DEBUG_FILES_ROOT "/usr/lib/debug"

/* Opens the debug file of f into *debug when candidate is one (see
 * above; the CRC checked when check_crc). */
bool debug_file_try(const struct elf_file *f, const char *candidate, bool check_crc,
		    uint32_t crc, struct elf_file *debug);

/* Finds and opens into *debug the separate debug file of f, which was
 * opened from path (its own name, for the debuglink's directory) in
 * namespace ns_prefix ("" for ours), under debug_root.  Returns the debug
 * file's path (to free), or NULL when there is none. */
char *debug_file_find(const struct elf_file *f, const char *path, const char *ns_prefix,
		      const char *debug_root, struct elf_file *debug);

#endif /* COLLECTOR_DEBUG_FILES_H */
