// SPDX-License-Identifier: GPL-2.0
/* The run's events: what was sampled, in which unit, how often. */
#include "model/model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t model_add_event(struct model *m, const struct model_event *tmpl)
{
	struct model_event *e = MODEL_VEC_PUSH(m->events);

	*e = *tmpl;
	e->name = model_strdup(tmpl->name);
	e->unit = model_strdup(tmpl->unit ? tmpl->unit : "events");
	e->description = model_strdup(tmpl->description ? tmpl->description : tmpl->name);
	if (m->events.len == 1) {
		free(m->run.event);
		m->run.event = model_strdup(tmpl->name);
	}
	return m->events.len - 1;
}

const struct model_event *model_event(const struct model *m, uint32_t id)
{
	static struct model_event fallback = {
		.name = "cpu-clock", .unit = "ns", .description = "CPU time", .clock = true,
	};

	if (id < m->events.len)
		return &m->events.items[id];
	/* a model built without events (a format's unit test, an old run):
	 * one cpu-clock event */
	fallback.freq_hz = m->run.freq_hz;
	fallback.period = m->run.freq_hz ? 0 : m->run.period_ns;
	return &fallback;
}

void model_events_tally(struct model *m)
{
	if (!m->events.len) {
		struct model_event e = {
			.name = "cpu-clock", .unit = "ns", .description = "CPU time",
			.clock = true, .freq_hz = m->run.freq_hz,
		};

		model_add_event(m, &e);
	}
	for (size_t i = 0; i < m->events.len; i++)
		m->events.items[i].samples = m->events.items[i].total = 0;
	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		struct model_event *e;

		if (s->event >= m->events.len)
			continue;
		e = &m->events.items[s->event];
		e->samples++;
		e->total += s->weight;
	}
	for (size_t i = 0; i < m->events.len; i++)
		if (!m->events.items[i].aggregated)
			m->events.items[i].occurrences = m->events.items[i].samples;
}

void model_events_free(struct model *m)
{
	for (size_t i = 0; i < m->events.len; i++) {
		free(m->events.items[i].name);
		free(m->events.items[i].unit);
		free(m->events.items[i].description);
	}
	free(m->events.items);
	m->events.items = NULL;
	m->events.len = m->events.cap = 0;
}

bool model_event_samples(const struct model_event *e)
{
	return e->freq_hz || e->period || !e->aggregated;
}

uint64_t model_sample_count(const struct model *m)
{
	uint64_t n = 0;

	if (!m->events.len)
		return m->samples.len;
	for (size_t i = 0; i < m->events.len; i++) {
		const struct model_event *e = &m->events.items[i];

		if (model_event_samples(e))
			n += e->aggregated ? e->occurrences : e->samples;
	}
	return n;
}

uint64_t model_sum_records(const struct model *m)
{
	uint64_t n = 0;

	for (size_t i = 0; i < m->events.len; i++)
		if (!model_event_samples(&m->events.items[i]))
			n += m->events.items[i].samples;
	return n;
}

void model_event_rate(const struct model_event *e, char *buf, size_t size)
{
	if (e->period)
		snprintf(buf, size, "every %llu %s", (unsigned long long)e->period, e->unit);
	else if (e->freq_hz)
		snprintf(buf, size, "at %u Hz", e->freq_hz);
	else
		snprintf(buf, size, "per switch");
}

void model_events_phrase(const struct model *m, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (uint32_t ev = 0; ev < model_event_count(m) && len < size; ev++) {
		const struct model_event *e = model_event(m, ev);
		char rate[64];

		model_event_rate(e, rate, sizeof(rate));
		len += snprintf(buf + len, size - len, "%s%s %s", ev ? ", " : "", e->name, rate);
	}
}

int model_event_view(const struct model *m, uint32_t ev, struct model *view)
{
	struct model_sample *samples = NULL;
	size_t n = 0;

	for (size_t i = 0; i < m->samples.len; i++)
		n += m->samples.items[i].event == ev;
	if (n) {
		samples = malloc(n * sizeof(*samples));
		if (!samples)
			return -ENOMEM;
	}
	*view = *m;
	n = 0;
	for (size_t i = 0; i < m->samples.len; i++) {
		if (m->samples.items[i].event != ev)
			continue;
		samples[n] = m->samples.items[i];
		samples[n++].event = 0;
	}
	view->samples.items = samples;
	view->samples.len = view->samples.cap = n;
	view->samples_spill = (struct model_spill){ 0 };
	if (ev < m->events.len) {
		view->events.items = &m->events.items[ev];
		view->events.len = view->events.cap = 1;
		view->run.event = m->events.items[ev].name;
	}
	return 0;
}

void model_event_view_free(struct model *view)
{
	free(view->samples.items);
	view->samples.items = NULL;
	view->samples.len = 0;
}

/* The on-CPU clock of the wall view, or MODEL_NONE. */
static uint32_t wall_on_cpu_event(const struct model *m)
{
	for (uint32_t ev = 0; ev < m->events.len; ev++) {
		const char *n = m->events.items[ev].name;

		if (!strcmp(n, "cpu-clock") || !strcmp(n, "task-clock"))
			return ev;
	}
	return MODEL_NONE;
}

static uint32_t wall_off_cpu_event(const struct model *m)
{
	for (uint32_t ev = 0; ev < m->events.len; ev++)
		if (!strcmp(m->events.items[ev].name, "off-cpu"))
			return ev;
	return MODEL_NONE;
}

bool model_has_wall(const struct model *m)
{
	return wall_on_cpu_event(m) != MODEL_NONE && wall_off_cpu_event(m) != MODEL_NONE;
}

bool model_wall_event(const struct model *m, uint32_t ev)
{
	return model_has_wall(m) && (ev == wall_on_cpu_event(m) || ev == wall_off_cpu_event(m));
}
