// SPDX-License-Identifier: GPL-2.0
/*
 * XRay instrumentation maps for `llvm-xray -m`: an ELF file with an
 * xray_instr_map section (llvm-xray symbolizes function ids through that
 * file's symbols and debug info) and the same map in llvm-xray's YAML form
 * (with which llvm-xray 14 prints addresses only).
 *
 * The ELF map is a copy of the traced file, byte for byte, with a new
 * ELF header, the section data appended at the end, a new section-name
 * table and a new section header table after it: every existing section,
 * program header, symbol and debug section stays where it was.  When that is
 * impossible (functions from several files, file gone or changed), it is a
 * small synthetic ELF that only names the functions.
 */
#include "formats/xray/xray.h"
#include "formats/xray/xray_format.h"
#include "formats/text.h"
#include "lib/bytes.h"
#include "symbols/elfinfo.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SYNTH_TEXT_ADDR 0x401000u
#define SYNTH_FUNC_SIZE 16u
#define COPY_CHUNK (1u << 20)
static const char ORIG_MAP_NAME[] = ".xray_instr_map.orig";

/* The sled entries of fns[0..n): an entry and an exit sled per function. */
static unsigned char *build_sleds(const struct xray_map_function *fns, size_t n, size_t *len)
{
	unsigned char *s = calloc(n ? n * 2 : 1, XRAY_SLED_ENTRY_SIZE), *p;

	if (!s)
		return NULL;
	p = s;
	for (size_t i = 0; i < n; i++) {
		uint64_t exit_addr = fns[i].map_addr + (fns[i].map_size ? fns[i].map_size - 1 : 0);

		le64_put(p, fns[i].map_addr);
		le64_put(p + 8, fns[i].map_addr);
		p[16] = fns[i].log_args ? XRAY_SLED_LOG_ARGS_ENTER : XRAY_SLED_ENTRY;
		p[17] = 1; /* always_instrument: chosen by the user, not a heuristic */
		p[18] = 0; /* version 0: absolute addresses */
		p += XRAY_SLED_ENTRY_SIZE;
		le64_put(p, exit_addr);
		le64_put(p + 8, fns[i].map_addr);
		p[16] = XRAY_SLED_EXIT;
		p[17] = 1;
		p += XRAY_SLED_ENTRY_SIZE;
	}
	*len = n * 2 * XRAY_SLED_ENTRY_SIZE;
	return s;
}

static int write_zeros(struct outfile *f, size_t n)
{
	static const unsigned char zeros[64];
	int err = 0;

	while (n && !err) {
		size_t k = n < sizeof(zeros) ? n : sizeof(zeros);

		err = outfile_write(f, zeros, k);
		n -= k;
	}
	return err;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/*
 * What copying the traced file into a map needs: its ELF header, section
 * headers and section-name table (read through symbols/elfinfo.h, the one
 * ELF opener), the highest address it uses, and a descriptor to copy its
 * bytes with pread(2) (not through the mapping, which would make the whole
 * file resident in the collector).
 */
struct elf_facts {
	struct elf_file file;
	int fd;
	uint64_t size;
	unsigned char ehdr[sizeof(Elf64_Ehdr)];
	Elf64_Shdr *shdrs;
	size_t shnum, shstrndx;
	const unsigned char *shstrtab; /* in file.map */
	uint64_t shstrtab_size;
	uint64_t max_vaddr;
};

/* Section headers, their name table and the highest address they or the
 * PT_LOAD segments use: 0, 1 (cannot be done) or -ENOMEM. */
static int read_sections(struct elf_facts *ef)
{
	Elf *elf = ef->file.elf;
	const Elf64_Shdr *ss;

	ef->shdrs = calloc(ef->shnum, sizeof(*ef->shdrs));
	if (!ef->shdrs)
		return -ENOMEM;
	for (size_t i = 0; i < ef->shnum; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh))
			return 1;
		ef->shdrs[i] = sh;
		if ((sh.sh_flags & SHF_ALLOC) && sh.sh_addr + sh.sh_size > ef->max_vaddr)
			ef->max_vaddr = sh.sh_addr + sh.sh_size;
	}
	for (size_t i = 0; i < ef->file.n_loads; i++) {
		const struct elf_segment *seg = &ef->file.loads[i];

		if (seg->vaddr + seg->memsz > ef->max_vaddr)
			ef->max_vaddr = seg->vaddr + seg->memsz;
	}
	ss = &ef->shdrs[ef->shstrndx];
	if (ss->sh_type != SHT_STRTAB || ss->sh_offset > ef->size ||
	    ss->sh_size > ef->size - ss->sh_offset || ss->sh_size > (1u << 30))
		return 1;
	ef->shstrtab_size = ss->sh_size;
	ef->shstrtab = (const unsigned char *)ef->file.map + ss->sh_offset;
	return 0;
}

