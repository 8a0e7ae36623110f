// SPDX-License-Identifier: GPL-2.0
/* The administrator's policy, /etc/collector.conf. */
#include "session/policy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/proc.h"

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static struct policy_rule *rule_of(struct policy *p, const char *key)
{
	if (!strcmp(key, "run-as-root"))
		return &p->run_as_root;
	if (!strcmp(key, "all-cpus"))
		return &p->all_cpus;
	if (!strcmp(key, "other-users-pids"))
		return &p->other_users_pids;
	return NULL;
}

/* One line: 0, or -EINVAL after a message. */
static int parse_line(struct policy *p, char *text, int line)
{
	char *s = trim(text), *eq, *key, *value, as_written[128];
	struct policy_rule *rule;

	if (!*s || *s == '#')
		return 0;
	snprintf(as_written, sizeof(as_written), "%s", s);
	eq = strchr(s, '=');
	if (eq) {
		*eq = '\0';
		key = trim(s);
		value = trim(eq + 1);
		rule = rule_of(p, key);
		if (rule && (!strcmp(value, "yes") || !strcmp(value, "no"))) {
			rule->allowed = !strcmp(value, "yes");
			rule->line = line;
			snprintf(rule->text, sizeof(rule->text), "%s = %s", key, value);
			return 0;
		}
	}
	fprintf(stderr, "collector: %s:%d: '%s' is not a policy line (KEY = yes|no, with "
		"KEY run-as-root, all-cpus or other-users-pids): users who are not root may not "
		"run collector until the administrator mends it\n", p->path, line, as_written);
	return -EINVAL;
}

/* Root's file, that only root may change. */
static bool trusted(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == 0 && !(st->st_mode & S_IWOTH) &&
	       (!(st->st_mode & S_IWGRP) || st->st_gid == 0);
}

int policy_load(struct policy *p, const char *path)
{
	char buf[1024];
	struct stat st;
	int fd, line = 0, err = 0;
	FILE *f;

	memset(p, 0, sizeof(*p));
	p->path = path;
	p->run_as_root.allowed = p->all_cpus.allowed = p->other_users_pids.allowed = true;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0; /* no policy */
	if (fstat(fd, &st) != 0 || !trusted(&st)) {
		fprintf(stderr, "collector: ignoring %s: it must be a file owned by root that "
			"no one else may write\n", path);
		close(fd);
		return 0;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	while (!err && fgets(buf, sizeof(buf), f)) {
		line++;
		err = parse_line(p, buf, line);
	}
	fclose(f);
	return err;
}

static int refuse(const struct policy *p, const char *what, const struct policy_rule *rule)
{
	fprintf(stderr, "collector: %s is not allowed for users other than root: %s:%d: %s\n",
		what, p->path, rule->line, rule->text);
	return -EPERM;
}

/* A process of another user: one of its real, effective and saved uids
 * is not his (ptrace's rule).  A process that cannot be read is left to
 * the target checks, which say it does not exist. */
static bool other_users_process(pid_t pid, uid_t uid)
{
	uid_t ids[4];

	if (proc_uids(pid, ids) != 0)
		return false;
	return ids[0] != uid || ids[1] != uid || ids[2] != uid;
}

int policy_check(const struct policy *p, const struct collector_options *opts, uid_t uid)
{
	char what[64];

	if (uid == 0)
		return 0;
	if (opts->run_as_root && !p->run_as_root.allowed)
		return refuse(p, "--run-as-root", &p->run_as_root);
	if (opts->all_cpus && !p->all_cpus.allowed)
		return refuse(p, "-a", &p->all_cpus);
	for (int i = 0; i < opts->n_pids && !p->other_users_pids.allowed; i++) {
		if (!other_users_process(opts->pids[i], uid))
			continue;
		snprintf(what, sizeof(what), "-p %d (a process of another user)",
			 (int)opts->pids[i]);
		return refuse(p, what, &p->other_users_pids);
	}
	return 0;
}

int policy_enforce(const struct collector_options *opts, uid_t uid)
{
	struct policy p;

	if (uid == 0)
		return 0;
	if (policy_load(&p, collector_conf_path) != 0 || policy_check(&p, opts, uid) != 0)
		return EXIT_NO_PRIVILEGE;
	return 0;
}
