/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pprof writer's parts (pprof.c: samples; pprof_tables.c: the gzip
 * sink, mappings, locations, functions and strings) and the reader's
 * (pprof_reader.c), with what they share: the protobuf-c types generated
 * from profile.proto.
 */
#ifndef COLLECTOR_PPROF_INTERNAL_H
#define COLLECTOR_PPROF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <zlib.h>

#include "formats/frames.h"
#include "formats/sample_types.h"
#include "formats/strtab.h"
#include "formats/pprof/pprof_reader.h"
#include "formats/pprof/profile.pb-c.h"
#include "model/model.h"

/* A protobuf-c output buffer that gzips what is appended into a FILE. */
struct pprof_sink {
	ProtobufCBuffer base;
	z_stream z;
	FILE *fp;
	int err;                 /* the first error: -EIO, -ENOMEM */
	bool started;
	size_t n_in;                /* bytes staged in in[] */
	unsigned char in[1 << 14];  /* protobuf-c's small appends, deflated together */
	unsigned char out[1 << 16];
};

int pprof_sink_init(struct pprof_sink *s, FILE *fp);
/* Ends the gzip stream (unless err is set already) and frees zlib's state.
 * Returns err, or the sink's first error. */
int pprof_sink_finish(struct pprof_sink *s, int err);

struct thread_labels;

struct pprof_writer {
	const struct model *m;
	struct strtab strings;
	struct thread_labels *labels;    /* per model thread, made when first used */
	uint64_t *traced_location;       /* per traced function: location id, 0 */
	uint64_t *mapping_of_image;      /* per image: mapping id, 0 when none */
	size_t n_extra_locations;        /* traced entries the model has no location for */
	struct sample_types types;       /* the sampled columns */
	size_t n_values;                 /* types.n, and 2 with traced calls */
	int err;
	struct pprof_sink sink;
};

#define PPROF_MAX_VALUES (SAMPLE_TYPES_MAX + 2)

/* Gives each traced function a location: the model's at its entry, or a
 * new one after the model's. */
void pprof_plan_traced_locations(struct pprof_writer *w);
/* Packs everything but the samples: sample types, mappings, locations,
 * functions, times, comments and the string table (last: every other part
 * adds to it). */
int pprof_put_tables(struct pprof_writer *w);

#endif /* COLLECTOR_PPROF_INTERNAL_H */
