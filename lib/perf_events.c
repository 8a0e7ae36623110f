// SPDX-License-Identifier: GPL-2.0
/* The perf events -e can name, and the parser of its lists. */
#include "lib/perf_events.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct perf_event_def event_table[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false, true, "ns",
	  "CPU time, by a per-CPU timer" },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false, true, "ns",
	  "CPU time of the task, by the task's clock" },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false, false, "faults",
	  "page faults" },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, false, false,
	  "faults", "page faults served without I/O" },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false, false,
	  "faults", "page faults that needed I/O" },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false, false,
	  "switches", "context switches" },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false, false,
	  "migrations", "moves of a task to another CPU" },
	{ "alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, false, false,
	  "faults", "unaligned accesses fixed up by the kernel" },
	{ "emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, false, false,
	  "faults", "instructions emulated by the kernel" },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true, false, "cycles",
	  "CPU cycles" },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true, false,
	  "instructions", "instructions retired" },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, true, false,
	  "references", "last-level cache accesses" },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true, false, "misses",
	  "last-level cache misses" },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true, false,
	  "branches", "branch instructions retired" },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true, false,
	  "misses", "mispredicted branches" },
};

const struct perf_event_def *perf_events_table(size_t *n)
{
	*n = sizeof(event_table) / sizeof(event_table[0]);
	return event_table;
}

static void request_from_def(struct perf_event_request *r, const struct perf_event_def *d)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", d->name);
	r->type = d->type;
	r->config = d->config;
	r->hardware = d->hardware;
	r->clock = d->clock;
	r->unit = d->unit;
	r->description = d->description;
}

int perf_event_request_named(struct perf_event_request *r, const char *name, unsigned int freq)
{
	size_t n;
	const struct perf_event_def *t = perf_events_table(&n);

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(t[i].name, name)) {
			request_from_def(r, &t[i]);
			r->use_freq = true;
			r->freq = freq;
			return 0;
		}
	}
	return -ENOENT;
}

/* "rNNNN": a raw PMU event code, hexadecimal. */
static int parse_raw(struct perf_event_request *r, const char *name)
{
	char *end;
	uint64_t code;

	if (name[0] != 'r' || !name[1] || strlen(name) > 17)
		return -ENOENT;
	errno = 0;
	code = strtoull(name + 1, &end, 16);
	if (errno || *end)
		return -ENOENT;
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->type = PERF_TYPE_RAW;
	r->config = code;
	r->hardware = true;
	r->unit = "events";
	r->description = "raw PMU event";
	return 0;
}

static int parse_number(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end || !*out || *out > max ? -EINVAL : 0;
}

/* One EVENT[/PERIOD|@FREQ]. */
static int parse_one(char *tok, unsigned int default_freq, struct perf_event_request *r,
		     char *err, size_t err_len)
{
	char *sep = strpbrk(tok, "/@"), kind = sep ? *sep : 0;
	uint64_t v;

	if (sep)
		*sep = 0;
	if (!*tok) {
		snprintf(err, err_len, "an empty event name: write -e EVENT[/PERIOD|@FREQ]");
		return -EINVAL;
	}
	if (!strcmp(tok, PERF_EVENT_OFF_CPU)) {
		snprintf(err, err_len, "off-cpu is not a perf event: ask for it with --off-cpu");
		return -EINVAL;
	}
	if (perf_event_request_named(r, tok, default_freq) && parse_raw(r, tok)) {
		snprintf(err, err_len, "unknown event '%s': 'collector -e list' lists the events "
			 "of this machine", tok);
		return -EINVAL;
	}
	r->use_freq = true;
	r->freq = default_freq;
	if (kind == '/') {
		if (parse_number(sep + 1, UINT64_MAX >> 1, &v)) {
			snprintf(err, err_len, "event %s: the period '%s' is not a whole number of "
				 "at least 1", tok, sep + 1);
			return -EINVAL;
		}
		r->use_freq = false;
		r->period = v;
		r->freq = 0;
	} else if (kind == '@') {
		if (parse_number(sep + 1, UINT32_MAX, &v)) {
			snprintf(err, err_len, "event %s: the frequency '%s' is not a whole number "
				 "of Hz of at least 1", tok, sep + 1);
			return -EINVAL;
		}
		r->freq = v;
	}
	return 0;
}

int perf_events_parse(const char *arg, unsigned int default_freq, struct perf_event_request *out,
		      int *n, int max, char *err, size_t err_len)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int rc = 0, start = *n;

	if (!copy) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		if (*n >= max) {
			snprintf(err, err_len, "at most %d events in one run", max);
			rc = -EINVAL;
			break;
		}
		rc = parse_one(tok, default_freq, &out[*n], err, err_len);
		for (int i = 0; !rc && i < *n; i++) {
			if (!strcmp(out[i].name, out[*n].name)) {
				snprintf(err, err_len, "event %s is asked for twice", out[i].name);
				rc = -EINVAL;
			}
		}
		if (!rc)
			(*n)++;
	}
	free(copy);
	if (!rc && *n == start) {
		snprintf(err, err_len, "-e needs an event: 'collector -e list' lists them");
		rc = -EINVAL;
	}
	if (rc)
		*n = start;
	return rc;
}
