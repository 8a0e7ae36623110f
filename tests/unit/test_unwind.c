// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the CFI unwinder against real captures: tests/unwind/chain
 * (built without frame pointers, see mk/unwind.mk) records its registers
 * and stack; we unwind them against its /proc/self/maps and name every
 * frame with our own ELF symbol lookup (file offsets -> PT_LOAD -> .symtab),
 * independent of libdw.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "symbols/unwind.h"
#include "../unwind/capture.h"

#define MAX_FRAMES 128

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED ", ASan+UBSan build"
#else
#define SANITIZED ", optimized build"
#endif
#define N_SAMPLES 400

/* ---- running the test program ------------------------------------------- */

struct cap {
	struct unwind_regs regs;
	const uint8_t *stack;
	size_t len;
};

struct run {
	uint8_t *buf;
	size_t size;
	struct cap *caps;
	size_t n_caps;
	struct unwind_mapping *maps;
	size_t n_maps;
};

static void parse_maps(struct run *r, char *text, size_t len)
{
	char *line = text, *end = text + len;

	r->maps = calloc(4096, sizeof(*r->maps));
	assert_non_null(r->maps);
	while (line < end && r->n_maps < 4096) {
		char *nl = memchr(line, '\n', end - line);
		unsigned long long lo, hi, off;
		char perms[8];
		int path_at = 0;

		if (!nl)
			nl = end;
		*nl = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off,
			   &path_at) == 4 && path_at > 0 && line[path_at]) {
			struct unwind_mapping *m = &r->maps[r->n_maps++];

			m->start = lo;
			m->end = hi;
			m->pgoff = off;
			m->path = line + path_at;
		}
		line = nl + 1;
	}
}

