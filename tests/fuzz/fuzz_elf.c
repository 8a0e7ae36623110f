// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the ELF and DWARF side of the symbolizer.
 *
 * 1. elfinfo on the input's bytes in memory (an exact-size copy, so ASan
 *    sees reads past the end): build-id, CRC, segments, bias, debug links,
 *    the sorted function tables of .symtab and .dynsym and their lookups,
 *    the USDT notes (.note.stapsdt) --trace py: looks for, the CIEs and
 *    FDEs of .eh_frame and .debug_frame (symbols/cfi_entries.h) and
 *    look-ups among them, the list's and the index's through .eh_frame_hdr.
 * 2. The symbolizer on the same bytes written to a file in a private
 *    directory under /dev/shm: symbolizer_image (ELF facts, symbols,
 *    separate-debug-file search), symbolizer_match_functions, and
 *    symbolizer_location (symbols, DWARF lines and inlined frames through
 *    libdw) on the text segment's ends and middle and on the symbols found.
 *    The debug root does not exist, and the directory holds nothing but the
 *    input, so that no file outside the input is ever read as its debug file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtimes/python/python_trace.h"
#include "symbols/cfi_entries.h"
#include "symbols/elfinfo.h"
#include "model/model.h"
#include "symbols/symbolize.h"

#define MAX_ADDRS 40

static char dir[64];
static char file[96];

static void cleanup(void)
{
	unlink(file);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/dev/shm/collector-fuzz-elf-XXXXXX");
	if (!mkdtemp(dir)) {
		perror(dir);
		abort();
	}
	snprintf(file, sizeof(file), "%s/image", dir);
	atexit(cleanup);
	return 0;
}

static int count_fn(void *ctx, const char *name, const GElf_Sym *sym)
{
	(void)name;
	(void)sym;
	++*(size_t *)ctx;
	return 0;
}

static void symtab_side(const struct elf_file *f, uint32_t type)
{
	Elf_Scn *scn = elf_file_symbols(f, type);
	struct symtab t = { 0 };
	size_t n = 0;

	if (!scn)
		return;
	elf_file_for_each_function(f, scn, count_fn, &n);
	if (symtab_build(&t, f, scn))
		return;
	for (size_t i = 0; i < t.n && i < 64; i++) {
		symtab_lookup(&t, t.syms[i].addr);
		symtab_lookup(&t, t.syms[i].end - 1);
		symtab_lookup(&t, t.syms[i].end);
		symtab_find_unique(&t, t.syms[i].name);
	}
	symtab_lookup(&t, 0);
	symtab_lookup(&t, UINT64_MAX);
	symtab_find_unique(&t, "main");
	symtab_free(&t);
}

static void cfi_entries_side(const struct elf_file *f)
{
	struct cfi_fdes fdes = { 0 };

	if (cfi_fdes_read(&fdes, f, CFI_EH_FRAME) == 0 &&
	    cfi_fdes_read(&fdes, f, CFI_DEBUG_FRAME) == 0) {
		cfi_fdes_sort(&fdes);
		for (size_t i = 0; i < fdes.n && i < 64; i++) {
			cfi_fdes_find(&fdes, fdes.v[i].start);
			cfi_fdes_find(&fdes, cfi_fde_end(&fdes.v[i]) - 1);
			cfi_fdes_find(&fdes, cfi_fde_end(&fdes.v[i]));
		}
		cfi_fdes_find(&fdes, 0);
		cfi_fdes_find(&fdes, UINT64_MAX);
	}
	cfi_fdes_free(&fdes);
}

/* The index: its rows as the file gives them, each looked up */
static void cfi_index_side(const struct elf_file *f)
{
	struct cfi_fde_index x;
	struct cfi_fde_one one;
	uint64_t a = 0;

	if (cfi_fde_index_open(&x, f) != 0)
		return;
	for (int i = 0; i < 64 && (a = cfi_fde_index_next_start(&x, a)); i++) {
		cfi_fde_index_find(&x, a, &one);
		cfi_fde_index_find(&x, a - 1, &one);
	}
	cfi_fde_index_find(&x, UINT64_MAX, &one);
	cfi_fde_index_close(&x);
}