/* The ELF header's checks: a 64-bit little-endian file of a machine
 * llvm-xray reads maps for, whose section headers can be extended. */
static int check_header(struct elf_facts *ef, const char **why)
{
	Elf *elf = ef->file.elf;
	GElf_Ehdr eh;

	*why = "the traced file is not a 64-bit little-endian ELF file";
	if (gelf_getclass(elf) != ELFCLASS64 || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return 1;
	*why = "llvm-xray reads no maps for this machine";
	if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64 && eh.e_machine != EM_PPC64)
		return 1;
	*why = "the traced file's section headers cannot be extended";
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || elf_getshdrnum(elf, &ef->shnum) != 0 ||
	    ef->shnum == 0 || ef->shnum >= SHN_LORESERVE - 1 ||
	    elf_getshdrstrndx(elf, &ef->shstrndx) != 0 || ef->shstrndx == SHN_UNDEF ||
	    ef->shstrndx >= ef->shnum || eh.e_shstrndx != ef->shstrndx)
		return 1;
	memcpy(ef->ehdr, ef->file.map, sizeof(ef->ehdr));
	return 0;
}

/*
 * Checks that the image's file can be copied into a map (a readable 64-bit
 * little-endian ELF file, unchanged since the run) and reads what the copy
 * needs.  Returns 0, or a positive value with *why set when a synthetic map
 * must be used instead, or -ENOMEM.
 */
static int inspect_elf(const struct model_image *img, struct elf_facts *ef, const char **why)
{
	struct stat st;
	int ret;

	memset(ef, 0, sizeof(*ef));
	ef->fd = -1;
	*why = "the traced file cannot be read";
	if (img->kind != MODEL_IMAGE_ELF || !img->path)
		return 1;
	if (stat(img->path, &st) != 0 || !S_ISREG(st.st_mode))
		return 1;
	*why = "the traced file changed since the run";
	if ((img->file_size && (uint64_t)st.st_size != img->file_size) ||
	    (img->mtime && st.st_mtime != img->mtime))
		return 1;
	ret = elf_file_open(&ef->file, img->path);
	if (ret) {
		*why = ret == -ENOEXEC ? "the traced file is not a 64-bit little-endian ELF file"
				       : "the traced file cannot be read";
		return ret == -ENOMEM ? -ENOMEM : 1;
	}
	*why = "the traced file changed since the run";
	ef->size = ef->file.size;
	if ((img->file_size && ef->size != img->file_size) ||
	    (img->mtime && ef->file.mtime != img->mtime))
		return 1;
	ret = check_header(ef, why);
	if (!ret)
		ret = read_sections(ef);
	if (ret)
		return ret;
	*why = "the traced file cannot be read";
	ef->fd = elf_file_reopen(&ef->file);
	return ef->fd < 0 ? 1 : 0;
}

static void release_elf(struct elf_facts *ef)
{
	if (ef->fd >= 0)
		close(ef->fd);
	elf_file_close(&ef->file);
	free(ef->shdrs);
	memset(ef, 0, sizeof(*ef));
	ef->fd = -1;
}

