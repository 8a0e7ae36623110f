// SPDX-License-Identifier: GPL-2.0
/*
 * pprof writer: OUT/profile.pb.gz, the gzip-compressed
 * perftools.profiles.Profile protobuf that `go tool pprof`, pprof's web UI
 * and the continuous-profiling backends (Pyroscope, Parca, Cloud Profiler,
 * Datadog) ingest.  Encoded with protobuf-c (profile.proto beside this
 * file, compiled at build time) and compressed with zlib while it is
 * written.
 *
 * Sample types: samples/count and cpu/nanoseconds (the sampling period
 * each sample stands for), the default being cpu; period_type
 * cpu/nanoseconds with the nominal period.  A run of several events (-e,
 * --off-cpu) has samples/count (of every event) then one type per event,
 * named after it, in nanoseconds for clocks and count for the others
 * (page-faults/count, off-cpu/nanoseconds), the first event the default
 * and the period type; with --off-cpu and an on-CPU clock, wall/nanoseconds
 * after them, their sum (the wall-clock view).  With --trace, two more:
 * traced_calls/count and traced_time/nanoseconds (wall-clock inclusive
 * time), from the kernel's exact per-thread aggregates (model func_stats),
 * each traced function a sample of its own whose stack is that function
 * alone (the aggregates keep no caller); the CPU samples carry 0 there and
 * the traced ones 0 in the CPU columns, so no column mixes the two.
 *
 * One sample per (stack, thread), in the order each first occurred, with
 * the labels pid, tid, comm (the process's name) and thread_name (the
 * thread's).  Locations are the model's, id = model id + 1, at their
 * file-relative address (caller frames at the call instruction); a location
 * with inlined calls has one line per function, the innermost first and
 * the out-of-line function last, as pprof wants.  Functions carry the
 * display name, the linkage name (system_name), the source file and the
 * line of the definition.  One mapping per image, the main executable
 * first: its path, its build-id in hex, file-relative addresses (so the
 * counts of every process that maps the file are one), and the file offset
 * of the executable segment when a process mapping gives it.
 *
 * Samples are packed and compressed one at a time as they are made, and
 * the rest (mappings, locations, functions, strings) after them: protobuf
 * merges the occurrences of a repeated field, so the file is one Profile,
 * and memory does not grow with the number of distinct stacks.
 */
#include "formats/format.h"
#include "formats/frames.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/pprof_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"

#define PPROF_FILE "profile.pb.gz"

/* ---- samples -------------------------------------------------------------- */

/* pid, tid, comm, thread_name, then the process's resource attributes as
 * an OTLP push names them (formats/otlp/otlp.h): service.name,
 * container.id, host.name and the run's own attributes */
#define PPROF_MAX_LABELS (7 + 10)

struct thread_labels {
	Perftools__Profiles__Label label[PPROF_MAX_LABELS];
	Perftools__Profiles__Label *ptr[PPROF_MAX_LABELS];
	size_t n;
};

static void add_label(struct pprof_writer *w, struct thread_labels *tl, const char *key,
		      const char *str)
{
	Perftools__Profiles__Label *l = &tl->label[tl->n];

	/* a label with an empty string says nothing: leave it out */
	if (tl->n == PPROF_MAX_LABELS || !str || !*str)
		return;
	l->key = strtab_id(&w->strings, key);
	l->str = strtab_id(&w->strings, str);
	tl->ptr[tl->n++] = l;
}

static Perftools__Profiles__Label **labels_of(struct pprof_writer *w, uint32_t thread,
					      size_t *n)
{
	const struct model *m = w->m;
	struct thread_labels *tl;
	const struct model_thread *th;
	const struct model_process *p;

	*n = 0;
	if (thread >= m->threads.len)
		return NULL;
	tl = &w->labels[thread];
	if (!tl->n) {
		th = &m->threads.items[thread];
		p = th->process < m->processes.len ? &m->processes.items[th->process] : NULL;
		for (size_t i = 0; i < PPROF_MAX_LABELS; i++)
			perftools__profiles__label__init(&tl->label[i]);
		tl->label[0].key = strtab_id(&w->strings, "pid");
		tl->label[0].num = p ? p->pid : 0;
		tl->label[1].key = strtab_id(&w->strings, "tid");
		tl->label[1].num = th->tid;
		tl->ptr[0] = &tl->label[0];
		tl->ptr[1] = &tl->label[1];
		tl->n = 2;
		add_label(w, tl, "comm", p ? p->comm : "");
		add_label(w, tl, "thread_name", th->comm);
		if (p) {
			char buf[80];

			/* the string table keeps a copy of what buf says */
			add_label(w, tl, "service.name",
				  p->service_name ? p->service_name :
				  strtab_own(&w->strings, strdup(model_service_name(p, buf, sizeof(buf)))));
			add_label(w, tl, "container.id", p->container_id);
		}
		for (size_t i = 0; i < m->run.n_attributes; i++)
			add_label(w, tl, m->run.attributes[i].key, m->run.attributes[i].value);
		if (!model_run_attribute(m, "host.name"))
			add_label(w, tl, "host.name", m->run.hostname);
	}
	*n = tl->n;
	return tl->ptr;
}

/* Packs one Sample as a Profile holding only it (its field's bytes). */
static void put_sample(struct pprof_writer *w, const uint64_t *locs, size_t n_locs,
		       int64_t *values, uint32_t thread)
{
	Perftools__Profiles__Profile frag = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Sample *sp = &s;

	s.location_id = (uint64_t *)locs;
	s.n_location_id = n_locs;
	s.value = values;
	s.n_value = w->n_values;
	s.label = labels_of(w, thread, &s.n_label);
	frag.sample = &sp;
	frag.n_sample = 1;
	protobuf_c_message_pack_to_buffer(&frag.base, &w->sink.base);
}

