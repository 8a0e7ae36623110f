// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the symbolizer on ELF files (tests/unit/symtest.h): PIE and
 * non-PIE executables, separate debug files, inlined calls, the image
 * cache, live mappings, symbols by name, the vDSO.
 */
#include "symtest.h"
#include "symbols/symbolize_internal.h"

/* ---- shared checks -------------------------------------------------------- */

/*
 * The functions of prog.c in image img: `syms` is the unstripped file with
 * the true symbol table.
 */
static void check_prog_functions(struct model *m, struct symbolizer *s, uint32_t img,
				 const char *syms, bool with_lines)
{
	static const char *const funcs[] = { "alpha", "beta" };
	uint64_t addr, size, gap, table;
	const struct model_function *f;
	const struct model_location *l;
	uint32_t loc;
	char name[64], tag[64];

	for (size_t i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "symtest_%s", funcs[i]);
		elf_symbol(syms, name, &addr, &size);
		assert_true(size > 0);

		/* the entry, the marked line, and the last byte */
		loc = symbolizer_location(s, img, addr);
		f = loc_function(m, loc);
		assert_non_null(f);
		assert_string_equal(f->name, name);
		assert_true(f->entry == addr);
		assert_true(f->size == size);
		assert_int_equal(f->image, img);
		if (with_lines) {
			snprintf(tag, sizeof(tag), "DECL:%s", funcs[i]);
			assert_true(same_file(file_path(m, f->file), PROG_SRC));
			assert_int_equal(f->line, marker_line(PROG_SRC, tag));
		}

		snprintf(tag, sizeof(tag), "symtest_mark_%s", funcs[i]);
		loc = symbolizer_location(s, img, sym_addr(syms, tag));
		l = &m->locations.items[loc];
		assert_non_null(loc_function(m, loc));
		assert_string_equal(loc_function(m, loc)->name, name);
		assert_int_equal(l->image, img);
		assert_true(l->addr == sym_addr(syms, tag));
		if (with_lines) {
			snprintf(tag, sizeof(tag), "MARK:%s", funcs[i]);
			assert_true(same_file(file_path(m, l->file), PROG_SRC));
			assert_int_equal(l->line, marker_line(PROG_SRC, tag));
			assert_int_equal(l->n_inlines, 0);
		}

		loc = symbolizer_location(s, img, addr + size - 1);
		assert_non_null(loc_function(m, loc));
		assert_string_equal(loc_function(m, loc)->name, name);
	}

	/* the global wins over the weak and the local alias at one address */
	assert_true(sym_addr(syms, "symtest_alpha_weak") == sym_addr(syms, "symtest_alpha"));
	assert_true(sym_addr(syms, "symtest_alpha_local") == sym_addr(syms, "symtest_alpha"));

	/* st_size bounds a sized function; the bytes after it are nobody's */
	elf_symbol(syms, "symtest_sized", &addr, &size);
	assert_int_equal(size, 2);
	assert_string_equal(loc_function(m, symbolizer_location(s, img, addr + 1))->name,
			    "symtest_sized");
	gap = sym_addr(syms, "symtest_gap");
	assert_true(gap == addr + 2);
	for (uint64_t a = gap; a < gap + 14; a += 13) {
		loc = symbolizer_location(s, img, a);
		assert_null(loc_function(m, loc));
		assert_int_equal(m->locations.items[loc].image, img);
		assert_true(m->locations.items[loc].addr == a);
	}
	/* a size-0 function reaches up to the next symbol */
	elf_symbol(syms, "symtest_nosize", &addr, &size);
	assert_int_equal(size, 0);
	assert_string_equal(loc_function(m, symbolizer_location(s, img, addr + 3))->name,
			    "symtest_nosize");
	addr = sym_addr(syms, "symtest_after_nosize");
	assert_string_equal(loc_function(m, symbolizer_location(s, img, addr))->name,
			    "symtest_after_nosize");
	f = loc_function(m, symbolizer_location(s, img, addr + 1));
	assert_true(!f || strcmp(f->name, "symtest_after_nosize"));

	/* data is not code */
	table = sym_addr(syms, "symtest_table");
	assert_null(loc_function(m, symbolizer_location(s, img, table + 4)));
}

static void check_image_facts(const struct model_image *im, const char *path)
{
	char cmd[512], value[256];
	struct stat st;
	unsigned char *buf;
	FILE *f;

	assert_int_equal(stat(path, &st), 0);
	assert_true(im->dev == st.st_dev);
	assert_true(im->inode == st.st_ino);
	assert_true(im->mtime == st.st_mtime);
	assert_true(im->file_size == (uint64_t)st.st_size);

	/* build-id as readelf prints it ("" when none) */
	snprintf(cmd, sizeof(cmd), "readelf -n %s", path);
	tool_value(cmd, "Build ID: ", value, sizeof(value));
	assert_string_equal(im->build_id, value);

	/* CRC-32 of the whole file */
	buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	assert_int_equal(im->crc32, (uint32_t)crc32(0, buf, (uInt)st.st_size));
	free(buf);

	/* the executable PT_LOAD, from readelf's program headers */
	snprintf(cmd, sizeof(cmd), "readelf -lW %s | awk '$1 == \"LOAD\" && / R?W?E 0x[0-9a-f]+$/ "
		 "{ print \"X\", $3, $6; exit }'", path);
	tool_value(cmd, "X ", value, sizeof(value));
	{
		unsigned long long vaddr, memsz;

		assert_int_equal(sscanf(value, "%llx %llx", &vaddr, &memsz), 2);
		assert_true(im->text_start == vaddr);
		assert_true(im->text_size == memsz);
	}
}

