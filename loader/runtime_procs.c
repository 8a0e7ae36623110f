// SPDX-License-Identifier: GPL-2.0
/* The runtimes' maps of the sampling program (loader/runtime_procs.h). */
#include "loader/runtime_procs.h"

#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/collector.h"
#include "loader/bpf_session_internal.h"
#include "sample.skel.h"

/* The map of a frame kind's runtime. */
static struct bpf_map *map_of(struct bpf_session *s, unsigned int frame_kind)
{
	if (!s || !s->skel)
		return NULL;
	switch (frame_kind) {
	case COLLECTOR_FRAME_PYTHON:
		return s->skel->maps.python_procs;
	case COLLECTOR_FRAME_JAVA:
		return s->skel->maps.hotspot_procs;
	default:
		return NULL;
	}
}

int runtime_procs_set(struct bpf_session *s, unsigned int frame_kind, uint32_t tgid,
		      const void *entry, size_t size)
{
	struct bpf_map *map = map_of(s, frame_kind);

	if (!map || bpf_map__value_size(map) != size)
		return -EINVAL;
	return bpf_map_update_elem(bpf_map__fd(map), &tgid, entry, BPF_ANY) ? -errno : 0;
}

void runtime_procs_forget(struct bpf_session *s, unsigned int frame_kind, uint32_t tgid)
{
	struct bpf_map *map = map_of(s, frame_kind);

	if (map)
		bpf_map_delete_elem(bpf_map__fd(map), &tgid);
}
