/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The layouts of one CPython minor version: where the BPF walker finds the
 * threads and frames (struct collector_python_proc, its interp_head the
 * offset of interpreters.head in _PyRuntime), and where user space finds
 * a code object's names, first line and location table.  Private to
 * runtimes/python/.
 */
#ifndef COLLECTOR_PYTHON_LAYOUTS_H
#define COLLECTOR_PYTHON_LAYOUTS_H

#include <stdint.h>
#include <sys/types.h>

#include "bpf/collector.h"
#include "lib/procmem.h"
#include "symbols/elfinfo.h"

struct python_layout {
	uint32_t minor;          /* 11 for 3.11 */
	struct collector_python_proc walk;
	/* PyCodeObject */
	uint16_t co_filename, co_qualname, co_linetable, co_firstlineno;
	/* str: the state word, the length, the first character of a compact
	 * ASCII string and of a compact non-ASCII one */
	uint16_t str_state, str_length, str_ascii_data, str_compact_data;
	/* bytes: ob_size, ob_sval */
	uint16_t bytes_size, bytes_data;
};

/* The layout of CPython 3.<minor> taken from its headers, or NULL. */
const struct python_layout *python_layout_of(uint32_t minor);

/* From 3.13: the layout read from the _Py_DebugOffsets structure at the
 * start of _PyRuntime (runtime: its address in process pid).  0, -ENOENT
 * when it has none (no "xdebugpy" cookie), or a negative errno. */
int python_layout_from_debug_offsets(pid_t pid, uint64_t runtime, uint32_t minor,
				     struct python_layout *out);

/* The evaluator's code in ELF file f, whose _PyEval_EvalFrameDefault is
 * at link-time address eval (eval_size bytes): ranges[0] that function,
 * ranges[1] its cold part when .eh_frame shows one.  Returns how many
 * ranges it wrote (python_evaluator.c). */
#define PYTHON_EVAL_RANGES 2
int python_evaluator_ranges(const struct elf_file *f, uint64_t eval, uint64_t eval_size,
			    uint64_t ranges[][2], int max);

#endif /* COLLECTOR_PYTHON_LAYOUTS_H */
