/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's CPython support: runtimes/python/ with its BPF map writes
 * done by loader/python_procs.h, wired together (only session/ sees both).
 */
#ifndef COLLECTOR_CLI_PYTHON_WALK_H
#define COLLECTOR_CLI_PYTHON_WALK_H

#include "loader/bpf_session.h"
#include "runtimes/python/python.h"

/* The runtime whose interpreters session s walks; NULL when out of memory.
 * COLLECTOR_NO_PYTHON_WALK set: interpreters are found but not walked
 * (bench/python.sh weighs the walk against that). */
struct python_runtime *python_walk_open(struct bpf_session *s);

#endif /* COLLECTOR_CLI_PYTHON_WALK_H */
