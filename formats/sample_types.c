// SPDX-License-Identifier: GPL-2.0
/* The sampled profiles' value columns (sample_types.h). */
#include "formats/sample_types.h"

#include <string.h>

void sample_types_of(const struct model *m, struct sample_types *t)
{
	size_t n_events = model_event_count(m);

	if (n_events > MODEL_MAX_EVENTS)
		n_events = MODEL_MAX_EVENTS;
	t->n_events = n_events;
	t->type[0] = "samples";
	t->unit[0] = "count";
	for (size_t e = 0; e < n_events; e++) {
		const struct model_event *ev = model_event(m, (uint32_t)e);

		t->type[1 + e] = e == 0 && !strcmp(ev->name, "cpu-clock") ? "cpu" : ev->name;
		t->unit[1 + e] = ev->clock ? "nanoseconds" : "count";
	}
	t->n = 1 + n_events;
	t->wall = -1;
	if (model_has_wall(m)) {
		t->wall = (int)t->n;
		t->type[t->n] = "wall";
		t->unit[t->n++] = "nanoseconds";
	}
}

void sample_types_add(const struct model *m, const struct sample_types *t,
		      const struct model_sample *s, int64_t *values)
{
	uint64_t w;

	values[0]++;
	if (s->event >= t->n_events)
		return;
	w = s->weight || s->event ? s->weight : m->run.period_ns;
	values[1 + s->event] += (int64_t)w;
	if (t->wall >= 0 && model_wall_event(m, s->event))
		values[t->wall] += (int64_t)w;
}

uint64_t sample_types_period(const struct model_event *e)
{
	if (e->period)
		return e->period;
	return e->clock && e->freq_hz ? 1000000000ULL / e->freq_hz : 0;
}
