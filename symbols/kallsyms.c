// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/kallsyms: "ADDRESS TYPE NAME[\t[MODULE]]" per line, in no useful
 * order.  We keep text symbols, sorted, with each one reaching to the next
 * (kallsyms gives no sizes).
 */
#include "symbols/kallsyms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/bytes.h"
#include "lib/proc.h"
#include "lib/sorted.h"

/* How far past the highest symbol an address still belongs to it. */
#define LAST_SYMBOL_REACH 4096
/* Largest file we read (kallsyms is ~20 MB with many modules). */
#define MAX_FILE_SIZE (1u << 30)

static int type_rank(char type)
{
	switch (type) {
	case 'T':
		return 0;
	case 't':
		return 1;
	case 'W':
		return 2;
	default:
		return 3;
	}
}

struct parsed {
	struct ksym sym;
	char type;
};

static int cmp_parsed(const void *a, const void *b)
{
	const struct parsed *x = a, *y = b;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	if (type_rank(x->type) != type_rank(y->type))
		return type_rank(x->type) - type_rank(y->type);
	return strcmp(x->sym.name, y->sym.name);
}

/* The end of the sorted run of a[] that starts at i. */
static size_t run_end(const struct parsed *a, size_t i, size_t n)
{
	while (++i < n && cmp_parsed(&a[i - 1], &a[i]) <= 0)
		;
	return i;
}

/*
 * /proc/kallsyms lists the core kernel in address order, then each
 * module's symbols (and BPF programs', ftrace trampolines') after it: a few
 * sorted runs (3 in this machine's 122 000 text symbols).  Merging the runs
 * found costs n log(runs) comparisons where qsort spent n log n (measured:
 * 10 of the 48 ms a read took, the kernel's formatting the rest); input in
 * no order at all is a merge sort like any other.
 */
static int sort_runs(struct parsed *a, size_t n)
{
	struct parsed *tmp, *src = a, *dst;
	size_t runs;

	if (run_end(a, 0, n) >= n)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	dst = tmp;
	do {
		struct parsed *swap;

		runs = 0;
		for (size_t i = 0; i < n; runs++) {
			size_t mid = run_end(src, i, n), end = mid < n ? run_end(src, mid, n) : n;
			size_t x = i, y = mid, o = i;

			while (x < mid && y < end)
				dst[o++] = cmp_parsed(&src[y], &src[x]) < 0 ? src[y++] : src[x++];
			while (x < mid)
				dst[o++] = src[x++];
			while (y < end)
				dst[o++] = src[y++];
			i = end;
		}
		swap = src;
		src = dst;
		dst = swap;
	} while (runs > 1);
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(tmp);
	return 0;
}

/* Parses one line in place (NUL-terminating its fields). */
static int parse_line(char *p, char *end, uint64_t *addr, char *type, char **name, char **module)
{
	uint64_t v = 0;
	int digits = 0;
	char *tab;

	while (p < end && *p != ' ') {
		char c = *p++;
		int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -EINVAL;
		if (++digits > 16)
			return -EINVAL;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || end - p < 4 || p[0] != ' ' || p[2] != ' ' || p[3] == '\0' ||
	    p[3] == '\t')
		return -EINVAL;
	*addr = v;
	*type = p[1];
	p += 3;
	*end = '\0';
	if (memchr(p, '\0', (size_t)(end - p)))
		return -EINVAL;
	*name = p;
	*module = end; /* "" */
	tab = strchr(p, '\t');
	if (tab) {
		size_t mlen;

		*tab = '\0';
		p = tab + 1;
		mlen = strlen(p);
		if (mlen < 2 || p[0] != '[' || p[mlen - 1] != ']')
			return -EINVAL;
		p[mlen - 1] = '\0';
		*module = p + 1;
	}
	return 0;
}

