/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf map files: the symbols of JIT-compiled code, as a runtime writes
 * them to /tmp/perf-PID.map (Node's --perf-basic-prof, Java's
 * perf-map-agent, Python 3.12's -X perf, LuaJIT, .NET): one
 * "START SIZE NAME" line per piece of code, START and SIZE in hex (with
 * or without 0x), NAME the rest of the line.
 *
 * Code can be freed and its addresses reused: of the entries that cover an
 * address, the one written last wins.  Malformed lines are skipped.
 */
#ifndef COLLECTOR_PERFMAP_H
#define COLLECTOR_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct perfmap_entry {
	uint64_t start;
	uint64_t size;
	uint32_t line;       /* order in the file: a later line wins */
	char *name;          /* points into perfmap.text */
};

struct perfmap {
	struct perfmap_entry *entries; /* sorted by start, then by line */
	size_t n;
	char *text;          /* the file's content, names NUL-terminated */
};

/* Parses a perf map's content (taken over: freed by perfmap_free).
 * Returns 0 or -ENOMEM. */
int perfmap_parse(struct perfmap *pm, char *text, size_t len);
/* The entry that covers addr, or NULL. */
const struct perfmap_entry *perfmap_lookup(const struct perfmap *pm, uint64_t addr);
void perfmap_free(struct perfmap *pm);

#endif /* COLLECTOR_PERFMAP_H */
