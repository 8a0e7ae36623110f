// SPDX-License-Identifier: GPL-2.0
/* ELF file facts and function symbol tables, through libelf. */
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
#include "lib/sorted.h"

#define FUNCTION_NONE UINT32_MAX /* == MODEL_NONE */

/* How far symtab_lookup walks back for a symbol that encloses later ones
 * (assembly sometimes nests local labels typed FUNC inside a function). */
#define NESTED_LOOKBACK 8

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

Elf_Scn *elf_file_symbols(const struct elf_file *f, uint32_t sh_type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(f->elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == sh_type && shdr.sh_entsize &&
		    shdr.sh_size / shdr.sh_entsize > 1)
			return scn;
	}
	return NULL;
}

/* The extended section index table of symbol table scn, or NULL. */
static Elf_Data *symtab_shndx_data(Elf *elf, Elf_Scn *symscn)
{
	size_t symndx = elf_ndxscn(symscn);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB_SHNDX &&
		    shdr.sh_link == symndx)
			return elf_getdata(scn, NULL);
	return NULL;
}

/* The bytes of string table index strndx when its last is a NUL, so
 * that every offset below *size starts a string that ends inside it
 * (else NULL: elf_strptr() checks each name). */
static const char *string_table(Elf *elf, size_t strndx, size_t *size)
{
	Elf_Scn *scn = elf_getscn(elf, strndx);
	Elf_Data *data;
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_STRTAB ||
	    (shdr.sh_flags & SHF_COMPRESSED))
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size || data->d_size != shdr.sh_size ||
	    ((const char *)data->d_buf)[data->d_size - 1] != '\0')
		return NULL;
	*size = data->d_size;
	return data->d_buf;
}

/* Like elf_file_for_each_function, also giving the end of the symbol's
 * section (bounds size-0 symbols). */
