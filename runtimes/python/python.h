/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython: what the rest of the collector asks of it, and nothing else.
 *
 * - Finding interpreters: python_runtime_image() is told each image a
 *   process maps; the one that exports _PyRuntime is the interpreter (the
 *   executable, as Debian's /usr/bin/python3.11, or libpython3.X.so, or a
 *   python3.X mapped by another loader), not /proc/PID/exe.  Its
 *   Py_Version picks the layouts (runtimes/python/python_layouts.c) and
 *   the process's entry for the BPF walker (bpf/python.bpf.h) goes out
 *   through struct runtime_bpf, which loader/ implements: this folder
 *   writes no map itself.
 * - The engine reaches all of it through python_runtime, the table of
 *   runtimes/runtime.h (runtimes/python/python_ops.c).
 * - Naming frames: python_runtime_frame() reads a PYTHON frame's code
 *   object from the live process (process_vm_readv): co_qualname,
 *   co_filename, co_firstlineno and the line of the instruction from
 *   co_linetable, cached by (process, code object) so that each code
 *   object is read once, while its process lives.
 * - An interpreter whose version has no layout keeps native frames; the
 *   versions met and why are told by python_runtime_report().
 */
#ifndef COLLECTOR_RUNTIMES_PYTHON_H
#define COLLECTOR_RUNTIMES_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/collector.h"
#include "runtimes/runtime.h"

struct python_runtime;

/* bpf (the BPF walker's per-process entries, struct
 * collector_python_proc of frame kind COLLECTOR_FRAME_PYTHON) may be NULL:
 * a replay, where frames are named and nothing is walked. */
struct python_runtime *python_runtime_new(const struct runtime_bpf *bpf);
void python_runtime_free(struct python_runtime *rt);

/* Image img (its path, its load bias: runtime - link-time address, its
 * record), mapped by process pid, read once a file (the record's word).
 * Returns 1 when it is the process's interpreter
 * and the walker was given it, 0 when it is no interpreter (or the
 * process already has one), or a negative errno: -ENOTSUP for a CPython
 * of a version without layouts (counted for the report). */
int python_runtime_image(struct python_runtime *rt, const struct proc_ref *p,
			 const struct runtime_image *img);
/* Whether a process whose executable is at path maps its interpreter
 * only after exec: the executable links a libpython (DT_NEEDED), or is
 * the dynamic loader run as a command (ld.so PROGRAM: Debian's 3.13+
 * unpacked with their own C library are run so). */
bool python_runtime_maps_later(struct python_runtime *rt, const char *path);
/* Whether a process whose executable is at path may be (or map) an
 * interpreter: the executable is one (any version), or maps it later
 * (python_runtime_maps_later()).  The executable is read once a path. */
bool python_runtime_may_be(struct python_runtime *rt, const char *path);
/* Whether runtime address addr of process pid is in the evaluator's code
 * (_PyEval_EvalFrameDefault and its cold part, found in .eh_frame where
 * the interpreter is stripped of it): a native frame there is one C call
 * of the evaluator, in whose place its Python frames go. */
bool python_runtime_in_evaluator(const struct python_runtime *rt, const struct proc_ref *p,
				 uint64_t addr);
/* Whether process pid has (or had, until it exec'd) an interpreter that
 * was walked: its samples may carry Python frames. */
bool python_runtime_known(const struct python_runtime *rt, const struct proc_ref *p);
/* Process record word `word` dropped (runtimes/runtime.h, drop()): its
 * entry and cached code objects go, the entry to be reused. */
void python_runtime_drop(struct python_runtime *rt, uint32_t word);
/* Whether process pid has an interpreter being walked. */
bool python_runtime_has(const struct python_runtime *rt, const struct proc_ref *p);
/* Processes whose interpreter is being walked. */
size_t python_runtime_live(const struct python_runtime *rt);
/* Process p exited or exec'd: it is walked no more (its names stay, for
 * stacks decoded later; a new process of its pid has a record of its
 * own). */
void python_runtime_forget(struct python_runtime *rt, const struct proc_ref *p);

/* A named frame.  The strings live as long as rt. */
struct python_frame_info {
	const char *qualname;  /* "Kestrel.grind" */
	const char *filename;  /* co_filename */
	uint32_t first_line;   /* co_firstlineno */
	uint32_t line;         /* of the frame's instruction; 0: unknown */
};

/* Names PYTHON frame `frame` (bpf/collector.h) of process pid.  0, or a
 * negative errno when its code object cannot be read (the process is
 * gone, the object freed): -ESRCH, -EFAULT, -EINVAL. */
int python_runtime_frame(struct python_runtime *rt, const struct proc_ref *p, uint64_t frame,
			 struct python_frame_info *out);

struct python_runtime_stats {
	uint32_t processes;     /* interpreters walked */
	uint32_t unsupported;   /* interpreters of a version without layouts */
	uint32_t last_unsupported_version; /* Py_Version of the last one */
	char last_unsupported_path[128];
	uint64_t code_reads, code_failed;  /* code objects read, failed */
	uint64_t code_replaced; /* another code object found at a read one's address */
	uint32_t images_read;   /* ELF files read for _PyRuntime: once a file
				 * mapped, once an executable's path asked of */
};
void python_runtime_stats(const struct python_runtime *rt, struct python_runtime_stats *st);
/* Its stats' code_replaced, so far. */
uint64_t python_runtime_code_replaced(const struct python_runtime *rt);

#endif /* COLLECTOR_RUNTIMES_PYTHON_H */