/* ---- tests ------------------------------------------------------------------ */

static void test_pie(void **state)
{
	struct model m;
	struct symbolizer *s;
	const struct model_image *im;
	uint32_t img, loc;
	size_t n;

	(void)state;
	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_image(s, SYMTEST "/pie", NULL, 0, 0);
	im = &m.images.items[img];
	assert_string_equal(im->path, SYMTEST "/pie");
	assert_int_equal(im->kind, MODEL_IMAGE_ELF);
	assert_false(im->is_et_exec);
	assert_true(im->has_symbols);
	assert_null(im->debug_path);
	assert_int_equal(strlen(im->build_id), 40);
	check_image_facts(im, SYMTEST "/pie");
	check_prog_functions(&m, s, img, SYMTEST "/pie", true);

	/* a location is made once; an address past everything is unknown */
	loc = symbolizer_location(s, img, sym_addr(SYMTEST "/pie", "symtest_beta"));
	n = m.locations.len;
	assert_int_equal(symbolizer_location(s, img, sym_addr(SYMTEST "/pie", "symtest_beta")), loc);
	assert_int_equal(m.locations.len, n);
	assert_null(loc_function(&m, symbolizer_location(s, img, 0x7fffffff)));
	assert_true(model_stat_value(&m, MODEL_STAT_SYMBOLIZE_UNRESOLVED_LOCATIONS) > 0);

	symbolizer_free(s);
	model_free(&m);
}

static void test_nopie(void **state)
{
	struct model m;
	struct symbolizer *s;
	uint32_t img;

	(void)state;
	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_image(s, SYMTEST "/nopie", NULL, 0, 0);
	assert_true(m.images.items[img].is_et_exec);
	assert_true(m.images.items[img].text_start >= 0x400000);
	check_image_facts(&m.images.items[img], SYMTEST "/nopie");
	/* ET_EXEC runs at its link-time addresses */
	assert_true(symbolizer_bias(s, img, 0x401000, 0x1000) == 0);
	check_prog_functions(&m, s, img, SYMTEST "/nopie", true);
	symbolizer_free(s);
	model_free(&m);

	/* without a format that names images by it, no CRC: the rest the same */
	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_image_crc(s, false);
	img = symbolizer_image(s, SYMTEST "/nopie", NULL, 0, 0);
	assert_int_equal(m.images.items[img].crc32, 0);
	assert_true(m.images.items[img].text_start >= 0x400000);
	check_prog_functions(&m, s, img, SYMTEST "/nopie", true);
	symbolizer_free(s);
	model_free(&m);
}

static void check_stripped(const char *name, const char *want_debug)
{
	char path[256], full[256];
	struct model m;
	struct symbolizer *s;
	const struct model_image *im;
	uint32_t img;

	snprintf(path, sizeof(path), SYMTEST "/%s", name);
	snprintf(full, sizeof(full), SYMTEST "/%s.full", name);
	/* the stripped file itself has no function symbols */
	{
		char cmd[512], value[64];

		snprintf(cmd, sizeof(cmd), "readelf -sW %s | grep -c ' FUNC .*symtest_' ; true",
			 path);
		tool_value(cmd, "", value, sizeof(value));
		assert_string_equal(value, "0");
	}
	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_debug_root(s, DEBUG_ROOT);
	img = symbolizer_image(s, path, NULL, 0, 0);
	im = &m.images.items[img];
	assert_string_equal(im->path, path);
	assert_true(im->has_symbols);
	assert_non_null(im->debug_path);
	if (!strstr(im->debug_path, want_debug))
		fail_msg("debug_path %s, want %s", im->debug_path, want_debug);
	/* the image's facts are the stripped file's, not the debug file's */
	check_image_facts(im, path);
	check_prog_functions(&m, s, img, full, true);
	symbolizer_free(s);
	model_free(&m);
}

/* The function of symbol `symbol` (read from the unstripped copy) in the
 * stripped file SYMTEST/name: its FDE's, named "name+0xSTART". */
static void check_fde_function(struct model *m, struct symbolizer *s, uint32_t img,
			       const char *name, const char *symbol)
{
	const struct model_function *f;
	uint64_t addr, size;
	char want[128], full[256];

	snprintf(full, sizeof(full), SYMTEST "/%s.full", name);
	elf_symbol(full, symbol, &addr, &size);
	snprintf(want, sizeof(want), "%s+0x%llx", name, (unsigned long long)addr);
	f = loc_function(m, symbolizer_location(s, img, addr + size - 1));
	assert_non_null(f);
	assert_string_equal(f->name, want);
	assert_true(f->entry == addr);
	assert_true(f->size == size);
	assert_ptr_equal(loc_function(m, symbolizer_location(s, img, addr)), f);
	assert_ptr_equal(loc_function(m, symbolizer_location(s, img, addr + size / 2)), f);
}

