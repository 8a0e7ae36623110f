/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the drain loop sleeps on: the ring buffer (its epoll fd wakes only
 * when the ring fills past a threshold: samples are submitted without
 * wakeups) and a pidfd per target process, which turns readable when the
 * process exits, so the run ends at once rather than at the next tick, and
 * nothing reads /proc/PID/stat on every tick.
 */
#ifndef COLLECTOR_WAITER_H
#define COLLECTOR_WAITER_H

#include <stdbool.h>
#include <sys/types.h>

struct waiter {
	int epfd;
	const pid_t *pids;
	int *pidfds;        /* -1: no pidfd (an old kernel): /proc is read */
	bool *gone;
	int n;
};

/* Watches ring_epfd and the n processes pids[] (kept, not copied).
 * 0 or a negative errno. */
int waiter_open(struct waiter *w, int ring_epfd, const pid_t *pids, int n);
/* Sleeps until the ring asks to be drained, a target exits, a signal
 * comes or timeout_ms pass. */
void waiter_wait(struct waiter *w, int timeout_ms);
/* Every target has exited (a zombie counts as gone); false without targets. */
bool waiter_targets_gone(struct waiter *w);
void waiter_close(struct waiter *w);

#endif /* COLLECTOR_WAITER_H */
