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

/* The programs of a frame kind's walks in a skeleton: of samples
 * (sample_X) and of switch-outs (offcpu_X). */
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

static struct bpf_program *offcpu_walk_of(struct sample_bpf *skel, unsigned int frame_kind)
{
	switch (frame_kind) {
	case COLLECTOR_FRAME_PYTHON:
		return skel->progs.offcpu_python;
	case COLLECTOR_FRAME_JAVA:
		return skel->progs.offcpu_java;
	default:
		return NULL;
	}
}

/* Which of frame_kind's walks this run reaches: of samples when the
 * sampler can hand over (none with dwarf, a stack copy each; the JVM's
 * only from the cfi walk), of switch-outs with --off-cpu (the JVM's from
 * the cfi walk too; CPython's after any walk). */
static void walks_reached(const struct bpf_session *s, unsigned int frame_kind, bool *sample,
			  bool *offcpu)
{
	bool walkable = frame_kind != COLLECTOR_FRAME_JAVA || s->cfg.cfi;

	*sample = walkable && !s->cfg.dwarf;
	*offcpu = walkable && s->cfg.off_cpu;
}

/* A program's fd put in a program array at frame_kind: 0, or -errno. */
static int walk_put(struct bpf_map *walks, unsigned int frame_kind, struct bpf_program *prog)
{
	int fd = bpf_program__fd(prog);

	return bpf_map_update_elem(bpf_map__fd(walks), &frame_kind, &fd, BPF_ANY) ? -errno : 0;
}

/*
 * The sampling object opened again with the walks of frame_kind alone to
 * load (of samples, of switch-outs: as the run reaches them): every map
 * but its configuration and the JVM's blob cache is the running object's
 * (the same definitions, so the programs read and write what on_sample
 * and on_switch_offcpu do); its configuration is a copy of the running
 * one.  The programs are put in runtime_walks and offcpu_runtime_walks.
 * 0, or a negative errno.
 */
static int load_walk(struct bpf_session *s, unsigned int frame_kind, struct sample_bpf **out)
{
	struct sample_bpf *skel = sample_bpf__open();
	struct bpf_program *prog, *walk, *offcpu_walk;
	struct bpf_map *map;
	bool sample, offcpu;
	int err;

	if (!skel)
		return -errno;
	memcpy(skel->rodata, s->skel->rodata, sizeof(*skel->rodata));
	skel->rodata->walk_python = true;
	bpf_object__for_each_map(map, skel->obj) {
		struct bpf_map *running;

		if (map == skel->maps.rodata)
			continue;
		/* the JVM's walks' own cache, shared by the two (one entry
		 * in another runtime's object, which never reads it) */
		if (map == skel->maps.hotspot_blob_facts) {
			if (frame_kind != COLLECTOR_FRAME_JAVA)
				bpf_map__set_max_entries(map, 1);
			continue;
		}
		running = bpf_object__find_map_by_name(s->skel->obj, bpf_map__name(map));
		if (!running) {
			err = -ENOENT;
			goto fail;
		}
		err = bpf_map__reuse_fd(map, bpf_map__fd(running));
		if (err)
			goto fail;
	}
	walks_reached(s, frame_kind, &sample, &offcpu);
	walk = sample ? walk_of(skel, frame_kind) : NULL;
	offcpu_walk = offcpu ? offcpu_walk_of(skel, frame_kind) : NULL;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == walk || prog == offcpu_walk);
	bpf_session_verifier_stats_begin(skel->obj, s->cfg.knobs.verifier_stats);
	err = sample_bpf__load(skel);
	bpf_session_verifier_stats_end(skel->obj);
	if (err)
		goto fail;
	if (walk && (err = walk_put(s->skel->maps.runtime_walks, frame_kind, walk)))
		goto fail;
	if (offcpu_walk &&
	    (err = walk_put(s->skel->maps.offcpu_runtime_walks, frame_kind, offcpu_walk)))
		goto fail;
	*out = skel;
	return 0;
fail:
	sample_bpf__destroy(skel);
	return err;
}

/* The walks of frame_kind, loaded at its first process: 0 once they are. */
static int walk_loaded(struct bpf_session *s, unsigned int frame_kind)
{
	const char *name;
	bool sample, offcpu;
	uint64_t t0;
	int err;

	if (frame_kind >= N_KINDS || !walk_of(s->skel, frame_kind))
		return -EINVAL;
	walks_reached(s, frame_kind, &sample, &offcpu);
	if (s->walks[frame_kind] || (!sample && !offcpu))
		return 0;
	if (s->walk_err[frame_kind])
		return s->walk_err[frame_kind];
	name = bpf_program__name(walk_of(s->skel, frame_kind)) + strlen("sample_");
	t0 = bpf_session_monotonic_ns();
	err = load_walk(s, frame_kind, &s->walks[frame_kind]);
	if (err) {
		s->walk_err[frame_kind] = err;
		fprintf(stderr, "collector: cannot load the walk of %s frames: %s (run with -v "
			"for the verifier's log); their stacks end at their first such frame\n",
			name, strerror(-err));
		return err;
	}
	if (s->cfg.verbose)
		fprintf(stderr, "collector: BPF: the walk of %s frames (%s%s%s) loaded (verified) "
			"in %.1f ms, at its first process\n", name, sample ? "samples" : "",
			sample && offcpu ? ", " : "", offcpu ? "switch-outs" : "",
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