/* Runs `prog` with its arguments and parses what it writes. */
static void run_chain(struct run *r, const char *prog, const char *arg1, const char *arg2)
{
	int pfd[2], status;
	size_t cap = 1 << 20, off;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (access(prog, X_OK) != 0)
		fail_msg("%s missing: build it with make %s", prog, prog);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execl(prog, prog, arg1, arg2, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	r->buf = malloc(cap);
	assert_non_null(r->buf);
	for (;;) {
		ssize_t n;

		if (r->size == cap) {
			cap *= 2;
			r->buf = realloc(r->buf, cap);
			assert_non_null(r->buf);
		}
		n = read(pfd[0], r->buf + r->size, cap - r->size);
		if (n <= 0)
			break;
		r->size += n;
	}
	close(pfd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	r->caps = calloc(N_SAMPLES + 1, sizeof(*r->caps));
	assert_non_null(r->caps);
	for (off = 0; off + sizeof(struct capture_record) <= r->size;) {
		struct capture_record rec;

		memcpy(&rec, r->buf + off, sizeof(rec));
		off += sizeof(rec);
		assert_true(rec.len <= r->size - off);
		if (rec.kind == CAPTURE_STACK) {
			struct cap *c = &r->caps[r->n_caps++];

			assert_true(r->n_caps <= N_SAMPLES + 1);
			memcpy(&c->regs, rec.regs, sizeof(rec.regs)); /* same order */
			c->stack = r->buf + off;
			c->len = rec.len;
		} else {
			assert_int_equal(rec.kind, CAPTURE_MAPS);
			parse_maps(r, (char *)r->buf + off, rec.len);
		}
		off += rec.len;
	}
	assert_int_equal(off, r->size);
	assert_true(r->n_maps > 0);
}

static void run_free(struct run *r)
{
	free(r->buf);
	free(r->caps);
	free(r->maps);
}

/* ---- naming frames, independently of libdw ------------------------------ */

/* Name of the function at runtime address ip: the mapping gives the file
 * offset, the PT_LOAD holding that offset the link-time address, and
 * .symtab (or .dynsym) the function. */
static const char *symbolize(const struct run *r, uint64_t ip, char *buf, size_t size)
{
	const struct unwind_mapping *m = NULL;
	const char *result = "?";
	Elf_Scn *scn = NULL;
	uint64_t off, vaddr = 0;
	size_t phnum;
	bool found = false;
	Elf *elf;
	int fd;

	for (size_t i = 0; i < r->n_maps; i++)
		if (ip >= r->maps[i].start && ip < r->maps[i].end)
			m = &r->maps[i];
	if (!m || m->path[0] != '/')
		return m ? m->path : "?";
	off = ip - m->start + m->pgoff;
	fd = open(m->path, O_RDONLY);
	if (fd < 0)
		return "?";
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && off >= ph.p_offset &&
		    off < ph.p_offset + ph.p_filesz) {
			vaddr = ph.p_vaddr + (off - ph.p_offset);
			found = true;
		}
	}
	if (!found)
		goto out;
	for (int pass = 0; pass < 2 && !strcmp(result, "?"); pass++) {
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
				continue;
			data = elf_getdata(scn, NULL);
			for (size_t k = 0; data && sh.sh_entsize && k < sh.sh_size / sh.sh_entsize;
			     k++) {
				GElf_Sym sym;

				if (!gelf_getsym(data, k, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
					continue;
				if (vaddr >= sym.st_value && vaddr < sym.st_value + sym.st_size) {
					snprintf(buf, size, "%s",
						 elf_strptr(elf, sh.sh_link, sym.st_name));
					result = buf;
					break;
				}
			}
		}
		scn = NULL;
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return result;
}

/* Names of frames[0..n): frame 0 as is, callers at return address - 1. */
static void name_frames(const struct run *r, const uint64_t *ips, int n, char names[][64])
{
	for (int i = 0; i < n; i++) {
		const char *name = symbolize(r, i ? ips[i] - 1 : ips[i], names[i], 64);

		if (name != names[i])
			snprintf(names[i], 64, "%s", name);
	}
}

static void print_frames(const char *title, const uint64_t *ips, int n, char names[][64])
{
	print_message("%s (%d frames)\n", title, n);
	for (int i = 0; i < n; i++)
		print_message("  #%-2d %#14llx %s\n", i, (unsigned long long)ips[i], names[i]);
}

/* Index of "fN" (1..16), 0 for another name. */
static int level_of(const char *name)
{
	int k;
	char tail;

	if (sscanf(name, "f%d%c", &k, &tail) == 1 && k >= 1 && k <= CAPTURE_DEPTH)
		return k;
	return 0;
}

/* Frames allowed below the chain's deepest level: its leaf helpers, and
 * the vDSO's clock_gettime reached through libc's wrapper. */
static bool is_leaf_helper(const char *name)
{
	return !strcmp(name, "capture_here") || !strcmp(name, "burn") ||
	       !strcmp(name, "[vdso]") || strstr(name, "clock_gettime");
}

/*
 * Whether names[0..n) is a whole chain: at most 3 leaf helpers, then fK,
 * fK-1, ..., f1, root (main, or thread_main in a second thread), in order
 * with nothing between.  What follows the root (libc's start code) is
 * checked by the callers.
 */
static bool whole_chain_to(char names[][64], int n, int *leaf_level, const char *root)
{
	int i = 0, k;

	while (i < n && i < 3 && is_leaf_helper(names[i]))
		i++;
	if (i >= n)
		return false;
	k = level_of(names[i]);
	if (leaf_level)
		*leaf_level = k;
	for (; k >= 1; k--, i++)
		if (i >= n || level_of(names[i]) != k)
			return false;
	return i < n && !strcmp(names[i], root);
}

static bool whole_chain(char names[][64], int n, int *leaf_level)
{
	return whole_chain_to(names, n, leaf_level, "main");
}

static const char *mapping_path(const struct run *r, uint64_t ip)
{
	for (size_t i = 0; i < r->n_maps; i++)
		if (ip >= r->maps[i].start && ip < r->maps[i].end)
			return r->maps[i].path;
	return "";
}

/* ---- tests -------------------------------------------------------------- */

static int unwind_cap(struct unwinder *u, const struct run *r, const struct cap *c,
		      size_t len, uint64_t *ips, bool *complete)
{
	return unwinder_unwind(u, 4242, 1, r->maps, r->n_maps, &c->regs, c->stack, len, ips,
			       MAX_FRAMES, complete);
}

static void check_leaf(const char *prog)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES];
	char names[MAX_FRAMES][64];
	struct run r;
	bool complete;
	int n, leaf;

	assert_non_null(u);
	run_chain(&r, prog, "leaf", NULL);
	assert_int_equal(r.n_caps, 1);
	n = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, ips, &complete);
	assert_true(n > 0);
	name_frames(&r, ips, n, names);
	print_frames(prog, ips, n, names);
	assert_int_equal(ips[0], r.caps[0].regs.ip);
	assert_string_equal(names[0], "capture_here");
	assert_true(whole_chain(names, n, &leaf));
	assert_int_equal(leaf, CAPTURE_DEPTH);
	assert_true(complete);
	/* after main comes libc's start code and then _start, the outermost */
	assert_true(n >= CAPTURE_DEPTH + 3);
	assert_string_equal(names[n - 1], "_start");
	unwinder_free(u);
	run_free(&r);
}

