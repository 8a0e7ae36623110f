// SPDX-License-Identifier: GPL-2.0
/* Privilege checks and dropping to the invoking user. */
#include "loader/privileges.h"
#include "lib/userfs.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_effective_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1u << (cap % 32));
}

int privileges_check(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return geteuid() == 0 ? 0 : -EPERM;
	if (has_effective_cap(data, CAP_SYS_ADMIN))
		return 0;
	if (has_effective_cap(data, CAP_BPF) && has_effective_cap(data, CAP_PERFMON))
		return 0;
	return -EPERM;
}

static int parse_id(const char *name, const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || !*s || *end || *out > UINT32_MAX - 1) {
		fprintf(stderr, "collector: %s='%s' is not a user or group id; "
			"unset it or run collector through sudo\n", name, s);
		return -EINVAL;
	}
	return 0;
}

int invoking_user_get(struct invoking_user *u)
{
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	const char *name = getenv("SUDO_USER");
	unsigned long v;

	memset(u, 0, sizeof(*u));
	/* sudo runs us with a real uid of 0: anyone else (file capabilities)
	 * is the invoking user himself, whatever SUDO_* may say */
	if ((!uid && !gid) || getuid() != 0)
		return 0;
	if (!uid || !gid) {
		fprintf(stderr, "collector: SUDO_UID and SUDO_GID must be set together\n");
		return -EINVAL;
	}
	if (parse_id("SUDO_UID", uid, &v))
		return -EINVAL;
	u->uid = v;
	if (parse_id("SUDO_GID", gid, &v))
		return -EINVAL;
	u->gid = v;
	if (name)
		snprintf(u->name, sizeof(u->name), "%s", name);
	u->set = true;
	return 0;
}

/* The user's own groups when the name is known and matches the uid;
 * otherwise only the primary group: never root's groups.  Returns how many
 * were written (at most max). */
static int invoking_user_groups(const struct invoking_user *u, gid_t *groups, int max)
{
	struct passwd *pw = u->name[0] ? getpwnam(u->name) : NULL;
	int n = max;

	if (pw && pw->pw_uid == u->uid && getgrouplist(u->name, u->gid, groups, &n) >= 0)
		return n;
	groups[0] = u->gid;
	return 1;
}

int invoking_user_become(const struct invoking_user *u)
{
	gid_t groups[INVOKING_USER_MAX_GROUPS];
	int n = invoking_user_groups(u, groups, INVOKING_USER_MAX_GROUPS);

	if (setgroups(n, groups) != 0)
		return -errno;
	if (setresgid(u->gid, u->gid, u->gid) != 0)
		return -errno;
	if (setresuid(u->uid, u->uid, u->uid) != 0)
		return -errno;
	/* make sure root cannot be regained */
	if (u->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return -EPERM;
	return 0;
}

uid_t invoking_user_uid(const struct invoking_user *u)
{
	return u->set ? u->uid : getuid();
}

int invoking_user_fs_setup(const struct invoking_user *u)
{
	gid_t groups[INVOKING_USER_MAX_GROUPS];
	struct user_fs_ids ids;
	int err = 0;

	if (u->set) {
		ids = (struct user_fs_ids){ .uid = u->uid, .gid = u->gid, .groups = groups };
		ids.n_groups = invoking_user_groups(u, groups, INVOKING_USER_MAX_GROUPS);
		err = user_fs_setup(&ids);
	} else if (geteuid() != 0) {
		err = user_fs_setup(NULL); /* file capabilities: our own ids */
	}
	if (err)
		fprintf(stderr, "collector: cannot take the invoking user's file rights: %s\n",
			strerror(-err));
	return err;
}

int privileges_drop(const struct invoking_user *u)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[2];

	if (u->set && u->uid != 0)
		return invoking_user_become(u);
	if (getuid() == 0)
		return 0; /* root himself */
	memset(none, 0, sizeof(none));
	return syscall(SYS_capset, &hdr, none) == 0 ? 0 : -errno;
}
