// SPDX-License-Identifier: GPL-2.0
/*
 * The rule cache: the CFI of each distinct place in a file reduced once to "CFA =
 * register + offset, registers saved at CFA + offset" (unwind/cfi_rule.h,
 * the reduction the BPF unwinder's tables use too, kept per PC as struct
 * frame_rule, unwind/unwind_internal.h), and the walk that applies those
 * rules as libdw's unwinder would, without libdw.  A frame of another
 * shape sends the whole sample to libdw.
 */
#include "unwind/unwind_internal.h"

#include "lib/sorted.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

bool unw_cfi_rule(Dwfl *dwfl, uint64_t pc, struct cfi_rule *rule)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Addr eh_bias = 0, debug_bias = 0;
	Dwarf_CFI *eh, *debug;

	if (!mod)
		return false;
	eh = dwfl_module_eh_cfi(mod, &eh_bias);
	if (eh && pc < eh_bias)
		eh = NULL;
	/* libdw's unwinder reads the .debug_frame only where .eh_frame has
	 * no entry: load it (the separate debug file) only then */
	if (eh && cfi_rule_lookup(eh, pc - eh_bias, NULL, 0, rule, NULL))
		return true;
	debug = dwfl_module_dwarf_cfi(mod, &debug_bias);
	if (debug && pc < debug_bias)
		debug = NULL;
	return cfi_rule_lookup(NULL, 0, debug, pc - debug_bias, rule, NULL);
}

/* A rule in the cache's form: RULE_SIMPLE for CFA = register + offset
 * with every register kept, lost, or at or equal to CFA + offset
 * (RULE_MAX_SAVED at most) and for the outermost frame; RULE_LIBDW for
 * anything else. */
static void frame_rule_of(const struct cfi_rule *rule, struct frame_rule *r)
{
	r->kind = RULE_LIBDW;
	r->ra = rule->ra;
	r->outermost = rule->kind == CFI_RULE_END;
	r->same = 0;
	r->n_saved = 0;
	if (r->outermost) {
		r->kind = RULE_SIMPLE;
		return;
	}
	if (rule->kind != CFI_RULE_REGS)
		return;
	r->cfa_reg = rule->cfa_reg;
	r->cfa_off = rule->cfa_off;
	for (int regno = 0; regno < CFI_RULE_NREGS; regno++) {
		uint8_t how = rule->reg[regno].how;

		if (how == CFI_HOW_SAME)
			r->same |= 1u << regno;
		if (how != CFI_HOW_AT && how != CFI_HOW_VALUE)
			continue;
		if (r->n_saved == RULE_MAX_SAVED)
			return;
		r->saved[r->n_saved].off = rule->reg[regno].off;
		r->saved[r->n_saved].reg = regno;
		r->saved[r->n_saved].value = how == CFI_HOW_VALUE;
		r->n_saved++;
	}
	for (int regno = 0; regno < CFI_RULE_NREGS; regno++)
		if (rule->reg[regno].how == CFI_HOW_OTHER)
			return;
	r->kind = RULE_SIMPLE;
}

/* The number of the file of p's mapping i (stat()'d at its first use in
 * this version of p's mappings), FILE_NUMBER_NONE for no regular file. */
