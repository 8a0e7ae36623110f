/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `collector stacks -p PID` (or -a): every thread's stack now, as py-spy
 * dump, jstack and eu-stack print them, without stopping the process.
 *
 * The run is a short --off-cpu run (STACKS_LOOK_S unless -d): the threads
 * off their CPU when it attaches have their stacks taken where they wait
 * (bpf/offcpu_window.bpf.h: kernel, native and Python frames, read while
 * they stay blocked: the process is not stopped at all), and the threads
 * on a CPU are sampled.  Each thread is then shown once, by the stack that
 * says what it is doing: the one it waited in when it waited through most
 * of the look, else its fullest stack on the CPU.  -f writes that,
 * a sample per thread, in any format.
 */
#ifndef COLLECTOR_CLI_STACKS_H
#define COLLECTOR_CLI_STACKS_H

#include <stdio.h>

#include "session/options.h"
#include "formats/format.h"
#include "model/model.h"

/* How long the threads are looked at (s) when -d does not say. */
#define STACKS_LOOK_S 0.1

/* The options a stacks run implies (--off-cpu, its length), and those it
 * refuses, said on stderr: 0 or EINVAL. */
int stacks_options(struct collector_options *o);

/* Keeps one sample per thread in m (the one that shows what it does),
 * prints every thread with its state and frames to out, and writes
 * formats (a mask, 0: none) through eo.  Returns 0, or -1 when a format
 * could not be written. */
int stacks_output(FILE *out, struct model *m, unsigned int formats,
		  const struct export_options *eo);

#endif /* COLLECTOR_CLI_STACKS_H */
