// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer against llvm-symbolizer on the test files
 * (tests/unit/symtest.h): functions, lines and inlined frames alike.
 */
#include "symtest.h"

/* ---- against llvm-symbolizer ---------------------------------------------- */

#define LLVM_SYMBOLIZER "llvm-symbolizer-14"
#define MAX_FRAMES 16

struct frames {
	uint64_t addr;
	int n;                       /* name/where pairs, innermost first */
	char name[MAX_FRAMES][128];
	char where[MAX_FRAMES][160]; /* "basename:line", or "" when unknown */
};

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* "dir/file.c:12 (discriminator 3)" -> "file.c:12"; "" for no line. */
static void set_where(char *out, size_t size, const char *file, unsigned long line)
{
	if (!file || !line || !strcmp(file, "??"))
		out[0] = '\0';
	else
		snprintf(out, size, "%s:%lu", base_name(file), line);
}

/* Our answer for addr, in llvm-symbolizer's innermost-first order. */
static void our_frames(struct model *m, struct symbolizer *s, uint32_t img, uint64_t addr,
		       struct frames *out)
{
	uint32_t loc = symbolizer_location(s, img, addr);
	const struct model_location *l = &m->locations.items[loc];
	const struct model_inline *inl = model_location_inlines(m, l);
	uint32_t n = l->n_inlines;

	out->addr = addr;
	out->n = 0;
	assert_true(n + 1 <= MAX_FRAMES);
	for (uint32_t k = n; k-- > 0;) {
		/* inl[k] runs at the previous frame's position; it was called
		 * from inl[k].call_file:call_line */
		snprintf(out->name[out->n], 128, "%s", m->functions.items[inl[k].function].name);
		if (k == n - 1)
			set_where(out->where[out->n], 160, file_path(m, l->file), l->line);
		out->n++;
	}
	snprintf(out->name[out->n], 128, "%s", loc_function(m, loc)->name);
	out->n++;
	/* positions: innermost frame at the address, each caller at the call site */
	if (!n) {
		set_where(out->where[0], 160, file_path(m, l->file), l->line);
		return;
	}
	for (uint32_t k = n; k-- > 0;)
		set_where(out->where[n - k], 160, file_path(m, inl[k].call_file), inl[k].call_line);
}

/* Reads one address's block; `pending` carries the next block's address
 * line, read ahead from the pipe. */
static void llvm_frames(FILE *p, char *pending, size_t pending_size, uint64_t want,
			struct frames *out)
{
	char line[512];
	int have_addr = 0;

	out->n = 0;
	if (pending[0]) {
		out->addr = strtoull(pending, NULL, 16);
		have_addr = 1;
		pending[0] = '\0';
	}
	for (;;) {
		if (!fgets(line, sizeof(line), p))
			break;
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "0x", 2)) {
			if (have_addr) {
				snprintf(pending, pending_size, "%.63s", line);
				break;
			}
			out->addr = strtoull(line, NULL, 16);
			have_addr = 1;
			continue;
		}
		if (!line[0])
			continue;
		if (out->n >= MAX_FRAMES)
			fail_msg("too many frames at %llx", (unsigned long long)want);
		snprintf(out->name[out->n], 128, "%.127s", line);
		if (!fgets(line, sizeof(line), p))
			fail_msg("llvm-symbolizer: truncated output");
		line[strcspn(line, " \n")] = '\0';
		{
			char *colon = strrchr(line, ':');

			if (colon) {
				*colon = '\0';
				set_where(out->where[out->n], 160, line, strtoul(colon + 1, NULL, 10));
			} else {
				out->where[out->n][0] = '\0';
			}
		}
		out->n++;
	}
	assert_true(have_addr);
	assert_true(out->addr == want);
}

/*
 * Every byte of [lo, hi) that we resolve to a function: the same frames,
 * names and file:line as llvm-symbolizer gives.  llvm names the outermost
 * frame from the nearest symbol, NOTYPE labels and weak or local aliases
 * included, where we prefer the global symbol: there its name must be a
 * symbol at our function's entry or a symtest_mark_* label (or "??": llvm
 * takes no symbols from a separate debug file).  `syms` is the file with
 * the full symbol table.
 */
