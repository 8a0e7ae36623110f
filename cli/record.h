/* SPDX-License-Identifier: GPL-2.0 */
/* One profiling run: `collector [OPTION...] [-- COMMAND]`. */
#ifndef COLLECTOR_RECORD_H
#define COLLECTOR_RECORD_H

#include "cli/options.h"

/* Runs the whole collection and returns the process exit code. */
int record_run(const struct collector_options *opts);

#endif /* COLLECTOR_RECORD_H */