static void test_stripped_buildid(void **state)
{
	struct model m;
	struct symbolizer *s;
	uint32_t img;
	char want[128];

	(void)state;
	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_image(s, SYMTEST "/stripped-buildid", NULL, 0, 0);
	snprintf(want, sizeof(want), DEBUG_ROOT "/.build-id/%.2s/%s.debug",
		 m.images.items[img].build_id, m.images.items[img].build_id + 2);
	/* without the debug root the stripped file has no names: its .eh_frame
	 * FDEs make the functions, "stripped-buildid+0xSTART", every address
	 * of one function in one */
	assert_null(m.images.items[img].debug_path);
	check_fde_function(&m, s, img, "stripped-buildid", "symtest_alpha");
	check_fde_function(&m, s, img, "stripped-buildid", "symtest_beta");
	symbolizer_free(s);
	model_free(&m);

	check_stripped("stripped-buildid", want);
}

static void test_stripped_debuglink(void **state)
{
	(void)state;
	check_stripped("stripped-debuglink", SYMTEST "/stripped-debuglink.debug");
	check_stripped("stripped-dotdebug", SYMTEST "/.debug/stripped-dotdebug.debug");
}

static void test_debuglink_bad_crc(void **state)
{
	struct model m;
	struct symbolizer *s;
	uint32_t img;

	(void)state;
	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_debug_root(s, DEBUG_ROOT);
	img = symbolizer_image(s, SYMTEST "/stripped-badcrc", NULL, 0, 0);
	assert_null(m.images.items[img].debug_path);
	assert_false(m.images.items[img].has_symbols);
	/* no symbol from the debug file: the FDE's function */
	check_fde_function(&m, s, img, "stripped-badcrc", "symtest_alpha");
	symbolizer_free(s);
	model_free(&m);
}

/* gdb's third place for a debuglink target: the debug root + the file's
 * own directory.  The copy beside the file has a bad CRC and is skipped. */
