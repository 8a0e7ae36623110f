// SPDX-License-Identifier: GPL-2.0
/*
 * CFI unwinding of user stacks (see unwind.h): the processes, each with
 * its Dwfl (unwind/unwind_dwfl.c), and the walk of one sample, with the
 * cached rules (unwind/unwind_rules.c) or else libdw's unwinder.
 */
#include "unwind/unwind_internal.h"

#include <dwarf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- processes ---------------------------------------------------------- */

static void drop_dwfl(struct unwinder *u, struct unwind_proc *p)
{
	if (!p->dwfl)
		return;
	dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = false;
	memset(p->outermost_cache, 0, sizeof(p->outermost_cache));
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

/* The process's entry: its record's word holds its index in procs plus
 * one; made on first use. */
static struct unwind_proc *get_proc(struct unwinder *u, const struct proc_ref *ref)
{
	uint32_t word = *ref->slot;
	struct unwind_proc *p;
	size_t slot;

	if (word && word <= u->n_procs && u->procs[word - 1])
		return u->procs[word - 1];
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
	p->pid = ref->pid;
	p->u = u;
	u->procs[slot] = p;
	*ref->slot = (uint32_t)slot + 1;
	return p;
}

static void free_proc(struct unwinder *u, struct unwind_proc *p)
{
	drop_dwfl(u, p);
	free(p->file_numbers);
	free(p->file_paths);
	free(p);
}

void unwinder_forget(struct unwinder *u, const struct proc_ref *ref)
{
	uint32_t word = *ref->slot;

	if (!u || !word || word > u->n_procs || !u->procs[word - 1])
		return;
	free_proc(u, u->procs[word - 1]);
	u->procs[word - 1] = NULL;
	*ref->slot = 0;
}

/* ---- unwinding ---------------------------------------------------------- */

static int frame_callback(Dwfl_Frame *state, void *arg)
{
	struct unwind_proc *p = arg;
	Dwarf_Addr pc;
	Dwarf_Word reg;
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
	p->last_pc = pc;
	if (dwfl_frame_reg(state, CFI_REG_RSP, &reg) != 0)
		reg = 0;
	p->last_sp = reg;
	if (dwfl_frame_reg(state, CFI_REG_RBP, &reg) != 0)
		reg = 0;
	p->last_bp = reg;
	if (p->n > 0 && activation)
		pc++; /* exact PC after a signal frame: keep "return address" */
	p->ips[p->n++] = pc;
	if (p->u->stop && p->u->stop(p->u->stop_ctx, p->pid, p->last_pc))
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* Whether the CFI that covers pc says the return address is undefined: the
 * outermost frame, the only honest end of a walk.  libdw also ends a walk
 * "normally" when it merely failed to read the return address. */
static bool is_outermost(Dwfl *dwfl, uint64_t pc)
{
	struct cfi_rule rule;

	return unw_cfi_rule(dwfl, pc, &rule) && rule.kind == CFI_RULE_END;
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
	ret = unw_build_dwfl(u, p, maps, n_maps);
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

int unw_need_dwfl(struct unwinder *u, struct unwind_proc *p)
{
	/* one attempt per sample: a failed build is not tried again */
	if (!p->dwfl_err)
		p->dwfl_err = ensure_dwfl(u, p, p->maps_wanted, p->maps, p->n_maps);
	return p->dwfl_err;
}

int unwinder_prepare(struct unwinder *u, const struct proc_ref *ref, uint64_t maps_version,
		     const struct unwind_mapping *maps, size_t n_maps)
{
	struct unwind_proc *p;

	if (!u || (!maps && n_maps))
		return -EINVAL;
	p = get_proc(u, ref);
	if (!p)
		return -ENOMEM;
	return ensure_dwfl(u, p, maps_version, maps, n_maps);
}

static bool cached_is_outermost(struct unwind_proc *p, uint64_t pc)
{
	size_t slot = hash_mix64(pc) & (OUTERMOST_CACHE - 1);

	if (pc && p->outermost_cache[slot].pc == pc)
		return p->outermost_cache[slot].outermost;
	p->outermost_cache[slot].pc = pc;
	p->outermost_cache[slot].outermost = is_outermost(p->dwfl, pc);
	return p->outermost_cache[slot].outermost;
}

int unwinder_unwind(struct unwinder *u, const struct proc_ref *ref, uint64_t maps_version,
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
	p = get_proc(u, ref);
	if (!p)
		return -ENOMEM;
	ips[0] = regs->ip;
	p->last_use = ++u->clock;
	p->maps = maps;
	p->n_maps = n_maps;
	p->maps_wanted = maps_version;
	p->dwfl_err = 0;
	if (p->dwfl && p->maps_version != maps_version)
		drop_dwfl(u, p); /* its files are not the sample's: closed now */
	p->regs = regs;
	p->stack = stack;
	p->stack_len = stack_len;
	p->ips = ips;
	p->max_ips = max_ips;
	p->n = 0;
	p->full = false;
	p->last_pc = p->last_sp = p->last_bp = 0;
	/* the cached rules first: the files' rules, shared by every process
	 * of a program, so that a short-lived process (a build's compilers)
	 * is unwound without a Dwfl of its own (building and ending one was
	 * 21% of the collector's CPU under a build loop, -a -F 99) */
	if (!u->no_rule_cache)
		p->n = unw_walk_rules(u, p, complete);
	if (p->n > 0) {
		u->stats.unwinds++;
		u->stats.cached++;
		if (*complete)
			u->stats.complete++;
	} else if ((ret = unw_need_dwfl(u, p)) < 0) {
		p->n = 0;
		goto out;
	} else if (!p->attached) {
		p->n = 1;
		goto out;
	} else {
		u->stats.unwinds++;
		p->n = 0;
		ret = dwfl_getthread_frames(p->dwfl, p->pid, frame_callback, p);
		if (ret == 0 && !p->full && p->n > 0 &&
		    cached_is_outermost(p, p->last_lookup_pc)) {
			*complete = true;
			u->stats.complete++;
		}
	}
	ret = 0;
out:
	p->maps = NULL;
	p->n_maps = 0;
	p->regs = NULL;
	p->stack = NULL;
	p->ips = NULL;
	if (ret < 0)
		return ret;
	if (p->n == 0)
		p->n = 1; /* even the initial frame failed: still report the PC */
	u->stats.frames += p->n;
	return (int)p->n;
}

void unwinder_set_stop(struct unwinder *u, unwind_stop_fn stop, void *ctx)
{
	u->stop = stop;
	u->stop_ctx = ctx;
}

bool unwinder_last_frame(const struct unwinder *u, const struct proc_ref *ref,
			 struct unwind_regs *out)
{
	uint32_t word = *ref->slot;
	const struct unwind_proc *p;

	memset(out, 0, sizeof(*out));
	if (!u || !word || word > u->n_procs || !(p = u->procs[word - 1]))
		return false;
	if (!p->last_sp)
		return false;
	out->ip = p->last_pc;
	out->sp = p->last_sp;
	out->bp = p->last_bp;
	return true;
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
	out->files_open = unw_files_open(u);
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n_procs; i++) {
		if (u->procs[i])
			free_proc(u, u->procs[i]);
	}
	free(u->procs);
	rule_cache_free(&u->rules);
	file_ids_free(&u->files);
	unw_files_free(u);
	if (u->vdso_fd >= 0) {
		close(u->vdso_fd);
		elf_file_close(&u->vdso);
	}
	free(u);
}
