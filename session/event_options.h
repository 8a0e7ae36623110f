/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's events on the command line's side: defaults (-e omitted: the
 * cpu-clock at -F), `-e list`, and the check, before any BPF is loaded, that
 * this machine can open each one (a hardware event where there is no PMU
 * gets one clear line and exit 6).
 */
#ifndef COLLECTOR_CLI_EVENT_OPTIONS_H
#define COLLECTOR_CLI_EVENT_OPTIONS_H

#include <stdio.h>

#include "session/options.h"

/* No -e: cpu-clock at -F.  An event without /PERIOD or @FREQ: at -F. */
void events_fill_defaults(struct collector_options *o);
/* -e list: every event of the table and raw codes, with whether this
 * machine can open it.  Returns the exit code (0). */
int events_list(FILE *out);
/* Opens and closes each event once.  Returns 0, or EXIT_BPF after a message
 * naming the event and what to do. */
int events_check(const struct collector_options *o);

#endif /* COLLECTOR_CLI_EVENT_OPTIONS_H */
