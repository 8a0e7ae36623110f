// SPDX-License-Identifier: GPL-2.0
/* CFI unwinding of user stacks with libdw (see unwind.h). */
#include "symbols/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/hashmix.h"
#include "lib/idmap.h"

/* Live Dwfls kept at once: each holds its images open, so a system-wide run
 * over thousands of processes must not keep them all. */
#define UNWIND_MAX_PROCS 256

/* Outermost-frame answers remembered per process: walks nearly always end
 * at the same few PCs (_start, clone3), so this saves a CFI lookup. */
#define OUTERMOST_CACHE 16

/* x86-64 DWARF register numbers (System V psABI, figure 3.36). */
enum {
	DWARF_RBX = 3,
	DWARF_RBP = 6,
	DWARF_RSP = 7,
	DWARF_R12 = 12,
	DWARF_R13 = 13,
	DWARF_R14 = 14,
	DWARF_R15 = 15,
	DWARF_RIP = 16,
};

/* Registers 0-16 (rax ... r15 and the return address column): the ones
 * libdw's x86-64 unwinder tracks, so the cached walk tracks the same. */
#define FRAME_NREGS 17

/* Cached frame rules per process: a table that doubles up to this many
 * slots and is then emptied when it fills (a program has that many
 * distinct sampled PCs only when it is huge, or when garbage is unwound). */
#define RULES_MIN 256
#define RULES_MAX (1 << 15) /* of 88 bytes: 2.9 MB at most */

/* Registers of a simple frame recovered from the CFA: the return address,
 * the stack pointer and the six callee-saved registers at most, in
 * compiled code; more sends the frame to libdw. */
#define RULE_MAX_SAVED 8

enum rule_kind {
	RULE_EMPTY,  /* free slot */
	RULE_SIMPLE, /* CFA = register + offset, registers as below */
	RULE_LIBDW,  /* no CFI, a DWARF expression, a signal frame: libdw walks */
};

/*
 * The CFI of one PC reduced to the shape nearly all compiled code has, so
 * that a frame costs a hash lookup and a few reads instead of a CFI
 * evaluation: libdw's dwarf_cfi_addrframe and dwarf_frame_register run once
 * per distinct PC, and the cached walk applies their answer as libdw's
 * unwinder would (frame_unwind.c's handle_cfi: same registers, same
 * outcome for unset ones).  Anything of another shape is RULE_LIBDW and
 * the whole sample goes through libdw.
 */
struct frame_rule {
	uint64_t pc;         /* runtime address the CFI was looked up at */
	int32_t cfa_off;
	uint32_t same;       /* registers that keep the callee's value */
	uint8_t kind;        /* enum rule_kind */
	uint8_t cfa_reg;
	uint8_t ra;          /* return address column */
	bool outermost;      /* CFI says the return address is undefined */
	uint8_t n_saved;
	struct {
		int32_t off;
		uint8_t reg;
		bool value;  /* the register is CFA + off, not saved there */
	} saved[RULE_MAX_SAVED]; /* every other register is unset */
};

/* A file reported to a process's Dwfl: runtime range it covers. */
struct reported_range {
	uint64_t start, end;
};

struct unwind_proc {
	pid_t pid;
	uint64_t maps_version;
	uint64_t last_use;
	Dwfl *dwfl;              /* NULL when evicted or never built */
	bool attached;           /* dwfl_attach_state succeeded */
	struct unwinder *u;

	/* the sample being unwound */
	const struct unwind_regs *regs;
	const uint8_t *stack;
	size_t stack_len;
	uint64_t *ips;
	size_t max_ips, n;
	bool full;
	uint64_t last_lookup_pc; /* PC whose CFI gives the last frame's caller */

	/* frame rules by PC, valid for the current Dwfl (open addressing) */
	struct frame_rule *rules;
	size_t rules_cap, rules_used;

	/* is_outermost() by PC, valid for the current Dwfl; pc 0 = empty */
	struct {
		uint64_t pc;
		bool outermost;
	} outermost_cache[OUTERMOST_CACHE];
};

