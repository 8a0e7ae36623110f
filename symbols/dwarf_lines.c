// SPDX-License-Identifier: GPL-2.0
/*
 * An address of an ELF image into a model location: the function symbol
 * that contains it, and from the DWARF (through libdw) its source file and
 * line and the chain of inlined calls it sits in, outermost first.
 *
 * The compile units are found through a table of their address ranges made
 * here (dwarf_addrdie needs .debug_aranges, which not every compiler
 * emits); the subprogram of a symbol is searched once and kept.
 */
#include "symbols/symbolize_internal.h"

#include "symbols/debug_copies.h"

#include <dwarf.h>

#include "lib/sorted.h"

/* Deepest chain of inlined calls kept for one address. */
#define MAX_INLINES 64

static int cmp_cu_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/*
 * Our own table of compile-unit ranges: dwarf_addrdie relies on
 * .debug_aranges, which not every compiler emits.
 */
static void index_units(struct sym_image *si)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Die cudie, subdie;
	size_t cap = 0;

	while (dwarf_get_units(si->dwarf, cu, &next, &version, &unit_type, &cudie, &subdie) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		cu = next;
		if (unit_type != DW_UT_compile)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			if (si->n_cus == cap) {
				cap = cap ? cap * 2 : 64;
				si->cus = xrealloc(si->cus, cap * sizeof(*si->cus));
			}
			si->cus[si->n_cus].lo = lo;
			si->cus[si->n_cus].hi = hi;
			si->cus[si->n_cus].cudie = cudie;
			si->n_cus++;
		}
	}
	if (si->n_cus)
		qsort(si->cus, si->n_cus, sizeof(*si->cus), cmp_cu_range);
}

static Dwarf *get_dwarf(struct symbolizer *s, struct sym_image *si)
{
	const struct elf_file *f = NULL;

	if (si->dwarf_tried)
		return si->dwarf;
	si->dwarf_tried = true;
	/* a debug file of compressed sections: its copy decompressed, which
	 * libdw reads without inflating them all again */
	if (si->has_debug && debug_copy_needed(&si->debug) &&
	    debug_copy_open(s->cache_dir, &si->debug, &si->debug_copy) == 0)
		si->has_debug_copy = true;
	if (si->has_debug_copy &&
	    (si->dwarf = dwarf_begin_elf(si->debug_copy.elf, DWARF_C_READ, NULL)))
		f = &si->debug_copy;
	else if (si->has_debug && (si->dwarf = dwarf_begin_elf(si->debug.elf, DWARF_C_READ, NULL)))
		f = &si->debug;
	else if ((si->dwarf = dwarf_begin_elf(si->file.elf, DWARF_C_READ, NULL)))
		f = &si->file;
	if (!si->dwarf)
		return NULL;
	sym_open_alt(s, si, f);
	index_units(si);
	return si->dwarf;
}

static Dwarf_Die *find_cu(struct sym_image *si, uint64_t addr)
{
	size_t lo = SORTED_UPPER_BOUND(si->cus, si->n_cus, lo, addr);

	/* ranges rarely overlap; look back a little for an enclosing one */
	for (size_t k = 0; k < 4 && lo > 0; k++, lo--)
		if (addr < si->cus[lo - 1].hi)
			return &si->cus[lo - 1].cudie;
	return NULL;
}

/* The name to show for a DWARF function: its linkage (symbol) name, which
 * is what ELF symbols give, else its source name. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_diename(die);
	return name;
}

static void die_decl(struct symbolizer *s, Dwarf_Die *die, uint32_t *file, uint32_t *line)
{
	const char *path = dwarf_decl_file(die);
	int l = 0;

	*file = MODEL_NONE;
	*line = 0;
	if (path) {
		*file = model_intern_file(s->m, path);
		if (dwarf_decl_line(die, &l) == 0 && l > 0)
			*line = (uint32_t)l;
	}
}

/* The model function of symbol e (decl from DWARF die when given). */
static uint32_t symbol_function(struct symbolizer *s, uint32_t image, struct symtab_entry *e,
				Dwarf_Die *die)
{
	uint32_t file = MODEL_NONE, line = 0;
	const char *name = e->name, *at = strchr(name, '@');
	char *copy = NULL;

	if (e->function != MODEL_NONE &&
	    (!die || s->m->functions.items[e->function].file != MODEL_NONE))
		return e->function;
	/* "memcpy@@GLIBC_2.14": symbol versions are not part of the name */
	if (at && at != name)
		name = copy = xstrndup(name, (size_t)(at - name));
	if (die)
		die_decl(s, die, &file, &line);
	e->function = symbolizer_function(s, image, name, e->addr, e->size, file, line);
	free(copy);
	return e->function;
}