static void test_debuglink_under_root(void **state)
{
	char root[] = "/tmp/symtest-root-XXXXXX", abs[PATH_MAX], dir[PATH_MAX], cmd[6 * PATH_MAX];
	char want[2 * PATH_MAX];
	struct model m;
	struct symbolizer *s;
	struct stat st;
	uint32_t img;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_non_null(realpath(SYMTEST "/stripped-badcrc", abs));
	snprintf(dir, sizeof(dir), "%s", abs);
	*strrchr(dir, '/') = '\0';
	/* the debug file as it was before mk/symtest.mk appended 7 bytes */
	assert_int_equal(stat(SYMTEST "/stripped-badcrc.debug", &st), 0);
	snprintf(want, sizeof(want), "%s%s/stripped-badcrc.debug", root, dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s%s && head -c %lld %s > %s", root, dir,
		 (long long)st.st_size - 7, SYMTEST "/stripped-badcrc.debug", want);
	assert_int_equal(system(cmd), 0);

	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_debug_root(s, root);
	img = symbolizer_image(s, abs, NULL, 0, 0);
	assert_non_null(m.images.items[img].debug_path);
	assert_string_equal(m.images.items[img].debug_path, want);
	check_prog_functions(&m, s, img, SYMTEST "/stripped-badcrc.full", true);
	symbolizer_free(s);
	model_free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_inline_chain(void **state)
{
	struct model m;
	struct symbolizer *s;
	const struct model_location *l;
	const struct model_inline *inl;
	const struct model_function *f;
	uint64_t outer, outer_size, mark;
	uint32_t img, loc, mid = MODEL_NONE;
	int with_chain = 0;

	(void)state;
	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_image(s, SYMTEST "/inline", NULL, 0, 0);
	elf_symbol(SYMTEST "/inline", "symtest_outer", &outer, &outer_size);
	mark = sym_addr(SYMTEST "/inline", "symtest_mark_leaf");
	assert_true(mark >= outer && mark < outer + outer_size);

	loc = symbolizer_location(s, img, mark);
	l = &m.locations.items[loc];
	assert_string_equal(loc_function(&m, loc)->name, "symtest_outer");
	assert_int_equal(l->n_inlines, 2);
	inl = model_location_inlines(&m, l);
	/* outermost first: outer calls mid at call_mid, mid calls leaf at call_leaf */
	f = &m.functions.items[inl[0].function];
	assert_string_equal(f->name, "symtest_mid");
	assert_int_equal(f->line, marker_line(INLINE_SRC, "DECL:mid"));
	assert_true(same_file(file_path(&m, inl[0].call_file), INLINE_SRC));
	assert_int_equal(inl[0].call_line, marker_line(INLINE_SRC, "MARK:call_mid"));
	f = &m.functions.items[inl[1].function];
	assert_string_equal(f->name, "symtest_leaf");
	assert_int_equal(f->line, marker_line(INLINE_SRC, "DECL:leaf"));
	assert_true(same_file(file_path(&m, inl[1].call_file), INLINE_SRC));
	assert_int_equal(inl[1].call_line, marker_line(INLINE_SRC, "MARK:call_leaf"));
	/* the address's own line is inside the innermost function */
	assert_true(same_file(file_path(&m, l->file), INLINE_SRC));
	assert_int_equal(l->line, marker_line(INLINE_SRC, "MARK:leaf"));
	mid = inl[0].function;

	/* every address of outer: a chain, if any, starts at mid */
	for (uint64_t a = outer; a < outer + outer_size; a++) {
		loc = symbolizer_location(s, img, a);
		l = &m.locations.items[loc];
		assert_string_equal(loc_function(&m, loc)->name, "symtest_outer");
		if (!l->n_inlines)
			continue;
		with_chain++;
		assert_int_equal(model_location_inlines(&m, l)[0].function, mid);
		assert_true(l->n_inlines <= 2);
	}
	assert_true(with_chain > 0);
	symbolizer_free(s);
	model_free(&m);
}

static void test_image_cache(void **state)
{
	char dir[] = "/tmp/symtest-XXXXXX", link[300], copy[300], cmd[2 * PATH_MAX], abs[PATH_MAX];
	struct model m;
	struct symbolizer *s;
	uint32_t a, b, c, d, e, loc;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(realpath(SYMTEST "/nobuildid", abs));
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	assert_int_equal(symlink(abs, link), 0);
	snprintf(cmd, sizeof(cmd), "cp %s %s", abs, copy);
	assert_int_equal(system(cmd), 0);

	model_init(&m);
	s = symbolizer_new(&m);
	/* no build-id: identity is device + inode */
	a = symbolizer_image(s, SYMTEST "/nobuildid", NULL, 0, 0);
	assert_string_equal(m.images.items[a].build_id, "");
	assert_int_equal(symbolizer_image(s, link, NULL, 0, 0), a);
	b = symbolizer_image(s, copy, NULL, 0, 0);
	assert_int_not_equal(b, a);
	/* known dev+inode: found without opening (the open path is bogus) */
	assert_int_equal(stat(copy, &st), 0);
	assert_int_equal(symbolizer_image(s, copy, "/nonexistent", st.st_dev, st.st_ino), b);
	assert_int_equal(symbolizer_image(s, "/elsewhere", "/nonexistent", st.st_dev, st.st_ino), b);
	/* path recorded as given, file read from open_path */
	c = symbolizer_image(s, "/as/mapped/pie", SYMTEST "/pie", 0, 0);
	assert_string_equal(m.images.items[c].path, "/as/mapped/pie");
	assert_true(m.images.items[c].has_symbols);
	/* same build-id, other file: one image */
	snprintf(cmd, sizeof(cmd), "cp %s %s/pie", SYMTEST "/pie", dir);
	assert_int_equal(system(cmd), 0);
	snprintf(copy, sizeof(copy), "%s/pie", dir);
	assert_int_equal(symbolizer_image(s, copy, NULL, 0, 0), c);
	/* unreadable: an image without symbols, once */
	d = symbolizer_image(s, "/nonexistent/lib.so", NULL, 0, 0);
	assert_false(m.images.items[d].has_symbols);
	assert_int_equal(m.images.items[d].kind, MODEL_IMAGE_ELF);
	assert_int_equal(symbolizer_image(s, "/nonexistent/lib.so", NULL, 0, 0), d);
	assert_null(loc_function(&m, symbolizer_location(s, d, 0x1234)));
	loc = symbolizer_location(s, d, 0x1234);
	assert_true(m.locations.items[loc].addr == 0x1234);
	assert_true(symbolizer_bias(s, d, 0x7f0000000000, 0) == 0);
	e = symbolizer_image(s, "/nonexistent/other.so", NULL, 77, 88);
	assert_int_not_equal(e, d);
	assert_int_equal(symbolizer_image(s, "/nonexistent/other.so", NULL, 77, 88), e);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_SYMBOLIZE_UNREADABLE_IMAGES), 2);
	/* unreadable through the first process (gone), read through the next
	 * one that maps the same file: the one image, named from then on */
	snprintf(copy, sizeof(copy), "%s/pie2", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && echo >>%s", SYMTEST "/nopie", copy, copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(stat(copy, &st), 0);
	e = symbolizer_image(s, "/usr/lib/late.so", "/proc/999999999/map_files/x", st.st_dev,
			     st.st_ino);
	assert_false(m.images.items[e].has_symbols);
	assert_int_equal(symbolizer_image(s, "/usr/lib/late.so", copy, st.st_dev, st.st_ino), e);
	assert_true(m.images.items[e].has_symbols);
	assert_true(m.images.items[e].file_size > 0);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_SYMBOLIZE_UNREADABLE_IMAGES), 3);
	/* a dev/inode that is not the file's is counted (the file was replaced) */
	assert_int_equal(model_stat_value(&m, MODEL_STAT_SYMBOLIZE_IDENTITY_MISMATCH), 0);
	symbolizer_image(s, SYMTEST "/nopie", NULL, 1, 2);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_SYMBOLIZE_IDENTITY_MISMATCH), 1);
	/* special mappings */
	a = symbolizer_special_image(s, "[vdso]");
	assert_int_equal(m.images.items[a].kind, MODEL_IMAGE_ANON);
	assert_string_equal(m.images.items[a].path, "[vdso]");
	assert_int_equal(symbolizer_special_image(s, "[vdso]"), a);
	assert_int_not_equal(symbolizer_special_image(s, "[anon:jit]"), a);
	assert_null(loc_function(&m, symbolizer_location(s, a, 0x10)));
	symbolizer_free(s);
	model_free(&m);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Continuous runs: the code forgotten between intervals, an image no one
 * maps closed and opened again when met, one in use kept, and a file that
 * is not the closed image's any more not taken for it. */
