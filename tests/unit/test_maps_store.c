// SPDX-License-Identifier: GPL-2.0
/*
 * lib/maps_store.c, the readings of maps shared between the unwind
 * service and the tracker: a reading is found by pid when made at or
 * after the time asked, as a copy of its own; a newer reading replaces an
 * older one, an older one does not; past MAPS_STORE_SLOTS processes, the
 * least recently read gives way; the store is safe to share (threads put
 * and get at once under ASan).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/maps_store.h"

static void make_maps(struct procmaps *m, size_t n, const char *path)
{
	m->n = n;
	m->entries = calloc(n, sizeof(*m->entries));
	assert_non_null(m->entries);
	for (size_t i = 0; i < n; i++) {
		m->entries[i].start = 0x1000 * (i + 1);
		m->entries[i].end = 0x1000 * (i + 2);
		m->entries[i].exec = true;
		m->entries[i].path = strdup(path);
	}
}

static void test_put_get(void **state)
{
	struct maps_store *s = maps_store_new();
	struct procmaps in, out;
	uint64_t when = 0;

	(void)state;
	assert_non_null(s);
	assert_int_equal(maps_store_get(s, 42, 0, &out, &when), -ENOENT);
	make_maps(&in, 3, "/usr/bin/early");
	maps_store_put(s, 42, 100, &in);
	procmaps_free(&in); /* the store keeps its own copy */
	assert_int_equal(maps_store_get(s, 42, 100, &out, &when), 0);
	assert_int_equal(when, 100);
	assert_int_equal(out.n, 3);
	assert_string_equal(out.entries[2].path, "/usr/bin/early");
	assert_int_equal(out.entries[2].start, 0x3000);
	procmaps_free(&out);
	/* made before the time asked: not given */
	assert_int_equal(maps_store_get(s, 42, 101, &out, &when), -ENOENT);
	assert_int_equal(maps_store_get(s, 43, 0, &out, &when), -ENOENT);
	/* a newer reading replaces it, an older one does not */
	make_maps(&in, 5, "/usr/lib/libc.so.6");
	maps_store_put(s, 42, 200, &in);
	procmaps_free(&in);
	make_maps(&in, 1, "/stale");
	maps_store_put(s, 42, 150, &in);
	procmaps_free(&in);
	assert_int_equal(maps_store_get(s, 42, 101, &out, &when), 0);
	assert_int_equal(when, 200);
	assert_int_equal(out.n, 5);
	assert_string_equal(out.entries[0].path, "/usr/lib/libc.so.6");
	procmaps_free(&out);
	maps_store_free(s);
}

/* maps_store_read: another thread's reading made since the time asked is
 * taken (no /proc read); else this process's maps are read from /proc,
 * with their time, and kept for the other thread. */
static void test_read_shared(void **state)
{
	struct maps_store *s = maps_store_new();
	pid_t self = getpid();
	struct procmaps in, out;
	uint64_t read = 0, reused = 0, followed = 0, when = 0, now;
	struct timespec ts;

	(void)state;
	assert_non_null(s);
	make_maps(&in, 2, "/usr/bin/by-the-other-thread");
	maps_store_put(s, self, 1000, &in);
	procmaps_free(&in);
	assert_int_equal(maps_store_read(s, self, 1000, &out, &when), 0);
	assert_int_equal(when, 1000);
	assert_string_equal(out.entries[0].path, "/usr/bin/by-the-other-thread");
	procmaps_free(&out);
	maps_store_counts(s, &read, &reused, &followed);
	assert_int_equal(read, 0);
	assert_int_equal(reused, 1);
	/* asked for a later time: read from /proc, and kept */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	assert_int_equal(maps_store_read(s, self, 1001, &out, &when), 0);
	assert_true(when >= now);
	assert_true(out.n > 2);
	procmaps_free(&out);
	maps_store_counts(s, &read, &reused, &followed);
	assert_int_equal(read, 1);
	assert_int_equal(reused, 1);
	assert_int_equal(maps_store_get(s, self, when, &out, NULL), 0);
	assert_true(out.n > 2);
	procmaps_free(&out);
	/* without a store: /proc only */
	assert_int_equal(maps_store_read(NULL, self, 0, &out, &when), 0);
	assert_true(out.n > 2);
	procmaps_free(&out);
	maps_store_free(s);
}

/* MAPS_STORE_SLOTS + 1 processes: the first put is the one gone; one put
 * again keeps its slot, with the newer reading. */
static void test_first_put_gives_way(void **state)
{
	struct maps_store *s = maps_store_new();
	struct procmaps in, out;
	uint64_t when = 0;

	(void)state;
	make_maps(&in, 1, "/bin/x");
	for (pid_t pid = 1; pid <= MAPS_STORE_SLOTS + 1; pid++)
		maps_store_put(s, pid, 1000 + (uint64_t)pid, &in);
	maps_store_put(s, 5, 9000, &in);
	procmaps_free(&in);
	assert_int_equal(maps_store_get(s, 1, 0, &out, NULL), -ENOENT);
	for (pid_t pid = 2; pid <= MAPS_STORE_SLOTS + 1; pid++) {
		assert_int_equal(maps_store_get(s, pid, 0, &out, &when), 0);
		assert_int_equal(when, pid == 5 ? 9000 : 1000 + (uint64_t)pid);
		procmaps_free(&out);
	}
	/* the next new pid takes the slot put first after pid 1's */
	make_maps(&in, 1, "/bin/y");
	maps_store_put(s, 99999, 1, &in);
	procmaps_free(&in);
	assert_int_equal(maps_store_get(s, 2, 0, &out, NULL), -ENOENT);
	assert_int_equal(maps_store_get(s, 99999, 0, &out, NULL), 0);
	procmaps_free(&out);
	maps_store_free(s);
}

