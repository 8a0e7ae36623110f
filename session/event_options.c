// SPDX-License-Identifier: GPL-2.0
/* -e on the command line's side: defaults, -e list, the check before load. */
#include "session/event_options.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "loader/bpf_session.h"

void events_fill_defaults(struct collector_options *o)
{
	if (!o->n_events) {
		perf_event_request_named(&o->events[0], "cpu-clock", o->freq);
		o->n_events = 1;
	}
	for (int i = 0; i < o->n_events; i++)
		if (o->events[i].use_freq && !o->events[i].freq)
			o->events[i].freq = o->freq;
}

/* Why an event cannot be opened here, in a few words. */
static const char *unavailable_reason(const struct perf_event_request *e, int err)
{
	if (e->hardware && (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV))
		return "no hardware performance counters";
	return strerror(-err);
}

int events_list(FILE *out)
{
	struct perf_event_request r;
	size_t n;
	const struct perf_event_def *t = perf_events_table(&n);

	fprintf(out, "%-18s %-12s %-12s %s\n", "EVENT", "UNIT", "HERE", "WHAT IT COUNTS");
	for (size_t i = 0; i < n; i++) {
		int err;

		perf_event_request_named(&r, t[i].name, 999);
		err = bpf_session_probe_event(&r);
		fprintf(out, "%-18s %-12s %-12s %s%s%s\n", t[i].name, t[i].unit,
			err ? "unavailable" : "available", t[i].description, err ? ": " : "",
			err ? unavailable_reason(&r, err) : "");
	}
	/* raw code 0xc0: instructions retired on x86, as good a probe as any */
	r = (struct perf_event_request){ .type = PERF_TYPE_RAW, .config = 0xc0, .hardware = true,
					 .use_freq = true, .freq = 999 };
	fprintf(out, "%-18s %-12s %-12s %s\n", "rNNNN", "events",
		bpf_session_probe_event(&r) ? "unavailable" : "available",
		"raw PMU event code NNNN (hexadecimal), as the CPU's manual gives it");
	fprintf(out, "\nEach as EVENT (at -F), EVENT/PERIOD (every PERIOD units) or EVENT@FREQ "
		"(FREQ times a second); --off-cpu adds the off-cpu event (ns blocked).\n");
	return 0;
}

int events_check(const struct collector_options *o)
{
	for (int i = 0; i < o->n_events; i++) {
		const struct perf_event_request *e = &o->events[i];
		int err = bpf_session_probe_event(e);

		if (!err)
			continue;
		if (e->hardware && (err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV))
			fprintf(stderr, "collector: this machine has no hardware performance "
				"counters: %s is not available; software events are "
				"('collector -e list')\n", e->name);
		else
			fprintf(stderr, "collector: cannot open the %s event here: %s "
				"('collector -e list' lists what this machine supports)\n", e->name,
				strerror(-err));
		return EXIT_BPF;
	}
	return 0;
}
