// SPDX-License-Identifier: GPL-2.0
/* Java by attach: a JVM asked for its perf map (runtimes/jvm/jvm_attach.h). */
#include "runtimes/jvm/jvm_attach.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/proc.h"
#include "lib/procmaps.h"

/* How often the child looks for the listener's socket (HotSpot starts
 * the listener within a few ms of the SIGQUIT). */
#define SOCKET_POLL_NS 10000000L

/* What the child found, sent whole through its pipe. */
enum attach_step { STEP_NONE, STEP_CREDENTIALS, STEP_TRIGGER, STEP_CONNECT, STEP_TALK };

struct child_reply {
	enum jvm_attach_status status;
	int code;
	int err;
	enum attach_step step;
};

/* One JVM being asked; every path is made before the fork (the child
 * calls system calls only). */
struct request {
	pid_t pid, child;
	int fd;                 /* the child's pipe, -1 once read */
	uid_t uid;
	gid_t gid;
	struct sockaddr_un addr; /* /proc/PID/root/tmp/.java_pidNSPID */
	char trigger_cwd[96];   /* /proc/PID/cwd/.attach_pidNSPID */
	char trigger_tmp[96];   /* /proc/PID/root/tmp/.attach_pidNSPID */
	struct jvm_attach_result *out;
};

static bool is_libjvm(const char *path, void *ctx)
{
	size_t n = strlen(path);

	(void)ctx;
	return n >= 10 && !strcmp(path + n - 10, "/libjvm.so");
}

bool jvm_is_hotspot(pid_t pid)
{
	char path[4096];

	return procmaps_find_exec_file(pid, is_libjvm, NULL, path, sizeof(path)) == 0;
}

static bool is_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/* Starts the JVM's attach listener: the trigger file, then SIGQUIT, then
 * the socket awaited (the parent's timeout ends the wait). */
static int start_listener(const struct request *rq)
{
	const char *trigger = rq->trigger_cwd;
	struct timespec pause = { 0, SOCKET_POLL_NS };
	int fd;

	fd = open(trigger, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0) {
		trigger = rq->trigger_tmp;
		fd = open(trigger, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -errno;
	close(fd);
	if (kill(rq->pid, SIGQUIT) != 0) {
		int err = -errno;

		unlink(trigger);
		return err;
	}
	while (!is_socket(rq->addr.sun_path))
		nanosleep(&pause, NULL);
	unlink(trigger);
	return 0;
}

/* Sends "Compiler.perfmap" and reads the answer's code. */
static void talk(const struct request *rq, struct child_reply *r)
{
	static const char ask[] = "1\0jcmd\0Compiler.perfmap\0\0";
	char answer[512];
	size_t got = 0;
	ssize_t n;
	int s, code = 0;

	r->step = STEP_CONNECT;
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0 || connect(s, (const struct sockaddr *)&rq->addr, sizeof(rq->addr)) != 0) {
		r->err = errno;
		return;
	}
	r->step = STEP_TALK;
	/* sizeof includes the string's own NUL: the protocol's last field */
	if (write(s, ask, sizeof(ask)) != (ssize_t)sizeof(ask)) {
		r->err = errno;
		close(s);
		return;
	}
	while (got < sizeof(answer) - 1 && (n = read(s, answer + got, sizeof(answer) - 1 - got)) > 0)
		got += (size_t)n;
	close(s);
	if (!got || answer[0] < '0' || answer[0] > '9') {
		r->err = EPROTO;
		return;
	}
	for (size_t i = 0; i < got && answer[i] >= '0' && answer[i] <= '9'; i++)
		code = code * 10 + (answer[i] - '0');
	r->code = code;
	r->status = code == 0 ? JVM_PERFMAP_WRITTEN : JVM_REFUSED;
}

/* The child: the JVM's uid and gid (its listener accepts only them or
 * root), the listener started if it is not, the request. */
static void child_ask(const struct request *rq, int wfd)
{
	struct child_reply r = { .status = JVM_FAILED, .step = STEP_CREDENTIALS };
	int err;

	if ((getegid() != rq->gid && (setgroups(0, NULL), setgid(rq->gid) != 0)) ||
	    (geteuid() != rq->uid && setuid(rq->uid) != 0)) {
		r.err = errno;
		goto reply;
	}
	r.step = STEP_TRIGGER;
	if (!is_socket(rq->addr.sun_path) && (err = start_listener(rq)) != 0) {
		r.err = -err;
		goto reply;
	}
	talk(rq, &r);
reply:
	if (write(wfd, &r, sizeof(r)) != (ssize_t)sizeof(r))
		_exit(1);
	_exit(0);
}

static const char *step_name(enum attach_step step)
{
	switch (step) {
	case STEP_CREDENTIALS: return "taking the JVM's uid and gid";
	case STEP_TRIGGER: return "creating .attach_pid";
	case STEP_CONNECT: return "connecting to the attach socket";
	case STEP_TALK: return "talking to the attach listener";
	default: return "asking";
	}
}

static int prepare(struct request *rq, pid_t pid, struct jvm_attach_result *out)
{
	uid_t uids[4];
	gid_t gids[4];
	pid_t ns = proc_namespace_pid(pid);

	memset(rq, 0, sizeof(*rq));
	rq->pid = pid;
	rq->fd = -1;
	rq->child = -1;
	rq->out = out;
	if (proc_uids(pid, uids) != 0 || proc_gids(pid, gids) != 0)
		return -ESRCH;
	rq->uid = uids[1];
	rq->gid = gids[1];
	rq->addr.sun_family = AF_UNIX;
	snprintf(rq->addr.sun_path, sizeof(rq->addr.sun_path), "/proc/%d/root/tmp/.java_pid%d",
		 (int)pid, (int)ns);
	snprintf(rq->trigger_cwd, sizeof(rq->trigger_cwd), "/proc/%d/cwd/.attach_pid%d", (int)pid,
		 (int)ns);
	snprintf(rq->trigger_tmp, sizeof(rq->trigger_tmp), "/proc/%d/root/tmp/.attach_pid%d",
		 (int)pid, (int)ns);
	return 0;
}

static int start_child(struct request *rq)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) != 0)
		return -errno;
	rq->child = fork();
	if (rq->child < 0) {
		int err = -errno;

		close(p[0]);
		close(p[1]);
		return err;
	}
	if (rq->child == 0) {
		close(p[0]);
		child_ask(rq, p[1]);
	}
	close(p[1]);
	rq->fd = p[0];
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The child's reply read (or its absence), the child reaped. */
static void finish(struct request *rq, int64_t start)
{
	struct child_reply r;
	struct jvm_attach_result *out = rq->out;

	if (read(rq->fd, &r, sizeof(r)) == (ssize_t)sizeof(r)) {
		out->status = r.status;
		out->code = r.code;
		if (r.status == JVM_REFUSED)
			snprintf(out->detail, sizeof(out->detail), "the JVM answered %d (JDK 17 or "
				 "later has Compiler.perfmap)", r.code);
		else if (r.status == JVM_FAILED)
			snprintf(out->detail, sizeof(out->detail), "%s: %s", step_name(r.step),
				 strerror(r.err));
	} else {
		out->status = JVM_FAILED;
		snprintf(out->detail, sizeof(out->detail), "the asking process failed");
	}
	close(rq->fd);
	rq->fd = -1;
	waitpid(rq->child, NULL, 0);
	out->waited_ms = (unsigned int)(now_ms() - start);
}

