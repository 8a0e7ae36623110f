// SPDX-License-Identifier: GPL-2.0
/*
 * Output files that appear under their final name only when complete.
 * Every path under opts->dir is created, renamed and removed inside a
 * user_fs scope (lib/userfs.h): with the invoking user's rights, so that
 * what he could not create is refused and what is created is his.
 */
#include "formats/format.h"
#include "lib/userfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *join(const char *dir, const char *rel, const char *suffix)
{
	size_t n = strlen(dir) + strlen(rel) + strlen(suffix) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s%s", dir, rel, suffix);
	return p;
}

/* The temporary file, created with the user's rights: an fd, or a
 * negative errno after a message. */
static int create_tmp(const char *tmp_path)
{
	int fd, err = user_fs_enter();

	if (err)
		return err;
	/* A stale temporary file from an interrupted run is ours to replace,
	 * but never through a symlink: unlink removes the link itself. */
	unlink(tmp_path);
	fd = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	err = fd < 0 ? -errno : 0;
	user_fs_leave();
	if (err) {
		fprintf(stderr, "collector: cannot create %s: %s\n", tmp_path, strerror(-err));
		return err;
	}
	fchmod(fd, 0644); /* whatever the umask */
	return fd;
}

/* unlink, with the user's rights */
static void remove_tmp(const char *tmp_path)
{
	if (user_fs_enter() == 0) {
		unlink(tmp_path);
		user_fs_leave();
	}
}

int outfile_open(struct outfile *f, const struct export_options *opts, const char *relpath)
{
	int fd, err;

	memset(f, 0, sizeof(*f));
	f->opts = opts;
	f->final_path = join(opts->dir, relpath, "");
	f->tmp_path = join(opts->dir, relpath, ".tmp");
	if (!f->final_path || !f->tmp_path) {
		err = -ENOMEM;
		goto fail;
	}
	fd = create_tmp(f->tmp_path);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	f->fp = fdopen(fd, "wb");
	if (!f->fp) {
		err = -errno;
		close(fd);
		remove_tmp(f->tmp_path);
		goto fail;
	}
	/* big buffer: exporters write many small records */
	setvbuf(f->fp, NULL, _IOFBF, 1 << 20);
	return 0;
fail:
	free(f->final_path);
	free(f->tmp_path);
	memset(f, 0, sizeof(*f));
	return err;
}

int outfile_write(struct outfile *f, const void *data, size_t n)
{
	if (n && fwrite(data, 1, n, f->fp) != n)
		return -errno ? -errno : -EIO;
	return 0;
}

static void release(struct outfile *f)
{
	free(f->final_path);
	free(f->tmp_path);
	memset(f, 0, sizeof(*f));
}

int outfile_commit(struct outfile *f)
{
	int err = 0;

	if (!f->fp)
		return -EBADF;
	if (ferror(f->fp) || fflush(f->fp) != 0)
		err = errno ? -errno : -EIO;
	if (fclose(f->fp) != 0 && !err)
		err = errno ? -errno : -EIO;
	f->fp = NULL;
	if (!err && !(err = user_fs_enter())) {
		if (rename(f->tmp_path, f->final_path) != 0)
			err = -errno;
		user_fs_leave();
	}
	if (err) {
		fprintf(stderr, "collector: cannot write %s: %s\n", f->final_path, strerror(-err));
		remove_tmp(f->tmp_path);
	}
	release(f);
	return err;
}

void outfile_abort(struct outfile *f)
{
	if (f->fp) {
		fclose(f->fp);
		remove_tmp(f->tmp_path);
	}
	release(f);
}

int export_mkdir(const struct export_options *opts, const char *relpath)
{
	char *path = join(opts->dir, relpath, "");
	struct stat st;
	int err;

	if (!path)
		return -ENOMEM;
	err = user_fs_enter();
	if (err)
		goto out;
	if (mkdir(path, 0755) == 0) {
		chmod(path, 0755); /* whatever the umask */
	} else {
		err = -errno;
		/* an existing real directory (not a symlink to one) is fine */
		if (err == -EEXIST && lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			err = 0;
	}
	user_fs_leave();
	if (err)
		fprintf(stderr, "collector: cannot create directory %s: %s\n", path,
			strerror(-err));
out:
	free(path);
	return err;
}

size_t export_file_name(char *dst, size_t size, const char *src, size_t n, const char *fallback)
{
	size_t len = 0;

	for (size_t i = 0; i < n && src[i] && len + 1 < size; i++) {
		char c = src[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-' ||
			  (c == '.' && len > 0);

		dst[len++] = ok ? c : '_';
	}
	if (!len)
		return (size_t)snprintf(dst, size, "%s", fallback);
	dst[len] = '\0';
	return len;
}