static void test_leaf_eh_frame(void **state)
{
	(void)state;
	check_leaf("build/unwind/chain-eh");
}

static void test_leaf_with_debuginfo(void **state)
{
	(void)state;
	check_leaf("build/unwind/chain-g");
}

/* chain-debug must really have no .eh_frame entry for the chain, or this
 * test would not exercise .debug_frame. */
static void test_leaf_debug_frame_only(void **state)
{
	const char *prog = "build/unwind/chain-debug";
	int fd = open(prog, O_RDONLY);
	Elf *elf;
	Dwarf_CFI *eh;
	Dwarf_Frame *frame = NULL;
	Elf_Scn *scn = NULL;
	uint64_t f1 = 0, main_addr = 0;

	(void)state;
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t k = 0; data && k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, k, &sym))
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "f1"))
				f1 = sym.st_value;
			if (name && !strcmp(name, "main"))
				main_addr = sym.st_value;
		}
	}
	assert_true(f1 && main_addr);
	eh = dwarf_getcfi_elf(elf);
	if (eh) {
		assert_int_not_equal(dwarf_cfi_addrframe(eh, f1 + 1, &frame), 0);
		assert_int_not_equal(dwarf_cfi_addrframe(eh, main_addr + 1, &frame), 0);
		dwarf_cfi_end(eh);
	}
	elf_end(elf);
	close(fd);
	check_leaf(prog);
}

/* A stack that crosses a signal frame: capture_here in a SIGUSR1 handler
 * that f16 raised; the signal trampoline's CFI leads back into raise and
 * the chain. */
static void test_through_signal_frame(void **state)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES];
	char names[MAX_FRAMES][64];
	struct run r;
	bool complete;
	int n, i, leaf;

	(void)state;
	run_chain(&r, "build/unwind/chain-eh", "signal", NULL);
	assert_int_equal(r.n_caps, 1);
	n = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, ips, &complete);
	name_frames(&r, ips, n, names);
	print_frames("through a signal frame", ips, n, names);
	assert_true(n > 3);
	assert_string_equal(names[0], "capture_here");
	assert_string_equal(names[1], "on_sigusr1");
	/* then the trampoline and raise's insides, all in libc */
	for (i = 2; i < n && level_of(names[i]) == 0; i++)
		assert_non_null(strstr(mapping_path(&r, ips[i] - 1), "/libc.so"));
	assert_true(i > 2 && i <= 8);
	assert_true(whole_chain(names + i, n - i, &leaf));
	assert_int_equal(leaf, CAPTURE_DEPTH);
	assert_true(complete);
	assert_string_equal(names[n - 1], "_start");
	unwinder_free(u);
	run_free(&r);
}

/* A short stack copy: the walk stops early, says so, and agrees with the
 * full walk as far as it goes. */
static void test_truncated_copy(void **state)
{
	struct unwinder *u = unwinder_new();
	uint64_t full[MAX_FRAMES], part[MAX_FRAMES];
	struct run r;
	bool complete;
	int n_full, n_part;

	(void)state;
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	n_full = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, full, &complete);
	assert_true(complete);
	for (size_t len = 0; len <= 1024; len += len < 16 ? 1 : 64) {
		n_part = unwind_cap(u, &r, &r.caps[0], len, part, &complete);
		assert_true(n_part >= 1);
		assert_true(n_part < n_full);
		assert_false(complete);
		assert_memory_equal(part, full, n_part * sizeof(uint64_t));
	}
	/* 256 bytes cover capture_here and f16's 128-byte frame at least */
	n_part = unwind_cap(u, &r, &r.caps[0], 256, part, &complete);
	assert_true(n_part >= 2);
	/* max_ips reached: not complete either */
	n_part = unwinder_unwind(u, 4242, 1, r.maps, r.n_maps, &r.caps[0].regs, r.caps[0].stack,
				 r.caps[0].len, part, 5, &complete);
	assert_int_equal(n_part, 5);
	assert_false(complete);
	assert_memory_equal(part, full, 5 * sizeof(uint64_t));
	unwinder_free(u);
	run_free(&r);
}

