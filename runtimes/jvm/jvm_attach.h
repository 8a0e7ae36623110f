/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Java by attach: a HotSpot JVM (JDK 17 and later) that writes no perf map
 * of its own is asked for one, as `jcmd PID Compiler.perfmap` asks, so that
 * its JIT-compiled methods are named (decode/tracker_jit.c reads the map).
 *
 * HotSpot's attach mechanism, as the JVM implements it on Linux: a file
 * .attach_pid<NSPID> in the JVM's working directory (or /tmp) plus a
 * SIGQUIT make the JVM start its attach listener thread, which listens on
 * the unix socket /tmp/.java_pid<NSPID>; the listener accepts a peer of
 * the JVM's own effective uid and gid (or root), reads a request
 * "1\0COMMAND\0ARG1\0ARG2\0ARG3\0" and answers "CODE\n" and the command's
 * output.  NSPID is the JVM's pid as its own PID namespace numbers it, /tmp
 * its own mount namespace's (reached here through /proc/PID/root).
 *
 * What it does inside the JVM: the JVM's attach listener thread starts (if
 * it had not) and stays, and Compiler.perfmap writes /tmp/perf-NSPID.map in
 * the JVM's mount namespace, the code cache as it is at that moment (the
 * file is rewritten at each request).
 *
 * Each JVM is asked by a child process that takes the JVM's uid and gid,
 * all JVMs at once; a JVM that has not answered within the timeout is left
 * alone (its child killed, the trigger file removed).
 */
#ifndef COLLECTOR_JVM_ATTACH_H
#define COLLECTOR_JVM_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* How long a JVM is given to answer. */
#define JVM_ATTACH_TIMEOUT_MS 2000

enum jvm_attach_status {
	JVM_NOT_ASKED = 0,
	JVM_PERFMAP_WRITTEN,  /* the JVM answered 0: its perf map is written */
	JVM_REFUSED,          /* the JVM answered another code (detail says) */
	JVM_NO_ANSWER,        /* no answer within the timeout: left alone */
	JVM_FAILED,           /* the request could not be made (detail says) */
	JVM_NOT_A_JVM,        /* the process maps no libjvm.so: left alone */
	JVM_GONE,             /* the process has exited */
};

struct jvm_attach_result {
	enum jvm_attach_status status;
	int code;             /* the JVM's answer, JVM_REFUSED */
	unsigned int waited_ms; /* from the request to its answer or abandon */
	char detail[96];      /* why, for JVM_REFUSED and JVM_FAILED */
};

/* True if the process maps HotSpot's libjvm.so. */
bool jvm_is_hotspot(pid_t pid);

/* Asks each of the n processes for its perf map, all at once, waiting at
 * most timeout_ms in all; out[i] says what pids[i] answered.  Processes
 * that are not JVMs are not touched. */
void jvm_request_perfmaps(const pid_t *pids, size_t n, int timeout_ms,
			  struct jvm_attach_result *out);

/*
 * A run's JVMs: which processes with unnamed JIT code are asked (the JVMs
 * without a perf map, or with one HotSpot wrote itself, maybe stale: not
 * one a perf-map agent keeps; and again at each refresh those asked
 * before, whose code has changed since), and what each answered last, for
 * the summary.
 */
struct jvm_seen {
	pid_t pid;
	bool asked;           /* asked at least once: asked again each time */
	struct jvm_attach_result last;
};

struct jvm_perfmaps {
	struct jvm_seen *items;
	size_t len, cap;
};

/* Asks the JVMs among the n processes with unnamed JIT code for their
 * perf maps (see above).  0 or -ENOMEM. */
int jvm_perfmaps_refresh(struct jvm_perfmaps *jp, const pid_t *pids, size_t n);
/* The summary's lines: each JVM asked and what it answered, the processes
 * with JIT code left unnamed.  Nothing when there was none. */
void jvm_perfmaps_print(FILE *out, const struct jvm_perfmaps *jp);
void jvm_perfmaps_free(struct jvm_perfmaps *jp);

#endif /* COLLECTOR_JVM_ATTACH_H */
