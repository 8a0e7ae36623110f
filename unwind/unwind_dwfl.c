// SPDX-License-Identifier: GPL-2.0
/*
 * The libdw session of one process: its images reported to a Dwfl (each
 * opened through symbols/elfinfo.h, the descriptor handed to libdw), the
 * memory libdw may read (the stack copy, the images' own bytes), and the
 * thread callbacks that give libdw the sample's registers.
 */
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- memory ------------------------------------------------------------- */

/* Reads 8 bytes at link-time address `a` of a module's ELF file, from the
 * file contents of the PT_LOAD segment that covers it. */
static bool read_image(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Word *out)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t phnum, raw_size;
	const char *raw;
	uint64_t a;

	if (!elf || addr < bias || elf_getphdrnum(elf, &phnum) != 0)
		return false;
	a = addr - bias;
	raw = elf_rawfile(elf, &raw_size);
	if (!raw)
		return false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t off;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (a < ph.p_vaddr || a - ph.p_vaddr >= ph.p_filesz ||
		    ph.p_filesz - (a - ph.p_vaddr) < sizeof(*out))
			continue;
		off = ph.p_offset + (a - ph.p_vaddr);
		if (off < ph.p_offset || off > raw_size || raw_size - off < sizeof(*out))
			return false;
		memcpy(out, raw + off, sizeof(*out));
		return true;
	}
	return false;
}

bool unw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwind_proc *p = arg;
	uint64_t sp = p->regs->sp;
	Dwfl_Module *mod;

	if (addr >= sp && p->stack_len >= sizeof(*result) &&
	    addr - sp <= p->stack_len - sizeof(*result)) {
		memcpy(result, p->stack + (addr - sp), sizeof(*result));
		return true;
	}
	mod = dwfl_addrmodule(dwfl, addr);
	if (mod && read_image(mod, addr, result))
		return true;
	return false;
}

/* ---- thread callbacks --------------------------------------------------- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct unwind_proc *p = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = p;
	return p->pid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct unwind_regs *r = ((struct unwind_proc *)arg)->regs;
	Dwarf_Word bx = r->bx;
	Dwarf_Word bp_sp[2] = { r->bp, r->sp };
	Dwarf_Word r12_15[4] = { r->r12, r->r13, r->r14, r->r15 };

	if (!dwfl_thread_state_registers(thread, CFI_REG_RBX, 1, &bx) ||
	    !dwfl_thread_state_registers(thread, CFI_REG_RBP, 2, bp_sp) ||
	    !dwfl_thread_state_registers(thread, CFI_REG_R12, 4, r12_15))
		return false;
	dwfl_thread_state_register_pc(thread, r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = unw_memory_read,
	.set_initial_registers = set_initial_registers,
};

/* A section with bytes in the file (not SHT_NOBITS). */
static bool has_section_bytes(const struct elf_file *f, const char *name)
{
	Elf_Scn *scn = elf_file_section(f, name);
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS;
}

/* Whether an ELF file has a .debug_frame section (read from its section
 * headers only: no section is decompressed). */
static bool has_debug_frame(const char *path)
{
	struct elf_file f;
	bool found;

	if (elf_file_open(&f, path))
		return false;
	found = has_section_bytes(&f, ".debug_frame") || has_section_bytes(&f, ".zdebug_frame");
	elf_file_close(&f);
	return found;
}

bool unw_debug_file_has_debug_frame(const uint8_t *id, size_t len)
{
	/* where dwfl_build_id_find_debuginfo looks by default */
	char path[64 + 2 * 256];
	int off;

	if (len < 2)
		return false;
	off = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < len && i < 256; i++)
		off += snprintf(path + off, sizeof(path) - off, "%02x", id[i]);
	snprintf(path + off, sizeof(path) - off, ".debug");
	return has_debug_frame(path);
}

/*
 * Separate debug files are looked up locally by build-id only: the
 * standard lookup may ask a debuginfod server, and a profiler must not
 * block on the network in the middle of a run.
 *
 * libdw's unwinder wants a separate debug file only for its .debug_frame
 * (when .eh_frame has no entry for a PC, as for ld.so's _start), and
 * loading it decompresses every DWARF section: 6 to 40 ms for ld.so's, on
 * the first sample in the dynamic loader of every process.  The debug
 * files of distributions have no .debug_frame (their code's CFI is all in
 * .eh_frame), so one without is not handed to libdw: the CFI found, and so
 * the stacks, are the same.  It is looked at before
 * dwfl_build_id_find_debuginfo, which keeps the file it finds for the
 * module whatever its callback then returns.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr id_vaddr;
	int len = dwfl_module_build_id(mod, &id, &id_vaddr);

	if (len > 1 && !unw_debug_file_has_debug_frame(id, len))
		return -1;
	return dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
};

/* ---- images ------------------------------------------------------------- */

/* A copy of our own vDSO in a memfd: the kernel maps the same image into
 * every 64-bit process, and the target's copy is not readable from here. */
static int vdso_fd(struct unwinder *u)
{
	int fd;

	if (u->vdso_fd != -2)
		return u->vdso_fd;
	u->vdso_fd = -1;
	if (elf_file_own_vdso(&u->vdso))
		return -1;
	fd = memfd_create("collector-vdso", MFD_CLOEXEC);
	if (fd < 0 || write(fd, u->vdso.map, u->vdso.size) != (ssize_t)u->vdso.size) {
		if (fd >= 0)
			close(fd);
		elf_file_close(&u->vdso);
		return -1;
	}
	u->vdso_fd = fd;
	return fd;
}