static uint32_t file_number(struct unwinder *u, struct unwind_proc *p, size_t i)
{
	const struct unwind_mapping *m = &p->maps[i];
	const char *path = m->path;
	struct file_id key = { 0 }, *f;
	struct stat st;
	uint64_t h;

	if (p->file_numbers_version != p->maps_wanted || p->n_file_numbers != p->n_maps) {
		free(p->file_numbers);
		free(p->file_paths);
		p->file_numbers = calloc(p->n_maps, sizeof(*p->file_numbers));
		p->file_paths = calloc(p->n_maps, sizeof(*p->file_paths));
		p->n_file_numbers = p->file_numbers && p->file_paths ? p->n_maps : 0;
		p->file_numbers_version = p->maps_wanted;
		if (!p->n_file_numbers)
			return FILE_NUMBER_NONE;
	}
	if (p->file_numbers[i] != FILE_NUMBER_UNKNOWN)
		return p->file_numbers[i];
	p->file_numbers[i] = FILE_NUMBER_NONE;
	if (!path || !*path)
		return FILE_NUMBER_NONE;
	if (strcmp(path, "[vdso]") == 0) {
		p->file_paths[i] = path;
		return p->file_numbers[i] = FILE_NUMBER_VDSO;
	}
	/* The file under the process's own name for it, when that is the
	 * mapped file (its device and inode): a path the kernel has in its
	 * dentry cache, where each /proc/PID/map_files look-up makes proc
	 * inodes anew (its stat() was 6.2% of a continuous -a run's CPU under
	 * a build loop: a new process's first stack copy stats each file its
	 * walk meets).  Else its /proc path, which is gone with the process
	 * (a copy unwound after its exit: a build's short compiler steps):
	 * 18% of a -a run's rule look-ups under a build loop were such, each
	 * a Dwfl built in vain before the name was tried. */
	if (!m->name || m->name[0] != '/' || stat(m->name, &st) != 0 ||
	    (uint64_t)st.st_dev != m->dev || (uint64_t)st.st_ino != m->inode) {
		if (path[0] != '/' || stat(path, &st) != 0)
			return FILE_NUMBER_NONE;
	} else {
		path = m->name;
	}
	if (!S_ISREG(st.st_mode))
		return FILE_NUMBER_NONE;
	p->file_paths[i] = path;
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	key.size = (uint64_t)st.st_size;
	key.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	h = file_id_hash_key(&key);
	f = file_ids_find_hashed(&u->files, h, &key);
	if (!f && u->n_files < (1u << 23) && (f = file_ids_insert_hashed(&u->files, h))) {
		*f = key;
		f->number = FILE_NUMBER_VDSO + 1 + u->n_files++;
	}
	if (f)
		p->file_numbers[i] = f->number;
	return p->file_numbers[i];
}

/* The rule cache's key of pc in p's sample: its file's number and its
 * offset in the file; 0 for a PC in no regular file (no rule shared).
 * *map and *off say where it is (*map SIZE_MAX: in no mapping). */
static uint64_t rule_key(struct unwinder *u, struct unwind_proc *p, uint64_t pc, size_t *map,
			 uint32_t *number, uint64_t *off)
{
	size_t i = SIZE_MAX, at;
	const struct unwind_mapping *m;

	*map = SIZE_MAX;
	*number = FILE_NUMBER_NONE;
	/* the tracker's mappings come sorted, as the kernel lists them */
	at = SORTED_UPPER_BOUND(p->maps, p->n_maps, start, pc);
	if (at > 0 && pc < p->maps[at - 1].end)
		i = at - 1;
	for (size_t k = 0; k < p->n_maps && i == SIZE_MAX; k++) /* not sorted */
		if (pc >= p->maps[k].start && pc < p->maps[k].end)
			i = k;
	if (i == SIZE_MAX)
		return 0;
	m = &p->maps[i];
	*map = i;
	*number = file_number(u, p, i);
	*off = pc - m->start + m->pgoff;
	if (*number == FILE_NUMBER_NONE || *off >= 1ull << 40)
		return 0;
	return (uint64_t)*number << 40 | *off;
}

/* The rule of a frame that keeps the frame-pointer chain: the CFA 16
 * above the saved rbp, the return address just below it, the caller's
 * rsp the CFA; no other register known (as libdw's fallback leaves them). */
static void frame_pointer_rule(struct cfi_rule *r)
{
	*r = (struct cfi_rule){ .kind = CFI_RULE_REGS, .ra = CFI_REG_RIP,
				.cfa_reg = CFI_REG_RBP, .cfa_off = 16 };
	r->reg[CFI_REG_RSP].how = CFI_HOW_VALUE;
	r->reg[CFI_REG_RSP].off = 0;
	r->reg[CFI_REG_RBP].how = CFI_HOW_AT;
	r->reg[CFI_REG_RBP].off = -16;
	r->reg[CFI_REG_RIP].how = CFI_HOW_AT;
	r->reg[CFI_REG_RIP].off = -8;
}

/* The cached rule for `pc`, computed on first use: from the file's own
 * .eh_frame (unwind_files.c), a frame-pointer step where the file has no
 * CFI for it, else through p's Dwfl (built then if it is not yet); NULL
 * without memory or without a Dwfl. */
