// SPDX-License-Identifier: GPL-2.0
/* A run's steps, timed (session/phases.h). */
#include "session/phases.h"

#include <time.h>

#include "lib/clock.h"

uint64_t phases_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

void phases_start(struct phases *ph, bool on)
{
	ph->on = on;
	ph->n = 0;
	ph->wall = monotonic_ns();
	ph->cpu = phases_cpu_ns();
}

void phases_mark(struct phases *ph, const char *name)
{
	uint64_t wall, cpu;

	if (!ph->on || ph->n >= PHASES_MAX)
		return;
	wall = monotonic_ns();
	cpu = phases_cpu_ns();
	ph->step[ph->n].name = name;
	ph->step[ph->n].wall_ns = wall - ph->wall;
	ph->step[ph->n].cpu_ns = cpu - ph->cpu;
	ph->n++;
	ph->wall = wall;
	ph->cpu = cpu;
}

void phases_print(const struct phases *ph, FILE *out)
{
	uint64_t wall = 0, cpu = 0;

	if (!ph->on)
		return;
	fprintf(out, "collector: the run's steps (wall ms, the collector's CPU ms):\n");
	for (int i = 0; i < ph->n; i++) {
		fprintf(out, "  %-28s %9.2f %9.2f\n", ph->step[i].name, ph->step[i].wall_ns / 1e6,
			ph->step[i].cpu_ns / 1e6);
		wall += ph->step[i].wall_ns;
		cpu += ph->step[i].cpu_ns;
	}
	fprintf(out, "  %-28s %9.2f %9.2f\n", "in all", wall / 1e6, cpu / 1e6);
}