/* Garbage never crashes and never passes for a whole stack. */
static void test_garbage(void **state)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES];
	uint8_t *junk = malloc(CAPTURE_STACK_MAX);
	struct unwind_regs regs;
	struct run r;
	bool complete;
	int n;

	(void)state;
	assert_non_null(junk);
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	srandom(1);
	for (int round = 0; round < 2000; round++) {
		for (size_t i = 0; i < CAPTURE_STACK_MAX; i++)
			junk[i] = random();
		/* sometimes plant plausible code addresses in the junk */
		for (int k = 0; k < 8 && round % 2; k++) {
			uint64_t a = r.caps[0].regs.ip + (random() % 4096) - 2048;

			memcpy(junk + (random() % (CAPTURE_STACK_MAX / 8)) * 8, &a, 8);
		}
		regs = r.caps[0].regs;
		if (round % 3 == 1)
			regs.ip += (random() % 8192) - 4096;
		if (round % 3 == 2)
			regs.ip = ((uint64_t)random() << 32) | (uint64_t)random();
		n = unwinder_unwind(u, 4242, 1, r.maps, r.n_maps, &regs, junk, CAPTURE_STACK_MAX,
				    ips, MAX_FRAMES, &complete);
		assert_true(n >= 1 && n <= MAX_FRAMES);
		assert_int_equal(ips[0], regs.ip);
		/* random bytes hold no code address, so the walk cannot end at an
		 * outermost frame unless the PC itself is in _start; planted
		 * ones might by chance lead to _start, which is then rightly
		 * complete */
		if (complete && round % 2 == 0) {
			char names[MAX_FRAMES][64];

			name_frames(&r, ips, n, names);
			if (n != 1 || strcmp(names[0], "_start") != 0) {
				print_frames("garbage, yet complete", ips, n, names);
				fail();
			}
		}
	}
	/* an address outside every image: no CFI, so libdw can only try the
	 * frame-pointer chain, which leads nowhere in junk */
	regs = r.caps[0].regs;
	regs.ip = 16;
	n = unwinder_unwind(u, 4242, 1, r.maps, r.n_maps, &regs, junk, CAPTURE_STACK_MAX, ips,
			    MAX_FRAMES, &complete);
	assert_true(n >= 1 && n < 8);
	assert_int_equal(ips[0], 16);
	assert_false(complete);
	/* no stack at all */
	n = unwinder_unwind(u, 4242, 1, r.maps, r.n_maps, &r.caps[0].regs, NULL, 0, ips,
			    MAX_FRAMES, &complete);
	assert_true(n >= 1);
	assert_false(complete);
	free(junk);
	unwinder_free(u);
	run_free(&r);
}

/* No usable mapping (anonymous only, missing files): the PC alone. */
static void test_no_images(void **state)
{
	struct unwinder *u = unwinder_new();
	char dir[] = "/tmp/unwind-fifo-XXXXXX", fifo[64];
	struct unwind_mapping maps[5] = {
		{ 0x400000, 0x401000, 0, NULL },
		{ 0x401000, 0x402000, 0, "/nonexistent/file" },
		{ 0x402000, 0x403000, 0, "/etc/hostname" }, /* not ELF */
		{ 0x403000, 0x404000, 0, "/dev/zero" },     /* not a file */
		{ 0x404000, 0x405000, 0, fifo },            /* must not block */
	};
	struct unwind_regs regs = { .ip = 0x400100, .sp = 0x7ffd0000 };
	uint8_t stack[64] = { 0 };
	struct unwinder_stats st;
	uint64_t ips[4];
	bool complete = true;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(unwinder_unwind(u, 7, 1, maps, 5, &regs, stack, sizeof(stack), ips, 4,
					 &complete), 1);
	assert_int_equal(ips[0], 0x400100);
	assert_false(complete);
	assert_int_equal(unwinder_unwind(u, 7, 1, NULL, 0, &regs, stack, sizeof(stack), ips, 0,
					 &complete), 0);
	assert_int_equal(unwinder_unwind(u, 7, 1, NULL, 3, &regs, stack, sizeof(stack), ips, 4,
					 &complete), -EINVAL);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.images_failed, 4);
	unlink(fifo);
	rmdir(dir);
	unwinder_free(u);
}

