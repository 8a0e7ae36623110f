/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function tracing through uprobes, the kernel side: loading the tracing
 * programs beside the sampler (sharing its targets map and ring), attaching
 * an entry and a return probe on every function (the multi-uprobe link,
 * else single uprobes), calibrating the probe cost, ending the counting, and
 * reading the kernel's per-function aggregates and counters back.
 */
#ifndef COLLECTOR_UPROBES_H
#define COLLECTOR_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/collector.h"
#include "loader/bpf_session.h"

struct uprobes;

struct uprobes_config {
	bool stream_events;     /* every entry and exit through the ring */
	unsigned int n_args;    /* integer arguments recorded per entry */
	bool verbose;
	/* --trace py:GLOB (bpf/trace_python.bpf.h): the globs of the Python
	 * functions' names and files (NULL: no Python tracing; a NULL or ""
	 * file glob: any file), and the first id the matches take */
	const char *py_name_glob;
	const char *py_file_glob;
	uint32_t py_first_id;
};

/* The functions of one file to probe; a function's cookie is what its
 * records and aggregates carry (the model's traced-function id). */
struct uprobe_file {
	const char *path;
	const uint64_t *offsets;  /* file offsets of the functions' entries */
	const uint64_t *cookies;
	const char *const *names; /* for messages */
	size_t n;
};

/* Loads the tracing programs into the session's targets map and ring.
 * 0 or a negative errno, after a message. */
int uprobes_open(struct uprobes **out, struct bpf_session *session,
		 const struct uprobes_config *cfg);
/* Attaches an entry and a return probe on every function of files[], in the
 * address spaces of pids[0..n_pids) (every process when n_pids is 0).
 * Functions the kernel cannot probe are skipped and listed; *skipped counts
 * them.  0, or a negative errno after a message (-ENOTSUP: none could be
 * probed). */
int uprobes_attach(struct uprobes *u, const struct uprobe_file *files, size_t n_files,
		   const pid_t *pids, int n_pids, size_t *skipped);
/* --trace py: attaches to the USDT probes python:function__entry and
 * function__return of the interpreter (an executable or libpython), in
 * pids[0..n_pids) (every process when n_pids is 0).  0, or a negative
 * errno after a message. */
int uprobes_attach_python(struct uprobes *u, const char *interpreter, const pid_t *pids,
			  int n_pids);
/* After the run: calls fn for each Python function that took an id, the
 * k-th with id py_first_id + k (a zeroed key: an id given up in a race).
 * Returns how many. */
int uprobes_python_functions(struct uprobes *u,
			     void (*fn)(void *ctx, uint32_t k, const struct collector_py_key *key),
			     void *ctx);
/* Seconds the attach took. */
double uprobes_attach_seconds(const struct uprobes *u);
/* Measures the probes' cost per call on a function of the collector's own;
 * returns ns per call (entry + return), or a negative errno.  Its records
 * carry COLLECTOR_CALIBRATION_COOKIE and the collector's own tgid. */
double uprobes_calibrate(struct uprobes *u);
/* Ends the counting: from now on the probes neither count nor stream
 * calls, so a target that runs on (-p, -a) stops filling the ring and the
 * last drain ends.  Calls in flight are left out whole, as at the attach. */
void uprobes_stop(struct uprobes *u);
/* The tracing counters, summed over CPUs. */
int uprobes_counters(struct uprobes *u, uint64_t out[COLLECTOR_TCNT_MAX]);
/* Calls fn for every (thread, function) aggregate: those the threads still
 * alive keep in their own storage, then the merged map.  0, or a negative
 * errno when the live threads' aggregates could not be read (after a
 * message; the merged ones are reported all the same). */
int uprobes_read_stats(struct uprobes *u,
		       void (*fn)(void *ctx, const struct collector_func_key *key,
				  const struct collector_func_stats *fs),
		       void *ctx);
void uprobes_close(struct uprobes *u);

#endif /* COLLECTOR_UPROBES_H */
