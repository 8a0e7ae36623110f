// SPDX-License-Identifier: GPL-2.0
/*
 * An ELF file's function symbols (symbols/elfinfo.h): its symbol tables
 * walked, and the sorted table of functions the symbolizer looks addresses
 * and names up in.  The file itself, opened and mapped, and its other facts
 * are elfinfo.c's.
 */
#include "symbols/elfinfo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sorted.h"

#define FUNCTION_NONE UINT32_MAX /* == MODEL_NONE */

/* How far symtab_lookup walks back for a symbol that encloses later ones
 * (assembly sometimes nests local labels typed FUNC inside a function). */
#define NESTED_LOOKBACK 8

Elf_Scn *elf_file_symbols(const struct elf_file *f, uint32_t sh_type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(f->elf, scn))) {
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == sh_type && shdr.sh_entsize &&
		    shdr.sh_size / shdr.sh_entsize > 1)
			return scn;
	}
	return NULL;
}

/* The extended section index table of symbol table scn, or NULL. */
static Elf_Data *symtab_shndx_data(Elf *elf, Elf_Scn *symscn)
{
	size_t symndx = elf_ndxscn(symscn);
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB_SHNDX &&
		    shdr.sh_link == symndx)
			return elf_getdata(scn, NULL);
	return NULL;
}

/* The bytes of string table index strndx when its last is a NUL, so
 * that every offset below *size starts a string that ends inside it
 * (else NULL: elf_strptr() checks each name). */
static const char *string_table(Elf *elf, size_t strndx, size_t *size)
{
	Elf_Scn *scn = elf_getscn(elf, strndx);
	Elf_Data *data;
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_STRTAB ||
	    (shdr.sh_flags & SHF_COMPRESSED))
		return NULL;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf || !data->d_size || data->d_size != shdr.sh_size ||
	    ((const char *)data->d_buf)[data->d_size - 1] != '\0')
		return NULL;
	*size = data->d_size;
	return data->d_buf;
}

/* Like elf_file_for_each_function, also giving the end of the symbol's
 * section (bounds size-0 symbols). */
static int for_each_function(const struct elf_file *f, Elf_Scn *scn,
			     int (*fn)(void *ctx, const char *name, const GElf_Sym *sym,
				       uint64_t section_end),
			     void *ctx)
{
	Elf_Data *data, *xndx;
	GElf_Shdr shdr;
	size_t n, entsize, strsize = 0;
	const char *strs;

	if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS)
		return 0;
	data = elf_getdata(scn, NULL);
	entsize = gelf_fsize(f->elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!data || !data->d_buf || !entsize)
		return 0;
	xndx = symtab_shndx_data(f->elf, scn);
	strs = string_table(f->elf, shdr.sh_link, &strsize);
	n = data->d_size / entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Word ext = 0;
		GElf_Shdr sec;
		Elf_Scn *sscn;
		const char *name;
		size_t shndx;
		int type, ret;

		if (!gelf_getsymshndx(data, xndx, (int)i, &sym, &ext))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		shndx = sym.st_shndx == SHN_XINDEX ? ext : sym.st_shndx;
		if (shndx == SHN_UNDEF || (sym.st_shndx >= SHN_LORESERVE && sym.st_shndx != SHN_XINDEX))
			continue;
		sscn = elf_getscn(f->elf, shndx);
		if (!sscn || !gelf_getshdr(sscn, &sec) || !(sec.sh_flags & SHF_EXECINSTR))
			continue;
		/* the name is not read here (elf_strptr() reads it to find
		 * its end): a symbol table sorted for look-ups reads the
		 * names of the functions sampled only.  Measured: libLLVM's
		 * 2.8 MiB of .dynstr resident after the sort, 0 after. */
		if (strs)
			name = sym.st_name < strsize ? strs + sym.st_name : NULL;
		else
			name = elf_strptr(f->elf, shdr.sh_link, sym.st_name);
		if (!name)
			continue;
		ret = fn(ctx, name, &sym, sec.sh_addr + sec.sh_size);
		if (ret)
			return ret;
	}
	return 0;
}

struct plain_ctx {
	int (*fn)(void *ctx, const char *name, const GElf_Sym *sym);
	void *ctx;
};

static int plain_cb(void *ctx, const char *name, const GElf_Sym *sym, uint64_t section_end)
{
	struct plain_ctx *c = ctx;

	(void)section_end;
	return *name ? c->fn(c->ctx, name, sym) : 0;
}

int elf_file_for_each_function(const struct elf_file *f, Elf_Scn *scn,
			       int (*fn)(void *ctx, const char *name, const GElf_Sym *sym),
			       void *ctx)
{
	struct plain_ctx c = { fn, ctx };

	return for_each_function(f, scn, plain_cb, &c);
}

/* ---- sorted function table ------------------------------------------------ */

struct build_ctx {
	struct symtab *t;
	size_t cap;
	int err;
};

static int build_cb(void *ctx, const char *name, const GElf_Sym *sym, uint64_t section_end)
{
	struct build_ctx *b = ctx;
	struct symtab_entry *e;

	if (b->t->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 256;
		void *n = realloc(b->t->syms, ncap * sizeof(*b->t->syms));

		if (!n) {
			b->err = -ENOMEM;
			return 1;
		}
		b->t->syms = n;
		b->cap = ncap;
	}
	e = &b->t->syms[b->t->n++];
	e->addr = sym->st_value;
	e->size = sym->st_size;
	/* size 0: provisionally up to the section end, narrowed below */
	e->end = sym->st_size ? sym->st_value + sym->st_size :
				(section_end > sym->st_value ? section_end : sym->st_value + 1);
	if (e->end < e->addr) /* overflowing size */
		e->end = UINT64_MAX;
	e->name = name;
	e->function = FUNCTION_NONE;
	e->bind = GELF_ST_BIND(sym->st_info);
	e->n_tied = 0;
	e->tied_first = (uint32_t)(b->t->n - 1); /* the order read: the sort's last key */
	return 0;
}

