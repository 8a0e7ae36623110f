/* SPDX-License-Identifier: GPL-2.0 */
/* /proc/PID/maps: parsing and reading. */
#ifndef COLLECTOR_PROCMAPS_H
#define COLLECTOR_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procmap_entry {
	uint64_t start, end;
	uint64_t pgoff;
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	bool read, write, exec, shared;
	bool deleted;        /* path ended in " (deleted)", stripped */
	char *path;          /* "" for anonymous mappings, else as shown */
};

struct procmaps {
	struct procmap_entry *entries;
	size_t n;
};

/* Parses the text of a maps file.  Returns 0, or -EINVAL with *bad_line
 * set to the 1-based number of the first malformed line. */
int procmaps_parse(const char *text, size_t len, struct procmaps *out, size_t *bad_line);
/* Reads /proc/PID/maps.  Returns 0 or a negative errno (-ESRCH: gone). */
int procmaps_read(pid_t pid, struct procmaps *out);
void procmaps_free(struct procmaps *maps);

#endif /* COLLECTOR_PROCMAPS_H */