/* Takes ownership of text (len + 1 bytes, NUL-terminated). */
static int kallsyms_parse_owned(struct kallsyms *k, char *text, size_t len, size_t *bad_line)
{
	struct parsed *all = NULL;
	size_t n = 0, cap = 0, line = 0, out = 0;
	bool any_nonzero = false;
	char *p = text, *end = text + len;
	int err = 0;

	memset(k, 0, sizeof(*k));
	if (bad_line)
		*bad_line = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		char type, *name, *module;
		uint64_t addr;

		line++;
		err = parse_line(p, eol, &addr, &type, &name, &module);
		if (err) {
			if (bad_line)
				*bad_line = line;
			goto fail;
		}
		p = nl ? nl + 1 : end;
		if (!*module && !strcmp(name, "_stext"))
			k->stext = addr;
		else if (!*module && !strcmp(name, "_etext"))
			k->etext = addr;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr)
			any_nonzero = true;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 4096;
			void *nb = realloc(all, ncap * sizeof(*all));

			if (!nb) {
				err = -ENOMEM;
				goto fail;
			}
			all = nb;
			cap = ncap;
		}
		all[n].sym.addr = addr;
		all[n].sym.name = name;
		all[n].sym.module = module;
		all[n].sym.function = UINT32_MAX;
		all[n].type = type;
		n++;
	}
	k->names = text;
	if (!any_nonzero) {
		/* kptr_restrict (or no permission): nothing can be resolved */
		k->restricted = true;
		k->stext = k->etext = 0;
		free(all);
		return 0;
	}
	k->syms = malloc((n ? n : 1) * sizeof(*k->syms));
	if (!k->syms || sort_runs(all, n)) {
		err = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		if (out && k->syms[out - 1].addr == all[i].sym.addr)
			continue; /* alias: the preferred one came first */
		k->syms[out++] = all[i].sym;
	}
	k->n = out;
	for (size_t i = 0; i < out; i++)
		k->syms[i].end = i + 1 < out ? k->syms[i + 1].addr :
					       k->syms[i].addr + LAST_SYMBOL_REACH;
	free(all);
	return 0;
fail:
	free(all);
	k->names = text;
	kallsyms_free(k);
	return err;
}

int kallsyms_parse(struct kallsyms *k, const char *text, size_t len, size_t *bad_line)
{
	char *copy = malloc(len + 1);

	memset(k, 0, sizeof(*k));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	return kallsyms_parse_owned(k, copy, len, bad_line);
}

int kallsyms_read(struct kallsyms *k, const char *path)
{
	size_t len;
	char *text;
	int err;

	memset(k, 0, sizeof(*k));
	err = proc_read_all(path, MAX_FILE_SIZE, &text, &len);
	if (err)
		return err;
	return kallsyms_parse_owned(k, text, len, NULL);
}

void kallsyms_free(struct kallsyms *k)
{
	free(k->syms);
	free(k->names);
	memset(k, 0, sizeof(*k));
}

struct ksym *kallsyms_lookup(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = SORTED_UPPER_BOUND(k->syms, k->n, addr, addr);

	if (!lo || addr >= k->syms[lo - 1].end)
		return NULL;
	return &k->syms[lo - 1];
}

bool kallsyms_parse_named(const char *text, uint64_t addr, char *name, size_t size,
			  uint64_t *entry)
{
	const char *plus = strchr(text, '+'), *slash;
	unsigned long long off;
	char *end;

	if (!plus || plus == text || (size_t)(plus - text) >= size || strncmp(plus, "+0x", 3))
		return false;
	off = strtoull(plus + 3, &end, 16);
	slash = end;
	if (end == plus + 3 || *slash != '/' || off > addr)
		return false;
	memcpy(name, text, (size_t)(plus - text));
	name[plus - text] = '\0';
	*entry = addr - off;
	return true;
}

size_t kallsyms_notes_build_id(const void *notes, size_t len, char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = notes;
	size_t off = 0;

	if (size)
		out[0] = '\0';
	/* Elf{32,64}_Nhdr: namesz, descsz, type; name and desc 4-aligned.  In
	 * the kernel's byte order: little-endian on x86-64, where collector
	 * runs. */
	while (len - off >= 12) {
		uint32_t namesz = le32_get(p + off), descsz = le32_get(p + off + 4);
		uint32_t type = le32_get(p + off + 8);
		size_t name_off = off + 12;
		size_t name_span = ((size_t)namesz + 3) & ~(size_t)3;
		size_t desc_off, desc_span = ((size_t)descsz + 3) & ~(size_t)3;

		if (name_span > len - name_off)
			return 0;
		desc_off = name_off + name_span;
		if (desc_span > len - desc_off)
			return 0;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4) && descsz > 0 && 2 * (size_t)descsz < size) {
			for (size_t i = 0; i < descsz; i++) {
				out[2 * i] = hex[p[desc_off + i] >> 4];
				out[2 * i + 1] = hex[p[desc_off + i] & 15];
			}
			out[2 * (size_t)descsz] = '\0';
			return descsz;
		}
		off = desc_off + desc_span;
	}
	return 0;
}

size_t kallsyms_read_build_id(const char *path, char *out, size_t size)
{
	size_t len, n;
	char *buf;

	if (size)
		out[0] = '\0';
	if (proc_read_all(path, MAX_FILE_SIZE, &buf, &len))
		return 0;
	n = kallsyms_notes_build_id(buf, len, out, size);
	free(buf);
	return n;
}