/* The Dwfl is rebuilt on a new maps version and after forget, not otherwise. */
static void test_rebuild_on_version(void **state)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES];
	struct unwinder_stats st;
	struct run r;
	bool complete;

	(void)state;
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	for (int i = 0; i < 10; i++)
		assert_true(unwind_cap(u, &r, &r.caps[0], r.caps[0].len, ips, &complete) > 0);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 1);
	assert_true(unwinder_unwind(u, 4242, 2, r.maps, r.n_maps, &r.caps[0].regs,
				    r.caps[0].stack, r.caps[0].len, ips, MAX_FRAMES, &complete) > 0);
	assert_true(complete);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 2);
	unwinder_forget(u, 4242);
	unwinder_forget(u, 999); /* unknown: no-op */
	assert_true(unwinder_unwind(u, 4242, 2, r.maps, r.n_maps, &r.caps[0].regs,
				    r.caps[0].stack, r.caps[0].len, ips, MAX_FRAMES, &complete) > 0);
	assert_true(complete);
	/* another pid: its own Dwfl */
	assert_true(unwinder_unwind(u, 4243, 2, r.maps, r.n_maps, &r.caps[0].regs,
				    r.caps[0].stack, r.caps[0].len, ips, MAX_FRAMES, &complete) > 0);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 4);
	unwinder_free(u);
	run_free(&r);
}

/*
 * Memory outside the stack copy is read from the mapped file: with sp
 * pointing into the program's own first mapping and no stack copy, the
 * return address at capture_here's label (where it is at [sp]) must be the
 * 8 bytes of the file at that mapping's offset.
 */
static void test_reads_image_memory(void **state)
{
	struct unwinder *u = unwinder_new();
	const struct unwind_mapping *m = NULL;
	uint64_t ips[MAX_FRAMES], expect, ra;
	struct unwind_regs regs;
	struct run r;
	bool complete;
	int fd, n;

	(void)state;
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	/* at this PC the return address is at [sp]: the real stack says so */
	n = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, ips, &complete);
	assert_true(n > 2);
	memcpy(&ra, r.caps[0].stack, sizeof(ra));
	assert_int_equal(ips[1], ra);

	for (size_t i = 0; i < r.n_maps && !m; i++)
		if (strstr(r.maps[i].path, "chain-eh"))
			m = &r.maps[i];
	assert_non_null(m);
	regs = r.caps[0].regs;
	regs.sp = m->start + 0x40; /* inside the ELF program headers */
	fd = open(m->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &expect, sizeof(expect), m->pgoff + 0x40), sizeof(expect));
	close(fd);
	n = unwinder_unwind(u, 4242, 1, r.maps, r.n_maps, &regs, NULL, 0, ips, MAX_FRAMES,
			    &complete);
	assert_true(n >= 2);
	assert_int_equal(ips[1], expect);
	assert_false(complete);
	/* an sp in no mapping at all: nothing to read, the PC alone */
	regs.sp = 0x10;
	n = unwinder_unwind(u, 4242, 1, r.maps, r.n_maps, &regs, NULL, 0, ips, MAX_FRAMES,
			    &complete);
	assert_int_equal(n, 1);
	assert_false(complete);
	unwinder_free(u);
	run_free(&r);
}

/* A Dwfl prepared while the files exist keeps them open: samples still
 * unwind after the program's file is gone (a process that exited, whose
 * /proc/PID/map_files went with it). */
static void test_prepare_then_file_gone(void **state)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES], full[MAX_FRAMES];
	char tmpdir[] = "/tmp/unwind-test-XXXXXX", copy[64], cmd[256];
	struct unwinder_stats st;
	struct run r;
	bool complete;
	int n, n_full;

	(void)state;
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	n_full = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, full, &complete);
	assert_true(complete);
	assert_non_null(mkdtemp(tmpdir));
	snprintf(copy, sizeof(copy), "%s/chain-eh", tmpdir);
	snprintf(cmd, sizeof(cmd), "cp build/unwind/chain-eh %s", copy);
	assert_int_equal(system(cmd), 0);
	for (size_t i = 0; i < r.n_maps; i++)
		if (strstr(r.maps[i].path, "build/unwind/chain-eh"))
			r.maps[i].path = copy;
	assert_int_equal(unwinder_prepare(u, 77, 5, r.maps, r.n_maps), 0);
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(rmdir(tmpdir), 0);
	n = unwinder_unwind(u, 77, 5, r.maps, r.n_maps, &r.caps[0].regs, r.caps[0].stack,
			    r.caps[0].len, ips, MAX_FRAMES, &complete);
	assert_int_equal(n, n_full);
	assert_memory_equal(ips, full, n * sizeof(uint64_t));
	assert_true(complete);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 2); /* pid 4242, then pid 77 once */
	assert_int_equal(st.images_failed, 0);
	unwinder_free(u);
	run_free(&r);
}

