// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the unwind table service's images (unwind/table_images.c):
 * an image met through the /proc path of a process that has exited; the
 * mapping table of a process gone before it was written (its maps from
 * the kernel's records, which outlive it) is taken back, and a full map
 * of tables makes room from the processes gone; an image's table is
 * published by file for the program, and forgotten before it is evicted.
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

/* This test's own executable: its path into path[size], its stat. */
static void own_executable(char *path, size_t size, struct stat *st)
{
	ssize_t n = readlink("/proc/self/exe", path, size - 1);

	assert_true(n > 0);
	path[n] = '\0';
	assert_int_equal(stat(path, st), 0);
}

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
	size_t i, k;

	(void)state;
	assert_non_null(us);
	own_executable(self, sizeof(self), &st);
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

	(void)state;
	assert_non_null(us);
	assert_non_null(s);
	own_executable(exe, sizeof(exe), &st);
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

/* The BPF maps' side of the images: space handed out in order (up to
 * room rows), and the program's table of images by file. */
struct fake_images {
	uint32_t next, room;
	int set, forgotten;
	struct collector_unwind_image_key key, forgotten_key;
	struct collector_unwind_image value;
};

static int fake_add(void *maps, const struct collector_unwind_row *rows, uint32_t n_rows,
		    const uint32_t *pages, uint32_t n_pages, struct unwind_image_space *out)
{
	struct fake_images *f = maps;

	(void)rows;
	(void)pages;
	if (f->next + n_rows + n_pages > f->room)
		return -ENOSPC;
	*out = (struct unwind_image_space){ f->next, n_rows, f->next + n_rows, n_pages };
	f->next += n_rows + n_pages;
	return 0;
}

static void fake_remove(void *maps, const struct unwind_image_space *sp)
{
	struct fake_images *f = maps;

	/* the forgetting comes first: the program no longer finds the rows */
	assert_int_equal(f->forgotten, 1);
	f->next = sp->first_row; /* the only image: its space is free again */
}

static int fake_set_image(void *maps, const struct collector_unwind_image_key *key,
			  const struct collector_unwind_image *img)
{
	struct fake_images *f = maps;

	f->set++;
	f->key = *key;
	f->value = *img;
	return 0;
}

static void fake_forget_image(void *maps, const struct collector_unwind_image_key *key)
{
	struct fake_images *f = maps;

	f->forgotten++;
	f->forgotten_key = *key;
}

/*
 * An image built is published by file for the program's own look-ups
 * (bpf/unwind_learn.bpf.h): under the kernel's encoding of its device,
 * with each segment's table placed where a process's mapping table would
 * place it (the same base for every mapping of the segment); evicted, it
 * is forgotten before its rows are given back.
 */
static void test_image_published(void **state)
{
	static const struct unwind_maps_ops ops = { .add_image = fake_add,
						    .remove_image = fake_remove,
						    .set_image = fake_set_image,
						    .forget_image = fake_forget_image };
	struct fake_images f = { .room = 1u << 26 };
	struct unwind_maps maps = { .ops = &ops, .maps = &f };
	struct unwind_service *us = unwind_service_new(&maps, NULL);
	char self[4096];
	struct cfi_image *img;
	struct stat st;
	uint32_t published = 0;
	size_t i, k;

	(void)state;
	assert_non_null(us);
	own_executable(self, sizeof(self), &st);
	i = images_get(us, st.st_dev, st.st_ino, self, self, "");
	assert_int_not_equal(i, SIZE_MAX);
	img = &us->images[i];
	assert_int_equal(img->state, IMAGE_QUEUED);
	images_build(us, img);
	assert_int_equal(img->state, IMAGE_READY);
	assert_int_equal(f.set, 1);
	assert_true(img->published);
	assert_int_equal(f.key.dev, ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev));
	assert_int_equal(f.key.ino, st.st_ino);
	for (uint32_t s = 0; s < img->n_segs; s++) {
		const struct cfi_seg *seg = &img->segs[s];
		const struct collector_unwind_image_seg *v = &f.value.segs[published];
		/* a mapping of the segment's first page, at any address */
		uint64_t start = 0x7f0000001000ull, pgoff = seg->offset & ~4095ull;

		if (!seg->n_pages)
			continue;
		assert_true(published < f.value.n_segs);
		assert_int_equal(v->first_page, seg->first_page);
		assert_int_equal(v->n_pages, seg->n_pages);
		assert_true(pgoff >= v->start && pgoff < v->end);
		assert_int_equal(v->end, seg->offset + seg->filesz);
		/* the program's base: start - pgoff + delta; the one
		 * table_processes.c writes: start + table_base - (vmo + pgoff) */
		assert_int_equal(start - pgoff + (uint64_t)v->delta,
				 start + seg->table_base - (seg->vmo + pgoff));
		published++;
	}
	assert_true(published > 0);
	assert_int_equal(published, f.value.n_segs);
	/* no room for another image: this one, unused, is evicted for it,
	 * and forgotten first (fake_remove checks) */
	f.room = f.next;
	k = images_get(us, st.st_dev, st.st_ino + 1, self, self, "");
	assert_int_not_equal(k, SIZE_MAX);
	images_build(us, &us->images[k]);
	img = &us->images[i];
	assert_int_equal(img->state, IMAGE_EVICTED);
	assert_false(img->published);
	assert_int_equal(f.forgotten, 1);
	assert_int_equal(f.forgotten_key.dev, f.key.dev);
	assert_int_equal(f.forgotten_key.ino, st.st_ino);
	assert_int_equal(us->images[k].state, IMAGE_READY);
	assert_int_equal(f.set, 2);
	unwind_service_free(us);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone_process_image),
		cmocka_unit_test(test_gone_process_table),
		cmocka_unit_test(test_image_published),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
