/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CPython processes the sampling program walks (bpf/python.bpf.h):
 * their entries in its python_procs map, by tgid.  runtimes/python/
 * decides what an entry holds; cli/ hands these two calls to it as the map
 * writes behind its interface.
 */
#ifndef COLLECTOR_PYTHON_PROCS_H
#define COLLECTOR_PYTHON_PROCS_H

#include <stdint.h>

#include "bpf/collector.h"
#include "loader/bpf_session.h"

/* Sets (replaces) process tgid's entry.  0 or a negative errno. */
int python_procs_set(struct bpf_session *s, uint32_t tgid, const struct collector_python_proc *p);
/* Drops process tgid's entry, if any. */
void python_procs_forget(struct bpf_session *s, uint32_t tgid);

#endif /* COLLECTOR_PYTHON_PROCS_H */
