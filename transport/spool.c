// SPDX-License-Identifier: GPL-2.0
/* Request bodies kept on disk until the backend has them (see spool.h). */
#include "transport/spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/safedir.h"

#define SEQ_DIGITS 20
#define SUFFIX ".otlp"
#define SUFFIX_GZ ".otlp.gz"
#define TEMP_PREFIX ".tmp."
/* the smallest gzip stream: 10-byte header, an empty block, 8-byte trailer */
#define GZIP_MIN 20

struct spool_item {
	uint64_t seq;
	uint64_t size;
	bool gzipped;
};

struct spool {
	int dir_fd;
	char *dir;
	uint64_t max_bytes;
	struct spool_item *items; /* oldest first */
	size_t n, cap;
	uint64_t bytes;
	uint64_t next_seq;
	uint64_t dropped;
};

static void entry_name(char *buf, size_t size, uint64_t seq, bool gzipped)
{
	snprintf(buf, size, "%0*" PRIu64 "%s", SEQ_DIGITS, seq, gzipped ? SUFFIX_GZ : SUFFIX);
}

/* An entry's name: 0 with *seq and *gzipped, or -1. */
static int parse_name(const char *name, uint64_t *seq, bool *gzipped)
{
	uint64_t v = 0;

	for (int i = 0; i < SEQ_DIGITS; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -1;
		if (v > (UINT64_MAX - (name[i] - '0')) / 10)
			return -1;
		v = v * 10 + (name[i] - '0');
	}
	if (!strcmp(name + SEQ_DIGITS, SUFFIX))
		*gzipped = false;
	else if (!strcmp(name + SEQ_DIGITS, SUFFIX_GZ))
		*gzipped = true;
	else
		return -1;
	*seq = v;
	return 0;
}

static int add_item(struct spool *s, uint64_t seq, uint64_t size, bool gzipped)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct spool_item *grown = realloc(s->items, cap * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		s->items = grown;
		s->cap = cap;
	}
	s->items[s->n++] = (struct spool_item){ .seq = seq, .size = size, .gzipped = gzipped };
	s->bytes += size;
	return 0;
}

/* Forgets items[i] (the file is the caller's). */
static void forget_item(struct spool *s, size_t i)
{
	s->bytes -= s->items[i].size;
	memmove(&s->items[i], &s->items[i + 1], (s->n - i - 1) * sizeof(s->items[0]));
	s->n--;
}

static int unlink_item(struct spool *s, size_t i)
{
	char name[64];
	int ret = 0;

	entry_name(name, sizeof(name), s->items[i].seq, s->items[i].gzipped);
	if (unlinkat(s->dir_fd, name, 0) != 0 && errno != ENOENT)
		ret = -errno;
	forget_item(s, i);
	return ret;
}

