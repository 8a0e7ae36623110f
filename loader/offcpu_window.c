// SPDX-License-Identifier: GPL-2.0
/*
 * --off-cpu's window: the blocks that straddle the run's start, its
 * intervals' cuts and its end, by the task iterator of
 * bpf/offcpu_window.bpf.h (loader/bpf_session.h says when each is run).
 * An iteration runs the program once per task of the machine, in the
 * read() of the iterator's file: a few microseconds for each task that is
 * no target, a stack copy for each blocked target when the run starts.
 */
#include "loader/bpf_session_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample.skel.h"

static int run_window(struct bpf_session *s, uint32_t op, uint64_t at_ns)
{
	struct bpf_link *link = s->skel->links.offcpu_window;
	char buf[64];
	ssize_t n;
	int fd, err = 0;
	uint64_t t0 = bpf_session_monotonic_ns();

	if (!s->cfg.off_cpu || !link)
		return 0;
	s->skel->bss->window_op = op;
	s->skel->bss->window_at_ns = at_ns;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "collector: cannot iterate over the threads for --off-cpu: %s\n",
			strerror(errno));
		return err;
	}
	/* the program writes nothing: read() returns 0 once every task
	 * was seen */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	if (n < 0) {
		err = -errno;
		fprintf(stderr, "collector: iterating over the threads for --off-cpu: %s\n",
			strerror(errno));
	}
	close(fd);
	s->skel->bss->window_op = 0;
	if (s->cfg.verbose)
		fprintf(stderr, "collector: off-CPU window %s: the threads visited in %.2f ms\n",
			op == COLLECTOR_WINDOW_START ? "start" : "cut",
			(bpf_session_monotonic_ns() - t0) / 1e6);
	return err;
}

int bpf_session_window_pieces(struct bpf_session *s)
{
	struct bpf_map *map = s->skel->maps.window_pieces;
	struct collector_offcpu_done_event d;
	uint32_t key, next;
	int n = 0;

	if (!s->cfg.off_cpu)
		return 0;
	/* each key taken out as it is read: the next is found from the
	 * first again, the map holding at most a piece per blocked thread */
	while (bpf_map__get_next_key(map, NULL, &next, sizeof(next)) == 0) {
		key = next;
		if (bpf_map__lookup_and_delete_elem(map, &key, sizeof(key), &d, sizeof(d), 0) != 0)
			return -errno;
		s->cfg.on_record(s->cfg.ctx, &d, sizeof(d));
		n++;
	}
	return n;
}

void bpf_session_find_sched_text(struct bpf_session *s)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int fd = bpf_program__fd(s->skel->progs.find_sched_text);

	if (fd < 0 || bpf_prog_test_run_opts(fd, &opts) != 0)
		return;
	if (s->cfg.verbose)
		fprintf(stderr, "collector: scheduler text 0x%llx-0x%llx, locks 0x%llx-0x%llx\n",
			(unsigned long long)s->skel->bss->sched_text_start,
			(unsigned long long)s->skel->bss->sched_text_end,
			(unsigned long long)s->skel->bss->lock_text_start,
			(unsigned long long)s->skel->bss->lock_text_end);
}

void bpf_session_sched_text(struct bpf_session *s, uint64_t ranges[4])
{
	ranges[0] = s->skel->bss->sched_text_start;
	ranges[1] = s->skel->bss->sched_text_end;
	ranges[2] = s->skel->bss->lock_text_start;
	ranges[3] = s->skel->bss->lock_text_end;
}

/* Passes at most: each takes at least half a ring of stacks. */
#define WINDOW_PASSES 64

int bpf_session_window_start(struct bpf_session *s)
{
	int err = 0;

	/* a pass that left threads for want of room in the ring: the ring
	 * drained (their stacks unwound), and another */
	for (int pass = 0; pass < WINDOW_PASSES && !err; pass++) {
		s->skel->bss->window_deferred = 0;
		err = run_window(s, COLLECTOR_WINDOW_START, 0);
		if (err || !s->skel->bss->window_deferred)
			break;
		err = bpf_session_drain(s, 0) < 0 ? -EIO : 0;
	}
	return err;
}

int bpf_session_window_cut(struct bpf_session *s, uint64_t ktime_ns, bool until)
{
	/* first, so that a switch-in from now on stops at the end too */
	if (until && s->cfg.off_cpu)
		s->skel->bss->offcpu_until_ns = ktime_ns;
	return run_window(s, COLLECTOR_WINDOW_CUT, ktime_ns);
}
