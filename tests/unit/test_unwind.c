// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the CFI unwinder against real captures of tests/unwind/chain
 * (tests/unit/unwind_run.h): the leaf, signal frames, short copies,
 * garbage, missing or vanished images, rules shared by the processes of a
 * program, rebuilds on new mappings.
 */
#include "elf_oracle.h"
#include "unwind_run.h"

/* ---- tests -------------------------------------------------------------- */

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
	uint64_t f1 = 0, main_addr = 0;
	Dwarf_Frame *frame = NULL;
	Dwarf_CFI *eh;
	Elf *elf;
	int fd;

	(void)state;
	elf_symbol(prog, "f1", &f1, NULL);
	elf_symbol(prog, "main", &main_addr, NULL);
	assert_true(f1 && main_addr);
	/* the program's own code has no .eh_frame entries */
	fd = open(prog, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
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
	n_part = unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r.maps, r.n_maps, &r.caps[0].regs,
				 r.caps[0].stack,
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
		n = unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r.maps, r.n_maps, &regs, junk,
				    CAPTURE_STACK_MAX,
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
	n = unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r.maps, r.n_maps, &regs, junk,
			    CAPTURE_STACK_MAX, ips,
			    MAX_FRAMES, &complete);
	assert_true(n >= 1 && n < 8);
	assert_int_equal(ips[0], 16);
	assert_false(complete);
	/* no stack at all */
	n = unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r.maps, r.n_maps, &r.caps[0].regs, NULL,
			    0, ips,
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
		{ .start = 0x400000, .end = 0x401000, .path = NULL },
		{ .start = 0x401000, .end = 0x402000, .path = "/nonexistent/file" },
		{ .start = 0x402000, .end = 0x403000, .path = "/etc/hostname" }, /* not ELF */
		{ .start = 0x403000, .end = 0x404000, .path = "/dev/zero" }, /* not a file */
		{ .start = 0x404000, .end = 0x405000, .path = fifo }, /* must not block */
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
	assert_int_equal(unwinder_unwind(u, proc_ref_unit(u, 7), 1, maps, 5, &regs, stack,
			 sizeof(stack), ips, 4,
					 &complete), 1);
	assert_int_equal(ips[0], 0x400100);
	assert_false(complete);
	assert_int_equal(unwinder_unwind(u, proc_ref_unit(u, 7), 1, NULL, 0, &regs, stack,
			 sizeof(stack), ips, 0,
					 &complete), 0);
	assert_int_equal(unwinder_unwind(u, proc_ref_unit(u, 7), 1, NULL, 3, &regs, stack,
			 sizeof(stack), ips, 4,
					 &complete), -EINVAL);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.images_failed, 4);
	unlink(fifo);
	rmdir(dir);
	unwinder_free(u);
}

/*
 * Rules are the files': a new version of the mappings, or another process
 * of the same program, is unwound from the cached rules without a Dwfl of
 * its own, to the same frames; a file changed under its name (another
 * mtime) gets its rules looked up again; without the cache, the Dwfl is
 * rebuilt on a new maps version and after forget, not otherwise.
 */
