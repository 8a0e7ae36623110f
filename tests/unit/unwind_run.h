/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the unwinder's unit tests share (test_unwind.c, test_unwind_sampled.c):
 * running tests/unwind/chain (built without frame pointers, see
 * mk/unwind.mk), which records its registers and stack, and naming every
 * frame with our own ELF symbol lookup (file offsets -> PT_LOAD -> .symtab),
 * independent of libdw.
 */
#ifndef COLLECTOR_TEST_UNWIND_RUN_H
#define COLLECTOR_TEST_UNWIND_RUN_H

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

#include "unwind/unwind.h"
#include "../unwind/capture.h"

#include "proc_ref_unit.h"

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

static inline void parse_maps(struct run *r, char *text, size_t len)
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
static inline void run_chain(struct run *r, const char *prog, const char *arg1, const char *arg2)
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

static inline void run_free(struct run *r)
{
	free(r->buf);
	free(r->caps);
	free(r->maps);
}

/* ---- naming frames, independently of libdw ------------------------------ */

/* Name of the function at runtime address ip: the mapping gives the file
 * offset, the PT_LOAD holding that offset the link-time address, and
 * .symtab (or .dynsym) the function. */
static inline const char *symbolize(const struct run *r, uint64_t ip, char *buf, size_t size)
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
static inline void name_frames(const struct run *r, const uint64_t *ips, int n, char names[][64])
{
	for (int i = 0; i < n; i++) {
		const char *name = symbolize(r, i ? ips[i] - 1 : ips[i], names[i], 64);

		if (name != names[i])
			snprintf(names[i], 64, "%s", name);
	}
}

static inline void print_frames(const char *title, const uint64_t *ips, int n, char names[][64])
{
	print_message("%s (%d frames)\n", title, n);
	for (int i = 0; i < n; i++)
		print_message("  #%-2d %#14llx %s\n", i, (unsigned long long)ips[i], names[i]);
}

/* Index of "fN" (1..16), 0 for another name. */
static inline int level_of(const char *name)
{
	int k;
	char tail;

	if (sscanf(name, "f%d%c", &k, &tail) == 1 && k >= 1 && k <= CAPTURE_DEPTH)
		return k;
	return 0;
}

/* Frames allowed below the chain's deepest level: its leaf helpers, and
 * the vDSO's clock_gettime reached through libc's wrapper. */
static inline bool is_leaf_helper(const char *name)
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
static inline bool whole_chain_to(char names[][64], int n, int *leaf_level, const char *root)
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

static inline bool whole_chain(char names[][64], int n, int *leaf_level)
{
	return whole_chain_to(names, n, leaf_level, "main");
}

static inline const char *mapping_path(const struct run *r, uint64_t ip)
{
	for (size_t i = 0; i < r->n_maps; i++)
		if (ip >= r->maps[i].start && ip < r->maps[i].end)
			return r->maps[i].path;
	return "";
}

static inline int unwind_cap(struct unwinder *u, const struct run *r, const struct cap *c,
		      size_t len, uint64_t *ips, bool *complete)
{
	return unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r->maps, r->n_maps, &c->regs, c->stack,
			       len, ips,
			       MAX_FRAMES, complete);
}

#endif /* COLLECTOR_TEST_UNWIND_RUN_H */