/* A function known only from DWARF (no symbol covers the address). */
static uint32_t dwarf_function(struct symbolizer *s, uint32_t image, Dwarf_Die *die)
{
	const char *name = die_name(die);
	Dwarf_Addr lo = 0, hi = 0;
	uint32_t file, line;

	if (!name)
		return MODEL_NONE;
	if (dwarf_entrypc(die, &lo))
		lo = 0;
	if (dwarf_lowpc(die, &lo) == 0 && dwarf_highpc(die, &hi) == 0 && hi < lo)
		hi = 0;
	die_decl(s, die, &file, &line);
	return symbolizer_function(s, image, name, lo, hi > lo ? hi - lo : 0, file, line);
}

/* The function of an inlined call: the out-of-line copy's when the image
 * has exactly one symbol of that name, else an entry-less function. */
static uint32_t inlined_function(struct symbolizer *s, uint32_t image, struct sym_image *si,
				 Dwarf_Die *die)
{
	const char *name = die_name(die);
	struct symtab_entry *e;
	uint32_t file, line;

	if (!name)
		name = "[unknown]";
	e = symtab_find_unique(&si->syms, name);
	if (e)
		return symbol_function(s, image, e, die);
	die_decl(s, die, &file, &line);
	return symbolizer_function(s, image, name, 0, 0, file, line);
}

static void call_site(struct symbolizer *s, Dwarf_Die *cudie, Dwarf_Die *die,
		      struct model_inline *inl)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx, line;
	Dwarf_Files *files;
	size_t n_files;

	inl->call_file = MODEL_NONE;
	inl->call_line = 0;
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx) == 0 &&
	    dwarf_getsrcfiles(cudie, &files, &n_files) == 0 && idx < n_files) {
		const char *path = dwarf_filesrc(files, idx, NULL, NULL);

		if (path && strcmp(path, "???"))
			inl->call_file = model_intern_file(s->m, path);
	}
	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line) == 0 &&
	    line <= UINT32_MAX)
		inl->call_line = (uint32_t)line;
}

/* How deep inlined calls and blocks may nest (hostile DWARF is bounded). */
#define MAX_SCOPE_DEPTH 256

static bool has_pc_attrs(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges) ||
	       dwarf_hasattr(die, DW_AT_entry_pc);
}

/*
 * Appends to chain[0..max) the inlined calls inside parent whose ranges
 * contain addr, outermost first, descending through blocks (and through
 * blocks that have no ranges of their own).  Returns true when a child of
 * parent contained addr.
 */
static bool walk_scopes(Dwarf_Die *parent, uint64_t addr, Dwarf_Die *chain, uint32_t *n,
			uint32_t max, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block &&
		    tag != DW_TAG_try_block && tag != DW_TAG_catch_block)
			continue;
		if (dwarf_haspc(&child, addr) == 1) {
			if (tag == DW_TAG_inlined_subroutine && *n < max)
				chain[(*n)++] = child;
			walk_scopes(&child, addr, chain, n, max, depth + 1);
			return true;
		}
		if (tag != DW_TAG_inlined_subroutine && !has_pc_attrs(&child) &&
		    walk_scopes(&child, addr, chain, n, max, depth + 1))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/*
 * The concrete DW_TAG_subprogram containing addr, through libdw's scope
 * search.  dwarf_getscopes follows an inlined call into its abstract
 * definition's scopes; the concrete chain (innermost first) comes from
 * dwarf_getscopes_die on the innermost scope.
 */
