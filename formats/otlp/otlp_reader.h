/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of OTLP profiles: an ExportProfilesServiceRequest (what
 * collector writes as profiles.otlp.pb and pushes; also a ProfilesData,
 * whose fields have the same numbers), gzip-compressed or not, unpacked by
 * protobuf-c, then checked for what a backend relies on:
 *   - every table of the dictionary has its entry 0 (the empty value) when
 *     anything refers to it, and string_table[0] is "";
 *   - every index (strings, stacks, locations, mappings, functions,
 *     attributes) is inside its table;
 *   - a profile has a sample type, and each sample one value (or as many
 *     as its timestamps);
 *   - a resource attribute has a key.
 * Errors of the content have no offset (protobuf-c reports no position).
 */
#ifndef COLLECTOR_OTLP_READER_H
#define COLLECTOR_OTLP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/infile.h"
#include "formats/otlp/otlp_pb.h"

#define OTLP_MAX_INFLATED (1ULL << 30)

struct otlp_request {
	otlp_request_t *msg;
	bool compressed;
	size_t packed_size;          /* bytes of the protobuf message */
};

/* Parses data[0..n).  Returns 0, -ENOMEM, or -EINVAL with err filled. */
int otlp_parse(const unsigned char *data, size_t n, struct otlp_request *r,
	       struct format_error *err);
int otlp_read_file(const char *path, struct otlp_request *r, struct format_error *err);
void otlp_request_free(struct otlp_request *r);

/* The dictionary's string i (checked by the reader). */
static inline const char *otlp_string(const struct otlp_request *r, int32_t i)
{
	return r->msg->dictionary->string_table[i];
}

/* A resource attribute's string value, or NULL. */
const char *otlp_resource_string(const otlp_resource_profiles_t *rp, const char *key);

/* The request as text: per resource its attributes, then each profile's
 * sample type, window and samples (values, thread, the stack leaf first
 * with each location's lines and frame type). */
void otlp_print(const struct otlp_request *r, FILE *out);

#endif /* COLLECTOR_OTLP_READER_H */
