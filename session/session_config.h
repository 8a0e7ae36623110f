/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kernel side of a run does and how big its ring and maps are,
 * decided from the options alone: the events, switches and off-CPU time
 * only when asked or a format reads them, the samples summed in the kernel
 * when nothing needs each one, the ring sized to what streams between two
 * drains, the unwind tables' cap.  on_record and its context are the
 * caller's to set.
 */
#ifndef COLLECTOR_CLI_SESSION_CONFIG_H
#define COLLECTOR_CLI_SESSION_CONFIG_H

#include "session/options.h"
#include "loader/bpf_session.h"

void session_config_of(const struct collector_options *opts, struct bpf_session_config *cfg);

#endif /* COLLECTOR_CLI_SESSION_CONFIG_H */
