// SPDX-License-Identifier: GPL-2.0
/* The runtimes' maps and walks of the sampling program
 * (loader/runtime_procs.h). */
#include "loader/runtime_procs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/collector.h"
#include "loader/bpf_session_internal.h"
#include "sample.skel.h"

#define N_KINDS (sizeof(((struct bpf_session *)0)->walks) / sizeof(((struct bpf_session *)0)->walks[0]))

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

/* The program of a frame kind's walk in a skeleton. */
static struct bpf_program *walk_of(struct sample_bpf *skel, unsigned int frame_kind)
{
	switch (frame_kind) {
	case COLLECTOR_FRAME_PYTHON:
		return skel->progs.sample_python;
	case COLLECTOR_FRAME_JAVA:
		return skel->progs.sample_java;
	default:
		return NULL;
	}
}

/*
 * The sampling object opened again with the walk of frame_kind alone to
 * load: every map but its configuration is the running object's (the
 * same definitions, so the program reads and writes what on_sample
 * does); its configuration is a copy of the running one with the
 * runtimes' walks in (walk_java, walk_python).  Returns the program's fd
 * put in runtime_walks, or a negative errno.
 */
static int load_walk(struct bpf_session *s, unsigned int frame_kind, struct sample_bpf **out)
{
	struct sample_bpf *skel = sample_bpf__open();
	struct bpf_program *prog, *walk;
	struct bpf_map *map;
	int err, fd;

	if (!skel)
		return -errno;
	memcpy(skel->rodata, s->skel->rodata, sizeof(*skel->rodata));
	skel->rodata->walk_java = true;
	skel->rodata->walk_python = true;
	bpf_object__for_each_map(map, skel->obj) {
		struct bpf_map *running;

		if (map == skel->maps.rodata)
			continue;
		running = bpf_object__find_map_by_name(s->skel->obj, bpf_map__name(map));
		if (!running) {
			err = -ENOENT;
			goto fail;
		}
		err = bpf_map__reuse_fd(map, bpf_map__fd(running));
		if (err)
			goto fail;
	}
	walk = walk_of(skel, frame_kind);
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == walk);
	bpf_session_verifier_stats_begin(skel->obj, s->cfg.knobs.verifier_stats);
	err = sample_bpf__load(skel);
	bpf_session_verifier_stats_end(skel->obj);
	if (err)
		goto fail;
	fd = bpf_program__fd(walk);
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.runtime_walks), &frame_kind, &fd,
				BPF_ANY) != 0) {
		err = -errno;
		goto fail;
	}
	*out = skel;
	return 0;
fail:
	sample_bpf__destroy(skel);
	return err;
}

/* The walk of frame_kind, loaded at its first process: 0 once it is. */
static int walk_loaded(struct bpf_session *s, unsigned int frame_kind)
{
	uint64_t t0;
	int err;

	if (frame_kind >= N_KINDS || !walk_of(s->skel, frame_kind))
		return -EINVAL;
	/* reached only by a walk that can hand over: the JVM's from the
	 * cfi walk, none with dwarf (a stack copy each) */
	if (s->walks[frame_kind] || s->cfg.dwarf ||
	    (frame_kind == COLLECTOR_FRAME_JAVA && !s->cfg.cfi))
		return 0;
	if (s->walk_err[frame_kind])
		return s->walk_err[frame_kind];
	t0 = bpf_session_monotonic_ns();
	err = load_walk(s, frame_kind, &s->walks[frame_kind]);
	if (err) {
		s->walk_err[frame_kind] = err;
		fprintf(stderr, "collector: cannot load the walk of %s frames: %s (run with -v "
			"for the verifier's log); their stacks end at their first such frame\n",
			bpf_program__name(walk_of(s->skel, frame_kind)) + strlen("sample_"),
			strerror(-err));
		return err;
	}
	if (s->cfg.verbose)
		fprintf(stderr, "collector: BPF: %s loaded (verified) in %.1f ms, at its first "
			"process\n", bpf_program__name(walk_of(s->skel, frame_kind)),
			(bpf_session_monotonic_ns() - t0) / 1e6);
	return 0;
}

void runtime_walks_preload(struct bpf_session *s, uint32_t kinds)
{
	for (unsigned int k = 0; s && k < N_KINDS; k++)
		if (kinds & 1u << k && walk_of(s->skel, k))
			walk_loaded(s, k);
}

int runtime_procs_set(struct bpf_session *s, unsigned int frame_kind, uint32_t tgid,
		      const void *entry, size_t size)
{
	struct bpf_map *map = map_of(s, frame_kind);
	int err;

	if (!map || bpf_map__value_size(map) != size)
		return -EINVAL;
	err = walk_loaded(s, frame_kind);
	if (err)
		return err;
	return bpf_map_update_elem(bpf_map__fd(map), &tgid, entry, BPF_ANY) ? -errno : 0;
}

void runtime_procs_forget(struct bpf_session *s, unsigned int frame_kind, uint32_t tgid)
{
	struct bpf_map *map = map_of(s, frame_kind);

	if (map)
		bpf_map_delete_elem(bpf_map__fd(map), &tgid);
}

void runtime_walks_close(struct bpf_session *s)
{
	for (size_t k = 0; k < N_KINDS; k++) {
		sample_bpf__destroy(s->walks[k]);
		s->walks[k] = NULL;
	}
}
