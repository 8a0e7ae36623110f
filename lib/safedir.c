// SPDX-License-Identifier: GPL-2.0
/* A directory opened component by component, each checked (see safedir.h). */
#include "lib/safedir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether path component st may lead to, or be (last), the directory:
 * NULL, or why not. */
static const char *unsafe_dir(const struct stat *st, bool last)
{
	if (!S_ISDIR(st->st_mode))
		return "not a directory";
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "owned by another user";
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st->st_mode & S_ISVTX)))
		return "writable by group or others";
	return NULL;
}

int safedir_open(const char *path, char *why, size_t why_size)
{
	char *copy = NULL, *save = NULL, *name;
	const char *bad = NULL;
	int fd = -1, err = 0;
	struct stat st;

	if (path[0] != '/') {
		snprintf(why, why_size, "%s: not an absolute path", path);
		err = EINVAL;
		goto fail;
	}
	copy = strdup(path);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!copy || fd < 0) {
		err = copy ? errno : ENOMEM;
		snprintf(why, why_size, "%s", strerror(err));
		goto fail;
	}
	for (name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
		bool last = !save || !*save || strspn(save, "/") == strlen(save);
		int next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (next < 0 && errno == ENOENT && last && mkdirat(fd, name, 0755) == 0)
			next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = errno;
			snprintf(why, why_size, "%s: %s", name,
				 err == ENOTDIR || err == ELOOP ? "a symlink or not a directory"
								: strerror(err));
			if (err == ELOOP)
				err = EPERM;
			goto fail;
		}
		close(fd);
		fd = next;
		if (fstat(fd, &st) != 0 || (bad = unsafe_dir(&st, last))) {
			err = bad ? EPERM : errno;
			snprintf(why, why_size, "%s: %s", name, bad ? bad : strerror(err));
			goto fail;
		}
	}
	free(copy);
	return fd;
fail:
	free(copy);
	if (fd >= 0)
		close(fd);
	errno = err;
	return -1;
}
