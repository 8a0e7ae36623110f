// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the unwind table service's images (unwind/table_images.c):
 * an image met through the /proc path of a process that has exited.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gone_process_image),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
