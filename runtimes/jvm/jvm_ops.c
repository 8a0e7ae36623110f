// SPDX-License-Identifier: GPL-2.0
/*
 * HotSpot behind the runtimes' interface (runtimes/runtime.h): for now a
 * JVM's JIT code is named by the perf map it is asked for through its
 * attach listener (jvm_attach.h), and the summary says what each JVM
 * answered.  Its frames have no kind of their own yet: they are JIT
 * frames of the process, named from the map.
 */
#include "runtimes/jvm/jvm_attach.h"

#include <stdlib.h>

#include "runtimes/runtime.h"

struct jvm_instance {
	struct jvm_perfmaps asked;
	bool no_ask;
	bool did_ask;             /* the summary speaks only of a run that asks */
};

static void *jvm_open(const struct runtime_env *env)
{
	struct jvm_instance *ji = calloc(1, sizeof(*ji));

	if (ji)
		ji->no_ask = env->no_ask;
	return ji;
}

static void jvm_close(void *inst)
{
	struct jvm_instance *ji = inst;

	if (!ji)
		return;
	jvm_perfmaps_free(&ji->asked);
	free(ji);
}

/* A HotSpot JVM whose JIT code is unnamed is asked for its perf map,
 * whatever its map names now: a map it dumped at an earlier request may
 * name code freed since. */
static bool jvm_owns_jit(const void *inst, pid_t pid)
{
	(void)inst;
	return jvm_is_hotspot(pid);
}

static void jvm_ask_names(void *inst, const pid_t *pids, size_t n)
{
	struct jvm_instance *ji = inst;

	if (ji->no_ask)
		return;
	ji->did_ask = true;
	if (n && jvm_perfmaps_refresh(&ji->asked, pids, n) != 0)
		fprintf(stderr, "collector: asking JVMs for perf maps: out of memory\n");
}

static void jvm_summary(FILE *out, const struct model *m, enum runtime_summary_part part,
			const void *inst)
{
	const struct jvm_instance *ji = inst;

	(void)m;
	if (part == RUNTIME_SUMMARY_WALKS && ji && ji->did_ask)
		jvm_perfmaps_print(out, &ji->asked);
}

const struct runtime_ops jvm_runtime = {
	.name = "jvm",
	.frame_type = "jvm",
	.open = jvm_open,
	.close = jvm_close,
	.owns_jit = jvm_owns_jit,
	.ask_names = jvm_ask_names,
	.summary = jvm_summary,
};
