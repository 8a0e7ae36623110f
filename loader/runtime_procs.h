/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The language runtimes' per-process entries for the sampling program,
 * and their walks (of samples; of switch-outs with --off-cpu), loaded
 * when met:
 * each runtime's map, by tgid, found by the runtime's frame kind
 * (COLLECTOR_FRAME_PYTHON: python_procs, struct collector_python_proc,
 * bpf/python.bpf.h).  runtimes/ decides what an entry holds; session/
 * hands these calls to the runtimes as struct runtime_bpf, their map
 * writes behind one interface.
 */
#ifndef COLLECTOR_RUNTIME_PROCS_H
#define COLLECTOR_RUNTIME_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "loader/bpf_session.h"

/* Sets (replaces) process tgid's entry in the map of frame_kind; size
 * must be that map's value size.  The first entry of a kind loads its
 * walks (bpf/runtime.bpf.h's runtime_walks and offcpu_runtime_walks: the
 * object loaded again with those programs alone, tens of ms of the
 * verifier, once a run;
 * from the caller's thread, the one that drains).  0, -EINVAL (no such
 * map, a wrong size), or a negative errno of the load (said on stderr
 * once; the entry is not set, so the runtime falls back) or of the
 * update. */
int runtime_procs_set(struct bpf_session *s, unsigned int frame_kind, uint32_t tgid,
		      const void *entry, size_t size);
/* Loads the walks of frame kinds (a bit each) now, as their first entry
 * would: a command about to exec a runtime's executable, held until
 * then.  Errors are said as there, and left for that entry. */
void runtime_walks_preload(struct bpf_session *s, uint32_t kinds);
/* Drops process tgid's entry, if any. */
void runtime_procs_forget(struct bpf_session *s, unsigned int frame_kind, uint32_t tgid);

#endif /* COLLECTOR_RUNTIME_PROCS_H */