/* A JVM that did not answer is left alone: its child killed, the trigger
 * file removed (the JVM would otherwise find it at its next SIGQUIT). */
static void abandon(struct request *rq, int64_t start)
{
	kill(rq->child, SIGKILL);
	waitpid(rq->child, NULL, 0);
	close(rq->fd);
	rq->fd = -1;
	unlink(rq->trigger_cwd);
	unlink(rq->trigger_tmp);
	rq->out->status = JVM_NO_ANSWER;
	rq->out->waited_ms = (unsigned int)(now_ms() - start);
}

/* Waits for the children's replies until the deadline. */
static void await_replies(struct request *rqs, size_t n, int64_t start, int64_t deadline)
{
	struct pollfd *pfd = calloc(n, sizeof(*pfd));
	size_t waiting = 0;

	for (size_t i = 0; i < n; i++)
		waiting += rqs[i].fd >= 0;
	while (pfd && waiting) {
		int64_t left = deadline - now_ms();

		for (size_t i = 0; i < n; i++)
			pfd[i] = (struct pollfd){ .fd = rqs[i].fd, .events = POLLIN };
		if (left <= 0 || poll(pfd, n, (int)left) == 0)
			break;
		for (size_t i = 0; i < n; i++) {
			if (rqs[i].fd >= 0 && pfd[i].revents) {
				finish(&rqs[i], start);
				waiting--;
			}
		}
	}
	free(pfd);
	for (size_t i = 0; i < n; i++)
		if (rqs[i].fd >= 0)
			abandon(&rqs[i], start);
}

void jvm_request_perfmaps(const pid_t *pids, size_t n, int timeout_ms,
			  struct jvm_attach_result *out)
{
	struct request *rqs = calloc(n ? n : 1, sizeof(*rqs));
	int64_t start = now_ms(), deadline = start + timeout_ms;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		if (!jvm_is_hotspot(pids[i])) {
			out[i].status = kill(pids[i], 0) != 0 && errno == ESRCH ? JVM_GONE
										 : JVM_NOT_A_JVM;
			continue;
		}
		if (!rqs || prepare(&rqs[m], pids[i], &out[i]) != 0) {
			out[i].status = rqs ? JVM_GONE : JVM_FAILED;
			continue;
		}
		if (start_child(&rqs[m]) != 0) {
			out[i].status = JVM_FAILED;
			snprintf(out[i].detail, sizeof(out[i].detail), "cannot start the asking process");
			continue;
		}
		m++;
	}
	await_replies(rqs, m, start, deadline);
	free(rqs);
}
