/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tests' stand-in for decode/'s records of processes (lib/proc_ref.h):
 * one record per (engine part, pid), its word zero at first, as the
 * tracker keeps one per process for each part.
 */
#ifndef COLLECTOR_TEST_PROC_REF_UNIT_H
#define COLLECTOR_TEST_PROC_REF_UNIT_H

#include <stdlib.h>

#include "lib/proc_ref.h"

#define PROC_REF_UNIT_MAX 64

/* Process pid's record as part (an unwinder, a runtime instance) is told
 * of it: the same for the same (part, pid) through the test program. */
static inline const struct proc_ref *proc_ref_unit(const void *part, pid_t pid)
{
	static struct {
		const void *part;
		struct proc_ref ref;
		uint32_t word;
	} recs[PROC_REF_UNIT_MAX];
	static size_t n;

	for (size_t i = 0; i < n; i++)
		if (recs[i].part == part && recs[i].ref.pid == pid)
			return &recs[i].ref;
	if (n == PROC_REF_UNIT_MAX)
		abort();
	recs[n].part = part;
	recs[n].ref.pid = pid;
	recs[n].ref.slot = &recs[n].word;
	return &recs[n++].ref;
}

#endif /* COLLECTOR_TEST_PROC_REF_UNIT_H */
