// SPDX-License-Identifier: GPL-2.0
/* The output directory of a run. */
#include "cli/outdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void outdir_default_name(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, size, "collector-%Y%m%d-%H%M%S", &tm);
}

int outdir_make(const char *dir, const struct invoking_user *user)
{
	struct dirent *d;
	DIR *dp;
	int fd, err;

	if (mkdir(dir, 0755) == 0) {
		chmod(dir, 0755);
		if (user->set && chown(dir, user->uid, user->gid) != 0) {
			err = -errno;
			fprintf(stderr, "collector: cannot give %s to uid %u: %s\n", dir,
				(unsigned)user->uid, strerror(errno));
			return err;
		}
		return 0;
	}
	if (errno != EEXIST) {
		err = -errno;
		fprintf(stderr, "collector: cannot create the output directory %s: %s; "
			"choose another with -o\n", dir, strerror(errno));
		return err;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "collector: %s exists and is not a directory; "
			"choose another output with -o\n", dir);
		return -EEXIST;
	}
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	/* never mix two runs in one directory */
	while ((d = readdir(dp)) != NULL) {
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
			closedir(dp);
			fprintf(stderr, "collector: the output directory %s is not empty; "
				"remove it or choose another with -o\n", dir);
			return -ENOTEMPTY;
		}
	}
	closedir(dp);
	if (access(dir, W_OK) != 0) {
		err = -errno;
		fprintf(stderr, "collector: cannot write into %s: %s\n", dir, strerror(errno));
		return err;
	}
	return 0;
}
