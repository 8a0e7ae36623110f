/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reader of /proc files about processes and the machine (the maps
 * files have theirs, lib/procmaps.h).  Every function reads the file fresh;
 * a process that is gone reads as empty or -ENOENT/-ESRCH.
 */
#ifndef COLLECTOR_PROC_H
#define COLLECTOR_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define PROC_PF_KTHREAD 0x00200000 /* task flags: a kernel thread */

/* Reads a whole (small) file into buf, NUL-terminated.  Returns the length
 * or a negative errno. */
int proc_read_file(const char *path, char *buf, size_t size);
/* Reads a whole file of any size (/proc/kallsyms, /proc/PID/maps: their
 * size is not known before they are read) into a new NUL-terminated buffer
 * *out of *len bytes, to free.  Returns 0, -EFBIG past max bytes, or a
 * negative errno (of open or read). */
int proc_read_all(const char *path, size_t max, char **out, size_t *len);

/* The process's (tid 0) or thread's comm, at most 15 characters; "" when
 * it cannot be read. */
void proc_comm(pid_t pid, pid_t tid, char comm[16]);

/* The fields of /proc/PID/stat that collector uses. */
struct proc_stat {
	char state;           /* R, S, D, Z, X, ... */
	pid_t ppid;
	unsigned long flags;  /* PF_* */
	unsigned long long starttime; /* clock ticks after boot (CLOCK_BOOTTIME) */
};
/* 0, -ESRCH when there is no such process, -EINVAL when unreadable. */
int proc_stat(pid_t pid, struct proc_stat *st);
/* Whether the file st describes was last written before process pid
 * started: a file named for an earlier process of the same pid (pids are
 * reused: /tmp/perf-PID.map outlives its process).  false when pid's
 * start cannot be read. */
bool proc_file_predates(pid_t pid, const struct stat *st);
/* The process's real, effective, saved and file system uids (the Uid: line
 * of /proc/PID/status).  0, -ESRCH, or a negative errno. */
int proc_uids(pid_t pid, uid_t ids[4]);
/* The same of the Gid: line. */
int proc_gids(pid_t pid, gid_t ids[4]);
/* The process's pid as its own PID namespace numbers it (the last NSpid
 * field of /proc/PID/status), or pid when unknown. */
pid_t proc_namespace_pid(pid_t pid);

/* The threads of a process (the entries of /proc/PID/task), in the order
 * listed, into a new array *tids of *n, to free.  Returns 0, -ESRCH when
 * there is no such process, or a negative errno. */
int proc_threads(pid_t pid, pid_t **tids, size_t *n);

/* A thread's cumulative on-CPU time (ns) from its schedstat; 0 if gone. */
uint64_t proc_thread_cputime(pid_t pid, pid_t tid);

/* The command line, arguments joined by spaces.  Returns its length (0:
 * none, a kernel thread or a zombie) or a negative errno. */
int proc_cmdline(pid_t pid, char *buf, size_t size);
/* The len bytes of NUL-separated arguments at buf (as /proc/PID/cmdline
 * and the exec record give them) joined by spaces in place, NUL-ended
 * within size (size > 0), trailing spaces cut; returns the length. */
int proc_join_args(char *buf, size_t len, size_t size);

/* The executable's path, without " (deleted)".  Returns its length (0:
 * unknown) or a negative errno. */
int proc_exe(pid_t pid, char *buf, size_t size);
/* The file pid runs (its /proc/PID/exe: device and inode), which another
 * exec changes.  0, or a negative errno with both 0 (gone, no access). */
int proc_exe_file(pid_t pid, uint64_t *dev, uint64_t *ino);

/* The values of the environment variables names[0..n) that process pid
 * was started with (its /proc/PID/environ: what its exec was given, not
 * what it set later), each a new string in values[i] (to free), NULL where
 * absent.  Returns 0, or a negative errno (-ENOENT: no such process,
 * -EACCES: not ours to read); values[] are all NULL then. */
int proc_environ(pid_t pid, const char *const *names, char **values, size_t n);

/* The id of the container process pid runs in: the last run of 64 hex
 * digits in a path of its /proc/PID/cgroup (docker-ID.scope,
 * cri-containerd-ID.scope, libpod-ID.scope, /docker/ID, /kubepods/.../ID),
 * as the OpenTelemetry profilers read it, into buf (65 bytes at least).
 * Returns its length, 0 when the process is in no container, or a
 * negative errno. */
int proc_container_id(pid_t pid, char *buf, size_t size);
/* The same of a cgroup file's text. */
int proc_container_id_in(const char *cgroup, char *buf, size_t size);

/* The first number in a /proc/sys file, or def when it cannot be read. */
unsigned long proc_sysctl_ulong(const char *path, unsigned long def);

/* The first "cpu MHz" of /proc/cpuinfo, rounded; 0 if unknown. */
unsigned int proc_cpu_mhz(void);

#endif /* COLLECTOR_PROC_H */