static void *putter(void *arg)
{
	struct maps_store *s = arg;
	struct procmaps in;

	make_maps(&in, 4, "/bin/thread");
	for (int i = 0; i < 20000; i++)
		maps_store_put(s, 1 + i % 64, (uint64_t)i, &in);
	procmaps_free(&in);
	return NULL;
}

static void test_threads(void **state)
{
	struct maps_store *s = maps_store_new();
	struct procmaps out;
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, putter, s), 0);
	for (int i = 0; i < 20000; i++) {
		if (maps_store_get(s, 1 + i % 64, 0, &out, NULL) == 0) {
			assert_int_equal(out.n, 4);
			assert_string_equal(out.entries[3].path, "/bin/thread");
			procmaps_free(&out);
		}
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(maps_store_get(s, 64, 0, &out, NULL), 0);
	procmaps_free(&out);
	maps_store_free(s);
}

/* A feed for the store: its drains apply what the test scripted, once. */
struct script {
	struct maps_store *s;
	void (*step)(struct maps_store *s);
	int drains;
};

static void scripted_drain(void *ctx)
{
	struct script *sc = ctx;

	sc->drains++;
	if (sc->step)
		sc->step(sc->s);
	sc->step = NULL;
}

#define NO_PID 0x7ffffff0 /* no such process: /proc cannot be read */
#define CHILD (NO_PID + 1)

static void place(struct maps_store *s, pid_t pid, uint64_t ns, uint64_t start, const char *path)
{
	struct procmap_entry e = { .start = start, .end = start + 0x1000, .exec = true,
				   .path = (char *)path };

	assert_int_equal(maps_store_map(s, pid, ns, &e), 0);
}

static void exec_fork_map(struct maps_store *s)
{
	place(s, NO_PID, 50, 0x9000, "/before-the-exec");
	maps_store_exec(s, NO_PID, 100);
	place(s, NO_PID, 90, 0x8000, "/older-than-the-exec");
	place(s, NO_PID, 110, 0x1000, "/bin/x");
	maps_store_fork(s, CHILD, NO_PID, 120);
	place(s, CHILD, 130, 0x2000, "/lib/in-the-child");
	place(s, NO_PID, 140, 0x3000, "/lib/in-the-parent");
}

static void assert_paths(struct maps_store *s, pid_t pid, const char *a, const char *b)
{
	struct procmaps out;

	assert_int_equal(maps_store_read(s, pid, MAPS_STORE_FRESH, &out, NULL), 0);
	assert_int_equal(out.n, 2);
	assert_string_equal(out.entries[0].path, a);
	assert_string_equal(out.entries[1].path, b);
	procmaps_free(&out);
}

/* Records keep a process's reading current from its exec (or, for one
 * that was running before, from its first reading of /proc), in their
 * time order; a fork copies; lost records send each process to /proc. */
static void test_followed(void **state)
{
	struct maps_store *s = maps_store_new();
	struct script sc = { .s = s, .step = exec_fork_map };
	uint64_t read, reused, followed;
	struct procmaps out;
	size_t n_self;

	(void)state;
	assert_int_equal(maps_store_read(s, NO_PID, 0, &out, NULL), -ESRCH);
	maps_store_follow(s, scripted_drain, &sc);
	/* a process gone: its mappings all the same, from the records */
	assert_paths(s, NO_PID, "/bin/x", "/lib/in-the-parent");
	assert_paths(s, CHILD, "/bin/x", "/lib/in-the-child");
	maps_store_counts(s, &read, &reused, &followed);
	assert_int_equal(read, 0);
	assert_int_equal(followed, 2);
	assert_int_equal(sc.drains, 2);
	/* a process running before: /proc once, then the records */
	assert_int_equal(maps_store_read(s, getpid(), 0, &out, NULL), 0);
	n_self = out.n;
	assert_true(n_self > 2);
	procmaps_free(&out);
	place(s, getpid(), UINT64_MAX - 1, 0x4000, "/mapped-since");
	assert_int_equal(maps_store_read(s, getpid(), 0, &out, NULL), 0);
	assert_int_equal(out.n, n_self + 1);
	assert_string_equal(out.entries[0].path, "/mapped-since");
	procmaps_free(&out);
	maps_store_counts(s, &read, &reused, &followed);
	assert_int_equal(read, 1);
	assert_int_equal(followed, 3);
	/* a fork by a process not followed: the child's pid had another
	 * process's reading, no longer current */
	maps_store_fork(s, CHILD, NO_PID + 2, 200);
	assert_int_equal(maps_store_read(s, CHILD, 0, &out, NULL), -ESRCH);
	/* records lost: /proc again */
	maps_store_unfollow(s);
	assert_int_equal(maps_store_read(s, NO_PID, 0, &out, NULL), -ESRCH);
	maps_store_follow(s, NULL, NULL);
	maps_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_read_shared),
		cmocka_unit_test(test_first_put_gives_way),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_followed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