static void test_forget_code(void **state)
{
	char dir[] = "/tmp/symtest-XXXXXX", copy[300], cmd[2 * PATH_MAX];
	uint64_t beta = sym_addr(SYMTEST "/pie", "symtest_beta");
	struct model m;
	struct symbolizer *s;
	uint32_t pie, nopie, stale, loc;
	bool in_use[8] = { false };
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/lib.so", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", SYMTEST "/nobuildid", copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(stat(copy, &st), 0);
	model_init(&m);
	s = symbolizer_new(&m);
	pie = symbolizer_image(s, SYMTEST "/pie", NULL, 0, 0);
	nopie = symbolizer_image(s, SYMTEST "/nopie", NULL, 0, 0);
	stale = symbolizer_image(s, copy, NULL, st.st_dev, st.st_ino);
	assert_true(stale < 8 && pie < 8 && nopie < 8);
	loc = symbolizer_location(s, pie, beta);
	assert_string_equal(loc_function(&m, loc)->name, "symtest_beta");
	in_use[nopie] = true;
	symbolizer_forget_code(s, in_use, 8);
	model_forget_code(&m);
	assert_int_equal(m.locations.len, 0);
	assert_int_equal(m.functions.len, 0);
	/* pie, not in use but resolved in the interval that ended, is kept
	 * open for the next; stale, never resolved, is closed */
	assert_non_null(sym_peek_image(s, pie));
	assert_null(sym_peek_image(s, stale));
	/* the image in use resolves at once, with fresh function ids */
	loc = symbolizer_location(s, nopie, sym_addr(SYMTEST "/nopie", "symtest_beta"));
	assert_string_equal(loc_function(&m, loc)->name, "symtest_beta");
	/* an interval without pie: closed at its end */
	symbolizer_forget_code(s, in_use, 8);
	model_forget_code(&m);
	assert_null(sym_peek_image(s, pie));
	assert_non_null(sym_peek_image(s, nopie));
	/* a closed image resolves nothing until it is met again */
	assert_null(loc_function(&m, symbolizer_location(s, pie, beta)));
	symbolizer_forget_code(s, in_use, 8);
	model_forget_code(&m);
	assert_int_equal(symbolizer_image(s, SYMTEST "/pie", NULL, 0, 0), pie);
	/* met again, its symbols are read when an address of it is resolved
	 * (a reopened compiler whose process is never sampled costs no sort),
	 * and its bias is known before */
	assert_true(sym_peek_image(s, pie)->symbols_later);
	assert_int_equal(sym_peek_image(s, pie)->syms.n, 0);
	assert_int_equal(symbolizer_bias(s, pie, 0x1000, 0), 0x1000);
	assert_true(sym_peek_image(s, pie)->symbols_later);
	loc = symbolizer_location(s, pie, beta);
	assert_string_equal(loc_function(&m, loc)->name, "symtest_beta");
	assert_false(sym_peek_image(s, pie)->symbols_later);
	assert_true(sym_peek_image(s, pie)->syms.n > 0);
	/* the closed file replaced by another (a rebuild) under its dev+inode
	 * key: the other file is not read as the image's */
	assert_int_equal(symbolizer_image(s, copy, SYMTEST "/nopie", st.st_dev, st.st_ino), stale);
	assert_int_equal(model_stat_value(&m, MODEL_STAT_SYMBOLIZE_IDENTITY_MISMATCH), 1);
	assert_null(loc_function(&m, symbolizer_location(s, stale, 0x1000)));
	symbolizer_free(s);
	model_free(&m);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* One location as text: function, its entry, size, file and line, the
 * address's file and line, every inlined call. */
static void describe(const struct model *m, uint32_t loc, char *out, size_t size)
{
	const struct model_location *l = &m->locations.items[loc];
	const struct model_inline *inl = model_location_inlines(m, l);
	size_t n = 0;

#define FN(id) ((id) == MODEL_NONE ? "-" : m->functions.items[id].name)
#define FL(id) ((id) == MODEL_NONE ? "-" : m->files.items[id].path)
	n += (size_t)snprintf(out + n, size - n, "%s@%llx/%llu %s:%u %s:%u", FN(l->function),
			      l->function == MODEL_NONE ? 0ULL :
			      (unsigned long long)m->functions.items[l->function].entry,
			      l->function == MODEL_NONE ? 0ULL :
			      (unsigned long long)m->functions.items[l->function].size,
			      l->function == MODEL_NONE ? "-" : FL(m->functions.items[l->function].file),
			      l->function == MODEL_NONE ? 0 : m->functions.items[l->function].line,
			      FL(l->file), l->line);
	for (uint32_t k = 0; k < l->n_inlines && n < size; k++)
		n += (size_t)snprintf(out + n, size - n, " [%s %s:%u]", FN(inl[k].function),
				      FL(inl[k].call_file), inl[k].call_line);
#undef FN
#undef FL
}

/* Continuous runs: what an image in use resolved is kept across the cut
 * and interned again as it was (function, lines, inlined calls), without
 * a look-up; an image not in use keeps nothing. */
static void test_location_cache(void **state)
{
	enum { N = 64 };
	static char before[N][1024], after[1024];
	struct model m;
	struct symbolizer *s;
	uint32_t img, pie, loc;
	uint64_t outer, outer_size, beta = sym_addr(SYMTEST "/pie", "symtest_beta");
	bool in_use[8] = { false };
	struct sym_image *si;

	(void)state;
	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_image(s, SYMTEST "/inline", NULL, 0, 0);
	pie = symbolizer_image(s, SYMTEST "/pie", NULL, 0, 0);
	assert_true(img < 8 && pie < 8);
	elf_symbol(SYMTEST "/inline", "symtest_outer", &outer, &outer_size);
	if (outer_size > N)
		outer_size = N;
	for (uint64_t a = 0; a < outer_size; a++)
		describe(&m, symbolizer_location(s, img, outer + a), before[a], sizeof(before[a]));
	assert_non_null(loc_function(&m, symbolizer_location(s, pie, beta)));
	in_use[img] = true;
	symbolizer_forget_code(s, in_use, 8);
	model_forget_code(&m);
	/* kept: the addresses of the image in use, and pie's (resolved in the
	 * interval that ended, though not in use) until an interval without it */
	assert_int_equal(location_cache_len(s->loc_cache), outer_size + 1);
	/* met again in the next interval (twice: the cache must not lose
	 * them when the interval meets only some) */
	for (int cut = 0; cut < 2; cut++) {
		/* the DWARF and symbols may not be looked at: hide them */
		si = sym_get_image(s, img);
		si->opened = false;
		for (uint64_t a = cut; a < outer_size; a += 1 + (uint64_t)cut) {
			loc = symbolizer_location(s, img, outer + a);
			describe(&m, loc, after, sizeof(after));
			assert_string_equal(after, before[a]);
		}
		si->opened = true;
		symbolizer_forget_code(s, in_use, 8);
		model_forget_code(&m);
		assert_int_equal(location_cache_len(s->loc_cache), outer_size);
	}
	/* no longer in use: kept through the cut of an interval it resolved
	 * in, gone at the next */
	in_use[img] = false;
	symbolizer_location(s, img, outer);
	symbolizer_forget_code(s, in_use, 8);
	model_forget_code(&m);
	assert_int_equal(location_cache_len(s->loc_cache), outer_size);
	symbolizer_forget_code(s, in_use, 8);
	model_forget_code(&m);
	assert_int_equal(location_cache_len(s->loc_cache), 0);
	symbolizer_free(s);
	model_free(&m);
}

/* An address of an image still in use that no interval meets for
 * LOCATION_CACHE_KEEP_CUTS cuts leaves the cache; one met stays. */
static void test_location_cache_ages(void **state)
{
	struct model m;
	struct symbolizer *s;
	uint32_t img;
	uint64_t outer, outer_size;
	bool in_use[8] = { false };

	(void)state;
	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_image(s, SYMTEST "/inline", NULL, 0, 0);
	assert_true(img < 8);
	elf_symbol(SYMTEST "/inline", "symtest_outer", &outer, &outer_size);
	if (outer_size > 16)
		outer_size = 16;
	assert_true(outer_size > 1);
	in_use[img] = true;
	for (uint64_t a = 0; a < outer_size; a++)
		symbolizer_location(s, img, outer + a);
	for (int cut = 1; cut <= LOCATION_CACHE_KEEP_CUTS; cut++) {
		symbolizer_forget_code(s, in_use, 8);
		model_forget_code(&m);
		/* kept while the last interval that met them is recent */
		assert_int_equal(location_cache_len(s->loc_cache), outer_size);
		symbolizer_location(s, img, outer); /* only this one met again */
	}
	symbolizer_forget_code(s, in_use, 8);
	model_forget_code(&m);
	assert_int_equal(location_cache_len(s->loc_cache), 1);
	symbolizer_free(s);
	model_free(&m);
}

static __attribute__((noinline)) int test_local_function(int x)
{
	return x + 1;
}

/* Biases from live mappings of this process: every mapping of one file
 * gives the dynamic loader's l_addr, and runtime - bias resolves. */
static uint32_t check_live(struct symbolizer *s, struct model *m, const char *path,
			   uint64_t l_addr, uint64_t runtime, const char *want)
{
	struct procmaps maps;
	uint32_t img = MODEL_NONE, loc;
	int n = 0;

	assert_int_equal(procmaps_read(getpid(), &maps), 0);
	for (size_t i = 0; i < maps.n; i++) {
		const struct procmap_entry *e = &maps.entries[i];
		char open_path[4200];
		uint32_t id;

		if (strcmp(e->path, path))
			continue;
		assert_int_equal(procmaps_open_path(getpid(), e, open_path, sizeof(open_path), NULL), 0);
		id = symbolizer_image(s, e->path, open_path, procmap_dev(e), e->inode);
		if (img != MODEL_NONE)
			assert_int_equal(id, img);
		img = id;
		/*
		 * A read-only mapping may share its file page with the next
		 * segment (here .rodata and RELRO data at one pgoff), so only
		 * the executable one and the first one are unambiguous.
		 */
		if (!e->exec && e->pgoff)
			continue;
		if (symbolizer_bias(s, img, e->start, e->pgoff) != l_addr)
			fail_msg("%s mapping %llx pgoff %llx: bias %llx, want %llx", path,
				 (unsigned long long)e->start, (unsigned long long)e->pgoff,
				 (unsigned long long)symbolizer_bias(s, img, e->start, e->pgoff),
				 (unsigned long long)l_addr);
		n++;
	}
	assert_true(n >= 2);
	assert_string_equal(m->images.items[img].path, path);
	loc = symbolizer_location(s, img, runtime - l_addr);
	assert_non_null(loc_function(m, loc));
	assert_string_equal(loc_function(m, loc)->name, want);
	assert_true(loc_function(m, loc)->entry == runtime - l_addr);
	procmaps_free(&maps);
	return img;
}

static void test_live_bias(void **state)
{
	char lib[PATH_MAX], exe[PATH_MAX];
	struct link_map *lm = NULL;
	struct model m;
	struct symbolizer *s;
	uint32_t img, loc;
	void *h, *fn;
	ssize_t n;

	(void)state;
	assert_non_null(realpath(SYMTEST "/libsymtest.so", lib));
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("dlopen: %s", dlerror());
	fn = dlsym(h, "symtest_lib_func");
	assert_non_null(fn);
	assert_int_equal(dlinfo(h, RTLD_DI_LINKMAP, &lm), 0);
	/* linked at 0x10000000: runtime and file-relative addresses differ */
	assert_true((uint64_t)(uintptr_t)fn - lm->l_addr ==
		    sym_addr(SYMTEST "/libsymtest.so", "symtest_lib_func"));

	model_init(&m);
	s = symbolizer_new(&m);
	img = check_live(s, &m, lib, lm->l_addr, (uint64_t)(uintptr_t)fn, "symtest_lib_func");
	/* a versioned symbol shows without its version (the maps are not read
	 * again: they now hold the symbolizer's own mapping of the file) */
	fn = dlvsym(h, "symtest_lib_versioned", "SYMTEST_1");
	assert_non_null(fn);
	loc = symbolizer_location(s, img, (uint64_t)(uintptr_t)fn - lm->l_addr);
	assert_non_null(loc_function(&m, loc));
	assert_string_equal(loc_function(&m, loc)->name, "symtest_lib_versioned");

	/* this test program is a PIE too */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	lm = dlopen(NULL, RTLD_NOW);
	assert_non_null(lm);
	check_live(s, &m, exe, ((struct link_map *)lm)->l_addr,
		   (uint64_t)(uintptr_t)&test_local_function, "test_local_function");
	assert_int_equal(test_local_function(1), 2);
	/* maps' dev/inode are the files' own */
	assert_int_equal(model_stat_value(&m, MODEL_STAT_SYMBOLIZE_IDENTITY_MISMATCH), 0);
	symbolizer_free(s);
	model_free(&m);
	dlclose(h);
}

struct collected {
	char names[64][64];
	uint64_t offsets[64];
	int n;
};

static int collect(void *ctx, const struct symbolizer_symbol *sym)
{
	struct collected *c = ctx;

	if (c->n < 64) {
		snprintf(c->names[c->n], sizeof(c->names[c->n]), "%s", sym->name);
		c->offsets[c->n] = sym->file_offset;
		c->n++;
	}
	return 0;
}

static int refuse(void *ctx, const struct symbolizer_symbol *sym)
{
	(void)ctx;
	(void)sym;
	return -EPERM;
}

static int find_name(const struct collected *c, const char *name)
{
	int at = -1;

	for (int i = 0; i < c->n; i++)
		if (!strcmp(c->names[i], name))
			at = i;
	return at;
}

static void check_match(const char *path)
{
	static const char *const want[] = {
		"symtest_alpha", "symtest_alpha_weak", "symtest_alpha_local", "symtest_beta",
		"symtest_sized", "symtest_nosize", "symtest_after_nosize",
	};
	struct collected c = { .n = 0 };
	struct model m;
	struct symbolizer *s;
	unsigned char bytes[2];
	uint32_t img;
	int i;
	FILE *f;

	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_image(s, path, NULL, 0, 0);
	assert_int_equal(symbolizer_match_functions(s, img, "symtest_*", collect, &c), 7);
	assert_int_equal(c.n, 7);
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		if (find_name(&c, want[k]) < 0)
			fail_msg("%s: %s not matched", path, want[k]);
	/* file offset of symtest_sized: its bytes are nop; ret */
	i = find_name(&c, "symtest_sized");
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fseek(f, (long)c.offsets[i], SEEK_SET), 0);
	assert_int_equal(fread(bytes, 1, 2, f), 2);
	fclose(f);
	assert_int_equal(bytes[0], 0x90);
	assert_int_equal(bytes[1], 0xc3);

	c.n = 0;
	assert_int_equal(symbolizer_match_functions(s, img, "symtest_b*", collect, &c), 1);
	assert_string_equal(c.names[0], "symtest_beta");
	assert_int_equal(symbolizer_match_functions(s, img, "no_such_*", collect, &c), 0);
	assert_int_equal(symbolizer_match_functions(s, img, "symtest_*", refuse, NULL), -EPERM);
	symbolizer_free(s);
	model_free(&m);
}

