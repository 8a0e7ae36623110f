/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel text symbols from /proc/kallsyms, and the kernel's build-id. */
#ifndef COLLECTOR_KALLSYMS_H
#define COLLECTOR_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	uint64_t end;         /* exclusive: the next symbol's address */
	const char *name;     /* points into kallsyms.names */
	const char *module;   /* "" for the core kernel, else the module name */
	uint32_t function;    /* model function id, UINT32_MAX until interned */
};

struct kallsyms {
	struct ksym *syms;    /* sorted by address, one per address */
	size_t n;
	char *names;
	uint64_t stext, etext; /* 0 when absent */
	bool restricted;      /* every address read as 0 (kptr_restrict) */
};

/* Parses the text of /proc/kallsyms, keeping text symbols (t T w W).
 * Returns 0, -ENOMEM, or -EINVAL with *bad_line (1-based) set. */
int kallsyms_parse(struct kallsyms *k, const char *text, size_t len, size_t *bad_line);
/* Reads and parses a kallsyms file ("/proc/kallsyms"). */
int kallsyms_read(struct kallsyms *k, const char *path);
void kallsyms_free(struct kallsyms *k);
/* The symbol containing addr, or NULL. */
struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr);

/* The kernel's "%pS" text for addr ("vfs_read+0x2f/0x1a0", " [module]"
 * after it for a module; the bare address when no symbol contains it):
 * the symbol's name into name (size bytes at least, else false) and its
 * entry, addr less the offset.  false when addr is not named. */
bool kallsyms_parse_named(const char *text, uint64_t addr, char *name, size_t size,
			  uint64_t *entry);

/* The GNU build-id note in an ELF notes blob such as /sys/kernel/notes,
 * as lower-case hex into out (size >= 2 * bytes + 1).  Returns the number
 * of bytes of the build-id, 0 when there is none. */
size_t kallsyms_notes_build_id(const void *notes, size_t len, char *out, size_t size);
/* The same from a file; 0 when unreadable. */
size_t kallsyms_read_build_id(const char *path, char *out, size_t size);

#endif /* COLLECTOR_KALLSYMS_H */
