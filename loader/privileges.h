/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may load BPF, who the invoking user is (sudo's SUDO_UID, or the real
 * uid under file capabilities), and giving his rights back: to the
 * command, to the paths he names (lib/userfs.h), or for good.
 */
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

#define INVOKING_USER_MAX_GROUPS 256

/* Reads SUDO_UID, SUDO_GID and SUDO_USER.  Returns 0 (u->set false when
 * not under sudo), or -EINVAL with a message when they are malformed.
 * Only root is run by sudo: with another real uid, SUDO_* are ignored. */
int invoking_user_get(struct invoking_user *u);

/* Becomes the invoking user for good: supplementary groups, gid, uid.
 * Returns 0 or a negative errno. */
int invoking_user_become(const struct invoking_user *u);

/* The uid of whoever runs the collector: SUDO_UID, else the real uid. */
uid_t invoking_user_uid(const struct invoking_user *u);

/* Sets up lib/userfs.h for the invoking user: his ids under sudo, only
 * the dropping of file capabilities when run as him with capabilities,
 * nothing for root.  0, or a negative errno after a message. */
int invoking_user_fs_setup(const struct invoking_user *u);

/* For good, keeps nothing the invoking user has not: becomes him under
 * sudo, clears every capability under file capabilities (`collector dump`
 * needs none).  0 or a negative errno. */
int privileges_drop(const struct invoking_user *u);

#endif /* COLLECTOR_PRIVILEGES_H */
