/* SPDX-License-Identifier: GPL-2.0 */
/* The status line on stderr while a run lasts (on a terminal, once a second). */
#ifndef COLLECTOR_STATUS_H
#define COLLECTOR_STATUS_H

#include <stdbool.h>
#include <stdint.h>

struct status {
	bool enabled;
	uint64_t start_ns, last_ns, last_samples;
};

/* Enabled when not quiet and stderr is a terminal; start is CLOCK_MONOTONIC. */
void status_init(struct status *st, bool quiet, uint64_t start_ns);
/* Redraws the line at most once a second. */
void status_update(struct status *st, uint64_t samples, uint64_t lost, uint64_t traced_events);
/* Clears the line for good. */
void status_clear(struct status *st);

#endif /* COLLECTOR_STATUS_H */