struct unwinder {
	struct idmap by_pid;     /* pid -> index in procs */
	struct unwind_proc **procs;
	size_t n_procs, cap_procs;
	size_t live;             /* procs with a Dwfl */
	uint64_t clock;          /* for least-recently-used eviction */
	int vdso_fd;             /* memfd holding our vDSO, -1 if none, -2 untried */
	bool no_rule_cache;      /* every sample through libdw (for checking) */
	struct unwinder_stats stats;
};

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

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
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

	if (!dwfl_thread_state_registers(thread, DWARF_RBX, 1, &bx) ||
	    !dwfl_thread_state_registers(thread, DWARF_RBP, 2, bp_sp) ||
	    !dwfl_thread_state_registers(thread, DWARF_R12, 4, r12_15))
		return false;
	dwfl_thread_state_register_pc(thread, r->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* Whether an ELF file has a .debug_frame section (read from its section
 * headers only: no section is decompressed). */
static bool has_debug_frame(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (!elf)
		return false;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto cleanup;
	while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		found = name && (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame"));
	}
cleanup:
	elf_end(elf);
	return found;
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

	if (len > 1) {
		/* where dwfl_build_id_find_debuginfo looks by default */
		char path[64 + 2 * 256];
		int off = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
		bool usable;
		int fd;

		for (int i = 1; i < len && i < 256; i++)
			off += snprintf(path + off, sizeof(path) - off, "%02x", id[i]);
		snprintf(path + off, sizeof(path) - off, ".debug");
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			return -1;
		usable = has_debug_frame(fd);
		close(fd);
		if (!usable)
			return -1;
	}
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
	const unsigned char *base;
	const Elf64_Ehdr *eh;
	uint64_t size;
	int fd;

	if (u->vdso_fd != -2)
		return u->vdso_fd;
	u->vdso_fd = -1;
	base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return -1;
	eh = (const Elf64_Ehdr *)base;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return -1;
	/* the image is laid out like a file: it ends with its section headers */
	size = eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1 << 20))
		return -1;
	fd = memfd_create("collector-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, base, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	u->vdso_fd = fd;
	return fd;
}

/*
 * The load bias of an ELF file given one of its mappings: the PT_LOAD
 * segment that holds file offset pgoff is at runtime start + (p_offset -
 * pgoff), so bias = start + p_offset - pgoff - p_vaddr.  Also returns the
 * runtime range the whole image covers (first to last PT_LOAD).
 */
static int image_layout(int fd, const struct unwind_mapping *m, uint64_t *bias,
			struct reported_range *range)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t phnum;
	bool found = false;
	uint64_t lo = UINT64_MAX, hi = 0;
	int ret = -ENOEXEC;

	if (!elf)
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || elf_getphdrnum(elf, &phnum) != 0)
		goto cleanup;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		uint64_t page_off;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
		    ph.p_memsz > UINT64_MAX - ph.p_vaddr || ph.p_filesz > UINT64_MAX - ph.p_offset)
			continue;
		if (ph.p_vaddr < lo)
			lo = ph.p_vaddr;
		if (ph.p_vaddr + ph.p_memsz > hi)
			hi = ph.p_vaddr + ph.p_memsz;
		page_off = ph.p_offset & ~(uint64_t)0xfff;
		if (!found && m->pgoff >= page_off && m->pgoff - page_off < ph.p_filesz +
		    (ph.p_offset - page_off)) {
			*bias = m->start + ph.p_offset - m->pgoff - ph.p_vaddr;
			found = true;
		}
	}
	if (!found || lo >= hi)
		goto cleanup;
	if (eh.e_type == ET_EXEC)
		*bias = 0;
	/* whole pages: the last segment's mapping ends past p_memsz */
	range->start = (lo + *bias) & ~(uint64_t)0xfff;
	range->end = (hi + *bias + 0xfff) & ~(uint64_t)0xfff;
	ret = 0;
cleanup:
	elf_end(elf);
	return ret;
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
static int report_mapping(struct unwinder *u, Dwfl *dwfl, const struct unwind_mapping *m,
			  struct reported_range *done, size_t *n_done)
{
	struct reported_range range;
	const char *name = m->path;
	struct stat st;
	uint64_t bias = 0;
	int fd, ret;

