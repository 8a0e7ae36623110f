/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An independent reader of ELF symbols for the tests (plain libelf, none of
 * the collector's code): the expected values the symbolizer and the
 * unwinder are checked against.
 */
#ifndef COLLECTOR_TEST_ELF_ORACLE_H
#define COLLECTOR_TEST_ELF_ORACLE_H

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

/* st_value and st_size of the symbol `name` in path's .symtab; false
 * when there is none. */
static inline bool elf_symbol_find(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;
	int fd;

	assert_true(elf_version(EV_CURRENT) != EV_NONE);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_msg("%s: %s", path, strerror(errno));
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while (!found && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr shdr;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			const char *n;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			n = elf_strptr(elf, shdr.sh_link, sym.st_name);
			if (n && !strcmp(n, name)) {
				*addr = sym.st_value;
				if (size)
					*size = sym.st_size;
				found = true;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static inline void elf_symbol(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	if (!elf_symbol_find(path, name, addr, size))
		fail_msg("%s: no symbol %s", path, name);
}

static inline uint64_t sym_addr(const char *path, const char *name)
{
	uint64_t addr;

	elf_symbol(path, name, &addr, NULL);
	return addr;
}

#endif /* COLLECTOR_TEST_ELF_ORACLE_H */