/* ---- the rule cache against libdw --------------------------------------- */

/* Unwinds one stack with the cached rules (twice: building them, then
 * reusing them) and with libdw alone: frames and completeness must agree. */
static void check_same_as_libdw(struct unwinder *u, struct unwinder *ref, const struct run *r,
				const struct unwind_regs *regs, const uint8_t *stack, size_t len)
{
	uint64_t got[MAX_FRAMES], want[MAX_FRAMES];
	bool got_complete, want_complete;
	int n_want = unwinder_unwind(ref, 4242, 1, r->maps, r->n_maps, regs, stack, len, want,
				     MAX_FRAMES, &want_complete);

	for (int pass = 0; pass < 2; pass++) {
		int n = unwinder_unwind(u, 4242, 1, r->maps, r->n_maps, regs, stack, len, got,
					MAX_FRAMES, &got_complete);

		if (n != n_want || got_complete != want_complete ||
		    memcmp(got, want, n * sizeof(*got)) != 0) {
			char names[MAX_FRAMES][64];

			name_frames(r, want, n_want, names);
			print_frames(want_complete ? "libdw (complete)" : "libdw", want, n_want,
				     names);
			name_frames(r, got, n, names);
			print_frames(got_complete ? "cached rules (complete)" : "cached rules", got,
				     n, names);
			fail_msg("pass %d: the cached rules disagree with libdw", pass);
		}
	}
}

static struct unwinder *libdw_only(void)
{
	struct unwinder *ref = unwinder_new();

	assert_non_null(ref);
	unwinder_use_rule_cache(ref, false);
	return ref;
}

/*
 * Every kind of captured stack (sampled anywhere in the chain, in a second
 * thread, in the vDSO, through a signal frame, from .debug_frame, cut
 * short) unwinds to the same frames with the cached rules as with libdw,
 * and the cache really serves the ordinary ones.
 */
static void test_rule_cache_matches_libdw(void **state)
{
	static const struct {
		const char *prog, *mode;
		int min_cached_pct;
	} cases[] = {
		{ "build/unwind/chain-eh", "sample", 90 },
		{ "build/unwind/chain-debug", "sample", 90 },
		{ "build/unwind/chain-eh", "thread", 90 },
		{ "build/unwind/chain-eh", "vdso", 50 },
		{ "build/unwind/chain-eh", "leaf", 100 },
		/* the trampoline's CFI is an expression: libdw's job */
		{ "build/unwind/chain-eh", "signal", 0 },
	};
	char count[8];

	(void)state;
	snprintf(count, sizeof(count), "%d", N_SAMPLES);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct unwinder *u = unwinder_new(), *ref = libdw_only();
		struct unwinder_stats st;
		struct run r;

		assert_non_null(u);
		run_chain(&r, cases[k].prog, cases[k].mode, count);
		assert_true(r.n_caps >= 1);
		for (size_t i = 0; i < r.n_caps; i++) {
			const struct cap *c = &r.caps[i];

			check_same_as_libdw(u, ref, &r, &c->regs, c->stack, c->len);
			/* cut short: the walk must stop where libdw stops */
			if (i % 16 == 0)
				for (size_t len = 0; len < c->len; len += 40)
					check_same_as_libdw(u, ref, &r, &c->regs, c->stack, len);
		}
		unwinder_get_stats(u, &st);
		print_message("%s %s: %llu of %llu unwinds with cached rules, %llu rules\n",
			      cases[k].prog, cases[k].mode, (unsigned long long)st.cached,
			      (unsigned long long)st.unwinds, (unsigned long long)st.rules);
		assert_true(st.cached * 100 >= st.unwinds * cases[k].min_cached_pct);
		if (!strcmp(cases[k].mode, "signal"))
			assert_true(st.cached < st.unwinds);
		unwinder_get_stats(ref, &st);
		assert_int_equal(st.cached, 0);
		unwinder_free(u);
		unwinder_free(ref);
		run_free(&r);
	}
}