	if (covered(done, *n_done, m->start, m->end))
		return 0;
	if (strcmp(m->path, "[vdso]") == 0) {
		int vfd = vdso_fd(u);

		if (vfd < 0)
			return -ENOENT;
		fd = fcntl(vfd, F_DUPFD_CLOEXEC, 0);
	} else {
		/* never block on (or poke) anything but a regular file */
		fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ret = -ENOEXEC;
		goto fail;
	}
	ret = image_layout(fd, m, &bias, &range);
	if (ret < 0)
		goto fail;
	/* base is the bias with add_p_vaddr: segments land at p_vaddr + bias;
	 * on success the Dwfl owns fd */
	if (!dwfl_report_elf(dwfl, name, m->path, fd, bias, true)) {
		ret = -EEXIST; /* overlaps another image, or unreadable */
		goto fail;
	}
	done[(*n_done)++] = range;
	return 0;
fail:
	close(fd);
	return ret;
}

static int build_dwfl(struct unwinder *u, struct unwind_proc *p,
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

/* ---- processes ---------------------------------------------------------- */

static void drop_dwfl(struct unwinder *u, struct unwind_proc *p)
{
	if (!p->dwfl)
		return;
	dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = false;
	memset(p->outermost_cache, 0, sizeof(p->outermost_cache));
	free(p->rules);
	p->rules = NULL;
	p->rules_cap = 0;
	p->rules_used = 0;
	u->live--;
}

static void evict_oldest(struct unwinder *u)
{
	struct unwind_proc *oldest = NULL;

	for (size_t i = 0; i < u->n_procs; i++) {
		struct unwind_proc *p = u->procs[i];

		if (p && p->dwfl && (!oldest || p->last_use < oldest->last_use))
			oldest = p;
	}
	if (oldest) {
		drop_dwfl(u, oldest);
		u->stats.dwfl_evictions++;
	}
}

static struct unwind_proc *get_proc(struct unwinder *u, pid_t pid)
{
	uint32_t idx = idmap_get(&u->by_pid, (uint32_t)pid);
	struct unwind_proc *p;
	size_t slot;

	if (idx != UINT32_MAX)
		return u->procs[idx];
	for (slot = 0; slot < u->n_procs && u->procs[slot]; slot++)
		;
	if (slot == u->n_procs) {
		if (u->n_procs == u->cap_procs) {
			size_t ncap = u->cap_procs ? 2 * u->cap_procs : 16;
			struct unwind_proc **np = realloc(u->procs, ncap * sizeof(*np));

			if (!np)
				return NULL;
			u->procs = np;
			u->cap_procs = ncap;
		}
		u->procs[u->n_procs++] = NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (idmap_put(&u->by_pid, (uint32_t)pid, slot) != 0) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->u = u;
	u->procs[slot] = p;
	return p;
}

void unwinder_forget(struct unwinder *u, pid_t pid)
{
	uint32_t idx;

	if (!u)
		return;
	idx = idmap_get(&u->by_pid, (uint32_t)pid);
	if (idx == UINT32_MAX)
		return;
	drop_dwfl(u, u->procs[idx]);
	free(u->procs[idx]);
	u->procs[idx] = NULL;
	idmap_put(&u->by_pid, (uint32_t)pid, UINT32_MAX);
}

/* ---- unwinding ---------------------------------------------------------- */

static int frame_callback(Dwfl_Frame *state, void *arg)
{
	struct unwind_proc *p = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (p->n >= p->max_ips) {
		p->full = true;
		return DWARF_CB_ABORT;
	}
	/* libdw looks the caller's CFI up at pc - 1 for a return address (the
	 * call may be a function's last instruction), at pc for an exact one */
	p->last_lookup_pc = activation ? pc : pc - 1;
	if (p->n > 0 && activation)
		pc++; /* exact PC after a signal frame: keep "return address" */
	p->ips[p->n++] = pc;
	return DWARF_CB_OK;
}

/* Whether the CFI that covers pc says the return address is undefined: the
 * outermost frame, the only honest end of a walk.  libdw also ends a walk
 * "normally" when it merely failed to read the return address. */
static bool is_outermost(Dwfl *dwfl, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);

	if (!mod)
		return false;
	for (int pass = 0; pass < 2; pass++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = pass == 0 ? dwfl_module_eh_cfi(mod, &bias)
					   : dwfl_module_dwarf_cfi(mod, &bias);
		Dwarf_Frame *frame;
		Dwarf_Op ops_mem[3], *ops;
		size_t nops;
		bool undefined;
		int ra;

		if (!cfi || pc < bias || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
			continue;
		ra = dwarf_frame_info(frame, NULL, NULL, NULL);
		undefined = ra >= 0 &&
			    dwarf_frame_register(frame, ra, ops_mem, &ops, &nops) == 0 &&
			    nops == 0 && ops == ops_mem;
		free(frame);
		return undefined;
	}
	return false;
}

/* The process's Dwfl for this version of its mappings, built if needed. */
static int ensure_dwfl(struct unwinder *u, struct unwind_proc *p, uint64_t maps_version,
		       const struct unwind_mapping *maps, size_t n_maps)
{
	int ret;

	p->last_use = ++u->clock;
	if (p->dwfl && p->maps_version != maps_version)
		drop_dwfl(u, p);
	if (p->dwfl)
		return 0;
	if (u->live >= UNWIND_MAX_PROCS)
		evict_oldest(u);
	ret = build_dwfl(u, p, maps, n_maps);
	if (ret < 0) {
		if (p->dwfl)
			dwfl_end(p->dwfl);
		p->dwfl = NULL;
		p->attached = false;
		return ret;
	}
	u->live++;
	p->maps_version = maps_version;
	return 0;
}

int unwinder_prepare(struct unwinder *u, pid_t pid, uint64_t maps_version,
		     const struct unwind_mapping *maps, size_t n_maps)
{
	struct unwind_proc *p;

	if (!u || (!maps && n_maps))
		return -EINVAL;
	p = get_proc(u, pid);
	if (!p)
		return -ENOMEM;
	return ensure_dwfl(u, p, maps_version, maps, n_maps);
}

static bool cached_is_outermost(struct unwind_proc *p, uint64_t pc)
{
	size_t slot = (pc ^ (pc >> 7)) % OUTERMOST_CACHE;

	if (pc && p->outermost_cache[slot].pc == pc)
		return p->outermost_cache[slot].outermost;
	p->outermost_cache[slot].pc = pc;
	p->outermost_cache[slot].outermost = is_outermost(p->dwfl, pc);
	return p->outermost_cache[slot].outermost;
}

/* ---- cached frame rules ------------------------------------------------- */

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* Reads a CFA rule of the shape "register + offset". */
static bool simple_cfa(Dwarf_Frame *frame, struct frame_rule *r)
{
	Dwarf_Op *ops;
	size_t nops;
	uint64_t reg;
	int64_t off;

	if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return false;
	}
	if (reg >= FRAME_NREGS || !fits_s32(off))
		return false;
	r->cfa_reg = reg;
	r->cfa_off = off;
	return true;
}

/* Reduces the CFI of one PC to a frame_rule; false when it has another
 * shape.  The cases follow libdw's handle_cfi, which the walk replaces. */
static bool simple_rule(Dwarf_Frame *frame, struct frame_rule *r)
{
	bool signal = false;
	int ra = dwarf_frame_info(frame, NULL, NULL, &signal);

	/* a signal frame's caller is looked up at its exact PC: libdw's job */
	if (ra < 0 || ra >= FRAME_NREGS || signal || !simple_cfa(frame, r))
		return false;
	r->ra = ra;
	r->outermost = false;
	r->same = 0;
	r->n_saved = 0;
	for (int regno = 0; regno < FRAME_NREGS; regno++) {
		Dwarf_Op ops_mem[3], *ops;
		size_t nops, i = 1;
		int64_t off = 0;
		bool value = false;

		/* an error leaves the register unset, as in libdw */
		if (dwarf_frame_register(frame, regno, ops_mem, &ops, &nops) != 0)
			continue;
		if (nops == 0) {
			/* ops_mem: undefined; NULL: same value; else invalid */
			if (ops == NULL)
				r->same |= 1u << regno;
			if (regno == ra && ops == ops_mem)
				r->outermost = true;
			continue;
		}
		/* offset(N) and val_offset(N) come as call_frame_cfa, then
		 * plus_uconst N unless N is 0, then stack_value for a value */
		if (ops[0].atom != DW_OP_call_frame_cfa)
			return false;
		if (i < nops && ops[i].atom == DW_OP_plus_uconst)
			off = (int64_t)ops[i++].number;
		if (i < nops && ops[i].atom == DW_OP_stack_value) {
			value = true;
			i++;
		}
		if (i != nops || !fits_s32(off) || r->n_saved == RULE_MAX_SAVED)
			return false;
		r->saved[r->n_saved].off = off;
		r->saved[r->n_saved].reg = regno;
		r->saved[r->n_saved].value = value;
		r->n_saved++;
	}
	return true;
}

/* The rule for `pc`, from the first CFI that covers it, .eh_frame then
 * .debug_frame, as libdw's unwinder looks them up. */
static void compute_rule(Dwfl *dwfl, uint64_t pc, struct frame_rule *r)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);

	r->pc = pc;
	r->kind = RULE_LIBDW;
	if (!mod)
		return; /* no module: libdw tries the frame-pointer chain */
	for (int pass = 0; pass < 2; pass++) {
		Dwarf_Addr bias;
		Dwarf_CFI *cfi = pass == 0 ? dwfl_module_eh_cfi(mod, &bias)
					   : dwfl_module_dwarf_cfi(mod, &bias);
		Dwarf_Frame *frame;

		if (!cfi || pc < bias || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
			continue;
		if (simple_rule(frame, r))
			r->kind = RULE_SIMPLE;
		free(frame);
		return;
	}
}

