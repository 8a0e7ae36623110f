// SPDX-License-Identifier: GPL-2.0
/* What a run shows (cli/front.h). */
#include "cli/front.h"

#include <stdio.h>

#include "cli/stacks.h"
#include "cli/summary.h"
#include "session/push.h"

static void started(void *ctx, uint64_t start_ktime_ns)
{
	struct front *f = ctx;

	status_init(&f->status, f->opts->quiet, start_ktime_ns);
}

static void progress(void *ctx, uint64_t samples, uint64_t lost, uint64_t traced)
{
	struct front *f = ctx;

	if (f->status.enabled)
		status_update(&f->status, samples, lost, traced);
}

static void stopping(void *ctx)
{
	status_clear(&((struct front *)ctx)->status);
}

static int report(void *ctx, struct model *m, const struct summary_figures *fig,
		  struct push *push, const struct export_options *eo)
{
	struct front *f = ctx;

	if (f->opts->stacks)
		return stacks_output(stdout, m, f->opts->formats, eo) ? EXIT_FAILURE_RUN : 0;
	if (f->opts->quiet)
		return 0;
	summary_print(stderr, m, fig);
	if (push)
		push_print_summary(stderr, push);
	return 0;
}

void front_init(struct front *f, const struct collector_options *opts)
{
	*f = (struct front){
		.opts = opts,
		.hooks = { .started = started, .progress = progress, .stopping = stopping,
			   .report = report },
	};
	f->hooks.ctx = f;
}
