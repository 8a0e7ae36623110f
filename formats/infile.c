// SPDX-License-Identifier: GPL-2.0
/* Input files and errors for the readers (infile.h). */
#include "formats/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int format_vfail(struct format_error *err, size_t offset, const char *fmt, va_list ap)
{
	if (err) {
		err->offset = offset;
		vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	}
	return -EINVAL;
}

int format_fail(struct format_error *err, size_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	format_vfail(err, offset, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int format_report(const char *path, int rc, const struct format_error *err)
{
	if (rc != -EINVAL)
		fprintf(stderr, "%s: %s\n", path, strerror(-rc));
	else if (err->offset == FORMAT_NO_OFFSET)
		fprintf(stderr, "%s: %s\n", path, err->reason);
	else
		fprintf(stderr, "%s: offset %zu: %s\n", path, err->offset, err->reason);
	return rc;
}

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

int format_read_file(const char *path, unsigned char **buf, size_t *len,
		     struct format_error *err)
{
	int rc = read_whole_file(path, buf, len);

	if (rc && err) {
		err->offset = 0;
		snprintf(err->reason, sizeof(err->reason), "cannot read: %s", strerror(-rc));
	}
	return rc;
}

int format_parse_file(const char *path, struct format_error *err,
		      int (*parse)(const unsigned char *data, size_t n, void *ctx,
				   struct format_error *err),
		      void *ctx)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int rc;

	memset(err, 0, sizeof(*err));
	rc = format_read_file(path, &buf, &len, err);
	if (rc)
		return rc;
	rc = parse(buf, len, ctx, err);
	free(buf);
	return rc;
}

int format_map_file(const char *path, const unsigned char **data, size_t *n)
{
	struct stat st;
	void *p;
	int fd, ret = 0;

	*data = NULL;
	*n = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		ret = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto out;
	}
	if (st.st_size == 0)
		goto out;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	*data = p;
	*n = (size_t)st.st_size;
out:
	close(fd);
	return ret;
}

void format_unmap_file(const unsigned char *data, size_t n)
{
	if (data)
		munmap((void *)data, n);
}

int format_inflate(const unsigned char *data, size_t n, size_t max, unsigned char **out,
		   size_t *out_len, struct format_error *err)
{
	size_t cap = n * 4 + 4096, len = 0;
	unsigned char *buf = malloc(cap);
	z_stream z = { 0 };
	int rc, zr;

	if (!buf)
		return -ENOMEM;
	/* 15 + 32: gzip or zlib header, detected */
	if (inflateInit2(&z, 15 + 32) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	z.next_in = (Bytef *)data;
	do {
		if (len == cap) {
			unsigned char *nb;

			if (cap >= max) {
				rc = format_fail(err, z.total_in, "inflates to more than %llu bytes",
					  (unsigned long long)max);
				goto out;
			}
			cap = cap * 2 > max ? max : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
		}
		/* avail_in and avail_out are 32 bits */
		z.avail_in = (uInt)((n - z.total_in) > (1u << 30) ? (1u << 30) : n - z.total_in);
		z.next_in = (Bytef *)data + z.total_in;
		z.next_out = buf + len;
		z.avail_out = (uInt)((cap - len) > (1u << 30) ? (1u << 30) : cap - len);
		zr = inflate(&z, Z_NO_FLUSH);
		len = z.total_out;
		if (zr == Z_BUF_ERROR && z.total_in == n) {
			rc = format_fail(err, n, "the gzip stream ends early (cut short?)");
			goto out;
		}
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
			rc = format_fail(err, z.total_in, "not a valid gzip stream: %s",
				  z.msg ? z.msg : "inflate failed");
			goto out;
		}
	} while (zr != Z_STREAM_END);
	if (z.total_in != n) {
		rc = format_fail(err, z.total_in, "%zu bytes after the end of the gzip stream",
			  (size_t)(n - z.total_in));
		goto out;
	}
	rc = 0;
	*out = buf;
	*out_len = len;
	buf = NULL;
out:
	inflateEnd(&z);
	free(buf);
	return rc;
}