/* Garbage registers and stacks: the cached rules agree with libdw too. */
static void test_rule_cache_garbage(void **state)
{
	struct unwinder *u = unwinder_new(), *ref = libdw_only();
	uint8_t *junk = malloc(CAPTURE_STACK_MAX);
	struct unwind_regs regs;
	struct run r;

	(void)state;
	assert_non_null(u);
	assert_non_null(junk);
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	srandom(2);
	for (int round = 0; round < 1000; round++) {
		for (size_t i = 0; i < CAPTURE_STACK_MAX; i++)
			junk[i] = random();
		/* the real stack with a few words overwritten: plausible frames
		 * that go wrong somewhere */
		if (round % 2) {
			memcpy(junk, r.caps[0].stack, r.caps[0].len);
			for (int k = 0; k < 4; k++) {
				uint64_t a = r.caps[0].regs.ip + (random() % 4096) - 2048;

				memcpy(junk + (random() % (r.caps[0].len / 8)) * 8, &a, 8);
			}
		}
		regs = r.caps[0].regs;
		if (round % 3 == 1)
			regs.ip += (random() % 8192) - 4096;
		if (round % 5 == 1)
			regs.sp += (random() % 512) - 256;
		check_same_as_libdw(u, ref, &r, &regs, junk, CAPTURE_STACK_MAX);
	}
	free(junk);
	unwinder_free(u);
	unwinder_free(ref);
	run_free(&r);
}

/*
 * The cache holds rules by PC, never results: two stacks with the same PC
 * and registers but different contents unwind differently, and each the
 * same way every time.
 */
static void test_rule_cache_same_pc_other_stack(void **state)
{
	struct unwinder *u = unwinder_new(), *ref = libdw_only();
	uint64_t full[MAX_FRAMES], ips[MAX_FRAMES];
	uint8_t *other;
	struct run r;
	bool complete;
	int n_full, n;

	(void)state;
	assert_non_null(u);
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	n_full = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, full, &complete);
	assert_true(complete);
	assert_true(n_full > 4);
	/* capture_here's return address is at [sp] (test_reads_image_memory):
	 * make it return to its caller's caller instead */
	other = malloc(r.caps[0].len);
	assert_non_null(other);
	memcpy(other, r.caps[0].stack, r.caps[0].len);
	memcpy(other, &full[2], sizeof(full[2]));
	for (int rep = 0; rep < 3; rep++) {
		n = unwinder_unwind(u, 4242, 1, r.maps, r.n_maps, &r.caps[0].regs, other,
				    r.caps[0].len, ips, MAX_FRAMES, &complete);
		assert_true(n >= 2);
		assert_int_equal(ips[0], full[0]);
		assert_int_equal(ips[1], full[2]);
		check_same_as_libdw(u, ref, &r, &r.caps[0].regs, other, r.caps[0].len);
		n = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, ips, &complete);
		assert_int_equal(n, n_full);
		assert_memory_equal(ips, full, n * sizeof(uint64_t));
		assert_true(complete);
	}
	free(other);
	unwinder_free(u);
	unwinder_free(ref);
	run_free(&r);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static bool in_vdso(const struct run *r, uint64_t ip)
{
	for (size_t i = 0; i < r->n_maps; i++)
		if (ip >= r->maps[i].start && ip < r->maps[i].end)
			return !strcmp(r->maps[i].path, "[vdso]");
	return false;
}

/*
 * Signal-driven samples at arbitrary instructions (prologues, epilogues,
 * between calls): at least 95% carry the whole chain to main and are
 * complete.  Also measures the cost of one unwind: the first (which builds
 * the process's Dwfl) and then with a warm cache.
 */
