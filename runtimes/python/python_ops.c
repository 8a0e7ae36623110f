// SPDX-License-Identifier: GPL-2.0
/*
 * CPython behind the runtimes' interface (runtimes/runtime.h): the table
 * the registry lists, over python.h, and the statistics the model keeps
 * of it ("python_*").
 */
#include "runtimes/python/python.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lib/procmaps.h"
#include "runtimes/python/python_report.h"

#define EVALUATOR "_PyEval_EvalFrameDefault"

struct python_instance {
	struct python_runtime *rt;
	struct model *m;
};

static void *py_open(const struct runtime_env *env)
{
	struct python_instance *pi = calloc(1, sizeof(*pi));

	if (!pi)
		return NULL;
	pi->rt = python_runtime_new(env->bpf);
	pi->m = env->m;
	if (!pi->rt) {
		free(pi);
		return NULL;
	}
	return pi;
}

static void py_close(void *inst)
{
	struct python_instance *pi = inst;

	if (!pi)
		return;
	python_runtime_free(pi->rt);
	free(pi);
}

static int py_image(void *inst, const struct proc_ref *p, const struct runtime_image *img)
{
	struct python_instance *pi = inst;
	int err = python_runtime_image(pi->rt, p, img);

	if (!pi->m)
		return err;
	if (err == -ENOTSUP) {
		struct python_runtime_stats st;

		/* the summary names the last version met and says why */
		python_runtime_stats(pi->rt, &st);
		model_named_stat_add(pi->m, PYTHON_STAT_UNSUPPORTED, 1);
		model_named_stat_add(pi->m, PYTHON_STAT_UNSUPPORTED_VERSION,
				     st.last_unsupported_version -
					     model_named_stat_value(pi->m, PYTHON_STAT_UNSUPPORTED_VERSION));
	} else if (err > 0) {
		model_named_stat_add(pi->m, PYTHON_STAT_INTERPRETERS, 1);
	}
	return err;
}

static bool py_maps_later(void *inst, const char *exe)
{
	return python_runtime_maps_later(((struct python_instance *)inst)->rt, exe);
}

static bool py_may_be(void *inst, const char *exe)
{
	return python_runtime_may_be(((struct python_instance *)inst)->rt, exe);
}

static bool py_known(const void *inst, const struct proc_ref *p)
{
	return python_runtime_known(((const struct python_instance *)inst)->rt, p);
}

static bool py_has(const void *inst, const struct proc_ref *p)
{
	return python_runtime_has(((const struct python_instance *)inst)->rt, p);
}

static size_t py_live(const void *inst)
{
	return python_runtime_live(((const struct python_instance *)inst)->rt);
}

static void py_forget(void *inst, const struct proc_ref *p)
{
	python_runtime_forget(((struct python_instance *)inst)->rt, p);
}

static void py_drop(void *inst, uint32_t word)
{
	python_runtime_drop(((struct python_instance *)inst)->rt, word);
}

static int py_name(void *inst, const struct proc_ref *p, uint64_t frame,
		   struct runtime_frame *out,
		   uint32_t max)
{
	struct python_instance *pi = inst;
	struct python_frame_info info;
	uint64_t replaced = python_runtime_code_replaced(pi->rt);
	int err = python_runtime_frame(pi->rt, p, frame, &info);

	if (pi->m && python_runtime_code_replaced(pi->rt) > replaced)
		model_named_stat_add(pi->m, PYTHON_STAT_CODE_REPLACED,
				     python_runtime_code_replaced(pi->rt) - replaced);
	if (err)
		return err;
	if (!max)
		return -EINVAL;
	out->function = info.qualname;
	out->file = info.filename;
	out->first_line = info.first_line;
	out->line = info.line;
	return 1;
}

static void py_notice(void *inst, const struct proc_ref *p, uint64_t frame)
{
	struct runtime_frame f;

	if (frame != COLLECTOR_PY_EMPTY_CALL)
		py_name(inst, p, frame, &f, 1);
}

/* An unnamed frame is kept by its code object's address. */
static uint64_t py_unnamed_key(uint64_t frame)
{
	return COLLECTOR_PY_CODE(frame);
}

/* A C call of the evaluator: by address (its cold part has no name in a
 * stripped interpreter), else by name (an interpreter the runtime found
 * no ranges for; NAME.cold in one that keeps its symbols). */
static bool py_replaces(const void *inst, const struct proc_ref *p, uint64_t addr,
			const char *name)
{
	size_t n = sizeof(EVALUATOR) - 1;

	if (python_runtime_in_evaluator(((const struct python_instance *)inst)->rt, p, addr))
		return true;
	return name && !strncmp(name, EVALUATOR, n) && (!name[n] || name[n] == '.');
}

static void py_counters(struct model *m, const uint64_t *c)
{
	if (!c[COLLECTOR_CNT_PY_WALKS])
		return;
	model_named_stat_add(m, PYTHON_STAT_WALKS, c[COLLECTOR_CNT_PY_WALKS]);
	model_named_stat_add(m, PYTHON_STAT_NO_THREAD, c[COLLECTOR_CNT_PY_NO_THREAD]);
	model_named_stat_add(m, PYTHON_STAT_READ_FAILED, c[COLLECTOR_CNT_PY_READ_FAILED]);
	model_named_stat_add(m, PYTHON_STAT_TOO_DEEP, c[COLLECTOR_CNT_PY_TOO_DEEP]);
}

static bool is_cpython_file(const char *path, void *ctx)
{
	const char *base = strrchr(path, '/');

	(void)ctx;
	base = base ? base + 1 : path;
	return strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0;
}

/* CPython now: an executable mapping of python* or libpython*.  A -p
 * target that is one has its walk loaded at the start, before sampling
 * (its entry may be written after a few samples, which would otherwise
 * wait for the walk's load: under ASan test_stacks's one sample of a
 * running thread had no Python frame); one that starts an interpreter
 * later has it loaded then. */
static bool py_present(pid_t pid)
{
	char path[PATH_MAX];

	return procmaps_find_exec_file(pid, is_cpython_file, NULL, path, sizeof(path)) == 0;
}

const struct runtime_ops python_runtime = {
	.name = "python",
	.image = "[python]",
	.frame_type = "cpython",
	.frame_kind = COLLECTOR_FRAME_PYTHON,
	.splices = true,
	.unnamed_stat = PYTHON_STAT_FRAMES_UNNAMED,
	.present = py_present,
	.open = py_open,
	.close = py_close,
	.mapped = py_image,
	.maps_later = py_maps_later,
	.may_be = py_may_be,
	.known = py_known,
	.has = py_has,
	.live = py_live,
	.forget = py_forget,
	.drop = py_drop,
	.frame_name = py_name,
	.notice = py_notice,
	.unnamed_key = py_unnamed_key,
	.replaces = py_replaces,
	.counters = py_counters,
	.summary = python_summary,
};
