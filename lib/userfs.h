/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The invoking user's rights for the paths that user names.
 *
 * Under sudo (or with file capabilities) the collector may do more than
 * the user who runs it.  Every path the user names (-o and what is
 * written under it, --trace BIN, the command, what `dump` reads) is
 * opened, created, renamed and checked inside a user_fs scope, with the
 * user's file system rights: what the user could not do fails with the
 * errno the user would get, and what is created belongs to the user.
 * What the collector reads for its own work (/proc, /sys, the targets'
 * mapped files) is read outside any scope, with the collector's rights.
 *
 * The mechanism is the calling thread's file system credentials:
 * setfsuid/setfsgid and the supplementary groups, through the raw system
 * calls, which change the calling thread only (glibc's setgroups() would
 * change every thread).  A child that runs as the user and hands file
 * descriptors back would also work, but would need a process per path and
 * a protocol for mkdir, rename and unlink; a scope around the calls keeps
 * every caller's code as it was.  Whatever capability bypasses file
 * permissions (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER...) is
 * also off in the scope: the kernel drops them when the fsuid leaves 0,
 * and the scope drops them itself when the collector runs with file
 * capabilities as the user.
 *
 * Before user_fs_setup() (and when root runs the collector itself) a
 * scope changes nothing.  Scopes nest.  Not for use from a signal handler.
 */
#ifndef COLLECTOR_USERFS_H
#define COLLECTOR_USERFS_H

#include <stddef.h>
#include <sys/types.h>

/* Whose rights: the user's ids and supplementary groups (at most 256
 * are kept). */
struct user_fs_ids {
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	size_t n_groups;
};

/*
 * ids: become that user in every scope (the collector runs as root under
 * sudo).  NULL: keep the process's own ids and only drop, in a scope, the
 * capabilities that bypass file permissions (file capabilities).  Tries a
 * scope once; returns 0, or a negative errno when the switch does not take
 * (then no scope may be trusted, and the caller must stop).
 */
int user_fs_setup(const struct user_fs_ids *ids);

/*
 * Enter a scope: 0, or -EPERM when the rights could not be switched (the
 * caller must then not touch the path).  Every successful enter is paired
 * with one user_fs_leave().  errno is preserved by leave.
 */
int user_fs_enter(void);
void user_fs_leave(void);

#endif /* COLLECTOR_USERFS_H */
