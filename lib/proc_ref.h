/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A process as an engine part below decode/ is told of it (the unwinder,
 * each language runtime): its pid and the part's own word in decode/'s one
 * record of the process (the tracker's: one for a process's exec, a new
 * one at its next, kept after its exit for the stacks decoded later).  The
 * part keeps what it has of the process there, an index of its own plus
 * one, instead of a table of its own keyed by pid: found without a lookup,
 * told apart from a later process that takes the same pid, and dropped
 * with the record.
 */
#ifndef COLLECTOR_LIB_PROC_REF_H
#define COLLECTOR_LIB_PROC_REF_H

#include <stdint.h>
#include <sys/types.h>

struct proc_ref {
	pid_t pid;
	uint32_t *slot;           /* 0 until the part sets it; never NULL */
};

#endif /* COLLECTOR_LIB_PROC_REF_H */
