/* SPDX-License-Identifier: GPL-2.0 */
/* Who may load BPF, and who the command runs as under sudo. */
#ifndef COLLECTOR_PRIVILEGES_H
#define COLLECTOR_PRIVILEGES_H

#include <stdbool.h>
#include <sys/types.h>

struct invoking_user {
	bool set;          /* SUDO_UID/SUDO_GID were present */
	uid_t uid;
	gid_t gid;
	char name[64];     /* SUDO_USER, "" if absent */
};

/* 0 when the process may load BPF and open perf events (root, or
 * CAP_BPF+CAP_PERFMON), else -EPERM. */
int privileges_check(void);

/* Reads SUDO_UID, SUDO_GID and SUDO_USER.  Returns 0 (u->set false when
 * not under sudo), or -EINVAL with a message when they are malformed. */
int invoking_user_get(struct invoking_user *u);

/* Becomes the invoking user for good: supplementary groups, gid, uid.
 * Returns 0 or a negative errno. */
int invoking_user_become(const struct invoking_user *u);

#endif /* COLLECTOR_PRIVILEGES_H */
