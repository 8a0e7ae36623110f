// SPDX-License-Identifier: GPL-2.0
/* The status line on stderr while a run lasts. */
#include "cli/status.h"

#include <stdio.h>
#include <unistd.h>

#include "lib/clock.h"

void status_init(struct status *st, bool quiet, uint64_t start_ns)
{
	st->enabled = !quiet && isatty(STDERR_FILENO);
	st->start_ns = start_ns;
	st->last_ns = 0;
	st->last_samples = 0;
}

void status_update(struct status *st, uint64_t samples, uint64_t lost, uint64_t traced_events)
{
	uint64_t now = monotonic_ns();

	if (!st->enabled || now - st->last_ns < 1000000000ULL)
		return;
	fprintf(stderr, "\r\033[K  %6.1f s  %10llu samples  %7.0f samples/s  %llu lost",
		(now - st->start_ns) / 1e9, (unsigned long long)samples,
		st->last_ns ? (samples - st->last_samples) / ((now - st->last_ns) / 1e9) : 0.0,
		(unsigned long long)lost);
	if (traced_events)
		fprintf(stderr, "  %llu traced events", (unsigned long long)traced_events);
	st->last_ns = now;
	st->last_samples = samples;
}

void status_clear(struct status *st)
{
	if (st->enabled)
		fprintf(stderr, "\r\033[K");
}
