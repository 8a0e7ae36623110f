/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --trace BIN:PATTERN: which functions of which files to probe.  Each spec
 * is resolved into the model's traced functions (model.traced, whose ids
 * are the probes' cookies) and into a list of files with the file offsets
 * of their functions, which the loader attaches uprobes to.
 */
#ifndef COLLECTOR_TRACE_SPECS_H
#define COLLECTOR_TRACE_SPECS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/python/python_trace.h"
#include "model/model.h"
#include "symbols/symbolize.h"

struct trace_specs_config {
	char *const *specs;     /* "BIN:PATTERN" */
	int n_specs;
	const pid_t *pids;      /* -p targets, to resolve library names */
	int n_pids;
	char *const *command;   /* -- COMMAND, to resolve names, or NULL */
	bool verbose;
};

/* One traced file and the functions in it, in the order they matched. */
struct trace_file {
	char *path;
	int fd;                 /* BIN named by path: opened with the user's rights, else -1 */
	uint64_t *offsets;      /* file offsets of the functions' entries */
	uint64_t *cookies;      /* their model.traced ids */
	const char **names;     /* their names (the model's strings) */
	size_t n, cap;
};

struct trace_files {
	struct trace_file *items;
	size_t len;
	struct trace_python python; /* --trace py:GLOB */
};

/*
 * Resolves every spec into traced functions of the model and files to
 * probe.  Returns 0, or a negative errno after a message naming the spec (a
 * missing binary, a pattern that matches no function, a stripped binary).
 */
int trace_specs_resolve(struct model *m, struct symbolizer *sym,
			const struct trace_specs_config *cfg, struct trace_files *out);
void trace_files_free(struct trace_files *files);

#endif /* COLLECTOR_TRACE_SPECS_H */