static int copy_elf_with_map(struct outfile *f, struct elf_facts *ef, const unsigned char *sleds,
			     size_t sleds_len)
{
	const size_t name_len = sizeof(XRAY_INSTR_MAP_SECTION);
	uint64_t map_off, str_off, sh_off, new_str_size, map_addr;
	unsigned char ehdr[sizeof(Elf64_Ehdr)];
	unsigned char *chunk = NULL;
	Elf64_Shdr map_sh = { 0 };
	uint16_t shnum;
	int err;

	/* everything appended after the original bytes */
	map_off = align_up(ef->size, 8);
	str_off = map_off + sleds_len;
	new_str_size = ef->shstrtab_size + name_len + sizeof(ORIG_MAP_NAME);
	sh_off = align_up(str_off + new_str_size, 8);
	/* allocated, at an address no segment or section uses */
	map_addr = align_up(ef->max_vaddr, 4096);

	memcpy(ehdr, ef->ehdr, sizeof(ehdr));
	le64_put(ehdr + offsetof(Elf64_Ehdr, e_shoff), sh_off);
	shnum = (uint16_t)(ef->shnum + 1);
	le16_put(ehdr + offsetof(Elf64_Ehdr, e_shnum), shnum);
	err = outfile_write(f, ehdr, sizeof(ehdr));
	if (err)
		return err;

	chunk = malloc(COPY_CHUNK);
	if (!chunk)
		return -ENOMEM;
	for (uint64_t off = sizeof(ehdr); off < ef->size;) {
		size_t want = ef->size - off < COPY_CHUNK ? (size_t)(ef->size - off) : COPY_CHUNK;
		ssize_t got = pread(ef->fd, chunk, want, (off_t)off);

		if (got <= 0) {
			err = got < 0 ? -errno : -EIO;
			goto out;
		}
		err = outfile_write(f, chunk, (size_t)got);
		if (err)
			goto out;
		off += (uint64_t)got;
	}
	err = write_zeros(f, map_off - ef->size);
	if (!err)
		err = outfile_write(f, sleds, sleds_len);
	/* the section-name table: old names, then ours */
	if (!err)
		err = outfile_write(f, ef->shstrtab, ef->shstrtab_size);
	if (!err)
		err = outfile_write(f, XRAY_INSTR_MAP_SECTION, name_len);
	if (!err)
		err = outfile_write(f, ORIG_MAP_NAME, sizeof(ORIG_MAP_NAME));
	if (!err)
		err = write_zeros(f, sh_off - (str_off + new_str_size));
	for (size_t i = 0; i < ef->shnum && !err; i++) {
		Elf64_Shdr sh = ef->shdrs[i];

		if (i == ef->shstrndx) {
			sh.sh_offset = str_off;
			sh.sh_size = new_str_size;
		} else if (sh.sh_name < ef->shstrtab_size &&
			   strcmp((char *)ef->shstrtab + sh.sh_name, XRAY_INSTR_MAP_SECTION) == 0) {
			/* an XRay-instrumented program: llvm-xray must find ours */
			sh.sh_name = (uint32_t)(ef->shstrtab_size + name_len);
		}
		err = outfile_write(f, &sh, sizeof(sh));
	}
	map_sh.sh_name = (uint32_t)ef->shstrtab_size;
	map_sh.sh_type = SHT_PROGBITS;
	map_sh.sh_flags = SHF_ALLOC;
	map_sh.sh_addr = map_addr;
	map_sh.sh_offset = map_off;
	map_sh.sh_size = sleds_len;
	map_sh.sh_addralign = 8;
	if (!err)
		err = outfile_write(f, &map_sh, sizeof(map_sh));
out:
	free(chunk);
	return err;
}

/* Appends a NUL-terminated string to a growing table; returns its offset. */
static int strtab_add(char **tab, size_t *len, size_t *cap, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;

	if (*len + n > *cap) {
		size_t c = (*cap ? *cap * 2 : 256) + n;
		char *t = realloc(*tab, c);

		if (!t)
			return -ENOMEM;
		*tab = t;
		*cap = c;
	}
	memcpy(*tab + *len, s, n);
	*off = (uint32_t)*len;
	*len += n;
	return 0;
}

/*
 * A minimal x86-64 ELF executable: .text (int3 filler), xray_instr_map,
 * .symtab, .strtab, .shstrtab.  No program headers: nothing runs it.
 */
