/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf events collector can sample (-e), in one table: their names,
 * perf_event_attr type and config, unit and whether they need a PMU; and
 * the one parser of -e's EVENT[/PERIOD|@FREQ][,EVENT...] lists.
 *
 * A sample of an event stands for its period in the event's unit: ns for
 * the clocks (cpu-clock, task-clock, and off-cpu, which is no perf event
 * but the --off-cpu switch time), events for the counts.  The parser only
 * checks names and numbers; whether this machine can open an event is the
 * loader's question (loader/bpf_session.h: bpf_session_probe_event()).
 */
#ifndef COLLECTOR_PERF_EVENTS_H
#define COLLECTOR_PERF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERF_EVENTS_MAX 8          /* events of one run, off-cpu included */
#define PERF_EVENT_NAME_LEN 32
#define PERF_EVENT_OFF_CPU "off-cpu"

struct perf_event_def {
	const char *name;
	uint32_t type;          /* PERF_TYPE_SOFTWARE, PERF_TYPE_HARDWARE, PERF_TYPE_RAW */
	uint64_t config;
	bool hardware;          /* needs a PMU */
	bool clock;             /* counts ns: its period is a time */
	const char *unit;       /* "ns", "faults", "cycles", ... */
	const char *description;
};

/* One event of a run, as -e asked for it. */
struct perf_event_request {
	char name[PERF_EVENT_NAME_LEN];
	uint32_t type;
	uint64_t config;
	bool hardware;
	bool clock;
	const char *unit;       /* static */
	const char *description; /* static */
	bool use_freq;          /* true: freq samples a second; false: every period */
	uint64_t period;
	uint32_t freq;
};

/* The table of named events (software first, then hardware); n set to its
 * length.  Raw events (rNNNN, hexadecimal) are not in it. */
const struct perf_event_def *perf_events_table(size_t *n);

/* Parses one -e argument, appending its events to out[*n..max).  An event
 * without /PERIOD or @FREQ is sampled at default_freq a second (0: left for
 * the caller to fill, as -F may come after -e).  Returns 0,
 * or -EINVAL with a message (what is wrong, what to do) in err. */
int perf_events_parse(const char *arg, unsigned int default_freq, struct perf_event_request *out,
		      int *n, int max, char *err, size_t err_len);

/* Fills r with a named event sampled at freq a second (the default run:
 * cpu-clock at -F).  Returns 0 or -ENOENT for a name not in the table. */
int perf_event_request_named(struct perf_event_request *r, const char *name, unsigned int freq);

#endif /* COLLECTOR_PERF_EVENTS_H */
