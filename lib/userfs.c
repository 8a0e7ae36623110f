// SPDX-License-Identifier: GPL-2.0
/* The invoking user's file system rights, one thread at a time. */
#include "lib/userfs.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#define USER_FS_MAX_GROUPS 256

/* What the kernel itself drops when the fsuid leaves 0 (CAP_FS_MASK):
 * the capabilities that bypass file permissions and ownership. */
static const int fs_caps[] = {
	CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID,
	CAP_LINUX_IMMUTABLE, CAP_MKNOD, CAP_MAC_OVERRIDE,
};

static struct {
	bool configured;
	bool switch_ids;        /* sudo: become the user in a scope */
	uid_t uid, own_uid;
	gid_t gid, own_gid;
	gid_t groups[USER_FS_MAX_GROUPS], own_groups[USER_FS_MAX_GROUPS];
	int n_groups, n_own_groups;
} cfg;

/* Per thread: credentials are the thread's own. */
static __thread int depth;
static __thread bool caps_dropped;
static __thread struct __user_cap_data_struct saved_caps[2];

static int caps_get(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &hdr, data) == 0 ? 0 : -errno;
}

static int caps_set(const struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capset, &hdr, data) == 0 ? 0 : -errno;
}

/* Clears the file capabilities from the thread's effective set, if it
 * holds any, remembering what it held. */
static int drop_fs_caps(void)
{
	struct __user_cap_data_struct data[2];
	bool any = false;

	if (caps_get(data) != 0)
		return -EPERM;
	memcpy(saved_caps, data, sizeof(saved_caps));
	for (size_t i = 0; i < sizeof(fs_caps) / sizeof(*fs_caps); i++) {
		int c = fs_caps[i];

		if (data[c / 32].effective & (1u << (c % 32))) {
			data[c / 32].effective &= ~(1u << (c % 32));
			any = true;
		}
	}
	if (!any)
		return 0;
	if (caps_set(data) != 0)
		return -EPERM;
	caps_dropped = true;
	return 0;
}

static void restore_ids(void)
{
	setfsuid(cfg.own_uid);
	setfsgid(cfg.own_gid);
	syscall(SYS_setgroups, cfg.n_own_groups, cfg.own_groups);
}

static int switch_ids(void)
{
	if (syscall(SYS_setgroups, cfg.n_groups, cfg.groups) != 0)
		return -EPERM;
	setfsgid(cfg.gid);
	setfsuid(cfg.uid);
	/* an invalid id changes nothing and returns the current one */
	if ((gid_t)setfsgid((gid_t)-1) != cfg.gid || (uid_t)setfsuid((uid_t)-1) != cfg.uid) {
		restore_ids();
		return -EPERM;
	}
	return 0;
}

int user_fs_enter(void)
{
	if (!cfg.configured || depth++ > 0)
		return 0;
	if (cfg.switch_ids && switch_ids() != 0) {
		depth--;
		return -EPERM;
	}
	if (drop_fs_caps() != 0) {
		if (cfg.switch_ids)
			restore_ids();
		depth--;
		return -EPERM;
	}
	return 0;
}

void user_fs_leave(void)
{
	int saved_errno = errno;

	if (!cfg.configured || depth == 0 || --depth > 0)
		return;
	if (caps_dropped) {
		caps_set(saved_caps);
		caps_dropped = false;
	}
	if (cfg.switch_ids)
		restore_ids();
	errno = saved_errno;
}

int user_fs_setup(const struct user_fs_ids *ids)
{
	int n, err;

	memset(&cfg, 0, sizeof(cfg));
	if (ids) {
		if (ids->n_groups > USER_FS_MAX_GROUPS)
			return -E2BIG;
		cfg.uid = ids->uid;
		cfg.gid = ids->gid;
		memcpy(cfg.groups, ids->groups, ids->n_groups * sizeof(gid_t));
		cfg.n_groups = ids->n_groups;
		cfg.own_uid = geteuid();
		cfg.own_gid = getegid();
		n = getgroups(USER_FS_MAX_GROUPS, cfg.own_groups);
		if (n < 0)
			return -errno;
		cfg.n_own_groups = n;
		cfg.switch_ids = true;
	}
	cfg.configured = true;
	/* a scope that cannot be entered is found now, not at the first file */
	err = user_fs_enter();
	if (err) {
		cfg.configured = false;
		return err;
	}
	user_fs_leave();
	return 0;
}
