// SPDX-License-Identifier: GPL-2.0
/* Debug files kept once decompressed (symbols/debug_copies.h). */
#include "symbols/debug_copies.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fdio.h"
#include "lib/safedir.h"

bool debug_copy_needed(const struct elf_file *f)
{
	Elf_Scn *scn = NULL;

	if (!f->elf)
		return false;
	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr shdr;

		if (gelf_getshdr(scn, &shdr) && (shdr.sh_flags & SHF_COMPRESSED) &&
		    shdr.sh_type == SHT_PROGBITS)
			return true;
	}
	return false;
}

/* The cache's "debug" folder, open; -1 when it cannot be used. */
static int copies_dir(const char *dir)
{
	char path[4096], why[160];
	const char *base = dir ? dir : getenv(DEBUG_COPIES_DIR_ENV);

	if (!base || !base[0])
		base = DEBUG_COPIES_DEFAULT_DIR;
	if (snprintf(path, sizeof(path), "%s/debug", base) >= (int)sizeof(path))
		return -1;
	return safedir_open(path, why, sizeof(why));
}

/* A regular file of ours that no one else may write. */
static bool ours(const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_uid == geteuid() && !(st->st_mode & 022);
}

/* The copy named name in dirfd, opened when it is the copy of f. */
static int open_copy(int dirfd, const char *name, const struct elf_file *f, struct elf_file *out)
{
	char path[64];
	struct stat st;
	int fd, err;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !ours(&st)) {
		close(fd);
		return -EPERM;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = elf_file_open(out, path);
	if (!err && (out->build_id_len != f->build_id_len ||
		     memcmp(out->build_id, f->build_id, f->build_id_len) != 0 ||
		     debug_copy_needed(out))) {
		elf_file_close(out);
		err = -EINVAL;
	}
	if (!err)
		futimens(fd, NULL); /* used now: the last to go */
	close(fd);
	return err;
}

/* The file at path copied into fd whole. */
static int copy_file(int fd, const char *path)
{
	char buf[1 << 16];
	int in = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0 && !(err = fd_write_all(fd, buf, (size_t)n)))
		;
	if (n < 0)
		err = -errno;
	close(in);
	return err;
}

/* f's file copied to fd, its sections decompressed there.  From the file,
 * not f's mapping: libelf changes a section's header in the mapping of a
 * file it decompressed a section of (libdw's, at dwarf_begin_elf). */
static int decompress_into(int fd, const struct elf_file *f)
{
	Elf_Scn *scn = NULL;
	Elf *e;
	int err = f->path ? copy_file(fd, f->path) : -EINVAL;

	if (err)
		return err;
	e = elf_begin(fd, ELF_C_RDWR, NULL);
	if (!e)
		return -EIO;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr shdr;

		if (!gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_COMPRESSED))
			continue;
		if (elf_compress(scn, 0, 0) < 0) {
			err = -EIO;
			goto out;
		}
	}
	if (elf_update(e, ELF_C_WRITE) < 0)
		err = -EIO;
out:
	elf_end(e);
	return err;
}

struct copy_file {
	char name[160];
	off_t size;
	struct timespec mtime;
};

static int by_mtime(const void *a, const void *b)
{
	const struct copy_file *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The least recently used copies removed until they take at most max
 * bytes in all (keep: the one just made). */
static void evict(int dirfd, unsigned long long max, const char *keep)
{
	struct copy_file *files = NULL;
	unsigned long long total = 0;
	size_t n = 0, cap = 0;
	struct dirent *d;
	int fd = dup(dirfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((d = readdir(dir))) {
		struct stat st;
		size_t len = strlen(d->d_name);

		if (len < 7 || len >= sizeof(files->name) || strcmp(d->d_name + len - 6, ".debug") ||
		    fstatat(dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) || !ours(&st))
			continue;
		if (n == cap) {
			struct copy_file *p = realloc(files, (cap ? 2 * cap : 16) * sizeof(*p));

			if (!p)
				break;
			files = p;
			cap = cap ? 2 * cap : 16;
		}
		memcpy(files[n].name, d->d_name, len + 1);
		files[n].size = st.st_size;
		files[n].mtime = st.st_mtim;
		total += (unsigned long long)st.st_size;
		n++;
	}
	closedir(dir);
	if (n)
		qsort(files, n, sizeof(*files), by_mtime);
	for (size_t i = 0; i < n && total > max; i++) {
		if (!strcmp(files[i].name, keep))
			continue;
		if (unlinkat(dirfd, files[i].name, 0) == 0)
			total -= (unsigned long long)files[i].size;
	}
	free(files);
}

int debug_copy_open(const char *dir, const struct elf_file *f, struct elf_file *out)
{
	char name[160], tmp[192], hex[2 * ELFINFO_MAX_BUILD_ID + 1];
	int dirfd, fd, err;

	memset(out, 0, sizeof(*out));
	if (!f->build_id_len || !f->path)
		return -EINVAL;
	elf_file_build_id_hex(f, hex, sizeof(hex));
	snprintf(name, sizeof(name), "%s.debug", hex);
	dirfd = copies_dir(dir);
	if (dirfd < 0)
		return -EPERM;
	/* none yet, or one that is not f's copy (spoilt, of another file,
	 * not ours): made again */
	err = open_copy(dirfd, name, f, out);
	if (!err)
		goto out;
	/* made now, under a name of its own, and renamed into place whole */
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = decompress_into(fd, f);
	close(fd);
	if (!err && renameat(dirfd, tmp, dirfd, name))
		err = -errno;
	if (err) {
		unlinkat(dirfd, tmp, 0);
		goto out;
	}
	evict(dirfd, DEBUG_COPIES_MAX_BYTES, name);
	err = open_copy(dirfd, name, f, out);
out:
	close(dirfd);
	return err;
}