static int bind_rank(uint8_t bind)
{
	switch (bind) {
	case STB_GLOBAL:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

static int cmp_entry(const void *a, const void *b)
{
	const struct symtab_entry *x = a, *y = b;
	int rx, ry;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	rx = bind_rank(x->bind);
	ry = bind_rank(y->bind);
	if (rx != ry)
		return rx - ry;
	/* a sized alias says more than a size-0 one */
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	/* tied: not by name, which would read the string table's pages of
	 * every alias (C++ constructors, most of libLLVM's 3 MiB); the
	 * name is chosen at the first look-up (choose_name) */
	return x->tied_first < y->tied_first ? -1 : x->tied_first > y->tied_first;
}

static bool tied(const struct symtab_entry *x, const struct symtab_entry *y)
{
	return x->addr == y->addr && bind_rank(x->bind) == bind_rank(y->bind) &&
	       !x->size == !y->size;
}

/* Among e and its tied aliases, the name kept: one over none, then the
 * lowest. */
static void choose_name(const struct symtab *t, struct symtab_entry *e)
{
	for (uint32_t k = 0; k < e->n_tied; k++) {
		const char *other = t->tied[e->tied_first + k];

		if (other[0] && (!e->name[0] || strcmp(other, e->name) < 0))
			e->name = other;
	}
	e->n_tied = 0;
}

/* Keeps name as one of kept's tied aliases (-ENOMEM without memory). */
static int add_tied(struct symtab *t, size_t *cap, struct symtab_entry *kept, const char *name)
{
	if (kept->n_tied == UINT16_MAX)
		return 0; /* one more of so many: left out */
	if (t->n_tied == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		const char **n = realloc(t->tied, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->tied = n;
		*cap = ncap;
	}
	if (!kept->n_tied)
		kept->tied_first = (uint32_t)t->n_tied;
	t->tied[t->n_tied++] = name;
	kept->n_tied++;
	return 0;
}

int symtab_build(struct symtab *t, const struct elf_file *f, Elf_Scn *scn)
{
	struct build_ctx b = { t, 0, 0 };
	size_t out = 0, tied_cap = 0;

	memset(t, 0, sizeof(*t));
	for_each_function(f, scn, build_cb, &b);
	if (b.err) {
		symtab_free(t);
		return b.err;
	}
	if (!t->n)
		return 0;
	qsort(t->syms, t->n, sizeof(*t->syms), cmp_entry);
	for (size_t i = 0; i < t->n; i++) {
		struct symtab_entry *e = &t->syms[i];

		if (out && t->syms[out - 1].addr == e->addr) {
			/* an alias: the first (preferred) one stays */
			struct symtab_entry *kept = &t->syms[out - 1];

			if (tied(kept, e) && add_tied(t, &tied_cap, kept, e->name)) {
				symtab_free(t);
				return -ENOMEM;
			}
			if (!kept->size && e->size) {
				kept->size = e->size;
				kept->end = e->end;
			}
			continue;
		}
		t->syms[out++] = *e;
	}
	t->n = out;
	for (size_t i = 0; i + 1 < t->n; i++) {
		struct symtab_entry *e = &t->syms[i];

		if (!e->size && e->end > t->syms[i + 1].addr)
			e->end = t->syms[i + 1].addr;
	}
	return 0;
}

void symtab_free(struct symtab *t)
{
	free(t->syms);
	free(t->by_name);
	free(t->tied);
	memset(t, 0, sizeof(*t));
}

struct symtab_entry *symtab_lookup(const struct symtab *t, uint64_t addr)
{
	size_t lo = SORTED_UPPER_BOUND(t->syms, t->n, addr, addr);

	for (size_t k = 0; k < NESTED_LOOKBACK && lo > 0; k++, lo--) {
		struct symtab_entry *e = &t->syms[lo - 1];

		if (addr >= e->end)
			continue;
		if (e->n_tied)
			choose_name(t, e);
		/* a function without a name is none (read here, not when the
		 * table was built) */
		if (e->name[0])
			return e;
	}
	return NULL;
}

static int cmp_by_name(const void *a, const void *b, void *ctx)
{
	const struct symtab *t = ctx;

	return strcmp(t->syms[*(const uint32_t *)a].name, t->syms[*(const uint32_t *)b].name);
}

struct symtab_entry *symtab_find_unique(struct symtab *t, const char *name)
{
	size_t lo = 0, hi = t->n;

	if (!t->n)
		return NULL;
	if (!t->by_name) {
		for (size_t i = 0; i < t->n; i++)
			if (t->syms[i].n_tied)
				choose_name(t, &t->syms[i]);
		t->by_name = malloc(t->n * sizeof(*t->by_name));
		if (!t->by_name)
			return NULL;
		for (size_t i = 0; i < t->n; i++)
			t->by_name[i] = (uint32_t)i;
		qsort_r(t->by_name, t->n, sizeof(*t->by_name), cmp_by_name, t);
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->syms[t->by_name[mid]].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->n || strcmp(t->syms[t->by_name[lo]].name, name))
		return NULL;
	if (lo + 1 < t->n && !strcmp(t->syms[t->by_name[lo + 1]].name, name))
		return NULL;
	return &t->syms[t->by_name[lo]];
}