static void test_match_functions(void **state)
{
	(void)state;
	check_match(SYMTEST "/pie");
	check_match(SYMTEST "/nopie");
}

static void test_vdso(void **state)
{
	struct collected c = { .n = 0 };
	const struct procmap_entry *e = NULL;
	const struct model_function *f;
	struct procmaps maps;
	struct model m;
	struct symbolizer *s;
	uint64_t bias, addr;
	uint32_t img;
	void *h, *fn;

	(void)state;
	assert_int_equal(procmaps_read(getpid(), &maps), 0);
	for (size_t i = 0; i < maps.n; i++)
		if (!strcmp(maps.entries[i].path, "[vdso]"))
			e = &maps.entries[i];
	if (!e) {
		procmaps_free(&maps);
		skip();
	}
	/* the dynamic loader knows the vDSO as a library */
	h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	fn = dlsym(h, "__vdso_clock_gettime");
	assert_non_null(fn);

	model_init(&m);
	s = symbolizer_new(&m);
	img = symbolizer_special_image(s, "[vdso]");
	assert_int_equal(m.images.items[img].kind, MODEL_IMAGE_ANON);
	assert_true(m.images.items[img].has_symbols);
	assert_true(m.images.items[img].text_size > 0);
	bias = symbolizer_bias(s, img, e->start, e->pgoff);
	assert_true(bias == e->start);
	addr = (uint64_t)(uintptr_t)fn - bias;
	assert_int_equal(symbolizer_match_functions(s, img, "__vdso_clock_gettime", collect, &c), 1);
	f = loc_function(&m, symbolizer_location(s, img, addr + 1));
	assert_non_null(f);
	assert_true(f->entry == addr);
	/* clock_gettime is its weak alias */
	assert_string_equal(f->name, "__vdso_clock_gettime");
	symbolizer_free(s);
	model_free(&m);
	procmaps_free(&maps);
	dlclose(h);
}

