// SPDX-License-Identifier: GPL-2.0
/* CPython support wired to the sampling session (session/python_walk.h). */
#include "session/python_walk.h"

#include <stdlib.h>

#include "loader/python_procs.h"

static int set_proc(void *ctx, uint32_t tgid, const struct collector_python_proc *p)
{
	return python_procs_set(ctx, tgid, p);
}

static void forget_proc(void *ctx, uint32_t tgid)
{
	python_procs_forget(ctx, tgid);
}

struct python_runtime *python_walk_open(struct bpf_session *s)
{
	struct python_maps maps = { .ctx = s, .set = set_proc, .forget = forget_proc };

	/* bench/python.sh: the same run with native frames only, to weigh
	 * the Python walk */
	if (getenv("COLLECTOR_NO_PYTHON_WALK"))
		return python_runtime_new(NULL);
	return python_runtime_new(&maps);
}