static void elfinfo_side(const uint8_t *data, size_t size)
{
	char hex[2 * ELFINFO_MAX_BUILD_ID + 1];
	const uint8_t *alt_id;
	const char *name;
	uint64_t vaddr, memsz, off, bias;
	size_t alt_len;
	uint32_t crc;
	struct elf_file f;

	if (elf_file_from_memory(&f, data, size))
		return;
	elf_file_build_id_hex(&f, hex, sizeof(hex));
	elf_file_build_id_hex(&f, hex, 8);
	elf_file_crc32(&f);
	if (elf_file_text_segment(&f, &vaddr, &memsz)) {
		elf_file_vaddr_to_offset(&f, vaddr, &off);
		elf_file_vaddr_to_offset(&f, vaddr + memsz / 2, &off);
	}
	for (size_t i = 0; i < f.n_loads; i++) {
		elf_file_bias(&f, 0x7f0000000000ull, f.loads[i].offset & ~0xfffull, 4096, &bias);
		elf_file_vaddr_to_offset(&f, f.loads[i].vaddr + f.loads[i].memsz, &off);
	}
	elf_file_section(&f, ".debug_info");
	elf_file_debuglink(&f, &name, &crc);
	elf_file_debugaltlink(&f, &name, &alt_id, &alt_len);
	symtab_side(&f, SHT_SYMTAB);
	symtab_side(&f, SHT_DYNSYM);
	trace_python_elf_has_probes(&f); /* the USDT notes of --trace py: */
	cfi_entries_side(&f);
	cfi_index_side(&f);
	elf_file_close(&f);
}

struct addrs {
	uint64_t a[MAX_ADDRS];
	size_t n;
};

static void add_addr(struct addrs *v, uint64_t a)
{
	if (v->n < MAX_ADDRS)
		v->a[v->n++] = a;
}

static int collect_symbol(void *ctx, const struct symbolizer_symbol *sym)
{
	struct addrs *v = ctx;

	add_addr(v, sym->addr);
	if (sym->size > 1)
		add_addr(v, sym->addr + sym->size / 2);
	return 0;
}

static int write_input(const uint8_t *data, size_t size)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < size) {
		ssize_t w = write(fd, data + done, size - done);

		if (w <= 0) {
			close(fd);
			return -EIO;
		}
		done += (size_t)w;
	}
	close(fd);
	return 0;
}

static void symbolizer_side(const uint8_t *data, size_t size)
{
	struct addrs v = { .n = 0 };
	const struct model_image *im;
	struct symbolizer *s;
	struct model m;
	uint32_t image;

	if (write_input(data, size)) {
		perror(file);
		abort();
	}
	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_debug_root(s, "/nonexistent/collector-fuzz");
	symbolizer_set_kallsyms_path(s, "/nonexistent/collector-fuzz/kallsyms");
	image = symbolizer_image(s, file, NULL, 0, 0);
	im = &m.images.items[image];
	add_addr(&v, im->text_start);
	add_addr(&v, im->text_start + im->text_size / 2);
	add_addr(&v, im->text_start + im->text_size - 1);
	symbolizer_match_functions(s, image, "*", collect_symbol, &v);
	symbolizer_match_functions(s, image, "main", collect_symbol, &v);
	for (size_t i = 0; i < v.n; i++) {
		symbolizer_location(s, image, v.a[i]);
		/* a second time: the cached path */
		symbolizer_location(s, image, v.a[i]);
	}
	symbolizer_bias(s, image, 0x7f0000000000ull, 0);
	symbolizer_bias(s, image, 0x7f0000001000ull, 0x1000);
	symbolizer_free(s);
	model_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	elfinfo_side(data, size);
	symbolizer_side(data, size);
	return 0;
}
