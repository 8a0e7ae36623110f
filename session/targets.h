/* SPDX-License-Identifier: GPL-2.0 */
/* What is profiled: checking the targets, choosing how their stacks are
 * walked, and reading their symbols before the run starts. */
#ifndef COLLECTOR_TARGETS_H
#define COLLECTOR_TARGETS_H

#include <stdbool.h>

#include "session/options.h"
#include "model/model.h"
#include "symbols/symbolize.h"

/* Every -p target is a live, non-kernel process and the command can be
 * run.  Returns 0 or EXIT_NO_TARGET, after a message. */
int targets_check(const struct collector_options *opts);

/* --call-graph auto: dwarf when a target's executable lacks frame
 * pointers.  System-wide runs keep the kernel's frame-pointer walk: copying
 * every process's stack costs too much to be a default. */
bool targets_want_dwarf(const struct collector_options *opts);

/* The command, its arguments joined by spaces (the caller frees), or NULL
 * without a command or memory. */
char *targets_command_line(const struct collector_options *opts);

#endif /* COLLECTOR_TARGETS_H */
