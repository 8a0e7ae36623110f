// SPDX-License-Identifier: GPL-2.0
/* ELF file facts, through libelf (its function symbols: elf_symbols.c). */
#include "symbols/elfinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/procmaps.h"

static void read_build_id_notes(struct elf_file *f, Elf_Data *data)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nhdr;

	while (data && data->d_buf &&
	       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;

		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 && !memcmp(name, "GNU", 4) &&
		    nhdr.n_descsz > 0 && nhdr.n_descsz <= ELFINFO_MAX_BUILD_ID) {
			memcpy(f->build_id, (const char *)data->d_buf + desc_off, nhdr.n_descsz);
			f->build_id_len = nhdr.n_descsz;
			return;
		}
		off = next;
	}
}

static void read_build_id(struct elf_file *f, size_t n_phdrs)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	/* Sections first; a file stripped of its section headers keeps the
	 * note in a PT_NOTE segment. */
	while ((scn = elf_nextscn(f->elf, scn)) && !f->build_id_len) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_NOTE)
			read_build_id_notes(f, elf_getdata(scn, NULL));
	}
	for (size_t i = 0; i < n_phdrs && !f->build_id_len; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(f->elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		if (ph.p_offset > f->size || ph.p_filesz > f->size - ph.p_offset)
			continue;
		read_build_id_notes(f, elf_getdata_rawchunk(f->elf, (int64_t)ph.p_offset,
							     ph.p_filesz,
							     ph.p_align == 8 ? ELF_T_NHDR8 :
									       ELF_T_NHDR));
	}
}

static int read_loads(struct elf_file *f, size_t n_phdrs)
{
	for (size_t i = 0; i < n_phdrs; i++) {
		GElf_Phdr ph;
		struct elf_segment *seg, *n;

		if (!gelf_getphdr(f->elf, (int)i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		n = realloc(f->loads, (f->n_loads + 1) * sizeof(*f->loads));
		if (!n)
			return -ENOMEM;
		f->loads = n;
		seg = &f->loads[f->n_loads++];
		seg->vaddr = ph.p_vaddr;
		seg->memsz = ph.p_memsz;
		seg->offset = ph.p_offset;
		seg->filesz = ph.p_filesz;
		seg->flags = ph.p_flags;
	}
	return 0;
}

/* Reads the ELF facts of f->map; closes f on error. */
static int parse(struct elf_file *f)
{
	GElf_Ehdr ehdr;
	size_t n_phdrs = 0;
	int err = -ENOEXEC;

	f->elf = elf_memory(f->map, f->size);
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &ehdr))
		goto fail;
	f->type = ehdr.e_type;
	f->entry = ehdr.e_entry;
	if (elf_getphdrnum(f->elf, &n_phdrs) < 0)
		n_phdrs = 0;
	err = read_loads(f, n_phdrs);
	if (err)
		goto fail;
	read_build_id(f, n_phdrs);
	return 0;
fail:
	elf_file_close(f);
	return err;
}

/* elf_file_open, also giving the open descriptor (to close) in *fd_out
 * when it is not NULL.  O_NONBLOCK and O_NOCTTY: a FIFO or a terminal at
 * the path is refused (not a regular file), never waited on. */
static int open_and_map(struct elf_file *f, const char *path, int *fd_out)
{
	struct stat st;
	int fd, err;

	memset(f, 0, sizeof(*f));
	if (fd_out)
		*fd_out = -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < EI_NIDENT) {
		close(fd);
		return -ENOEXEC;
	}
	f->size = (size_t)st.st_size;
	f->path = strdup(path);
	f->dev = st.st_dev;
	f->inode = st.st_ino;
	f->mtime = st.st_mtime;
	/* Private and writable: libelf may convert data in place. */
	f->map = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	err = -errno;
	if (f->map == MAP_FAILED) {
		f->map = NULL;
		close(fd);
		return err;
	}
	err = parse(f);
	if (err || !fd_out)
		close(fd);
	else
		*fd_out = fd;
	return err;
}

int elf_file_open(struct elf_file *f, const char *path)
{
	return open_and_map(f, path, NULL);
}

int elf_file_open_with_fd(struct elf_file *f, const char *path, int *fd)
{
	return open_and_map(f, path, fd);
}

