// SPDX-License-Identifier: GPL-2.0
/*
 * Where the evaluator's code is (runtimes/python/python_layouts.h): the
 * function _PyEval_EvalFrameDefault and its cold part.  GCC moves the
 * rarely run blocks of a function into a part of its own, placed
 * elsewhere in .text and named NAME.cold in the symbol table, which a
 * stripped interpreter does not keep: Debian's 3.14 keeps 1 184 bytes of
 * _PyEval_EvalFrameDefault under its name and the 84 KiB of its cold part
 * under none, and most return addresses into the evaluator are there.
 * GCC writes the cold part's FDE right after the function's in .eh_frame:
 * that FDE, when no symbol starts where it starts, is the cold part.
 */
#include "runtimes/python/python_layouts.h"

#include <string.h>

/* The FDEs of .eh_frame in file order: their ranges, with GCC's pointer
 * encoding (pc-relative signed 4 bytes, DW_EH_PE_pcrel | DW_EH_PE_sdata4)
 * the only one read; an FDE of another encoding ends the search. */
static int next_fde(const uint8_t *d, size_t size, uint64_t addr, size_t *at, uint64_t *start,
		    uint64_t *len)
{
	while (*at + 8 <= size) {
		uint32_t length, id;
		size_t here = *at;
		int32_t rel;
		uint32_t range;

		memcpy(&length, d + here, 4);
		if (!length || length == 0xffffffffu || here + 4 + length > size)
			return 0;
		*at = here + 4 + length;
		memcpy(&id, d + here + 4, 4);
		if (!id || length < 16)
			continue; /* a CIE */
		memcpy(&rel, d + here + 8, 4);
		memcpy(&range, d + here + 12, 4);
		*start = addr + here + 8 + (int64_t)rel;
		*len = range;
		return 1;
	}
	return 0;
}

static bool symbol_at(const struct elf_file *f, uint64_t addr)
{
	uint32_t types[2] = { SHT_DYNSYM, SHT_SYMTAB };

	for (int k = 0; k < 2; k++) {
		Elf_Scn *scn = elf_file_symbols(f, types[k]);
		Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
		GElf_Shdr sh;
		GElf_Sym sym;

		if (!data || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++)
			if (gelf_getsym(data, (int)i, &sym) && sym.st_value == addr &&
			    GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF)
				return true;
	}
	return false;
}

int python_evaluator_ranges(const struct elf_file *f, uint64_t eval, uint64_t eval_size,
			    uint64_t ranges[][2], int max)
{
	Elf_Scn *scn = elf_file_section(f, ".eh_frame");
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	uint64_t start, len;
	GElf_Shdr sh;
	size_t at = 0;
	int n = 0;

	if (!eval || max < 1)
		return 0;
	ranges[n][0] = eval;
	ranges[n++][1] = eval + (eval_size ? eval_size : 1);
	if (!data || !data->d_buf || !gelf_getshdr(scn, &sh))
		return n;
	while (next_fde(data->d_buf, data->d_size, sh.sh_addr, &at, &start, &len)) {
		if (start != eval)
			continue;
		if (next_fde(data->d_buf, data->d_size, sh.sh_addr, &at, &start, &len) &&
		    n < max && (start < eval || start >= eval + eval_size) && !symbol_at(f, start)) {
			ranges[n][0] = start;
			ranges[n++][1] = start + len;
		}
		break;
	}
	return n;
}
