// SPDX-License-Identifier: GPL-2.0
/* The python_procs map of the sampling program (loader/python_procs.h). */
#include "loader/python_procs.h"

#include <errno.h>
#include <bpf/bpf.h>

#include "loader/bpf_session_internal.h"
#include "sample.skel.h"

int python_procs_set(struct bpf_session *s, uint32_t tgid, const struct collector_python_proc *p)
{
	if (!s || !s->skel)
		return -EINVAL;
	return bpf_map_update_elem(bpf_map__fd(s->skel->maps.python_procs), &tgid, p, BPF_ANY)
		       ? -errno
		       : 0;
}

void python_procs_forget(struct bpf_session *s, uint32_t tgid)
{
	if (s && s->skel)
		bpf_map_delete_elem(bpf_map__fd(s->skel->maps.python_procs), &tgid);
}