static void test_rules_shared_and_rebuilds(void **state)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES], first[MAX_FRAMES], rules;
	struct unwinder_stats st;
	struct timespec times[2];
	const char *prog = "build/unwind/chain-eh";
	struct stat sb;
	struct run r;
	bool complete;
	int n, n_first;

	(void)state;
	run_chain(&r, prog, "leaf", NULL);
	n_first = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, first, &complete);
	assert_true(n_first > 2 && complete);
	for (int i = 0; i < 10; i++)
		assert_int_equal(unwind_cap(u, &r, &r.caps[0], r.caps[0].len, ips, &complete),
				 n_first);
	unwinder_get_stats(u, &st);
	/* the chain's rules from the files' .eh_frame: no Dwfl */
	assert_int_equal(st.dwfl_builds, 0);
	rules = st.rules;
	assert_true(rules > 0);
	assert_int_equal(st.rules_from_files, rules);
	/* a new version, another pid: cached rules only, the same frames */
	for (pid_t pid = 4242; pid <= 4243; pid++) {
		n = unwinder_unwind(u, proc_ref_unit(u, pid), 2, r.maps, r.n_maps, &r.caps[0].regs,
				    r.caps[0].stack,
				    r.caps[0].len, ips, MAX_FRAMES, &complete);
		assert_int_equal(n, n_first);
		assert_memory_equal(ips, first, (size_t)n * sizeof(*ips));
		assert_true(complete);
	}
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 0);
	assert_int_equal(st.rules, rules);
	/* the program's file changed (its mtime): looked up again (the
	 * mtime is put back after) */
	assert_int_equal(stat(prog, &sb), 0);
	times[0] = sb.st_atim;
	times[1] = sb.st_mtim;
	times[1].tv_sec += 1;
	assert_int_equal(utimensat(AT_FDCWD, prog, times, 0), 0);
	n = unwinder_unwind(u, proc_ref_unit(u, 4244), 1, r.maps, r.n_maps, &r.caps[0].regs,
			    r.caps[0].stack,
			    r.caps[0].len, ips, MAX_FRAMES, &complete);
	times[1] = sb.st_mtim;
	assert_int_equal(utimensat(AT_FDCWD, prog, times, 0), 0);
	assert_int_equal(n, n_first);
	assert_memory_equal(ips, first, (size_t)n * sizeof(*ips));
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 0);
	assert_true(st.rules > rules);
	/* libdw only: one Dwfl per process and maps version */
	unwinder_use_rule_cache(u, false);
	for (int i = 0; i < 3; i++)
		assert_true(unwinder_unwind(u, proc_ref_unit(u, 4242), 3, r.maps, r.n_maps,
			    &r.caps[0].regs,
					    r.caps[0].stack, r.caps[0].len, ips, MAX_FRAMES,
					    &complete) > 0);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 1);
	unwinder_forget(u, proc_ref_unit(u, 4242));
	unwinder_forget(u, proc_ref_unit(u, 999)); /* unknown: no-op */
	assert_true(unwinder_unwind(u, proc_ref_unit(u, 4242), 3, r.maps, r.n_maps, &r.caps[0].regs,
				    r.caps[0].stack, r.caps[0].len, ips, MAX_FRAMES, &complete) > 0);
	assert_true(complete);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 2);
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
	n = unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r.maps, r.n_maps, &regs, NULL, 0, ips,
			    MAX_FRAMES,
			    &complete);
	assert_true(n >= 2);
	assert_int_equal(ips[1], expect);
	assert_false(complete);
	/* an sp in no mapping at all: nothing to read, the PC alone */
	regs.sp = 0x10;
	n = unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r.maps, r.n_maps, &regs, NULL, 0, ips,
			    MAX_FRAMES,
			    &complete);
	assert_int_equal(n, 1);
	assert_false(complete);
	unwinder_free(u);
	run_free(&r);
}

/*
 * Code without CFI in a file (the dynamic loader's _start, its entry
 * point, on Debian) is stepped by frame pointer, as the BPF walker steps
 * it, without a Dwfl: the return address above the saved frame pointer is
 * the caller, and a frame pointer of 0 (the outermost frame's) ends the
 * walk there.  Skipped where this loader has an FDE at its entry.
 */
