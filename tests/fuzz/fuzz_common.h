/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the libFuzzer harnesses: a sink for printed output and
 * a path that holds the current input, for the entry points that take a
 * file name (collector dump).  The file is a memfd, so that writing each
 * input costs no disk I/O; /proc/self/fd/N opens it again like any file.
 */
#ifndef COLLECTOR_FUZZ_COMMON_H
#define COLLECTOR_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static inline FILE *fuzz_devnull(void)
{
	static FILE *f;

	if (!f) {
		f = fopen("/dev/null", "w");
		if (!f) {
			perror("/dev/null");
			abort();
		}
	}
	return f;
}

/* Replaces the memfd's contents with data[0..size) and returns its path. */
static inline const char *fuzz_input_path(const uint8_t *data, size_t size)
{
	static char path[64];
	static int fd = -1;

	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
		perror("fuzz input memfd");
		abort();
	}
	return path;
}

#endif /* COLLECTOR_FUZZ_COMMON_H */