static int write_synthetic_elf(struct outfile *f, const struct xray_map_function *fns, size_t n,
			       const unsigned char *sleds, size_t sleds_len)
{
	enum { S_NULL, S_TEXT, S_MAP, S_SYMTAB, S_STRTAB, S_SHSTRTAB, S_COUNT };
	static const char shstr[] = "\0.text\0" XRAY_INSTR_MAP_SECTION "\0.symtab\0.strtab\0.shstrtab";
	static const uint32_t shname[S_COUNT] = { 0, 1, 7, 22, 30, 38 };
	Elf64_Shdr sh[S_COUNT] = { { 0 } };
	Elf64_Ehdr eh = { 0 };
	char *str = NULL;
	size_t str_len = 0, str_cap = 0;
	uint64_t text_off, map_off, sym_off, str_off, shstr_off, sh_off, text_size;
	unsigned char *text = NULL;
	Elf64_Sym *syms = NULL;
	uint32_t off;
	int err;

	err = strtab_add(&str, &str_len, &str_cap, "", &off);
	syms = calloc(n + 1, sizeof(*syms));
	text_size = (uint64_t)n * SYNTH_FUNC_SIZE;
	text = malloc(text_size ? text_size : 1);
	if (!syms || !text) {
		err = -ENOMEM;
		goto out;
	}
	memset(text, 0xcc, text_size);
	for (size_t i = 0; i < n && !err; i++) {
		err = strtab_add(&str, &str_len, &str_cap, fns[i].name, &off);
		syms[i + 1].st_name = off;
		syms[i + 1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		syms[i + 1].st_shndx = S_TEXT;
		syms[i + 1].st_value = fns[i].map_addr;
		syms[i + 1].st_size = fns[i].map_size;
	}
	if (err)
		goto out;

	text_off = sizeof(Elf64_Ehdr);
	map_off = align_up(text_off + text_size, 8);
	sym_off = align_up(map_off + sleds_len, 8);
	str_off = sym_off + (n + 1) * sizeof(Elf64_Sym);
	shstr_off = str_off + str_len;
	sh_off = align_up(shstr_off + sizeof(shstr), 8);

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_SYSV;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_shoff = sh_off;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = S_COUNT;
	eh.e_shstrndx = S_SHSTRTAB;

	for (int i = 0; i < S_COUNT; i++)
		sh[i].sh_name = shname[i];
	sh[S_TEXT] = (Elf64_Shdr){ .sh_name = shname[S_TEXT], .sh_type = SHT_PROGBITS,
				   .sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addr = SYNTH_TEXT_ADDR,
				   .sh_offset = text_off, .sh_size = text_size,
				   .sh_addralign = 16 };
	sh[S_MAP] = (Elf64_Shdr){ .sh_name = shname[S_MAP], .sh_type = SHT_PROGBITS,
				  .sh_flags = SHF_ALLOC,
				  .sh_addr = align_up(SYNTH_TEXT_ADDR + text_size, 4096),
				  .sh_offset = map_off, .sh_size = sleds_len, .sh_addralign = 8 };
	sh[S_SYMTAB] = (Elf64_Shdr){ .sh_name = shname[S_SYMTAB], .sh_type = SHT_SYMTAB,
				     .sh_offset = sym_off, .sh_size = (n + 1) * sizeof(Elf64_Sym),
				     .sh_link = S_STRTAB, .sh_info = 1, .sh_addralign = 8,
				     .sh_entsize = sizeof(Elf64_Sym) };
	sh[S_STRTAB] = (Elf64_Shdr){ .sh_name = shname[S_STRTAB], .sh_type = SHT_STRTAB,
				     .sh_offset = str_off, .sh_size = str_len, .sh_addralign = 1 };
	sh[S_SHSTRTAB] = (Elf64_Shdr){ .sh_name = shname[S_SHSTRTAB], .sh_type = SHT_STRTAB,
				       .sh_offset = shstr_off, .sh_size = sizeof(shstr),
				       .sh_addralign = 1 };

	err = outfile_write(f, &eh, sizeof(eh));
	if (!err)
		err = outfile_write(f, text, text_size);
	if (!err)
		err = write_zeros(f, map_off - (text_off + text_size));
	if (!err)
		err = outfile_write(f, sleds, sleds_len);
	if (!err)
		err = write_zeros(f, sym_off - (map_off + sleds_len));
	if (!err)
		err = outfile_write(f, syms, (n + 1) * sizeof(Elf64_Sym));
	if (!err)
		err = outfile_write(f, str, str_len);
	if (!err)
		err = outfile_write(f, shstr, sizeof(shstr));
	if (!err)
		err = write_zeros(f, sh_off - (shstr_off + sizeof(shstr)));
	if (!err)
		err = outfile_write(f, sh, sizeof(sh));
out:
	free(str);
	free(syms);
	free(text);
	return err;
}

/* A YAML single-quoted scalar: quotes doubled, control characters replaced. */
static void yaml_quoted(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("''", fp);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc('?', fp);
		else
			fputc(*s, fp);
	}
	fputc('\'', fp);
}

static void yaml_comment_lines(FILE *fp, const char *text)
{
	while (text && *text) {
		const char *nl = strchr(text, '\n');
		int len = nl ? (int)(nl - text) : (int)strlen(text);

		char *line = strndup(text, (size_t)len);

		/* YAML is UTF-8: a path's or a cut name's stray byte made
		 * llvm-xray refuse the whole map */
		if (line) {
			utf8_sanitize(line);
			fprintf(fp, "# %s\n", line);
			free(line);
		}
		text += len + (nl ? 1 : 0);
	}
}

