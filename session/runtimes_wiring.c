// SPDX-License-Identifier: GPL-2.0
/* The run's language runtimes, wired to the loader (runtimes_wiring.h). */
#include "session/runtimes_wiring.h"

#include "loader/runtime_procs.h"

static int set_proc(void *ctx, unsigned int frame_kind, uint32_t tgid, const void *entry,
		    size_t size)
{
	return runtime_procs_set(ctx, frame_kind, tgid, entry, size);
}

static void forget_proc(void *ctx, unsigned int frame_kind, uint32_t tgid)
{
	runtime_procs_forget(ctx, frame_kind, tgid);
}

int session_runtimes_open(struct runtimes *rs, struct bpf_session *s, struct model *m,
			  bool no_ask, uint32_t walk_kinds)
{
	struct runtime_bpf bpf = { .ctx = s, .set = set_proc, .forget = forget_proc };
	struct runtime_env env = { .bpf = &bpf, .m = m, .no_ask = no_ask };

	env.unwalked_kinds = ~walk_kinds;
	if (!s)
		env.bpf = NULL;
	return runtimes_open(rs, runtime_registry, &env);
}