static int for_each_function(const struct elf_file *f, Elf_Scn *scn,
			     int (*fn)(void *ctx, const char *name, const GElf_Sym *sym,
				       uint64_t section_end),
			     void *ctx)
{
	Elf_Data *data, *xndx;
	GElf_Shdr shdr;
	size_t n, entsize, strsize = 0;
	const char *strs;

	if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return 0;
	data = elf_getdata(scn, NULL);
	entsize = gelf_fsize(f->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || !data->d_buf || !entsize)
		return 0;
	xndx = symtab_shndx_data(f->elf, scn);
	strs = string_table(f->elf, shdr.sh_link, &strsize);
	n = data->d_size / entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Word ext = 0;
		GElf_Shdr sec;
		Elf_Scn *sscn;
		const char *name;
		size_t shndx;
		int type, ret;

		if (!gelf_getsymshndx(data, xndx, (int)i, &sym, &ext))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		shndx = sym.st_shndx == SHN_XINDEX ? ext : sym.st_shndx;
		if (shndx == SHN_UNDEF || (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		sscn = elf_getscn(f->elf, shndx);
		if (!sscn || !gelf_getshdr(sscn, &sec) || !(sec.sh_flags & SHF_EXECINSTR))
			continue;
		/* the name is not read here (elf_strptr() reads it to find
		 * its end): a symbol table sorted for look-ups reads the
		 * names of the functions sampled only.  Measured: libLLVM's
		 * 2.8 MiB of .dynstr resident after the sort, 0 after. */
		if (strs)
			name = sym.st_name < strsize ? strs + sym.st_name : NULL;
		else
			name = elf_strptr(f->elf, shdr.sh_link, sym.st_name);
		if (!name)
			continue;
		ret = fn(ctx, name, &sym, sec.sh_addr + sec.sh_size);
		if (ret)
			return ret;
	}
	return 0;
}

struct plain_ctx {
	int (*fn)(void *ctx, const char *name, const GElf_Sym *sym);
	void *ctx;
};

static int plain_cb(void *ctx, const char *name, const GElf_Sym *sym, uint64_t section_end)
{
	struct plain_ctx *c = ctx;

	(void)section_end;
	return *name ? c->fn(c->ctx, name, sym) : 0;
}

int elf_file_for_each_function(const struct elf_file *f, Elf_Scn *scn,
			       int (*fn)(void *ctx, const char *name, const GElf_Sym *sym),
			       void *ctx)
{
	struct plain_ctx c = { fn, ctx };

	return for_each_function(f, scn, plain_cb, &c);
}

/* ---- sorted function table ------------------------------------------------ */

struct build_ctx {
	struct symtab *t;
	size_t cap;
	int err;
};

static int build_cb(void *ctx, const char *name, const GElf_Sym *sym, uint64_t section_end)
{
	struct build_ctx *b = ctx;
	struct symtab_entry *e;

	if (b->t->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 256;
		void *n = realloc(b->t->syms, ncap * sizeof(*b->t->syms));

		if (!n) {
			b->err = -ENOMEM;
			return 1;
		}
		b->t->syms = n;
		b->cap = ncap;
	}
	e = &b->t->syms[b->t->n++];
	e->addr = sym->st_value;
	e->size = sym->st_size;
	/* size 0: provisionally up to the section end, narrowed below */
	e->end = sym->st_size ? sym->st_value + sym->st_size :
				(section_end > sym->st_value ? section_end : sym->st_value + 1);
	if (e->end < e->addr) /* overflowing size */
		e->end = UINT64_MAX;
	e->name = name;
	e->function = FUNCTION_NONE;
	e->bind = GELF_ST_BIND(sym->st_info);
	e->n_tied = 0;
	e->tied_first = (uint32_t)(b->t->n - 1); /* the order read: the sort's last key */
	return 0;
}

static int bind_rank(uint8_t bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct symtab_entry *x = a, *y = b;
	int rx, ry;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	rx = bind_rank(x->bind);
	ry = bind_rank(y->bind);
	if (rx != ry)
		return rx - ry;
	/* a sized alias says more than a size-0 one */
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	/* tied: not by name, which would read the string table's pages of
	 * every alias (C++ constructors, most of libLLVM's 3 MiB); the
	 * name is chosen at the first look-up (choose_name) */
	return x->tied_first < y->tied_first ? -1 : x->tied_first > y->tied_first;
}

static bool tied(const struct symtab_entry *x, const struct symtab_entry *y)
{
	return x->addr == y->addr && bind_rank(x->bind) == bind_rank(y->bind) &&
	       !x->size == !y->size;
}

/* Among e and its tied aliases, the name kept: one over none, then the
 * lowest. */
static void choose_name(const struct symtab *t, struct symtab_entry *e)
{
	for (uint32_t k = 0; k < e->n_tied; k++) {
		const char *other = t->tied[e->tied_first + k];

		if (other[0] && (!e->name[0] || strcmp(other, e->name) < 0))
			e->name = other;
	}
	e->n_tied = 0;
}

/* Keeps name as one of kept's tied aliases (-ENOMEM without memory). */
static int add_tied(struct symtab *t, size_t *cap, struct symtab_entry *kept, const char *name)
{
	if (kept->n_tied == UINT16_MAX)
		return 0; /* one more of so many: left out */
	if (t->n_tied == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		const char **n = realloc(t->tied, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->tied = n;
		*cap = ncap;
	}
	if (!kept->n_tied)
		kept->tied_first = (uint32_t)t->n_tied;
	t->tied[t->n_tied++] = name;
	kept->n_tied++;
	return 0;
}

int symtab_build(struct symtab *t, const struct elf_file *f, Elf_Scn *scn)
{
	struct build_ctx b = { t, 0, 0 };
	size_t out = 0, tied_cap = 0;

	memset(t, 0, sizeof(*t));
	for_each_function(f, scn, build_cb, &b);
	if (b.err) {
		symtab_free(t);
		return b.err;
	}
	if (!t->n)
		return 0;
	qsort(t->syms, t->n, sizeof(*t->syms), cmp_entry);
	for (size_t i = 0; i < t->n; i++) {
		struct symtab_entry *e = &t->syms[i];

		if (out && t->syms[out - 1].addr == e->addr) {
			/* an alias: the first (preferred) one stays */
			struct symtab_entry *kept = &t->syms[out - 1];

			if (tied(kept, e) && add_tied(t, &tied_cap, kept, e->name)) {
				symtab_free(t);
				return -ENOMEM;
			}
			if (!kept->size && e->size) {
				kept->size = e->size;
				kept->end = e->end;
			}
			continue;
		}
		t->syms[out++] = *e;
	}
	t->n = out;
	for (size_t i = 0; i + 1 < t->n; i++) {
		struct symtab_entry *e = &t->syms[i];

		if (!e->size && e->end > t->syms[i + 1].addr)
			e->end = t->syms[i + 1].addr;
	}
	return 0;
}

void symtab_free(struct symtab *t)
{
	free(t->syms);
	free(t->by_name);
	free(t->tied);
	memset(t, 0, sizeof(*t));
}

struct symtab_entry *symtab_lookup(const struct symtab *t, uint64_t addr)
{
	size_t lo = SORTED_UPPER_BOUND(t->syms, t->n, addr, addr);

	for (size_t k = 0; k < NESTED_LOOKBACK && lo > 0; k++, lo--) {
		struct symtab_entry *e = &t->syms[lo - 1];

		if (addr >= e->end)
			continue;
		if (e->n_tied)
			choose_name(t, e);
		/* a function without a name is none (read here, not when the
		 * table was built) */
		if (e->name[0])
			return e;
	}
	return NULL;
}

static int cmp_by_name(const void *a, const void *b, void *ctx)
{
	const struct symtab *t = ctx;

	return strcmp(t->syms[*(const uint32_t *)a].name, t->syms[*(const uint32_t *)b].name);
}

struct symtab_entry *symtab_find_unique(struct symtab *t, const char *name)
{
	size_t lo = 0, hi = t->n;

	if (!t->n)
		return NULL;
	if (!t->by_name) {
		for (size_t i = 0; i < t->n; i++)
			if (t->syms[i].n_tied)
				choose_name(t, &t->syms[i]);
		t->by_name = malloc(t->n * sizeof(*t->by_name));
		if (!t->by_name)
			return NULL;
		for (size_t i = 0; i < t->n; i++)
			t->by_name[i] = (uint32_t)i;
		qsort_r(t->by_name, t->n, sizeof(*t->by_name), cmp_by_name, t);
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->syms[t->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->n || strcmp(t->syms[t->by_name[lo]].name, name))
		return NULL;
	if (lo + 1 < t->n && !strcmp(t->syms[t->by_name[lo + 1]].name, name))
		return NULL;
	return &t->syms[t->by_name[lo]];
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