static void test_no_fde_frame_pointer(void **state)
{
	struct unwinder *u = unwinder_new();
	const struct unwind_mapping *ld = NULL;
	uint64_t ips[MAX_FRAMES], full[MAX_FRAMES], entry = 0, stack[4];
	struct unwinder_stats st;
	struct unwind_regs regs;
	Dwarf_Frame *frame = NULL;
	Dwarf_CFI *eh;
	GElf_Ehdr eh_hdr;
	struct run r;
	bool complete, has_fde;
	Elf *elf;
	int fd, n, n_full;

	(void)state;
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	n_full = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, full, &complete);
	assert_true(n_full > 2);
	for (size_t i = 0; i < r.n_maps && !ld; i++)
		if (strstr(r.maps[i].path, "ld-linux") && r.maps[i].pgoff == 0)
			ld = &r.maps[i];
	assert_non_null(ld);
	fd = open(ld->path, O_RDONLY);
	assert_true(fd >= 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_non_null(gelf_getehdr(elf, &eh_hdr));
	entry = eh_hdr.e_entry;
	eh = dwarf_getcfi_elf(elf);
	has_fde = eh && dwarf_cfi_addrframe(eh, entry + 1, &frame) == 0;
	free(frame);
	if (eh)
		dwarf_cfi_end(eh);
	elf_end(elf);
	close(fd);
	if (has_fde) {
		unwinder_free(u);
		run_free(&r);
		skip();
	}
	/* the loader's first mapping starts at its link-time address 0 */
	regs = r.caps[0].regs;
	regs.ip = ld->start + entry + 1;
	regs.sp = 0x7ffd0000;
	regs.bp = regs.sp + 8;
	stack[0] = 0;
	stack[1] = 0;       /* the saved frame pointer: the outermost */
	stack[2] = full[1]; /* the return address above it */
	stack[3] = 0;
	n = unwinder_unwind(u, proc_ref_unit(u, 4343), 1, r.maps, r.n_maps, &regs,
			    (const uint8_t *)stack,
			    sizeof(stack), ips, MAX_FRAMES, &complete);
	assert_true(n >= 2);
	assert_int_equal(ips[0], regs.ip);
	assert_int_equal(ips[1], full[1]);
	/* the outermost frame pointer: nothing above it */
	regs.bp = 0;
	n = unwinder_unwind(u, proc_ref_unit(u, 4343), 1, r.maps, r.n_maps, &regs,
			    (const uint8_t *)stack,
			    sizeof(stack), ips, MAX_FRAMES, &complete);
	assert_int_equal(n, 1);
	assert_false(complete);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.dwfl_builds, 0);
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
	assert_int_equal(unwinder_prepare(u, proc_ref_unit(u, 77), 5, r.maps, r.n_maps), 0);
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(rmdir(tmpdir), 0);
	n = unwinder_unwind(u, proc_ref_unit(u, 77), 5, r.maps, r.n_maps, &r.caps[0].regs,
			    r.caps[0].stack,
			    r.caps[0].len, ips, MAX_FRAMES, &complete);
	assert_int_equal(n, n_full);
	assert_memory_equal(ips, full, n * sizeof(uint64_t));
	assert_true(complete);
	unwinder_get_stats(u, &st);
	/* pid 77 once (pid 4242's rules came from the files, no Dwfl) */
	assert_int_equal(st.dwfl_builds, 1);
	assert_int_equal(st.images_failed, 0);
	unwinder_free(u);
	run_free(&r);
}

/* r's first capture unwound by a new unwinder over maps: the same frames
 * as full (n_full of them), whole. */
static void assert_unwinds_as(struct run *r, const struct unwind_mapping *maps,
			      const uint64_t *full, int n_full)
{
	struct unwinder *v = unwinder_new();
	uint64_t ips[MAX_FRAMES];
	bool complete;
	int n = unwinder_unwind(v, proc_ref_unit(v, 4242), 1, maps, r->n_maps, &r->caps[0].regs,
				r->caps[0].stack,
				r->caps[0].len, ips, MAX_FRAMES, &complete);

	assert_int_equal(n, n_full);
	assert_memory_equal(ips, full, (size_t)n * sizeof(*ips));
	assert_true(complete);
	unwinder_free(v);
}

/* A process gone before its copies are unwound: its /proc paths fail, and
 * the files are found under the names its maps gave them, when those are
 * the same files (device and inode); a name that leads to another file is
 * not used.  The name is taken first, when it is the mapped file, for a
 * live process too. */
