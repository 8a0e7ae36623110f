// SPDX-License-Identifier: GPL-2.0
/* Sleeping until the ring fills, a target exits or time passes. */
#include "loader/waiter.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/proc.h"

#define WAITER_RING UINT32_MAX

/* A target that has exited (a zombie counts as gone). */
static bool pid_gone(pid_t pid)
{
	struct proc_stat st;

	return proc_stat(pid, &st) != 0 || st.state == 'Z' || st.state == 'X';
}

int waiter_open(struct waiter *w, int ring_epfd, const pid_t *pids, int n)
{
	struct epoll_event ev = { .events = EPOLLIN };

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->pids = pids;
	w->n = n;
	w->pidfds = calloc(n + 1, sizeof(*w->pidfds));
	w->gone = calloc(n + 1, sizeof(*w->gone));
	if (w->epfd < 0 || !w->pidfds || !w->gone)
		return -ENOMEM;
	ev.data.u32 = WAITER_RING;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, ring_epfd, &ev) != 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		w->pidfds[i] = syscall(SYS_pidfd_open, pids[i], 0);
		ev.data.u32 = i;
		if (w->pidfds[i] >= 0 && epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->pidfds[i], &ev) != 0) {
			close(w->pidfds[i]);
			w->pidfds[i] = -1;
		}
	}
	return 0;
}

void waiter_wait(struct waiter *w, int timeout_ms)
{
	struct epoll_event evs[8];
	int n = epoll_wait(w->epfd, evs, 8, timeout_ms);

	for (int i = 0; i < n; i++) {
		uint32_t k = evs[i].data.u32;

		if (k == WAITER_RING || (int)k >= w->n)
			continue;
		/* level-triggered and readable for good: stop watching it */
		w->gone[k] = true;
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->pidfds[k], NULL);
	}
}

bool waiter_targets_gone(struct waiter *w)
{
	if (!w->n)
		return false;
	for (int i = 0; i < w->n; i++) {
		if (!w->gone[i] && w->pidfds[i] < 0)
			w->gone[i] = pid_gone(w->pids[i]);
		if (!w->gone[i])
			return false;
	}
	return true;
}

void waiter_close(struct waiter *w)
{
	for (int i = 0; w->pidfds && i < w->n; i++)
		if (w->pidfds[i] >= 0)
			close(w->pidfds[i]);
	if (w->epfd > 0)
		close(w->epfd);
	free(w->pidfds);
	free(w->gone);
	memset(w, 0, sizeof(*w));
	w->epfd = -1;
}
