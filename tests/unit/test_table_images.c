// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the unwind table service's images (unwind/table_images.c):
 * an image met through the /proc path of a process that has exited; the
 * mapping table of a process gone before it was written (its maps from
 * the kernel's records, which outlive it) is taken back, and a full map
 * of tables makes room from the processes gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/maps_store.h"
#include "unwind/table_service_internal.h"

/* The BPF maps' side is not reached: nothing is built here. */
static const struct unwind_maps_ops no_ops;

/*
 * A process gone before the service met its image (a build's short step):
 * its /proc path fails, and the image opens from the name its maps gave,
 * when that is the same file (device, inode).  A name that leads to another
 * file is not used, and the image is not given up: the next process that
 * maps it opens it.
 */
static void test_gone_process_image(void **state)
{
	struct unwind_maps maps = { .ops = &no_ops };
	struct unwind_service *us = unwind_service_new(&maps, NULL);
	const char *gone = "/proc/999999999/root/proc/self/exe";
	char self[4096];
	struct stat st;
	ssize_t n;
	size_t i, k;

	(void)state;
	assert_non_null(us);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	assert_int_equal(stat(self, &st), 0);
	i = images_get(us, st.st_dev, st.st_ino, gone, self, "/proc/999999999/root");
	assert_int_not_equal(i, SIZE_MAX);
	assert_int_equal(us->images[i].state, IMAGE_QUEUED);
	assert_int_equal(us->st.open_failed, 0);
	/* another file's identity: not opened by the name, tried again later */
	k = images_get(us, st.st_dev, st.st_ino + 1000003, gone, self, "/proc/999999999/root");
	assert_int_not_equal(k, SIZE_MAX);
	assert_int_equal(us->images[k].state, IMAGE_UNBUILT);
	assert_int_equal(us->st.open_failed, 1);
	assert_int_equal(us->st.images_failed, 0);
	/* met again through a path that opens: queued to be built */
	assert_int_equal(images_get(us, st.st_dev, st.st_ino + 1000003, self, self, ""), k);
	assert_int_equal(us->images[k].state, IMAGE_QUEUED);
	unwind_service_free(us);
}

/* The BPF side of the mapping tables: which processes have one, in a map
 * that holds `room` of them. */
struct fake_procs {
	pid_t pids[8];
	int n, room;
};

static int fake_set(void *maps, uint32_t tgid, const struct collector_unwind_proc *p)
{
	struct fake_procs *f = maps;

	(void)p;
	for (int i = 0; i < f->n; i++)
		if (f->pids[i] == (pid_t)tgid)
			return 0;
	if (f->n == f->room)
		return -E2BIG;
	f->pids[f->n++] = (pid_t)tgid;
	return 0;
}

static void fake_forget(void *maps, uint32_t tgid)
{
	struct fake_procs *f = maps;

	for (int i = 0; i < f->n; i++)
		if (f->pids[i] == (pid_t)tgid)
			f->pids[i--] = f->pids[--f->n];
}

static bool fake_has(const struct fake_procs *f, pid_t pid)
{
	for (int i = 0; i < f->n; i++)
		if (f->pids[i] == pid)
			return true;
	return false;
}

static void no_drain(void *ctx)
{
	(void)ctx;
}

/* A child that has exited and was reaped: its pid. */
static pid_t reaped_child(void)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return pid;
}

/* pid followed by the store from an exec at 1 ns, with one mapping of
 * this test's own executable. */
static void followed(struct maps_store *s, pid_t pid, const char *exe, const struct stat *st)
{
	struct procmap_entry e = { .start = 0x400000, .end = 0x401000, .exec = true,
				   .dev_major = major(st->st_dev), .dev_minor = minor(st->st_dev),
				   .inode = st->st_ino, .path = (char *)exe };

	maps_store_exec(s, pid, 1);
	assert_int_equal(maps_store_map(s, pid, 2, &e), 0);
}

static void test_gone_process_table(void **state)
{
	static const struct unwind_maps_ops ops = { .set_process = fake_set,
						    .forget_process = fake_forget };
	struct fake_procs f = { .room = 2 };
	struct unwind_maps maps = { .ops = &ops, .maps = &f };
	struct unwind_service *us = unwind_service_new(&maps, NULL);
	struct maps_store *s = maps_store_new();
	pid_t gone = reaped_child(), self = getpid(), other = self == 1 ? 2 : 1, zombie;
	siginfo_t info;
	char exe[4096];
	struct stat st;
	bool complete;
	ssize_t n;

	(void)state;
	assert_non_null(us);
	assert_non_null(s);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(stat(exe, &st), 0);
	maps_store_follow(s, no_drain, NULL);
	unwind_service_share_maps(us, s);
	followed(s, gone, exe, &st);
	followed(s, self, exe, &st);
	/* gone: written, then taken back */
	assert_int_equal(process_write(us, gone, 0, &complete, NULL, true), 0);
	assert_false(fake_has(&f, gone));
	assert_int_equal(us->n_users, 0);
	assert_int_equal(process_write(us, self, 0, &complete, NULL, true), 0);
	assert_true(fake_has(&f, self));
	assert_int_equal(us->n_users, 1);
	/* a zombie (exited, not yet reaped) keeps its table, and fills the
	 * map; once reaped, the next process's table makes room from it */
	zombie = fork();
	assert_true(zombie >= 0);
	if (zombie == 0)
		_exit(0);
	while (waitid(P_PID, (id_t)zombie, &info, WEXITED | WNOWAIT) != 0)
		;
	followed(s, zombie, exe, &st);
	assert_int_equal(process_write(us, zombie, 0, &complete, NULL, true), 0);
	assert_true(fake_has(&f, zombie));
	assert_int_equal(waitpid(zombie, NULL, 0), zombie);
	followed(s, other, exe, &st);
	assert_int_equal(process_write(us, other, 0, &complete, NULL, true), 0);
	assert_false(fake_has(&f, zombie));
	assert_true(fake_has(&f, self) && fake_has(&f, other));
	assert_int_equal(us->n_users, 2);
	unwind_service_free(us);
	maps_store_follow(s, NULL, NULL);
	maps_store_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone_process_image),
		cmocka_unit_test(test_gone_process_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
