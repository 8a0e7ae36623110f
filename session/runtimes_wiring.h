/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's language runtimes (runtimes/runtime.h, every one the
 * registry lists), their BPF map writes done by loader/runtime_procs.h:
 * wired together here, as only session/ sees both.
 */
#ifndef COLLECTOR_SESSION_RUNTIMES_WIRING_H
#define COLLECTOR_SESSION_RUNTIMES_WIRING_H

#include <stdbool.h>
#include <stdint.h>

#include "loader/bpf_session.h"
#include "model/model.h"
#include "runtimes/runtime.h"

/* Opens every registered runtime for session s (NULL: nothing walked),
 * counting into m; no_ask: the runtimes ask no process for names (the
 * JVM's attach); walk_kinds: the frame kinds whose walks the BPF side
 * loads when met (struct bpf_session_config's), the other runtimes opened
 * unwalked (a JVM's attach then names its JIT code).  0 or -ENOMEM. */
int session_runtimes_open(struct runtimes *rs, struct bpf_session *s, struct model *m,
			  bool no_ask, uint32_t walk_kinds);

#endif /* COLLECTOR_SESSION_RUNTIMES_WIRING_H */
