// SPDX-License-Identifier: GPL-2.0
/*
 * The summary's Python part (python_report.h): how the walks of the
 * CPython processes fared, a version met that has no layouts, and the
 * Python functions by self samples (those whose innermost Python frame is
 * the function, whatever interpreter code runs under it) and total
 * samples (runtimes/runtime_report.h).
 */
#include "runtimes/python/python_report.h"

#include <string.h>

#include "runtimes/runtime_report.h"

static void print_walks(FILE *out, const struct model *m, uint64_t with_python, uint64_t samples)
{
	uint64_t walks = model_named_stat_value(m, PYTHON_STAT_WALKS);
	uint64_t no_thread = model_named_stat_value(m, PYTHON_STAT_NO_THREAD);
	uint64_t failed = model_named_stat_value(m, PYTHON_STAT_READ_FAILED);
	uint64_t deep = model_named_stat_value(m, PYTHON_STAT_TOO_DEEP);

	fprintf(out, "  python          %llu interpreters walked; %llu of %llu samples (%.1f%%) "
		"with Python frames; %llu walks, %llu stopped early (%llu no thread state, "
		"%llu a read failed or a broken chain, %llu no room left); %llu frames unnamed (code object "
		"gone before it was read)\n",
		(unsigned long long)model_named_stat_value(m, PYTHON_STAT_INTERPRETERS),
		(unsigned long long)with_python, (unsigned long long)samples,
		samples ? 100.0 * with_python / samples : 0.0, (unsigned long long)walks,
		(unsigned long long)(no_thread + failed + deep), (unsigned long long)no_thread,
		(unsigned long long)failed, (unsigned long long)deep,
		(unsigned long long)model_named_stat_value(m, PYTHON_STAT_FRAMES_UNNAMED));
	if (model_named_stat_value(m, PYTHON_STAT_CODE_REPLACED))
		fprintf(out, "  python          %llu code object%s read again: another was made "
			"where one read before had been freed\n",
			(unsigned long long)model_named_stat_value(m, PYTHON_STAT_CODE_REPLACED),
			model_named_stat_value(m, PYTHON_STAT_CODE_REPLACED) == 1 ? "" : "s");
}

static void print_unsupported(FILE *out, const struct model *m)
{
	uint64_t n = model_named_stat_value(m, PYTHON_STAT_UNSUPPORTED);
	uint64_t v = model_named_stat_value(m, PYTHON_STAT_UNSUPPORTED_VERSION);

	if (!n)
		return;
	if (v)
		fprintf(out, "  python          %llu interpreters of a version without layouts, the "
			"last CPython %u.%u.%u: their frames stay native (3.11 and 3.12 are known "
			"from their headers, 3.13 on from _Py_DebugOffsets)\n",
			(unsigned long long)n, (unsigned)(v >> 24 & 0xff),
			(unsigned)(v >> 16 & 0xff), (unsigned)(v >> 8 & 0xff));
	else
		fprintf(out, "  python          %llu interpreters older than 3.11 (no Py_Version): "
			"their frames stay native\n", (unsigned long long)n);
}

/* Under the traced functions: what CPython 3.11's probes cannot see. */
static void print_trace_note(FILE *out, const struct model *m)
{
	for (size_t i = 0; i < m->traced.len; i++) {
		const struct model_traced_function *tf = &m->traced.items[i];

		if (tf->image < m->images.len && m->images.items[tf->image].path &&
		    !strcmp(m->images.items[tf->image].path, python_runtime.image)) {
			fprintf(out, "  Python calls: exact counts; CPython 3.11's probes give no entry "
				"for a call the interpreter runs inline (Python calling Python), so "
				"those calls have no time\n");
			return;
		}
	}
}

void python_summary(FILE *out, const struct model *m, enum runtime_summary_part part,
		    const void *rt)
{
	struct runtime_counts c;

	(void)rt;
	if (part == RUNTIME_SUMMARY_TRACE) {
		print_trace_note(out, m);
		return;
	}
	if (part != RUNTIME_SUMMARY_TABLES)
		print_unsupported(out, m);
	if (!model_named_stat_value(m, PYTHON_STAT_INTERPRETERS))
		return;
	runtime_counts_of(m, python_runtime.image, &c);
	if (part == RUNTIME_SUMMARY_TABLES)
		runtime_counts_print(out, m, &c, python_runtime.image,
				     "Top Python functions (self: the innermost Python frame):",
				     "function", 40);
	else
		print_walks(out, m, c.with_frames, c.samples);
	runtime_counts_free(&c);
}
