/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the model keeps of CPython: its statistics, named counters of the
 * model (model_named_stat_add()) written by python_ops.c, and the
 * summary's Python part printed from them and from the "[python]"
 * image's frames (python_report.c).
 */
#ifndef COLLECTOR_RUNTIMES_PYTHON_REPORT_H
#define COLLECTOR_RUNTIMES_PYTHON_REPORT_H

#include <stdio.h>

#include "model/model.h"
#include "runtimes/runtime.h"

/* the kernel side's walks (bpf/python.bpf.h) */
#define PYTHON_STAT_WALKS "python_walks"
#define PYTHON_STAT_NO_THREAD "python_walks_no_thread_state"
#define PYTHON_STAT_READ_FAILED "python_walks_stopped_read_failed"
#define PYTHON_STAT_TOO_DEEP "python_walks_stopped_too_deep"
/* frames whose code object could not be read */
#define PYTHON_STAT_FRAMES_UNNAMED "python_frames_unnamed"
/* code objects read again: another found at a read one's address */
#define PYTHON_STAT_CODE_REPLACED "python_code_replaced"
/* interpreters walked; met but of a version without layouts, and the
 * last such version (Py_Version) */
#define PYTHON_STAT_INTERPRETERS "python_interpreters"
#define PYTHON_STAT_UNSUPPORTED "python_interpreters_unsupported"
#define PYTHON_STAT_UNSUPPORTED_VERSION "python_unsupported_version"

extern const struct runtime_ops python_runtime;

/* runtime_ops.summary: the walks' line (and a version without layouts),
 * the table of Python functions, or the note under traced functions. */
void python_summary(FILE *out, const struct model *m, enum runtime_summary_part part,
		    const void *rt);

#endif /* COLLECTOR_RUNTIMES_PYTHON_REPORT_H */