static int cmp_item(const void *a, const void *b)
{
	const struct spool_item *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Reads the directory: entries into s->items (sorted), temporaries removed. */
static int scan(struct spool *s)
{
	int fd = dup(s->dir_fd), ret = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct stat st;

	if (!d) {
		ret = -errno;
		if (fd >= 0)
			close(fd);
		return ret;
	}
	while ((de = readdir(d))) {
		uint64_t seq;
		bool gz;

		if (!strncmp(de->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX))) {
			/* an earlier run's, cut short before its rename */
			unlinkat(s->dir_fd, de->d_name, 0);
			continue;
		}
		if (parse_name(de->d_name, &seq, &gz))
			continue;
		/* the size is checked again when the entry is read; a symlink or
		 * anything else is caught there, removed and said */
		if (fstatat(s->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		ret = add_item(s, seq, S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0, gz);
		if (ret)
			break;
	}
	closedir(d);
	if (s->n)
		qsort(s->items, s->n, sizeof(s->items[0]), cmp_item);
	s->next_seq = s->n ? s->items[s->n - 1].seq + 1 : 1;
	return ret;
}

/* safedir_open(dir), making its parent first when only that is missing
 * (/var/spool/collector/otlp on a fresh system). */
static int open_dir(const char *dir, char *why, size_t why_size)
{
	int fd = safedir_open(dir, why, why_size);
	char *parent, *slash;

	if (fd >= 0 || errno != ENOENT)
		return fd;
	parent = strdup(dir);
	if (!parent)
		return -1;
	slash = strrchr(parent, '/');
	while (slash && slash > parent && !slash[1]) { /* "dir/" */
		*slash = '\0';
		slash = strrchr(parent, '/');
	}
	if (slash && slash > parent) {
		*slash = '\0';
		fd = safedir_open(parent, why, why_size);
		if (fd >= 0) {
			close(fd);
			fd = safedir_open(dir, why, why_size);
		}
	}
	free(parent);
	return fd;
}

struct spool *spool_open(const char *dir, uint64_t max_bytes, char *err, size_t err_size)
{
	struct spool *s = NULL;
	char why[256] = "";
	int fd, ret;

	if (!dir)
		dir = SPOOL_DEFAULT_DIR;
	fd = open_dir(dir, why, sizeof(why));
	if (fd < 0) {
		snprintf(err, err_size, "spool directory %s refused (%s): give one only root (or "
			 "this user) can write", dir, why[0] ? why : strerror(errno));
		return NULL;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, err_size, "spool directory %s: %s", dir,
			 errno == EWOULDBLOCK ? "in use by another collector; give each its own"
					      : strerror(errno));
		goto fail;
	}
	s = calloc(1, sizeof(*s));
	if (!s || !(s->dir = strdup(dir))) {
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	s->dir_fd = fd;
	s->max_bytes = max_bytes ? max_bytes : SPOOL_DEFAULT_MAX_BYTES;
	ret = scan(s);
	if (ret) {
		snprintf(err, err_size, "spool directory %s: %s", dir, strerror(-ret));
		goto fail;
	}
	return s;
fail:
	if (s) {
		free(s->items);
		free(s->dir);
		free(s);
	}
	close(fd);
	return NULL;
}

void spool_close(struct spool *s)
{
	if (!s)
		return;
	close(s->dir_fd);
	free(s->items);
	free(s->dir);
	free(s);
}

/* Writes body into a new temporary, then renames it to name; the file
 * and the directory synced. */
static int write_entry(struct spool *s, const char *name, uint64_t seq, const void *body,
		       size_t len)
{
	char tmp[64];
	int fd, ret = 0;

	snprintf(tmp, sizeof(tmp), TEMP_PREFIX "%0*" PRIu64, SEQ_DIGITS, seq);
	fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = fd_write_all(fd, body, len);
	if (!ret && fsync(fd) != 0)
		ret = -errno;
	if (close(fd) != 0 && !ret)
		ret = -errno;
	if (!ret && renameat(s->dir_fd, tmp, s->dir_fd, name) != 0)
		ret = -errno;
	if (ret) {
		unlinkat(s->dir_fd, tmp, 0);
		return ret;
	}
	/* the rename is durable only once the directory is */
	return fsync(s->dir_fd) != 0 ? -errno : 0;
}

int spool_put(struct spool *s, const void *body, size_t len, bool gzipped)
{
	char name[64];
	uint64_t seq;
	int ret;

	if (len > s->max_bytes) {
		s->dropped++;
		return -EFBIG;
	}
	while (s->n && s->bytes + len > s->max_bytes) {
		unlink_item(s, 0);
		s->dropped++;
	}
	seq = s->next_seq++;
	entry_name(name, sizeof(name), seq, gzipped);
	ret = write_entry(s, name, seq, body, len);
	if (ret == 0)
		ret = add_item(s, seq, len, gzipped);
	if (ret == -ENOMEM)
		unlinkat(s->dir_fd, name, 0);
	return ret;
}

/* Reads item it's file into e: 0, or a negative errno with why. */
static int read_entry(struct spool *s, const struct spool_item *it, struct spool_entry *e,
		      char *why, size_t why_size)
{
	char name[64];
	struct stat st;
	size_t got = 0;
	ssize_t r;
	char extra;
	int fd, ret = -EBADMSG;

	entry_name(name, sizeof(name), it->seq, it->gzipped);
	fd = openat(s->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, why_size, "%s", ret == -ELOOP ? "a symlink" : strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		snprintf(why, why_size, "not a regular file of this user");
		goto cleanup;
	}
	if (!st.st_size || (uint64_t)st.st_size != it->size) {
		snprintf(why, why_size, "%lld bytes, %" PRIu64 " written", (long long)st.st_size,
			 it->size);
		goto cleanup;
	}
	e->body = malloc(it->size);
	if (!e->body) {
		ret = -ENOMEM;
		goto cleanup;
	}
	while (got < it->size) {
		r = read(fd, (char *)e->body + got, it->size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += r;
	}
	if (got != it->size || read(fd, &extra, 1) != 0) {
		snprintf(why, why_size, "read %zu bytes of %" PRIu64, got, it->size);
		goto cleanup;
	}
	if (it->gzipped && (it->size < GZIP_MIN || ((uint8_t *)e->body)[0] != 0x1f ||
			    ((uint8_t *)e->body)[1] != 0x8b)) {
		snprintf(why, why_size, "named .gz but not gzip");
		goto cleanup;
	}
	e->seq = it->seq;
	e->len = it->size;
	e->gzipped = it->gzipped;
	ret = 0;
cleanup:
	if (ret) {
		free(e->body);
		e->body = NULL;
	}
	close(fd);
	return ret;
}

int spool_oldest(struct spool *s, struct spool_entry *e)
{
	char why[128], name[64];
	int ret;

	memset(e, 0, sizeof(*e));
	while (s->n) {
		ret = read_entry(s, &s->items[0], e, why, sizeof(why));
		if (ret != -ENOMEM && ret != 0) {
			entry_name(name, sizeof(name), s->items[0].seq, s->items[0].gzipped);
			fprintf(stderr, "collector: spooled interval %s/%s unreadable (%s): removed, "
				"not sent\n", s->dir, name, why);
			unlink_item(s, 0);
			s->dropped++;
			continue;
		}
		return ret;
	}
	return -ENOENT;
}

void spool_entry_free(struct spool_entry *e)
{
	free(e->body);
	e->body = NULL;
}

int spool_remove(struct spool *s, uint64_t seq)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].seq == seq)
			return unlink_item(s, i);
	return -ENOENT;
}

size_t spool_count(const struct spool *s)
{
	return s->n;
}

uint64_t spool_bytes(const struct spool *s)
{
	return s->bytes;
}

uint64_t spool_dropped(const struct spool *s)
{
	return s->dropped;
}

const char *spool_dir(const struct spool *s)
{
	return s->dir;
}