struct sample_group {
	uint32_t stack, thread;
	int64_t values[SAMPLE_TYPES_MAX];
};

/* The CPU samples, one per (stack, thread) in order of first occurrence. */
static int put_cpu_samples(struct pprof_writer *w)
{
	const struct model *m = w->m;
	MODEL_VEC(struct sample_group) groups = { 0 };
	struct idmap index = { 0 };
	uint32_t max_frames = 0;
	uint64_t *locs;
	int err = 0;

	for (size_t i = 0; i < m->stacks.len; i++)
		if (m->stacks.items[i].n_frames > max_frames)
			max_frames = m->stacks.items[i].n_frames;
	locs = malloc((max_frames + 1) * sizeof(*locs));
	if (!locs)
		return -ENOMEM;
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		uint32_t stack = s->stack < m->stacks.len ? s->stack : MODEL_NONE;
		bool fresh;
		long id = frames_group_id(&index, (uint64_t)stack << 32 | s->thread,
					  (uint32_t)groups.len, &fresh);

		if (id < 0) {
			err = (int)id;
			goto out;
		}
		if (fresh) {
			struct sample_group *g = MODEL_VEC_PUSH(groups);

			g->stack = stack;
			g->thread = s->thread;
		}
		sample_types_add(m, &w->types, s, groups.items[id].values);
	}
	for (size_t i = 0; i < groups.len && !w->sink.err && !w->err; i++) {
		const struct sample_group *g = &groups.items[i];
		int64_t values[PPROF_MAX_VALUES] = { 0 };
		size_t n = 0;

		memcpy(values, g->values, sizeof(g->values));
		if (g->stack != MODEL_NONE) {
			const struct model_stack *st = &m->stacks.items[g->stack];
			const uint32_t *frames = model_stack_frames(m, st);

			for (uint32_t k = 0; k < st->n_frames; k++)
				if (frames[k] < m->locations.len)
					locs[n++] = (uint64_t)frames[k] + 1;
		}
		put_sample(w, locs, n, values, g->thread);
	}
out:
	idmap_free(&index);
	free(groups.items);
	free(locs);
	return err;
}

/* The traced functions' exact calls and wall-clock time, per thread. */
static void put_traced_samples(struct pprof_writer *w)
{
	const struct model *m = w->m;

	for (size_t i = 0; i < m->func_stats.len && !w->sink.err && !w->err; i++) {
		const struct model_func_stats *fs = &m->func_stats.items[i];
		int64_t values[PPROF_MAX_VALUES] = { 0 };
		uint64_t loc;

		values[w->types.n] = (int64_t)fs->calls;
		values[w->types.n + 1] = (int64_t)fs->total_ns;
		if (fs->func >= m->traced.len)
			continue;
		loc = w->traced_location[fs->func];
		put_sample(w, &loc, loc ? 1 : 0, values, fs->thread);
	}
}

/* ---- the writer ------------------------------------------------------------ */

static void writer_free(struct pprof_writer *w)
{
	strtab_free(&w->strings);
	free(w->labels);
	free(w->traced_location);
	free(w->mapping_of_image);
}

int pprof_write(const struct model *m, const struct export_options *opts)
{
	struct pprof_writer w = { .m = m };
	struct outfile f;
	int err;

	sample_types_of(m, &w.types);
	w.n_values = w.types.n + (m->func_stats.len ? 2 : 0);
	err = strtab_init(&w.strings, m);
	w.labels = calloc(m->threads.len + 1, sizeof(*w.labels));
	w.traced_location = calloc(m->traced.len + 1, sizeof(*w.traced_location));
	w.mapping_of_image = calloc(m->images.len + 1, sizeof(*w.mapping_of_image));
	if (!err && (!w.labels || !w.traced_location || !w.mapping_of_image))
		err = -ENOMEM;
	if (err) {
		writer_free(&w);
		fprintf(stderr, "collector: %s/%s: %s\n", opts->dir, PPROF_FILE, strerror(-err));
		return err;
	}
	pprof_plan_traced_locations(&w);
	err = outfile_open(&f, opts, PPROF_FILE);
	if (err) {
		writer_free(&w);
		return err;
	}
	err = pprof_sink_init(&w.sink, f.fp);
	if (!err)
		err = put_cpu_samples(&w);
	if (!err) {
		put_traced_samples(&w);
		err = pprof_put_tables(&w);
	}
	if (!err)
		err = w.err ? w.err : w.strings.err;
	err = pprof_sink_finish(&w.sink, err);
	writer_free(&w);
	if (err) {
		fprintf(stderr, "collector: %s/%s: %s\n", opts->dir, PPROF_FILE, strerror(-err));
		outfile_abort(&f);
		return err;
	}
	return outfile_commit(&f);
}

/* ---- collector dump ------------------------------------------------------- */

/* gzip's magic (the written file), or an uncompressed profile by name. */
bool pprof_recognize(const char *path, const unsigned char *head, size_t n)
{
	size_t len = strlen(path);

	if (n >= 2 && head[0] == 0x1f && head[1] == 0x8b)
		return true;
	return len > 3 && !strcmp(path + len - 3, ".pb");
}

int pprof_dump(const char *path, FILE *out, bool check)
{
	FORMAT_DUMP(struct pprof_profile, pprof_read_file, pprof_print, pprof_profile_free, path,
		    out, check);
}

const struct format pprof_format = {
	.name = "pprof",
	.needs = FORMAT_NEEDS_SAMPLES,
	.write = pprof_write,
	.recognize = pprof_recognize,
	.dump = pprof_dump,
};
