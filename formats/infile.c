// SPDX-License-Identifier: GPL-2.0
/* Reading a whole input file for the readers. */
#include "formats/format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* The whole file in memory, so that every offset the reader computes is
 * checked against the real size; works on pipes too. */
int read_whole_file(const char *path, unsigned char **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *b = NULL;
	struct stat st;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size + 1 > cap)
		cap = st.st_size + 1;
	for (;;) {
		ssize_t r;

		if (!b || n == cap) {
			unsigned char *nb;

			if (b)
				cap *= 2;
			nb = realloc(b, cap);
			if (!nb) {
				rc = -ENOMEM;
				goto out;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (r == 0)
			break;
		n += r;
	}
out:
	close(fd);
	if (rc) {
		free(b);
		return rc;
	}
	*buf = b;
	*len = n;
	return 0;
}