static bool find_subprogram(Dwarf_Die *cudie, uint64_t addr, Dwarf_Die *out)
{
	Dwarf_Die *scopes = NULL, *chain = NULL;
	int n = dwarf_getscopes(cudie, addr, &scopes), n_chain = 0;
	bool found = false;

	if (n > 0)
		n_chain = dwarf_getscopes_die(&scopes[0], &chain);
	for (int i = 0; i < n_chain && !found; i++) {
		if (dwarf_tag(&chain[i]) == DW_TAG_subprogram) {
			*out = chain[i];
			found = true;
		}
	}
	free(scopes);
	free(chain);
	return found;
}

enum { SUB_UNKNOWN = 0, SUB_FOUND, SUB_NONE };

/*
 * The subprogram DIE containing addr.  The scope search walks the whole
 * compile unit, so its answer is kept per symbol: later addresses of the
 * same function only walk that function's own DIEs.
 */
static Dwarf_Die *subprogram_at(struct sym_image *si, Dwarf_Die *cudie, uint64_t addr,
				struct symtab_entry *sym, Dwarf_Die *tmp)
{
	size_t idx;

	if (!sym)
		return find_subprogram(cudie, addr, tmp) ? tmp : NULL;
	idx = (size_t)(sym - si->syms.syms);
	if (!si->sub_state) {
		si->sub_state = xcalloc(si->syms.n, sizeof(*si->sub_state));
		si->sub_dies = xcalloc(si->syms.n, sizeof(*si->sub_dies));
	}
	switch (si->sub_state[idx]) {
	case SUB_NONE:
		return NULL;
	case SUB_FOUND:
		if (dwarf_haspc(&si->sub_dies[idx], addr) == 1)
			return &si->sub_dies[idx];
		/* one symbol over two DWARF functions: search, keep the first */
		return find_subprogram(cudie, addr, tmp) ? tmp : NULL;
	default:
		break;
	}
	if (!find_subprogram(cudie, addr, &si->sub_dies[idx])) {
		si->sub_state[idx] = SUB_NONE;
		return NULL;
	}
	si->sub_state[idx] = SUB_FOUND;
	return &si->sub_dies[idx];
}

uint32_t sym_resolve_elf(struct symbolizer *s, uint32_t image, struct sym_image *si,
			 uint64_t addr)
{
	struct symtab_entry *sym = symtab_lookup(&si->syms, addr);
	struct model_inline inl[MAX_INLINES];
	Dwarf_Die chain[MAX_INLINES], *cudie = NULL, *sub = NULL, tmp;
	uint32_t function = MODEL_NONE, file = MODEL_NONE, line = 0, n_inl = 0;

	if (get_dwarf(s, si))
		cudie = find_cu(si, addr);
	if (cudie) {
		Dwarf_Line *dl = dwarf_getsrc_die(cudie, addr);
		int ln;

		if (dl) {
			const char *src = dwarf_linesrc(dl, NULL, NULL);

			if (src)
				file = model_intern_file(s->m, src);
			if (dwarf_lineno(dl, &ln) == 0 && ln > 0)
				line = (uint32_t)ln;
		}
		sub = subprogram_at(si, cudie, addr, sym, &tmp);
		if (sub)
			walk_scopes(sub, addr, chain, &n_inl, MAX_INLINES, 0);
		for (uint32_t i = 0; i < n_inl; i++) {
			inl[i].function = inlined_function(s, image, si, &chain[i]);
			call_site(s, cudie, &chain[i], &inl[i]);
		}
	}
	if (sym)
		function = symbol_function(s, image, sym, sub);
	else if (sub)
		function = dwarf_function(s, image, sub);
	if (function == MODEL_NONE)
		function = sym_fde_function(s, image, si, addr);
	if (function == MODEL_NONE)
		model_stat_add(s->m, MODEL_STAT_SYMBOLIZE_UNRESOLVED_LOCATIONS, 1);
	return model_intern_location(s->m, image, addr, function, file, line, inl, n_inl);
}
