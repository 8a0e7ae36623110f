/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --otlp: the run's push to an OpenTelemetry backend.  Every interval of
 * an --interval run (else the whole run, once, at its end) is encoded as
 * one OTLP profiles request (formats/otlp/otlp.h) and handed to the pusher
 * (transport/pusher.h), whose thread compresses, spools and sends it: the
 * drain loop waits on no network, and what the backend has not accepted
 * waits on disk, also for the next run.
 *
 * A unit of its own with the model as its only input, so that the run's
 * session (session/session.c) calls it at each cut.
 */
#ifndef COLLECTOR_PUSH_H
#define COLLECTOR_PUSH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "session/options.h"
#include "model/model.h"

struct push;

/* The endpoint and its options from --otlp, --otlp-spool,
 * --otlp-spool-size and the OTEL_EXPORTER_OTLP_* variables, the spool
 * opened (what an earlier run left is sent first) and the pusher started.
 * 0, or an exit code (session/options.h) after a message saying what is wrong
 * and what to do. */
int push_open(struct push **out, const struct collector_options *o);
/* Encodes the model's samples (its window: one interval) and hands them
 * over.  0 or a negative errno (counted, said once). */
int push_model(struct push *p, const struct model *m);
/* Stops taking intervals and tries what is not yet accepted for at most
 * the exporter's timeout; what is left stays spooled. */
void push_finish(struct push *p);
/* The summary's lines: intervals, bytes before and after compression,
 * retries, refused, dropped, spooled; never a header's value. */
void push_print_summary(FILE *out, struct push *p);
/* The spool directory (made), for the run's spill files. */
const char *push_spool_dir(const struct push *p);
void push_free(struct push *p);

#endif /* COLLECTOR_PUSH_H */
