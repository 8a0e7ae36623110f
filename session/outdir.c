// SPDX-License-Identifier: GPL-2.0
/* The output directory of a run. */
#include "session/outdir.h"
#include "lib/userfs.h"

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

static int make_dir(const char *dir)
{
	struct dirent *d;
	DIR *dp;
	int fd, err;

	if (mkdir(dir, 0755) == 0) {
		chmod(dir, 0755); /* whatever the umask */
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
		err = -errno;
		if (err == -EACCES)
			fprintf(stderr, "collector: cannot open the output directory %s: %s\n", dir,
				strerror(-err));
		else
			fprintf(stderr, "collector: %s exists and is not a directory; "
				"choose another output with -o\n", dir);
		return err == -EACCES ? err : -EEXIST;
	}
	/* the effective ids: the file system ids of the scope, not sudo's
	 * real uid 0 as access() would use */
	if (faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
		err = -errno;
		fprintf(stderr, "collector: cannot write into %s: %s\n", dir, strerror(errno));
		close(fd);
		return err;
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
	return 0;
}

int outdir_make(const char *dir)
{
	int err = user_fs_enter();

	if (err) {
		fprintf(stderr, "collector: cannot take your rights to create %s\n", dir);
		return err;
	}
	err = make_dir(dir);
	user_fs_leave();
	return err;
}
