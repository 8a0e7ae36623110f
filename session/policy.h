/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The administrator's policy: SYSCONFDIR/collector.conf (/etc/collector.conf
 * unless the build says otherwise: `make install SYSCONFDIR=...`; no
 * environment variable or option can name another file).  It limits what
 * users who are not root may ask for, through sudo or file capabilities:
 *
 *   # KEY = yes|no; every key defaults to yes (today's behaviour)
 *   run-as-root = no         --run-as-root
 *   all-cpus = no            -a
 *   other-users-pids = no    -p on a process of another user
 *
 * The file is used only when it is a regular file owned by root and
 * writable by no one else (else it is ignored, with a warning).  A line
 * that cannot be read refuses every run of a user who is not root, since
 * what the administrator meant cannot be known.  A refusal names the file,
 * the line and its number.
 */
#ifndef COLLECTOR_POLICY_H
#define COLLECTOR_POLICY_H

#include <stdbool.h>
#include <sys/types.h>

#include "session/options.h"

/* SYSCONFDIR "/collector.conf", compiled into cli/main.c. */
extern const char collector_conf_path[];

struct policy_rule {
	bool allowed;
	int line;               /* 0: not in the file */
	char text[128];         /* the line as written */
};

struct policy {
	const char *path;
	struct policy_rule run_as_root, all_cpus, other_users_pids;
};

/* Reads path into p (every rule allowed when the file is missing or not
 * trusted).  0, or -EINVAL after a message naming the line. */
int policy_load(struct policy *p, const char *path);

/* Whether the options of a user (uid) pass policy p: 0, or -EPERM after a
 * message naming the option and the line that refuses it.  Root passes. */
int policy_check(const struct policy *p, const struct collector_options *opts, uid_t uid);

/* policy_load of collector_conf_path and policy_check, for a user who is
 * not root.  0 or EXIT_NO_PRIVILEGE. */
int policy_enforce(const struct collector_options *opts, uid_t uid);

#endif /* COLLECTOR_POLICY_H */
