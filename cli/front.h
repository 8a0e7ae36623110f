/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run shows (session/session.h's struct run_front, cli/'s side): the
 * status line while it lasts, and once it is over the summary and the
 * push's figures, or `collector stacks`'s listing and its -f files.
 */
#ifndef COLLECTOR_CLI_FRONT_H
#define COLLECTOR_CLI_FRONT_H

#include "cli/status.h"
#include "session/session.h"

struct front {
	const struct collector_options *opts;
	struct status status;
	struct run_front hooks; /* ctx: this */
};

/* The hooks of a run with these options. */
void front_init(struct front *f, const struct collector_options *opts);

#endif /* COLLECTOR_CLI_FRONT_H */
