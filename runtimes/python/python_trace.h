/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --trace py:GLOB and py:FILEGLOB:GLOB: Python functions traced through the
 * interpreter's USDT probes (bpf/trace_python.bpf.h).  GLOB is matched
 * against the function's name (co_name, as the probes give it), FILEGLOB
 * against its file (co_filename: the whole path when FILEGLOB has a '/',
 * else the base name); '*' and '?' are the wildcards.
 *
 * The interpreter is found among the targets' images: for -p, the mapped
 * libpython if there is one, else the executable; for -- COMMAND, its
 * executable, or the libpython it needs (found through its RUNPATH
 * directory ../lib or the library directories); for -a, python3 in PATH.
 * It must carry the probes (the ELF note .note.stapsdt of a build
 * --with-dtrace): one without them is named in a message.
 *
 * The functions are known only as they are first called: their model
 * traced functions are added after the run, in the order the BPF program
 * gave their ids (after the native ones), in an image "[python]" of their
 * own, each a model function with its file (the probes give no first
 * line: the line they give is the one being run).
 */
#ifndef COLLECTOR_RUNTIMES_PYTHON_TRACE_H
#define COLLECTOR_RUNTIMES_PYTHON_TRACE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/collector.h"
#include "model/model.h"
#include "symbols/elfinfo.h"

struct trace_python {
	bool on;
	char interpreter[PATH_MAX];
	char name_glob[COLLECTOR_PY_GLOB_LEN];
	char file_glob[COLLECTOR_PY_GLOB_LEN]; /* "": any file */
	uint32_t first_id;      /* the model's traced functions before them */
	uint32_t image;         /* "[python]", MODEL_NONE until made */
};

/* The file carries the note of the USDT probe python:function__entry
 * (NT_STAPSDT in .note.stapsdt: three addresses, then "provider\0name\0
 * args\0"). */
bool trace_python_elf_has_probes(const struct elf_file *f);
/* Resolves "GLOB" or "FILEGLOB:GLOB" (the spec after "py:") and the
 * interpreter.  0; -EINVAL for a bad spec, -ENOENT for no interpreter,
 * -ENOTSUP for an interpreter without the probes, after a message. */
int trace_python_resolve(const char *glob, const pid_t *pids, int n_pids, char *const *command,
			 struct trace_python *out);
/* The k-th Python function the BPF program met, as the model traced
 * function first_id + k (call in order of k, after the run). */
void trace_python_add_function(struct model *m, struct trace_python *py, uint32_t k,
			       const struct collector_py_key *key);

#endif /* COLLECTOR_RUNTIMES_PYTHON_TRACE_H */
