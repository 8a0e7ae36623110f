/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /proc/PID/maps: the one parser of maps files, and the paths under
 * /proc/PID/map_files and /proc/PID/root that open a mapping's file.
 */
#ifndef COLLECTOR_PROCMAPS_H
#define COLLECTOR_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/sysmacros.h>
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
/* The executable mappings alone (code: a file's text, JIT, [vdso]), as
 * procmaps_read lists them but for [vsyscall] (the kernel's gate page, in
 * no process's own mappings, where no sample lands: the kernel emulates
 * its calls on a fault), through the PROCMAP_QUERY ioctl of Linux
 * 6.11+ (the kernel formats no text; 15 us instead of 102 for a python3
 * of 104 mappings, 19 of them executable), else from the text.  The same
 * returns; a process that has exited but is not yet reaped lists none. */
int procmaps_read_exec(pid_t pid, struct procmaps *out);
/* Whether procmaps_read_exec asks the kernel (false before its first
 * call, and on kernels without the ioctl). */
bool procmaps_query_used(void);
/* The path of process pid's first executable file mapping (in address
 * order) for which match(path, ctx) is true, into out[size], read as
 * procmaps_read_exec() reads: for a question about a process asked before
 * the engine reads its mappings (is it a JVM, which libpython does it
 * map).  0, -ENOENT when none matches, -ENAMETOOLONG, or
 * procmaps_read_exec()'s error. */
int procmaps_find_exec_file(pid_t pid, bool (*match)(const char *path, void *ctx), void *ctx,
			    char *out, size_t size);
void procmaps_free(struct procmaps *maps);

/* e (its path copied) in maps, sorted by start, over whatever maps had in
 * its range, as a new mapping replaces the old ones there: entries it
 * covers go, entries it overlaps keep the pieces outside it.  0, -EINVAL
 * for an empty range, or -ENOMEM (maps unchanged). */
int procmaps_place(struct procmaps *maps, const struct procmap_entry *e);

/* Whether the name of *len bytes at name ends in " (deleted)", which is
 * then cut off *len. */
bool procmaps_strip_deleted(const char *name, size_t *len);

/* The entry containing runtime address addr (entries are sorted, as the
 * kernel lists them), or NULL. */
const struct procmap_entry *procmaps_find(const struct procmaps *maps, uint64_t addr);

/* The device number as stat(2) reports it in st_dev, for comparing with
 * the dev argument of symbolizer_image(). */
static inline uint64_t procmap_dev(const struct procmap_entry *e)
{
	return makedev(e->dev_major, e->dev_minor);
}

/* A mapping that names a file (not anonymous, not [vdso]/[heap]/...). */
static inline bool procmap_is_file(const struct procmap_entry *e)
{
	return e->path[0] == '/';
}

/* "/proc/PID/map_files/START-END", the file of the mapping [start, end) of
 * process pid (for a forked child, the same range as in its parent).
 * Returns 0 or -ENAMETOOLONG. */
int procmaps_map_files_path(pid_t pid, uint64_t start, uint64_t end, char *buf, size_t size);

/*
 * Where to open the file of a mapping of process pid so that it resolves
 * in that process's mount namespace and even after the file was deleted or
 * replaced: "/proc/PID/map_files/START-END" (needs CAP_SYS_ADMIN) when that
 * exists, else "/proc/PID/root/PATH".  Returns 0, -ENAMETOOLONG, or -EINVAL
 * for a mapping that is not a file.  map_files, when not NULL, keeps the
 * answer for the other mappings of one reading of pid's maps (-1: not
 * tested yet, then 1 or 0): the test, a faccessat through /proc, is the
 * dear part (12% of the collector's CPU under a build loop, per mapping).
 */
int procmaps_open_path(pid_t pid, const struct procmap_entry *e, char *buf, size_t size,
		       int *map_files);

#endif /* COLLECTOR_PROCMAPS_H */
