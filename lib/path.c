// SPDX-License-Identifier: GPL-2.0
/* Finding a command the way execvp(3) does, and a library as ld.so. */
#include "lib/path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int path_check_executable(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	/* the effective ids, as execve checks them (and the file system
	 * ids of a user_fs scope), not the real ones access() takes */
	if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) != 0)
		return -EACCES;
	return 0;
}

char *path_find_command(const char *argv0)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(argv0, '/'))
		return path_check_executable(argv0) ? NULL : strdup(argv0);
	for (path = path ? path : "/usr/local/bin:/usr/bin:/bin"; *path;) {
		size_t n = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, n ? path : ".", argv0);
		if (!path_check_executable(buf))
			return strdup(buf);
		path += n + (path[n] == ':');
	}
	return NULL;
}

/* /etc/ld.so.conf.d on Debian x86-64 (libc.conf, x86_64-linux-gnu.conf),
 * then ld.so's trusted directories */
const char *const path_library_dirs[] = {
	"/usr/local/lib", "/usr/local/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
	"/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib", NULL,
};

int path_find_library(const char *name, char *out, size_t size)
{
	struct stat st;

	if (strchr(name, '/')) {
		snprintf(out, size, "%s", name);
		return stat(out, &st) == 0 && S_ISREG(st.st_mode) ? 0 : -ENOENT;
	}
	for (size_t d = 0; path_library_dirs[d]; d++) {
		if ((size_t)snprintf(out, size, "%s/%s", path_library_dirs[d], name) >= size)
			continue;
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	return -ENOENT;
}
