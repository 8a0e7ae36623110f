/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OTLP profiles: the model's samples as one OpenTelemetry
 * ExportProfilesServiceRequest (opentelemetry-proto 1.11, profiles
 * v1development: proto/ beside this file), the message an OTLP exporter
 * POSTs to a collector's /v1development/profiles (transport/pusher.h
 * sends it) and, as a format, OUT/profiles.otlp.pb (the same bytes, not
 * compressed: `protoc --decode` reads it).
 *
 * What a backend needs to tell machines, services and programs apart:
 *   - one ResourceProfiles per process with samples (in model order), its
 *     resource saying service.name (the process's own OTEL_SERVICE_NAME,
 *     else "unknown_service:" and the executable's name, as the SDKs
 *     say), process.pid, process.executable.name and .path,
 *     process.command_line, container.id (from its cgroup), then the
 *     collector's own OTEL_RESOURCE_ATTRIBUTES (the run's attributes),
 *     none of which replaces a key set before it, then host.name unless
 *     they said it;
 *   - one ScopeProfiles (scope "collector" and its version) holding one
 *     Profile per sample type with a value in that process
 *     (formats/sample_types.h: samples, cpu or each event, wall), each
 *     with the interval's window and the first event's period;
 *   - one Sample per (stack, thread), attributes thread.id and thread.name.
 * Everything else is in the request's one ProfilesDictionary (entry 0 of
 * each table the empty value), holding only what this request uses:
 * stacks (location indices leaf first), locations (file-relative address,
 * its image's mapping, lines innermost inlined function first and the
 * out-of-line function last, as pprof's, and the attribute
 * profile.frame.type: native, kernel, cpython, jvm, v8js), functions
 * (display and linkage names, file, line), mappings (the image's path and
 * text range, file offset, process.executable.build_id.gnu) and the
 * attributes and strings.  Every frame is named here: a backend needs no
 * binary.
 */
#ifndef COLLECTOR_OTLP_H
#define COLLECTOR_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "formats/format.h"

#define OTLP_FILE "profiles.otlp.pb"

extern const struct format otlp_format;

/* Encodes the model's samples into a new buffer *out of *len bytes (to
 * free).  0 or -ENOMEM.  A model without samples makes a request with no
 * resource. */
int otlp_encode(const struct model *m, uint8_t **out, size_t *len);

int otlp_write(const struct model *m, const struct export_options *opts);
bool otlp_recognize(const char *path, const unsigned char *head, size_t n);
int otlp_dump(const char *path, FILE *out, bool check);

#endif /* COLLECTOR_OTLP_H */
