// SPDX-License-Identifier: GPL-2.0
/* The run's own facts into the model. */
#include "decode/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lib/proc.h"

uint64_t run_clock_ns(bool monotonic)
{
	struct timespec ts;

	clock_gettime(monotonic ? CLOCK_MONOTONIC : CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Epoch = ktime + offset, measured with the tightest of a few brackets. */
static int64_t measure_ktime_offset(void)
{
	uint64_t best_gap = UINT64_MAX;
	int64_t offset = 0;

	for (int i = 0; i < 5; i++) {
		uint64_t r1 = run_clock_ns(false), m = run_clock_ns(true);
		uint64_t r2 = run_clock_ns(false);

		if (r2 - r1 < best_gap) {
			best_gap = r2 - r1;
			offset = (int64_t)(r1 + (r2 - r1) / 2) - (int64_t)m;
		}
	}
	return offset;
}

void decode_run_setup(struct model *m, const struct run_setup *s)
{
	m->run.ktime_to_epoch_ns = measure_ktime_offset();
	m->run.system_wide = s->system_wide;
	m->run.freq_hz = s->freq_hz;
	m->run.period_ns = 1000000000ULL / s->freq_hz;
	m->run.ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	m->run.cpu_mhz = proc_cpu_mhz();
	gethostname(m->run.hostname, sizeof(m->run.hostname) - 1);
	m->run.host_id = (uint32_t)gethostid();
	m->run.trace_nargs = s->trace_nargs;
	for (int i = 0; i < s->n_events; i++) {
		const struct perf_event_request *r = &s->events[i];
		struct model_event e = {
			.name = (char *)r->name,
			.unit = (char *)r->unit,
			.description = (char *)r->description,
			.clock = r->clock,
			.freq_hz = r->use_freq ? r->freq : 0,
			.period = r->use_freq ? 0 : r->period,
		};

		model_add_event(m, &e);
	}
	if (s->off_cpu) {
		struct model_event e = {
			.name = PERF_EVENT_OFF_CPU,
			.unit = "ns",
			.description = "time switched out (blocked, or waiting for a CPU)",
			.clock = true,
			.aggregated = true,
		};

		model_add_event(m, &e);
		model_stat_add(m, MODEL_STAT_OFFCPU_MIN_NS, s->off_cpu_min_ns);
	}
	if (s->command_line)
		model_set_command_line(m, s->command_line);
	if (s->call_graph)
		decode_run_call_graph(m, s->call_graph);
	for (size_t i = 0; i < s->n_attributes; i++)
		if (model_add_run_attribute(m, s->attributes[i].key, s->attributes[i].value))
			abort(); /* as the model's own allocations do */
}

void decode_run_call_graph(struct model *m, const char *call_graph)
{
	snprintf(m->run.call_graph, sizeof(m->run.call_graph), "%s", call_graph);
}

void decode_window_start(struct model *m)
{
	m->run.start_ktime_ns = run_clock_ns(true);
	m->run.start_ns = m->run.start_ktime_ns + m->run.ktime_to_epoch_ns;
}

void decode_window_end(struct model *m)
{
	m->run.end_ktime_ns = run_clock_ns(true);
	m->run.end_ns = m->run.end_ktime_ns + m->run.ktime_to_epoch_ns;
}

void decode_events_lost(struct model *m, const uint64_t *lost, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < m->events.len; i++)
		m->events.items[i].lost = lost[i];
}

void decode_run_costs(struct model *m, uint64_t collector_cpu_ns, uint64_t bpf_run_ns)
{
	m->run.collector_cpu_ns = collector_cpu_ns;
	m->run.bpf_run_ns = bpf_run_ns;
}

void decode_energy(struct model *m, struct powercap *pc, bool force)
{
	uint64_t now = run_clock_ns(false), uj;
	struct model_energy *e;

	if (!pc->n)
		return;
	if (!force && m->energy.len &&
	    now < m->energy.items[m->energy.len - 1].time_ns + 100000000ULL)
		return;
	if (powercap_read(pc, &uj) != 0)
		return;
	e = MODEL_VEC_PUSH(m->energy);
	e->time_ns = now;
	e->energy_uj = uj;
}
