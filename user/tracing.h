/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function tracing through uprobes: resolving --trace BIN:PATTERN into
 * functions, attaching entry and return probes (the multi-uprobe link,
 * else single uprobes), calibrating the probe cost, and reading the
 * kernel's per-function aggregates into the model.
 */
#ifndef COLLECTOR_TRACING_H
#define COLLECTOR_TRACING_H

#include <stdbool.h>
#include <sys/types.h>

#include "bpf_session.h"
#include "model.h"
#include "symbolize.h"

struct tracing;

struct tracing_config {
	char **specs;           /* "BIN:PATTERN" */
	int n_specs;
	const pid_t *pids;      /* -p targets, to resolve library names */
	int n_pids;
	char *const *command;   /* -- COMMAND, to resolve names, or NULL */
	bool stream_events;     /* a trace format was asked for */
	unsigned int n_args;
	bool system_wide;
	bool verbose;
};

/*
 * Resolves every spec into traced functions of the model (model.traced,
 * whose ids are the probes' cookies).  Returns 0, or a negative errno after
 * a message naming the spec (a missing binary, a pattern that matches no
 * function, a stripped binary).
 */
int tracing_resolve(struct model *m, struct symbolizer *sym, const struct tracing_config *cfg);

/* Loads the tracing programs into the sampler's targets map and ring. */
int tracing_open(struct tracing **out, struct bpf_session *session, struct model *m,
		 const struct tracing_config *cfg);
/* Attaches an entry and a return probe on every traced function, in the
 * address spaces of pids[0..n_pids) (every process when n_pids is 0).
 * Functions the kernel cannot probe are skipped and listed. */
int tracing_attach(struct tracing *t, const pid_t *pids, int n_pids);
/* Measures the probes' cost per call on a function of the collector's own;
 * returns ns per call (entry + return), or a negative errno. */
double tracing_calibrate(struct tracing *t);
/* Ends the counting: from now on the probes neither count nor stream
 * calls, so a target that runs on (-p, -a) stops filling the ring and the
 * last drain ends.  Calls in flight are left out whole, as at the attach. */
void tracing_stop(struct tracing *t);
/* Reads the aggregates and counters into the model (after the drain). */
int tracing_collect(struct tracing *t);
/* Seconds the attach took. */
double tracing_attach_seconds(const struct tracing *t);
void tracing_close(struct tracing *t);

#endif /* COLLECTOR_TRACING_H */