static void compare_with_llvm(const char *path, const char *syms, const char *debug_root,
			      uint64_t lo, uint64_t hi)
{
	char tmp[] = "/tmp/symtest-addrs-XXXXXX", cmd[1024], pending[64] = "";
	struct frames *ours, theirs;
	struct model m;
	struct symbolizer *s;
	uint32_t img;
	size_t n = (size_t)(hi - lo), compared = 0;
	FILE *f, *p;
	int fd;

	if (system("command -v " LLVM_SYMBOLIZER " >/dev/null 2>&1"))
		skip();
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	for (uint64_t a = lo; a < hi; a++)
		fprintf(f, "0x%llx\n", (unsigned long long)a);
	fclose(f);
	snprintf(cmd, sizeof(cmd), LLVM_SYMBOLIZER " --obj=%s --inlines --output-style=GNU "
		 "--functions=linkage --print-address --debug-file-directory=%s < %s",
		 path, debug_root, tmp);
	p = popen(cmd, "r");
	assert_non_null(p);

	model_init(&m);
	s = symbolizer_new(&m);
	symbolizer_set_debug_root(s, debug_root);
	img = symbolizer_image(s, path, NULL, 0, 0);
	ours = calloc(1, sizeof(*ours));
	assert_non_null(ours);
	for (size_t i = 0; i < n; i++) {
		uint64_t a = lo + i;

		llvm_frames(p, pending, sizeof(pending), a, &theirs);
		uint32_t loc = symbolizer_location(s, img, a);

		if (m.locations.items[loc].function == MODEL_NONE)
			continue; /* llvm stretches symbols over padding; we do not */
		if (strstr(loc_function(&m, loc)->name, "+0x"))
			continue; /* no symbol: the FDE's "image+0xSTART" (the PLT) */
		our_frames(&m, s, img, a, ours);
		if (ours->n != theirs.n)
			fail_msg("%s %llx: %d frames, llvm-symbolizer %d", path,
				 (unsigned long long)a, ours->n, theirs.n);
		for (int k = 0; k < ours->n; k++) {
			bool outermost = k == ours->n - 1;

			uint64_t alias;

			if (outermost && (!strncmp(theirs.name[k], "symtest_mark_", 13) ||
					  /* llvm reads no symbols from a debug file */
					  !strcmp(theirs.name[k], "??") ||
					  (elf_symbol_find(syms, theirs.name[k], &alias, NULL) &&
					   alias == loc_function(&m, loc)->entry)))
				;
			else if (strcmp(ours->name[k], theirs.name[k]))
				fail_msg("%s %llx frame %d: %s, llvm-symbolizer %s", path,
					 (unsigned long long)a, k, ours->name[k], theirs.name[k]);
			if (strcmp(ours->where[k], theirs.where[k]))
				fail_msg("%s %llx frame %d: '%s', llvm-symbolizer '%s'", path,
					 (unsigned long long)a, k, ours->where[k], theirs.where[k]);
		}
		compared++;
	}
	assert_true(compared > 16);
	free(ours);
	pclose(p);
	unlink(tmp);
	symbolizer_free(s);
	model_free(&m);
}

static void test_against_llvm_symbolizer(void **state)
{
	static const char *const files[] = { "inline", "pie", "nopie", "libsymtest.so",
					     "stripped-buildid", "stripped-debuglink" };

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[256];
		struct model m;
		struct symbolizer *s;
		struct model_image im;
		uint32_t img;

		char syms[300];

		snprintf(path, sizeof(path), SYMTEST "/%s", files[i]);
		snprintf(syms, sizeof(syms), "%s%s", path,
			 strncmp(files[i], "stripped-", 9) ? "" : ".full");
		model_init(&m);
		s = symbolizer_new(&m);
		img = symbolizer_image(s, path, NULL, 0, 0);
		im = m.images.items[img];
		symbolizer_free(s);
		compare_with_llvm(path, syms, DEBUG_ROOT, im.text_start, im.text_start + im.text_size);
		model_free(&m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_llvm_symbolizer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