static size_t rule_slot(uint64_t pc, size_t cap)
{
	/* the high bits mixed in too: PCs of several images share low bits */
	return hash_mix64(pc) & (cap - 1);
}

static int grow_rules(struct unwind_proc *p)
{
	size_t ncap = p->rules_cap ? 2 * p->rules_cap : RULES_MIN;
	struct frame_rule *nr;

	if (ncap > RULES_MAX) {
		/* full: start over rather than keep growing */
		memset(p->rules, 0, p->rules_cap * sizeof(*p->rules));
		p->rules_used = 0;
		return 0;
	}
	nr = calloc(ncap, sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	for (size_t i = 0; i < p->rules_cap; i++) {
		size_t j;

		if (p->rules[i].kind == RULE_EMPTY)
			continue;
		for (j = rule_slot(p->rules[i].pc, ncap); nr[j].kind != RULE_EMPTY;
		     j = (j + 1) & (ncap - 1))
			;
		nr[j] = p->rules[i];
	}
	free(p->rules);
	p->rules = nr;
	p->rules_cap = ncap;
	return 0;
}

/* The cached rule for `pc`, computed on first use; NULL without memory. */
static const struct frame_rule *get_rule(struct unwinder *u, struct unwind_proc *p, uint64_t pc)
{
	size_t i;

	if (p->rules) {
		for (i = rule_slot(pc, p->rules_cap); p->rules[i].kind != RULE_EMPTY;
		     i = (i + 1) & (p->rules_cap - 1))
			if (p->rules[i].pc == pc)
				return &p->rules[i];
	}
	/* at most half full, so that probes stay short */
	if (2 * (p->rules_used + 1) > p->rules_cap && grow_rules(p) < 0)
		return NULL;
	for (i = rule_slot(pc, p->rules_cap); p->rules[i].kind != RULE_EMPTY;
	     i = (i + 1) & (p->rules_cap - 1))
		;
	compute_rule(p->dwfl, pc, &p->rules[i]);
	p->rules_used++;
	u->stats.rules++;
	return &p->rules[i];
}

/* memory_read, with the common case (the stack copy) inline */
static inline bool read_word(struct unwind_proc *p, uint64_t addr, Dwarf_Word *out)
{
	uint64_t off = addr - p->regs->sp;

	if (addr >= p->regs->sp && p->stack_len >= sizeof(*out) &&
	    off <= p->stack_len - sizeof(*out)) {
		memcpy(out, p->stack + off, sizeof(*out));
		return true;
	}
	return memory_read(p->dwfl, addr, out, p);
}

/*
 * Walks the stack with cached rules.  Returns the number of frames in
 * p->ips, with *complete set as the libdw walk would set it, or 0 when a
 * frame needs libdw (RULE_LIBDW, or no memory): the caller then unwinds the
 * whole sample with libdw.
 */
static size_t walk_rules(struct unwinder *u, struct unwind_proc *p, bool *complete)
{
	const struct unwind_regs *in = p->regs;
	uint64_t reg[FRAME_NREGS] = { 0 };
	uint32_t valid;
	uint64_t lookup = in->ip;
	size_t n = 0;

	/* what set_initial_registers gives libdw; the PC is not register 16 */
	reg[DWARF_RBX] = in->bx;
	reg[DWARF_RBP] = in->bp;
	reg[DWARF_RSP] = in->sp;
	reg[DWARF_R12] = in->r12;
	reg[DWARF_R13] = in->r13;
	reg[DWARF_R14] = in->r14;
	reg[DWARF_R15] = in->r15;
	valid = 1u << DWARF_RBX | 1u << DWARF_RBP | 1u << DWARF_RSP | 1u << DWARF_R12 |
		1u << DWARF_R13 | 1u << DWARF_R14 | 1u << DWARF_R15;
	p->ips[n++] = in->ip;
	for (;;) {
		const struct frame_rule *r = get_rule(u, p, lookup);
		bool cfa_ok;
		uint64_t cfa;

		if (!r || r->kind != RULE_SIMPLE)
			return 0;
		if (r->outermost) {
			*complete = true;
			break;
		}
		/* the CFA is computed from the callee's registers before any
		 * changes; then each register is either kept, or recovered
		 * from the CFA, or unset */
		cfa_ok = valid & 1u << r->cfa_reg;
		cfa = reg[r->cfa_reg] + (int64_t)r->cfa_off;
		valid &= r->same;
		for (size_t i = 0; i < r->n_saved && cfa_ok; i++) {
			uint64_t addr = cfa + (int64_t)r->saved[i].off;
			unsigned int k = r->saved[i].reg;
			Dwarf_Word w;

			if (r->saved[i].value) {
				reg[k] = addr;
			} else if (read_word(p, addr, &w)) {
				reg[k] = w;
			} else {
				continue;
			}
			valid |= 1u << k;
		}
		/* an unreadable return address, or 0 (libdw's end marker),
		 * ends the walk short of the outermost frame */
		if (!(valid & 1u << r->ra) || reg[r->ra] == 0)
			break;
		if (n >= p->max_ips)
			break;
		p->ips[n++] = reg[r->ra];
		/* a return address: the call may be its function's last
		 * instruction, so its CFI is the one at pc - 1 */
		lookup = reg[r->ra] - 1;
	}
	return n;
}

int unwinder_unwind(struct unwinder *u, pid_t pid, uint64_t maps_version,
		    const struct unwind_mapping *maps, size_t n_maps,
		    const struct unwind_regs *regs, const uint8_t *stack, size_t stack_len,
		    uint64_t *ips, size_t max_ips, bool *complete)
{
	struct unwind_proc *p;
	int ret;

	*complete = false;
	if (!u || !regs || (!maps && n_maps) || (!stack && stack_len) || (!ips && max_ips))
		return -EINVAL;
	if (max_ips == 0)
		return 0;
	p = get_proc(u, pid);
	if (!p)
		return -ENOMEM;
	ret = ensure_dwfl(u, p, maps_version, maps, n_maps);
	if (ret < 0)
		return ret;
	ips[0] = regs->ip;
	if (!p->attached)
		return 1;

	p->regs = regs;
	p->stack = stack;
	p->stack_len = stack_len;
	p->ips = ips;
	p->max_ips = max_ips;
	p->n = 0;
	p->full = false;
	u->stats.unwinds++;
	if (!u->no_rule_cache)
		p->n = walk_rules(u, p, complete);
	if (p->n > 0) {
		u->stats.cached++;
		if (*complete)
			u->stats.complete++;
	} else {
		ret = dwfl_getthread_frames(p->dwfl, pid, frame_callback, p);
		if (ret == 0 && !p->full && p->n > 0 &&
		    cached_is_outermost(p, p->last_lookup_pc)) {
			*complete = true;
			u->stats.complete++;
		}
	}
	p->regs = NULL;
	p->stack = NULL;
	p->ips = NULL;
	if (p->n == 0)
		p->n = 1; /* even the initial frame failed: still report the PC */
	u->stats.frames += p->n;
	return (int)p->n;
}

/* ---- lifetime ----------------------------------------------------------- */

struct unwinder *unwinder_new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	elf_version(EV_CURRENT);
	u->vdso_fd = -2;
	return u;
}

void unwinder_use_rule_cache(struct unwinder *u, bool on)
{
	u->no_rule_cache = !on;
}

void unwinder_get_stats(const struct unwinder *u, struct unwinder_stats *out)
{
	*out = u->stats;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n_procs; i++) {
		if (u->procs[i]) {
			drop_dwfl(u, u->procs[i]);
			free(u->procs[i]);
		}
	}
	free(u->procs);
	idmap_free(&u->by_pid);
	if (u->vdso_fd >= 0)
		close(u->vdso_fd);
	free(u);
}