static void test_gone_process_by_name(void **state)
{
	struct unwinder *u = unwinder_new(), *v = unwinder_new();
	uint64_t ips[MAX_FRAMES], full[MAX_FRAMES];
	struct unwind_mapping *gone;
	struct unwinder_stats st;
	char (*dead)[4200];
	struct stat sb;
	struct run r;
	bool complete;
	int n, n_full;

	(void)state;
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	n_full = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, full, &complete);
	assert_true(complete && n_full > CAPTURE_DEPTH);
	gone = calloc(r.n_maps, sizeof(*gone));
	dead = calloc(r.n_maps, sizeof(*dead));
	assert_non_null(gone);
	assert_non_null(dead);
	for (size_t i = 0; i < r.n_maps; i++) {
		gone[i] = r.maps[i];
		if (!r.maps[i].path || r.maps[i].path[0] != '/')
			continue;
		assert_int_equal(stat(r.maps[i].path, &sb), 0);
		snprintf(dead[i], sizeof(dead[i]), "/proc/999999999/root%s", r.maps[i].path);
		gone[i].path = dead[i];
		gone[i].name = r.maps[i].path;
		gone[i].dev = sb.st_dev;
		gone[i].inode = sb.st_ino;
	}
	n = unwinder_unwind(v, proc_ref_unit(v, 4242), 1, gone, r.n_maps, &r.caps[0].regs,
			    r.caps[0].stack,
			    r.caps[0].len, ips, MAX_FRAMES, &complete);
	assert_int_equal(n, n_full);
	assert_memory_equal(ips, full, (size_t)n * sizeof(*ips));
	assert_true(complete);
	unwinder_get_stats(v, &st);
	assert_true(st.rules > 0);
	assert_int_equal(st.rules_from_files, st.rules);
	assert_int_equal(st.dwfl_builds, 0);
	unwinder_free(v);
	/* names that lead to other files: not read as the mappings' */
	v = unwinder_new();
	for (size_t i = 0; i < r.n_maps; i++)
		gone[i].inode++;
	n = unwinder_unwind(v, proc_ref_unit(v, 4242), 1, gone, r.n_maps, &r.caps[0].regs,
			    r.caps[0].stack,
			    r.caps[0].len, ips, MAX_FRAMES, &complete);
	unwinder_get_stats(v, &st);
	assert_int_equal(st.rules_from_files, 0);
	assert_false(complete);
	unwinder_free(v);
	/* the name is taken before the path when it is the mapped file (no
	 * look-up through /proc): here each path leads to another file */
	for (size_t i = 0; i < r.n_maps; i++) {
		gone[i].inode--;
		if (gone[i].name)
			gone[i].path = "/bin/true";
	}
	assert_unwinds_as(&r, gone, full, n_full);
	/* a live process whose name leads to another file (replaced since):
	 * its path, which is the mapped file */
	for (size_t i = 0; i < r.n_maps; i++) {
		gone[i].inode++;
		gone[i].path = r.maps[i].path;
	}
	assert_unwinds_as(&r, gone, full, n_full);
	unwinder_free(u);
	free(gone);
	free(dead);
	run_free(&r);
}

/* Continuous runs: the files no rule was looked up in since the last
 * release are closed and their FDE lists freed; the cached rules still
 * unwind, and a new PC opens its file again. */
static void test_release_files(void **state)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES], first[MAX_FRAMES];
	struct unwinder_stats st;
	struct run r;
	bool complete;
	int n, n_first;

	(void)state;
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	n_first = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, first, &complete);
	assert_true(n_first > CAPTURE_DEPTH && complete);
	unwinder_get_stats(u, &st);
	assert_true(st.files_open >= 2); /* the program and libc at least */
	/* used since the last release: kept */
	unwinder_release_files(u);
	unwinder_get_stats(u, &st);
	assert_true(st.files_open >= 2);
	/* not used since: closed */
	unwinder_release_files(u);
	unwinder_get_stats(u, &st);
	assert_int_equal(st.files_open, 0);
	/* the rules were kept: the same frames, no file opened */
	n = unwinder_unwind(u, proc_ref_unit(u, 4242), 2, r.maps, r.n_maps, &r.caps[0].regs,
			    r.caps[0].stack,
			    r.caps[0].len, ips, MAX_FRAMES, &complete);
	assert_int_equal(n, n_first);
	assert_memory_equal(ips, first, (size_t)n * sizeof(*ips));
	unwinder_get_stats(u, &st);
	assert_int_equal(st.files_open, 0);
	/* without the rule cache's answers (cleared), the files open again */
	unwinder_free(u);
	u = unwinder_new();
	unwinder_release_files(u); /* nothing open: no-op */
	n = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, ips, &complete);
	assert_int_equal(n, n_first);
	unwinder_get_stats(u, &st);
	assert_true(st.files_open >= 2);
	unwinder_free(u);
	run_free(&r);
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
		cmocka_unit_test(test_gone_process_by_name),
		cmocka_unit_test(test_release_files),
		cmocka_unit_test(test_rules_shared_and_rebuilds),
		cmocka_unit_test(test_reads_image_memory),
		cmocka_unit_test(test_prepare_then_file_gone),
		cmocka_unit_test(test_no_fde_frame_pointer),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
