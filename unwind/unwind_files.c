// SPDX-License-Identifier: GPL-2.0
/*
 * The rules of the cached walk from the files themselves, without libdw:
 * each file is opened once, by the first process whose sample needs it
 * (through that process's mapping, which it names), the FDE that covers a
 * PC is found through the file's .eh_frame_hdr (symbols/cfi_entries.h's
 * index: no list of FDEs read whole, 8 MiB of a -a run's peak heap under
 * a build loop when it was) and interpreted up to it (unwind/cfi_fde.h), which gives the rule libdw's
 * frame would (tests/unit/test_cfi_table.c checks the interpreter at every
 * address).  Measured: libdw's look-ups, through a Dwfl per process whose
 * CFI state starts empty each time, were the collector's main cost under a
 * build loop (compute_rule 22%, its tsearch 17% of the collector's CPU,
 * -a -F 99), for the stack copies of short-lived compilers.
 */
#include "unwind/unwind_internal.h"

#include <stdlib.h>
#include <string.h>

#include "unwind/cfi_fde.h"
#include "unwind/cfi_table.h"

/* Files kept open at once; past that, rules come through libdw. */
#define RULE_FILES_MAX 512

struct rule_file {
	struct elf_file f;
	struct cfi_fde_index fdes;
	uint8_t state;  /* FILE_UNTRIED, FILE_READY, FILE_FAILED */
	bool used;      /* since unwinder_release_files() */
	bool debug_frame; /* it or its debug file has one: libdw's CFI where .eh_frame has none */
};

enum { FILE_UNTRIED = 0, FILE_READY, FILE_FAILED };

struct rule_at {
	uint64_t addr;
	struct cfi_rule *rule;
	bool found;
};

static int take_rule(void *arg, uint64_t lo, uint64_t hi, const struct cfi_rule *rule)
{
	struct rule_at *at = arg;

	if (at->addr < lo || at->addr >= hi)
		return 0;
	*at->rule = *rule;
	at->found = true;
	return 1;
}

/* The file of number, opened through path at its first use; NULL when it
 * cannot be read this way. */
static struct rule_file *rule_file(struct unwinder *u, uint32_t number, const char *path)
{
	size_t k = number - FILE_NUMBER_VDSO - 1;
	struct rule_file *rf;

	if (number <= FILE_NUMBER_VDSO || k >= RULE_FILES_MAX)
		return NULL;
	if (k >= u->n_rule_files) {
		size_t n = k + 1 > 2 * u->n_rule_files ? k + 1 : 2 * u->n_rule_files;
		struct rule_file **v = realloc(u->rule_files, n * sizeof(*v));

		if (!v)
			return NULL;
		memset(v + u->n_rule_files, 0, (n - u->n_rule_files) * sizeof(*v));
		u->rule_files = v;
		u->n_rule_files = n;
	}
	if (!u->rule_files[k] && !(u->rule_files[k] = calloc(1, sizeof(*rf))))
		return NULL;
	rf = u->rule_files[k];
	rf->used = true;
	if (rf->state == FILE_UNTRIED) {
		rf->state = FILE_FAILED;
		if (elf_file_open(&rf->f, path) == 0) {
			if (cfi_fde_index_open(&rf->fdes, &rf->f) == 0 &&
			    !cfi_fde_index_empty(&rf->fdes)) {
				/* .eh_frame read whole (no .eh_frame_hdr); a
				 * rule reads one FDE */
				if (!rf->fdes.rows)
					elf_file_release_pages(&rf->f);
				rf->debug_frame = cfi_has_debug_frame(&rf->f) ||
						  unw_debug_file_has_debug_frame(rf->f.build_id,
										 rf->f.build_id_len);
				rf->state = FILE_READY;
			} else {
				cfi_fde_index_close(&rf->fdes);
				elf_file_close(&rf->f);
			}
		}
	}
	return rf->state == FILE_READY ? rf : NULL;
}

/* The PT_LOAD whose bytes in the file hold offset off, or NULL. */
static const struct elf_segment *load_at(const struct elf_file *f, uint64_t off)
{
	for (size_t i = 0; i < f->n_loads; i++)
		if (off >= f->loads[i].offset && off - f->loads[i].offset < f->loads[i].filesz)
			return &f->loads[i];
	return NULL;
}

enum file_rule unw_file_rule(struct unwinder *u, uint32_t number, const char *path, uint64_t off,
			     struct cfi_rule *rule)
{
	struct rule_file *rf = rule_file(u, number, path);
	struct rule_at at = { .rule = rule };
	const struct elf_segment *s;
	struct cfi_fde_one fde;

	if (!rf || !(s = load_at(&rf->f, off)))
		return FILE_RULE_UNKNOWN;
	/* the file offset as the link-time address the FDEs use */
	at.addr = s->vaddr + (off - s->offset);
	if (!cfi_fde_index_find(&rf->fdes, at.addr, &fde))
		return rf->debug_frame ? FILE_RULE_UNKNOWN : FILE_RULE_NONE;
	/* -ENOTSUP (a signal frame, an expression): libdw's to answer */
	return cfi_fde_rows(&fde.fdes, &fde.fde, at.addr + 1, take_rule, &at) >= 0 && at.found
		       ? FILE_RULE_FOUND
		       : FILE_RULE_UNKNOWN;
}

bool unw_file_word(struct unwinder *u, uint32_t number, const char *path, uint64_t off,
		   uint64_t *out)
{
	struct rule_file *rf = rule_file(u, number, path);
	const struct elf_segment *s;

	/* what libdw's memory callback reads (unwind_dwfl.c's read_image):
	 * the file's bytes of a PT_LOAD segment */
	if (!rf || !(s = load_at(&rf->f, off)) || s->filesz - (off - s->offset) < sizeof(*out) ||
	    off > rf->f.size || rf->f.size - off < sizeof(*out))
		return false;
	memcpy(out, (const uint8_t *)rf->f.map + off, sizeof(*out));
	return true;
}

void unwinder_release_files(struct unwinder *u)
{
	for (size_t k = 0; u && k < u->n_rule_files; k++) {
		struct rule_file *rf = u->rule_files[k];

		if (!rf)
			continue;
		if (!rf->used && rf->state == FILE_READY) {
			cfi_fde_index_close(&rf->fdes);
			elf_file_close(&rf->f);
		}
		/* a failure too is tried again: a process gone since */
		if (!rf->used)
			rf->state = FILE_UNTRIED;
		rf->used = false;
	}
}

uint64_t unw_files_open(const struct unwinder *u)
{
	uint64_t n = 0;

	for (size_t k = 0; k < u->n_rule_files; k++)
		n += u->rule_files[k] && u->rule_files[k]->state == FILE_READY;
	return n;
}

void unw_files_free(struct unwinder *u)
{
	for (size_t k = 0; k < u->n_rule_files; k++) {
		struct rule_file *rf = u->rule_files[k];

		if (!rf)
			continue;
		if (rf->state == FILE_READY) {
			cfi_fde_index_close(&rf->fdes);
			elf_file_close(&rf->f);
		}
		free(rf);
	}
	free(u->rule_files);
	u->rule_files = NULL;
	u->n_rule_files = 0;
}