static const struct frame_rule *get_rule(struct unwinder *u, struct unwind_proc *p, uint64_t pc)
{
	uint32_t number;
	uint64_t off, key, h;
	struct cfi_rule rule = { .kind = CFI_RULE_OTHER };
	struct frame_rule *r;
	enum file_rule got;
	size_t map;

	key = rule_key(u, p, pc, &map, &number, &off);
	h = rule_key_hash(&key);
	r = key ? rule_cache_find_hashed(&u->rules, h, &key) : NULL;
	if (r)
		return r;
	got = key ? unw_file_rule(u, number, p->file_paths[map], off, &rule) : FILE_RULE_UNKNOWN;
	if (got == FILE_RULE_NONE) {
		/* a frame-pointer step, as the BPF walker takes there and as
		 * libdw's own fallback would: ld.so's _start has no FDE, and
		 * each copy of a sample in its _dl_start had a Dwfl built
		 * for it */
		frame_pointer_rule(&rule);
	} else if (got == FILE_RULE_UNKNOWN) {
		if (unw_need_dwfl(u, p) != 0)
			return NULL;
		if (!unw_cfi_rule(p->dwfl, pc, &rule))
			rule.kind = CFI_RULE_OTHER;
	}
	if (!key) {
		r = &p->scratch;
	} else {
		if (u->rules.len >= RULES_MAX)
			rule_cache_clear(&u->rules); /* full: start over rather than grow */
		r = rule_cache_insert_hashed(&u->rules, h);
		if (!r)
			return NULL;
	}
	frame_rule_of(&rule, r);
	r->key = key;
	u->stats.rules++;
	u->stats.rules_from_files += got == FILE_RULE_FOUND;
	return r;
}

/* A word of the stack copy, else of a mapped file, read as libdw's
 * memory callback reads it but without a Dwfl, which was built for that
 * read alone before: at the end of a copy shorter than the stack, or
 * above an outermost frame pointer of 0 (ld.so's _start). */
static bool read_word(struct unwinder *u, struct unwind_proc *p, uint64_t addr, Dwarf_Word *out)
{
	uint64_t off = addr - p->regs->sp, key, w;
	uint32_t number;
	size_t map;

	if (addr >= p->regs->sp && p->stack_len >= sizeof(*out) &&
	    off <= p->stack_len - sizeof(*out)) {
		memcpy(out, p->stack + off, sizeof(*out));
		return true;
	}
	key = rule_key(u, p, addr, &map, &number, &off);
	if (!key || !unw_file_word(u, number, p->file_paths[map], off, &w))
		return false;
	*out = w;
	return true;
}

/* A frame needs libdw when its rule is RULE_LIBDW, or without memory. */
size_t unw_walk_rules(struct unwinder *u, struct unwind_proc *p, bool *complete)
{
	const struct unwind_regs *in = p->regs;
	uint64_t reg[FRAME_NREGS] = { 0 };
	uint32_t valid;
	uint64_t lookup = in->ip;
	size_t n = 0;

	/* what set_initial_registers gives libdw; the PC is not register 16 */
	reg[CFI_REG_RBX] = in->bx;
	reg[CFI_REG_RBP] = in->bp;
	reg[CFI_REG_RSP] = in->sp;
	reg[CFI_REG_R12] = in->r12;
	reg[CFI_REG_R13] = in->r13;
	reg[CFI_REG_R14] = in->r14;
	reg[CFI_REG_R15] = in->r15;
	valid = 1u << CFI_REG_RBX | 1u << CFI_REG_RBP | 1u << CFI_REG_RSP | 1u << CFI_REG_R12 |
		1u << CFI_REG_R13 | 1u << CFI_REG_R14 | 1u << CFI_REG_R15;
	p->ips[n++] = in->ip;
	p->last_pc = in->ip;
	p->last_sp = in->sp;
	p->last_bp = in->bp;
	if (u->stop && u->stop(u->stop_ctx, p->pid, in->ip))
		return n;
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
			} else if (read_word(u, p, addr, &w)) {
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
		p->last_pc = reg[r->ra];
		p->last_sp = valid & 1u << CFI_REG_RSP ? reg[CFI_REG_RSP] : cfa;
		p->last_bp = valid & 1u << CFI_REG_RBP ? reg[CFI_REG_RBP] : 0;
		if (u->stop && u->stop(u->stop_ctx, p->pid, reg[r->ra]))
			break;
		/* a return address: the call may be its function's last
		 * instruction, so its CFI is the one at pc - 1 */
		lookup = reg[r->ra] - 1;
	}
	return n;
}