int elf_file_from_memory(struct elf_file *f, const void *data, size_t size)
{
	memset(f, 0, sizeof(*f));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	if (size < EI_NIDENT)
		return -ENOEXEC;
	f->map = malloc(size);
	if (!f->map)
		return -ENOMEM;
	memcpy(f->map, data, size);
	f->size = size;
	f->copied = true;
	return parse(f);
}

int elf_file_own_vdso(struct elf_file *f)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	const struct procmap_entry *e;
	struct procmaps maps;
	int err;

	memset(f, 0, sizeof(*f));
	if (!base)
		return -ENOENT;
	err = procmaps_read(getpid(), &maps);
	if (err)
		return err;
	/* the whole mapping: the image is laid out as a file in it */
	e = procmaps_find(&maps, base);
	if (e && e->start == base && !strcmp(e->path, "[vdso]"))
		err = elf_file_from_memory(f, (const void *)(uintptr_t)base,
					   (size_t)(e->end - e->start));
	else
		err = -ENOENT;
	procmaps_free(&maps);
	return err;
}

void elf_file_close(struct elf_file *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->copied)
		free(f->map);
	else if (f->map)
		munmap(f->map, f->size);
	free(f->loads);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

void elf_file_release_pages(struct elf_file *f)
{
	/* Read-only in fact (libelf converts in place only a file of the
	 * other byte order, which this machine's processes do not map): what
	 * leaves is the mapping's hold on page-cache pages, read back by the
	 * next access. */
	if (!f->copied && f->map)
		madvise(f->map, f->size, MADV_DONTNEED);
}

void elf_file_build_id_hex(const struct elf_file *f, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	if (!size)
		return;
	for (i = 0; i < f->build_id_len && 2 * i + 2 < size; i++) {
		out[2 * i] = hex[f->build_id[i] >> 4];
		out[2 * i + 1] = hex[f->build_id[i] & 15];
	}
	out[2 * i] = '\0';
}

/* The CRC read with read(2) from the file f was opened from, if it is still
 * the same file; false otherwise. */
static bool crc32_from_file(const struct elf_file *f, uint32_t *out)
{
	const size_t buf_size = 1 << 16;
	uLong crc = crc32(0L, Z_NULL, 0);
	size_t left = f->size;
	unsigned char *buf;
	struct stat st;
	int fd;

	if (!f->path)
		return false;
	fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	buf = malloc(buf_size);
	if (!buf || fstat(fd, &st) != 0 || st.st_dev != f->dev || st.st_ino != f->inode ||
	    (size_t)st.st_size != f->size) {
		free(buf);
		close(fd);
		return false;
	}
	while (left) {
		ssize_t n = read(fd, buf, left < buf_size ? left : buf_size);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		crc = crc32(crc, buf, (uInt)n);
		left -= n;
	}
	free(buf);
	close(fd);
	*out = (uint32_t)crc;
	return left == 0;
}

uint32_t elf_file_crc32(const struct elf_file *f)
{
	const unsigned char *p = f->map;
	size_t left = f->size;
	uLong crc = crc32(0L, Z_NULL, 0);
	uint32_t from_file;

	if (crc32_from_file(f, &from_file))
		return from_file;
	while (left) {
		uInt n = left > (1u << 30) ? (1u << 30) : (uInt)left;

		crc = crc32(crc, p, n);
		p += n;
		left -= n;
	}
	/* (the path no longer opens: a gone process's map_files link) the
	 * pages just read need not stay: a build's cc1 was 34 MiB of RSS */
	elf_file_release_pages((struct elf_file *)f);
	return (uint32_t)crc;
}

bool elf_file_text_segment(const struct elf_file *f, uint64_t *vaddr, uint64_t *memsz)
{
	for (size_t i = 0; i < f->n_loads; i++) {
		if (f->loads[i].flags & PF_X) {
			*vaddr = f->loads[i].vaddr;
			*memsz = f->loads[i].memsz;
			return true;
		}
	}
	return false;
}