/* A file reported to a process's Dwfl: runtime range it covers. */
struct reported_range {
	uint64_t start, end;
};

/*
 * The load bias of an ELF file given one of its mappings: the PT_LOAD
 * segment that holds file offset pgoff is at runtime start + (p_offset -
 * pgoff), so bias = start + p_offset - pgoff - p_vaddr.  Also returns the
 * runtime range the whole image covers (first to last PT_LOAD).
 */
static int image_layout(const struct elf_file *f, const struct unwind_mapping *m,
			uint64_t *bias, struct reported_range *range)
{
	bool found = false;
	uint64_t lo = UINT64_MAX, hi = 0;

	if (f->type != ET_EXEC && f->type != ET_DYN)
		return -ENOEXEC;
	for (size_t i = 0; i < f->n_loads; i++) {
		const struct elf_segment *ph = &f->loads[i];
		uint64_t page_off;

		if (ph->memsz > UINT64_MAX - ph->vaddr || ph->filesz > UINT64_MAX - ph->offset)
			continue;
		if (ph->vaddr < lo)
			lo = ph->vaddr;
		if (ph->vaddr + ph->memsz > hi)
			hi = ph->vaddr + ph->memsz;
		page_off = ph->offset & ~(uint64_t)0xfff;
		if (!found && m->pgoff >= page_off && m->pgoff - page_off < ph->filesz +
		    (ph->offset - page_off)) {
			*bias = m->start + ph->offset - m->pgoff - ph->vaddr;
			found = true;
		}
	}
	if (!found || lo >= hi)
		return -ENOEXEC;
	if (f->type == ET_EXEC)
		*bias = 0;
	/* whole pages: the last segment's mapping ends past p_memsz */
	range->start = (lo + *bias) & ~(uint64_t)0xfff;
	range->end = (hi + *bias + 0xfff) & ~(uint64_t)0xfff;
	return 0;
}

static bool covered(const struct reported_range *r, size_t n, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < n; i++)
		if (start >= r[i].start && end <= r[i].end)
			return true;
	return false;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct unwind_mapping *x = *(const struct unwind_mapping *const *)a;
	const struct unwind_mapping *y = *(const struct unwind_mapping *const *)b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Reports one mapping's file to the Dwfl unless an earlier mapping of the
 * same image already did.  Returns 0, or a negative errno for this file. */
/* Reports one mapping's file to the Dwfl unless an earlier mapping of the
 * same image already did.  Returns 0, or a negative errno for this file. */
static int report_mapping(struct unwinder *u, Dwfl *dwfl, const struct unwind_mapping *m,
			  struct reported_range *done, size_t *n_done)
{
	struct reported_range range;
	struct elf_file f;
	uint64_t bias = 0;
	int fd, ret;

	if (covered(done, *n_done, m->start, m->end))
		return 0;
	if (strcmp(m->path, "[vdso]") == 0) {
		int vfd = vdso_fd(u);

		if (vfd < 0)
			return -ENOENT;
		ret = image_layout(&u->vdso, m, &bias, &range);
		if (ret < 0)
			return ret;
		fd = fcntl(vfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
	} else {
		/* elfinfo refuses (never blocks on) anything but a regular file */
		ret = elf_file_open_with_fd(&f, m->path, &fd);
		if (ret < 0)
			return ret;
		ret = image_layout(&f, m, &bias, &range);
		elf_file_close(&f);
		if (ret < 0) {
			close(fd);
			return ret;
		}
	}
	/* base is the bias with add_p_vaddr: segments land at p_vaddr + bias;
	 * on success the Dwfl owns fd (libdw reads the file elfinfo opened) */
	if (!dwfl_report_elf(dwfl, m->path, m->path, fd, bias, true)) {
		close(fd);
		return -EEXIST; /* overlaps another image, or unreadable */
	}
	done[(*n_done)++] = range;
	return 0;
}

int unw_build_dwfl(struct unwinder *u, struct unwind_proc *p,
		      const struct unwind_mapping *maps, size_t n_maps)
{
	const struct unwind_mapping **sorted = NULL;
	struct reported_range *done = NULL;
	size_t n_done = 0, n_sorted = 0;
	int ret = -ENOMEM;

	p->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	u->stats.dwfl_builds++;
	sorted = calloc(n_maps ? n_maps : 1, sizeof(*sorted));
	done = calloc(n_maps ? n_maps : 1, sizeof(*done));
	if (!sorted || !done)
		goto cleanup;
	for (size_t i = 0; i < n_maps; i++) {
		const struct unwind_mapping *m = &maps[i];

		if (!m->path || m->end <= m->start)
			continue;
		if (m->path[0] == '/' || strcmp(m->path, "[vdso]") == 0)
			sorted[n_sorted++] = m;
	}
	/* lowest mapping first: an image's first mapping reports it whole */
	qsort(sorted, n_sorted, sizeof(*sorted), cmp_mapping);
	dwfl_report_begin(p->dwfl);
	for (size_t i = 0; i < n_sorted; i++)
		if (report_mapping(u, p->dwfl, sorted[i], done, &n_done) < 0)
			u->stats.images_failed++;
	if (dwfl_report_end(p->dwfl, NULL, NULL) != 0)
		goto cleanup;
	/* fails when no image could be opened: then only the PC is known */
	p->attached = dwfl_attach_state(p->dwfl, NULL, p->pid, &thread_callbacks, p);
	ret = 0;
cleanup:
	free(sorted);
	free(done);
	return ret;
}
