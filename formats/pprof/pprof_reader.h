/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of pprof profiles: a perftools.profiles.Profile protobuf, gzip-
 * compressed (as written) or not, unpacked by protobuf-c into the types
 * generated from profile.proto, then checked for what pprof's own reader
 * (Profile.CheckValid) and its users rely on:
 *   - string_table[0] is "", and every string index is inside the table;
 *   - mapping, location and function ids are nonzero and unique;
 *   - a location's mapping (when not 0) and every line's function exist;
 *   - a sample has one value per sample type and only known locations;
 *   - a label has a key, and a string or a number, not both;
 *   - default_sample_type, when set, names one of the sample types.
 * A gzip stream that does not end, or that inflates past 1 GiB, is
 * rejected.  An error of the message's content has no offset (protobuf-c
 * reports no position).
 */
#ifndef COLLECTOR_PPROF_READER_H
#define COLLECTOR_PPROF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/pprof/profile.pb-c.h"
#include "formats/infile.h"
#include "lib/idmap.h"

#define PPROF_MAX_INFLATED (1ULL << 30)

struct pprof_profile {
	Perftools__Profiles__Profile *msg;
	struct idmap mapping_index;    /* id -> index in msg->mapping */
	struct idmap location_index;   /* id -> index in msg->location */
	struct idmap function_index;   /* id -> index in msg->function */
	bool compressed;
	size_t packed_size;            /* bytes of the protobuf message */
};

/* Parses data[0..n).  Returns 0, -ENOMEM, or -EINVAL with err filled. */
int pprof_parse(const unsigned char *data, size_t n, struct pprof_profile *p,
		struct format_error *err);
int pprof_read_file(const char *path, struct pprof_profile *p, struct format_error *err);
void pprof_profile_free(struct pprof_profile *p);

/* The string at index i (the reader checked every index it hands out). */
static inline const char *pprof_string(const struct pprof_profile *p, int64_t i)
{
	return p->msg->string_table[i];
}

/* Look-ups by id: the message, or NULL. */
const Perftools__Profiles__Location *pprof_location(const struct pprof_profile *p, uint64_t id);
const Perftools__Profiles__Function *pprof_function(const struct pprof_profile *p, uint64_t id);
const Perftools__Profiles__Mapping *pprof_mapping(const struct pprof_profile *p, uint64_t id);

/* The profile as text: header, sample types, mappings, then each sample
 * with its values, labels and stack (the leaf first, inlined lines as
 * "inlined" under their location). */
void pprof_print(const struct pprof_profile *p, FILE *out);

#endif /* COLLECTOR_PPROF_READER_H */
