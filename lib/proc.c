// SPDX-License-Identifier: GPL-2.0
/* Reading /proc files about processes and the machine. */
#include "lib/proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int proc_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)total < size - 1 &&
	       (n = read(fd, buf + total, size - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = 0;
	return total;
}

int proc_read_all(const char *path, size_t max, char **out, size_t *out_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb;

			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			nb = realloc(buf, ncap + 1);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!err && !buf && !(buf = malloc(1)))
		err = -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

void proc_comm(pid_t pid, pid_t tid, char comm[16])
{
	char path[96], buf[64];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	comm[0] = 0;
	if (proc_read_file(path, buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = 0;
		snprintf(comm, 16, "%.15s", buf);
	}
}

int proc_stat(pid_t pid, struct proc_stat *st)
{
	char path[64], buf[1024], *p;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = proc_read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return n == -ENOENT || n == 0 ? -ESRCH : n;
	p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
	/* fields 3 to 22: state ppid pgrp session tty_nr tpgid flags, 12
	 * counters and times, starttime */
	if (!p || sscanf(p + 2, "%c %d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
			 "%*d %llu", &st->state, &st->ppid, &st->flags, &st->starttime) != 4)
		return -EINVAL;
	return 0;
}

bool proc_file_predates(pid_t pid, const struct stat *st)
{
	struct timespec real, boot;
	struct proc_stat ps;
	long tick = sysconf(_SC_CLK_TCK);
	int64_t start_ns, mtime_ns, tick_ns;

	if (tick <= 0 || proc_stat(pid, &ps) != 0 || clock_gettime(CLOCK_REALTIME, &real) != 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
		return false;
	tick_ns = 1000000000LL / tick;
	/* the start as wall-clock time: boot's wall-clock time plus starttime */
	start_ns = (int64_t)real.tv_sec * 1000000000LL + real.tv_nsec -
		   ((int64_t)boot.tv_sec * 1000000000LL + boot.tv_nsec) +
		   (int64_t)ps.starttime * tick_ns;
	mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
	/* a tick of slack: starttime is counted in ticks */
	return mtime_ns < start_ns - tick_ns;
}

/* The four numbers of one "Uid:" or "Gid:" line of /proc/PID/status. */
static int status_ids(pid_t pid, const char *field, unsigned int ids[4])
{
	char path[64], buf[4096], *p;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	n = proc_read_file(path, buf, sizeof(buf));
	if (n <= 0)
		return n == -ENOENT || n == 0 ? -ESRCH : n;
	p = strstr(buf, field);
	if (!p || sscanf(p + strlen(field), "%u %u %u %u", &ids[0], &ids[1], &ids[2], &ids[3]) != 4)
		return -EINVAL;
	return 0;
}

int proc_uids(pid_t pid, uid_t ids[4])
{
	unsigned int v[4];
	int err = status_ids(pid, "\nUid:", v);

	if (!err)
		ids[0] = v[0], ids[1] = v[1], ids[2] = v[2], ids[3] = v[3];
	return err;
}

int proc_gids(pid_t pid, gid_t ids[4])
{
	unsigned int v[4];
	int err = status_ids(pid, "\nGid:", v);

	if (!err)
		ids[0] = v[0], ids[1] = v[1], ids[2] = v[2], ids[3] = v[3];
	return err;
}

pid_t proc_namespace_pid(pid_t pid)
{
	char path[64], buf[4096], *s, *end;
	pid_t ns = pid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (proc_read_file(path, buf, sizeof(buf)) <= 0 || !(s = strstr(buf, "\nNSpid:")))
		return pid;
	s += 7;
	end = strchr(s, '\n');
	if (end)
		*end = '\0';
	while ((s = strpbrk(s, "0123456789"))) {
		ns = (pid_t)strtol(s, &end, 10);
		s = end;
	}
	return ns;
}

int proc_threads(pid_t pid, pid_t **tids, size_t *n)
{
	size_t cap = 0;
	struct dirent *d;
	char path[64];
	DIR *dir;
	int err = 0;

	*tids = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((d = readdir(dir)) != NULL) {
		pid_t tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		if (*n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			pid_t *nt = realloc(*tids, ncap * sizeof(*nt));

			if (!nt) {
				err = -ENOMEM;
				break;
			}
			*tids = nt;
			cap = ncap;
		}
		(*tids)[(*n)++] = tid;
	}
	closedir(dir);
	if (err) {
		free(*tids);
		*tids = NULL;
		*n = 0;
	}
	return err;
}

uint64_t proc_thread_cputime(pid_t pid, pid_t tid)
{
	char path[96], buf[128];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	if (proc_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

int proc_cmdline(pid_t pid, char *buf, size_t size)
{
	char path[64];
	int len;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	len = proc_read_file(path, buf, size);
	return len > 0 ? proc_join_args(buf, (size_t)len, size) : len;
}

int proc_join_args(char *buf, size_t len, size_t size)
{
	int n;

	if (len >= size)
		len = size - 1;
	n = (int)len;
	buf[len] = 0;
	for (int i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = 0;
	return n;
}

int proc_environ(pid_t pid, const char *const *names, char **values, size_t n)
{
	char path[64], *env = NULL;
	size_t len = 0;
	int err;

	memset(values, 0, n * sizeof(*values));
	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	/* the kernel gives at most the exec's whole environment; 1 MiB is
	 * more than any process is started with in practice */
	err = proc_read_all(path, 1 << 20, &env, &len);
	if (err)
		return err;
	for (size_t at = 0; at < len; at += strlen(env + at) + 1) {
		const char *var = env + at;

		for (size_t i = 0; i < n; i++) {
			size_t k = strlen(names[i]);

			if (!values[i] && !strncmp(var, names[i], k) && var[k] == '=') {
				values[i] = strdup(var + k + 1);
				if (!values[i])
					err = -ENOMEM;
			}
		}
	}
	free(env);
	if (err) {
		for (size_t i = 0; i < n; i++) {
			free(values[i]);
			values[i] = NULL;
		}
	}
	return err;
}

/* The last run of exactly 64 hex digits in line[0..n), or NULL. */
static const char *last_hex64(const char *line, size_t n)
{
	const char *found = NULL;
	size_t run = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && isxdigit((unsigned char)line[i])) {
			run++;
			continue;
		}
		if (run == 64)
			found = line + i - 64;
		run = 0;
	}
	return found;
}

int proc_container_id_in(const char *cgroup, char *buf, size_t size)
{
	const char *line, *id = NULL;

	if (size < 65)
		return -EINVAL;
	buf[0] = 0;
	for (line = cgroup; *line;) {
		size_t n = strcspn(line, "\n");
		const char *hex = last_hex64(line, n);

		if (hex)
			id = hex;
		line += n + (line[n] == '\n');
	}
	if (!id)
		return 0;
	memcpy(buf, id, 64);
	buf[64] = 0;
	return 64;
}

int proc_container_id(pid_t pid, char *buf, size_t size)
{
	char path[64], text[8192];
	int len;

	if (size < 65)
		return -EINVAL;
	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	len = proc_read_file(path, text, sizeof(text));
	return len < 0 ? len : proc_container_id_in(text, buf, size);
}

int proc_exe_file(pid_t pid, uint64_t *dev, uint64_t *ino)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	*dev = *ino = 0;
	if (stat(path, &st) != 0)
		return -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

int proc_exe(pid_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	n = readlink(path, buf, size - 1);
	if (n < 0) {
		buf[0] = 0;
		return -errno;
	}
	buf[n] = 0;
	if (n > 10 && strcmp(buf + n - 10, " (deleted)") == 0)
		buf[n -= 10] = 0;
	return n;
}

unsigned long proc_sysctl_ulong(const char *path, unsigned long def)
{
	char buf[64], *end;
	unsigned long v;

	if (proc_read_file(path, buf, sizeof(buf)) <= 0)
		return def;
	v = strtoul(buf, &end, 10);
	return end == buf ? def : v;
}

unsigned int proc_cpu_mhz(void)
{
	char line[256];
	double mhz = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			break;
	fclose(f);
	return (unsigned int)(mhz + 0.5);
}
