// SPDX-License-Identifier: GPL-2.0
/* Detecting frame pointers from a binary's function prologues. */
#include "symbols/framepointers.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "symbols/elfinfo.h"

#define MAX_FUNCTIONS 400

/* The C runtime's start-up code comes from crt files built without frame
 * pointers whatever the program's flags: it says nothing of the program. */
static const char *const crt_functions[] = {
	"_start", "_init", "_fini", "deregister_tm_clones", "register_tm_clones",
	"__do_global_dtors_aux", "frame_dummy", "__libc_csu_init", "__libc_csu_fini",
};

static bool is_crt(const char *name)
{
	for (size_t i = 0; i < sizeof(crt_functions) / sizeof(crt_functions[0]); i++)
		if (strcmp(name, crt_functions[i]) == 0)
			return true;
	return false;
}

static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
static const unsigned char push_rbp[] = { 0x55 };
static const unsigned char mov_rsp_rbp[] = { 0x48, 0x89, 0xe5 };

/* push %rbp, then mov %rsp,%rbp within the next few instructions: gcc -O2
 * schedules other work between the two, and sometimes before the push
 * (a constant loaded for a memset, say).  Bytes are not decoded, so a 0x55
 * inside an earlier instruction can be taken for the push; the mov must
 * follow it all the same, which chance alone rarely gives. */
static bool has_prologue(const unsigned char *p, size_t n)
{
	const size_t push_within = 16, mov_within = 48;

	if (n >= 4 && memcmp(p, endbr64, 4) == 0) {
		p += 4;
		n -= 4;
	}
	for (size_t k = 0; k < push_within && k < n; k++) {
		if (p[k] != push_rbp[0])
			continue;
		for (size_t i = k + 1; i + 3 <= n && i <= k + mov_within; i++)
			if (memcmp(p + i, mov_rsp_rbp, 3) == 0)
				return true;
	}
	return false;
}

int elf_uses_frame_pointers(const char *path)
{
	size_t with = 0, total = 0;
	Elf_Scn *scn = NULL, *symtab = NULL;
	GElf_Shdr symsh = { 0 };
	struct elf_file f;
	Elf *elf;
	int err;

	err = elf_file_open(&f, path);
	if (err)
		return err == -ENOEXEC ? -ENOENT : err; /* not ELF: no symbols */
	elf = f.elf;
	/* .symtab names every function; .dynsym only the exported ones */
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !symtab)) {
			symtab = scn;
			symsh = sh;
		}
	}
	if (!symtab || !symsh.sh_entsize) {
		err = -ENOENT;
		goto out;
	}
	{
		Elf_Data *syms = elf_getdata(symtab, NULL);
		size_t n = symsh.sh_size / symsh.sh_entsize;

		for (size_t i = 0; syms && i < n && total < MAX_FUNCTIONS; i++) {
			GElf_Sym sym;
			GElf_Shdr sh;
			Elf_Scn *code;
			Elf_Data *data;
			uint64_t off;

			const char *name;

			if (!gelf_getsym(syms, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
			    sym.st_size < 16)
				continue; /* tiny functions need no frame */
			name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (!name || is_crt(name))
				continue;
			code = elf_getscn(elf, sym.st_shndx);
			if (!code || !gelf_getshdr(code, &sh) || sh.sh_type != SHT_PROGBITS ||
			    !(sh.sh_flags & SHF_EXECINSTR))
				continue;
			data = elf_getdata(code, NULL);
			off = sym.st_value - sh.sh_addr;
			if (!data || !data->d_buf || off + 8 > data->d_size)
				continue;
			total++;
			with += has_prologue((const unsigned char *)data->d_buf + off,
					     data->d_size - off < 64 ? data->d_size - off : 64);
		}
	}
	if (!total)
		err = -ENOENT;
out:
	elf_file_close(&f);
	return err ? err : with * 2 >= total;
}