bool elf_file_vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *offset)
{
	for (size_t i = 0; i < f->n_loads; i++) {
		const struct elf_segment *seg = &f->loads[i];

		if (vaddr >= seg->vaddr && vaddr - seg->vaddr < seg->filesz) {
			*offset = seg->offset + (vaddr - seg->vaddr);
			return true;
		}
	}
	return false;
}

bool elf_file_bias(const struct elf_file *f, uint64_t start, uint64_t pgoff, uint64_t page_size,
		   uint64_t *bias)
{
	const struct elf_segment *best = NULL;
	bool best_exact = false;

	if (f->type == ET_EXEC) {
		*bias = 0;
		return true;
	}
	/*
	 * The dynamic loader (and the kernel for the main program) maps each
	 * PT_LOAD from file offset p_offset rounded down to a page; RELRO's
	 * mprotect may split it later, so a mapping can also start inside a
	 * segment.  Prefer a segment that starts exactly at pgoff; among
	 * equals (tiny files whose segments share a page) the executable one,
	 * since code addresses are what we resolve.
	 */
	for (size_t i = 0; i < f->n_loads; i++) {
		const struct elf_segment *seg = &f->loads[i];
		uint64_t first = seg->offset & ~(page_size - 1);
		bool exact = first == pgoff;

		if (!exact && !(pgoff > first && pgoff >= seg->offset &&
				pgoff - seg->offset < seg->filesz))
			continue;
		if (!best || (exact && !best_exact) ||
		    (exact == best_exact && (seg->flags & PF_X) && !(best->flags & PF_X))) {
			best = seg;
			best_exact = exact;
		}
	}
	if (!best)
		return false;
	/* vaddr - offset is the same for every byte of a segment. */
	*bias = start - (best->vaddr - best->offset + pgoff);
	return true;
}

Elf_Scn *elf_file_section(const struct elf_file *f, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(f->elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *sname;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		sname = elf_strptr(f->elf, shstrndx, shdr.sh_name);
		if (sname && !strcmp(sname, name))
			return scn;
	}
	return NULL;
}

int elf_file_for_each_needed(const struct elf_file *f,
			     int (*fn)(void *ctx, const char *name), void *ctx)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *name;
			int rc;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			name = elf_strptr(f->elf, sh.sh_link, dyn.d_un.d_val);
			if (name && (rc = fn(ctx, name)) != 0)
				return rc;
		}
	}
	return 0;
}

/* The bytes of a section that has them in the file. */
static const unsigned char *section_bytes(const struct elf_file *f, const char *name, size_t *len)
{
	Elf_Scn *scn = elf_file_section(f, name);
	Elf_Data *data;
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size)
		return NULL;
	*len = data->d_size;
	return data->d_buf;
}

bool elf_file_debuglink(const struct elf_file *f, const char **name, uint32_t *crc)
{
	const unsigned char *p, *c;
	size_t len, name_len, crc_off;

	p = section_bytes(f, ".gnu_debuglink", &len);
	if (!p)
		return false;
	name_len = strnlen((const char *)p, len);
	if (name_len == 0 || name_len == len)
		return false;
	crc_off = (name_len + 1 + 3) & ~(size_t)3;
	if (crc_off > len || len - crc_off < 4)
		return false;
	c = p + crc_off;
	if (elf_getident(f->elf, NULL)[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
	else
		*crc = (uint32_t)c[3] << 24 | (uint32_t)c[2] << 16 | (uint32_t)c[1] << 8 | c[0];
	*name = (const char *)p;
	return true;
}

bool elf_file_debugaltlink(const struct elf_file *f, const char **path, const uint8_t **build_id,
			   size_t *build_id_len)
{
	const unsigned char *p;
	size_t len, path_len;

	p = section_bytes(f, ".gnu_debugaltlink", &len);
	if (!p)
		return false;
	path_len = strnlen((const char *)p, len);
	if (path_len == 0 || path_len == len)
		return false;
	*path = (const char *)p;
	*build_id = p + path_len + 1;
	*build_id_len = len - path_len - 1;
	return true;
}

/* ---- reading the file itself ------------------------------------------------ */

int elf_file_reopen(const struct elf_file *f)
{
	struct stat st;
	int fd, err;

	if (!f->path)
		return -EINVAL;
	fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if ((uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->inode ||
	    (size_t)st.st_size != f->size) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}