static int write_yaml(struct outfile *f, const struct xray_map_function *fns, size_t n,
		      const struct xray_map_info *info, const char *elf_note, const char *comments)
{
	char comm[64];

	/* the kernel's 15-byte name may end in half a character */
	snprintf(comm, sizeof(comm), "%s", info->comm);
	utf8_sanitize(comm);
	fprintf(f->fp, "# XRay instrumentation map of %s (pid %d), written by collector.\n",
		comm, (int)info->pid);
	fprintf(f->fp, "# Function ids are numbered in the order of this list.\n");
	yaml_comment_lines(f->fp, elf_note);
	yaml_comment_lines(f->fp, comments);
	fprintf(f->fp, "---\n");
	for (size_t i = 0; i < n; i++) {
		uint64_t exit_addr = fns[i].map_addr + (fns[i].map_size ? fns[i].map_size - 1 : 0);

		fprintf(f->fp, "- { id: %zu, address: 0x%llx, function: 0x%llx, kind: %s, "
			"always-instrument: true, function-name: ", i + 1,
			(unsigned long long)fns[i].map_addr, (unsigned long long)fns[i].map_addr,
			fns[i].log_args ? "log-args-enter" : "function-enter");
		yaml_quoted(f->fp, fns[i].name);
		fprintf(f->fp, ", version: 0 }\n");
		fprintf(f->fp, "- { id: %zu, address: 0x%llx, function: 0x%llx, kind: function-exit, "
			"always-instrument: true, function-name: ", i + 1,
			(unsigned long long)exit_addr, (unsigned long long)fns[i].map_addr);
		yaml_quoted(f->fp, fns[i].name);
		fprintf(f->fp, ", version: 0 }\n");
		if (info->synthetic) {
			/* a comment ends at a newline: a path holding one is not printed */
			const char *path = strchr(fns[i].image_path, '\n') ? "(a path with a newline)"
									 : fns[i].image_path;

			fprintf(f->fp, "#   id %zu is %s+0x%llx in %s\n", i + 1, fns[i].name,
				(unsigned long long)fns[i].addr, path);
		}
	}
	return 0;
}

int xray_write_maps(const struct model *m, const struct export_options *opts, const char *base,
		    struct xray_map_function *fns, size_t n, struct xray_map_info *info,
		    const char *comments)
{
	struct elf_facts ef = { .fd = -1 };
	struct outfile f = { 0 };
	unsigned char *sleds = NULL;
	size_t sleds_len = 0;
	char rel[256], note[1024];
	const char *why = NULL;
	int err = 0;

	info->synthetic = false;
	for (size_t i = 1; i < n; i++) {
		if (fns[i].image != fns[0].image) {
			info->synthetic = true;
			why = "the traced functions are in several files";
		}
	}
	for (size_t i = 0; i < n && !info->synthetic; i++) {
		if (fns[i].addr == 0) {
			info->synthetic = true;
			why = "a traced function has no address";
		}
	}
	if (!info->synthetic && n) {
		err = fns[0].image < m->images.len ? inspect_elf(&m->images.items[fns[0].image], &ef, &why)
						   : 1;
		if (err < 0)
			goto cleanup;
		info->synthetic = err > 0;
		err = 0;
	}
	info->why_synthetic = info->synthetic ? why : NULL;
	for (size_t i = 0; i < n; i++) {
		if (info->synthetic) {
			fns[i].map_addr = SYNTH_TEXT_ADDR + i * SYNTH_FUNC_SIZE;
			fns[i].map_size = SYNTH_FUNC_SIZE;
		} else {
			fns[i].map_addr = fns[i].addr;
			fns[i].map_size = fns[i].size;
		}
	}
	sleds = build_sleds(fns, n, &sleds_len);
	if (!sleds) {
		err = -ENOMEM;
		goto cleanup;
	}

	snprintf(rel, sizeof(rel), "%s.map.elf", base);
	err = outfile_open(&f, opts, rel);
	if (err)
		goto cleanup;
	if (info->synthetic)
		err = write_synthetic_elf(&f, fns, n, sleds, sleds_len);
	else
		err = copy_elf_with_map(&f, &ef, sleds, sleds_len);
	if (err) {
		outfile_abort(&f);
		goto cleanup;
	}
	err = outfile_commit(&f);
	if (err)
		goto cleanup;

	if (info->synthetic)
		snprintf(note, sizeof(note),
			 "map.elf is a synthetic ELF (%s): it names each function at a made-up\n"
			 "address (the addresses below); source files and lines are lost, and the\n"
			 "comment under each function gives its real file and address.", why);
	else
		snprintf(note, sizeof(note),
			 "map.elf is a copy of %s with an added xray_instr_map section;\n"
			 "addresses are file-relative addresses in that file.  With this YAML map\n"
			 "llvm-xray 14 prints addresses only: pass map.elf to -m for names and lines.",
			 fns[0].image_path);
	snprintf(rel, sizeof(rel), "%s.map.yaml", base);
	err = outfile_open(&f, opts, rel);
	if (err)
		goto cleanup;
	write_yaml(&f, fns, n, info, note, comments);
	err = outfile_commit(&f);
cleanup:
	release_elf(&ef);
	free(sleds);
	return err;
}