static void check_sampled(const char *prog, const char *mode)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES];
	char names[MAX_FRAMES][64];
	char count[8];
	struct run r;
	size_t whole = 0, levels[CAPTURE_DEPTH + 1] = { 0 }, frames = 0;
	size_t vdso = 0, vdso_whole = 0;
	int reps = 20;
	double t0, t1, first_us = 0;
	bool complete, thread = !strcmp(mode, "thread");
	const char *root = thread ? "thread_main" : "main";

	snprintf(count, sizeof(count), "%d", N_SAMPLES);
	run_chain(&r, prog, mode, count);
	assert_int_equal(r.n_caps, N_SAMPLES);
	for (size_t i = 0; i < r.n_caps; i++) {
		int n, leaf = -1;
		bool ok;

		t0 = now_us();
		n = unwind_cap(u, &r, &r.caps[i], r.caps[i].len, ips, &complete);
		if (i == 0)
			first_us = now_us() - t0;
		assert_true(n >= 1);
		assert_int_equal(ips[0], r.caps[i].regs.ip);
		name_frames(&r, ips, n, names);
		ok = complete && whole_chain_to(names, n, &leaf, root);
		/* the outermost frame: _start for the main thread, clone3 (in
		 * libc, a static symbol) for another */
		if (ok && thread)
			ok = strstr(mapping_path(&r, ips[n - 1] - 1), "/libc.so") != NULL;
		else if (ok)
			ok = !strcmp(names[n - 1], "_start");
		if (ok) {
			whole++;
			levels[leaf]++;
		} else {
			print_frames(complete ? "not whole, complete" : "not whole, incomplete",
				     ips, n, names);
		}
		if (in_vdso(&r, ips[0])) {
			vdso++;
			vdso_whole += ok;
		}
	}
	print_message("%s %s: %zu of %zu samples carry the whole chain to %s (%.1f%%); "
		      "%zu in the vDSO, %zu of them whole; by leaf level:", prog, mode, whole,
		      r.n_caps, root, 100.0 * whole / r.n_caps, vdso, vdso_whole);
	for (int k = 0; k <= CAPTURE_DEPTH; k++)
		print_message(" %zu", levels[k]);
	print_message("\n");
	assert_true(whole * 100 >= r.n_caps * 95);
	if (!strcmp(mode, "vdso")) {
		/* the samples must really exercise the vDSO */
		assert_true(vdso * 5 >= r.n_caps);
		assert_true(vdso_whole * 100 >= vdso * 95);
	} else {
		/* they must really spread over the chain, not sit in one place */
		for (int k = 1; k <= CAPTURE_DEPTH; k++)
			assert_true(levels[k] > 0);
	}

	t0 = now_us();
	for (int rep = 0; rep < reps; rep++)
		for (size_t i = 0; i < r.n_caps; i++)
			frames += unwind_cap(u, &r, &r.caps[i], r.caps[i].len, ips, &complete);
	t1 = now_us();
	print_message("%s %s: %.2f us per unwind (warm, %zu unwinds, %.1f frames each%s); "
		      "first unwind with Dwfl build %.0f us\n", prog, mode,
		      (t1 - t0) / (reps * r.n_caps), reps * r.n_caps,
		      (double)frames / (reps * r.n_caps), SANITIZED, first_us);
	unwinder_free(u);
	run_free(&r);
}

static void test_sampled_eh_frame(void **state)
{
	(void)state;
	check_sampled("build/unwind/chain-eh", "sample");
}

static void test_sampled_debug_frame(void **state)
{
	(void)state;
	check_sampled("build/unwind/chain-debug", "sample");
}

static void test_sampled_thread(void **state)
{
	(void)state;
	check_sampled("build/unwind/chain-eh", "thread");
}

static void test_sampled_vdso(void **state)
{
	(void)state;
	check_sampled("build/unwind/chain-eh", "vdso");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_leaf_eh_frame),
		cmocka_unit_test(test_leaf_with_debuginfo),
		cmocka_unit_test(test_leaf_debug_frame_only),
		cmocka_unit_test(test_through_signal_frame),
		cmocka_unit_test(test_truncated_copy),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_no_images),
		cmocka_unit_test(test_rebuild_on_version),
		cmocka_unit_test(test_reads_image_memory),
		cmocka_unit_test(test_prepare_then_file_gone),
		cmocka_unit_test(test_rule_cache_matches_libdw),
		cmocka_unit_test(test_rule_cache_garbage),
		cmocka_unit_test(test_rule_cache_same_pc_other_stack),
		cmocka_unit_test(test_sampled_eh_frame),
		cmocka_unit_test(test_sampled_debug_frame),
		cmocka_unit_test(test_sampled_vdso),
		cmocka_unit_test(test_sampled_thread),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