/* Three global names of one function (this program's): the symbol table
 * names it by the lowest, whichever order the file lists them in; the
 * names are chosen between at the first look-up. */
__attribute__((noinline, used)) int symtest_tie_middle(int x)
{
	return x * 7 + 3;
}
int symtest_tie_zulu(int x) __attribute__((alias("symtest_tie_middle")));
int symtest_tie_alpha(int x) __attribute__((alias("symtest_tie_middle")));

struct find_ctx {
	const char *name;
	uint64_t value;
};

static int find_value(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct find_ctx *c = ctx;

	if (strcmp(name, c->name))
		return 0;
	c->value = sym->st_value;
	return 1;
}

static void test_tied_aliases(void **state)
{
	struct find_ctx c = { "symtest_tie_zulu", 0 };
	struct symtab_entry *e;
	struct elf_file f;
	struct symtab t;
	Elf_Scn *scn;

	(void)state;
	assert_int_equal(symtest_tie_zulu(1) + symtest_tie_alpha(1), 20);
	assert_int_equal(elf_file_open(&f, "/proc/self/exe"), 0);
	scn = elf_file_symbols(&f, SHT_SYMTAB);
	assert_non_null(scn);
	assert_int_equal(elf_file_for_each_function(&f, scn, find_value, &c), 1);
	assert_int_equal(symtab_build(&t, &f, scn), 0);
	e = symtab_lookup(&t, c.value);
	assert_non_null(e);
	assert_string_equal(e->name, "symtest_tie_alpha");
	assert_int_equal(e->n_tied, 0);
	/* the same entry, and only it, by that name */
	assert_ptr_equal(symtab_lookup(&t, c.value + 1), e);
	assert_ptr_equal(symtab_find_unique(&t, "symtest_tie_alpha"), e);
	assert_null(symtab_find_unique(&t, "symtest_tie_zulu"));
	symtab_free(&t);
	elf_file_close(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_nopie),
		cmocka_unit_test(test_stripped_buildid),
		cmocka_unit_test(test_stripped_debuglink),
		cmocka_unit_test(test_debuglink_bad_crc),
		cmocka_unit_test(test_debuglink_under_root),
		cmocka_unit_test(test_inline_chain),
		cmocka_unit_test(test_image_cache),
		cmocka_unit_test(test_forget_code),
		cmocka_unit_test(test_location_cache),
		cmocka_unit_test(test_location_cache_ages),
		cmocka_unit_test(test_live_bias),
		cmocka_unit_test(test_match_functions),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_tied_aliases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
