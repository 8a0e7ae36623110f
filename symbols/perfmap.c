// SPDX-License-Identifier: GPL-2.0
/* perf map files (JIT symbols): parsing and look-up. */
#include "symbols/perfmap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sorted.h"

/* How far back from the last entry starting at or below an address the
 * look-up searches for one that still covers it (an older, longer entry
 * under shorter later ones); runtimes rarely nest code at all. */
#define LOOKBACK 64

static bool parse_hex(char **p, uint64_t *out)
{
	char *s = *p, *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
		return false;
	*out = strtoull(s, &end, 16);
	if (*end != ' ' && *end != '\t')
		return false;
	while (*end == ' ' || *end == '\t')
		end++;
	*p = end;
	return true;
}

static int by_start_then_line(const void *a, const void *b)
{
	const struct perfmap_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int perfmap_parse(struct perfmap *pm, char *text, size_t len)
{
	size_t cap = 0;
	uint32_t line = 0;
	char *p = text, *end = text + len;

	memset(pm, 0, sizeof(*pm));
	pm->text = text;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *s = p;
		struct perfmap_entry e = { .line = line++ };

		if (!nl)
			nl = end;
		*nl = '\0';
		p = nl + 1;
		if (nl > s && nl[-1] == '\r')
			nl[-1] = '\0';
		if (!parse_hex(&s, &e.start) || !parse_hex(&s, &e.size) || !*s || !e.size)
			continue;
		e.name = s;
		if (pm->n == cap) {
			struct perfmap_entry *ne;

			cap = cap ? cap * 2 : 256;
			ne = realloc(pm->entries, cap * sizeof(*ne));
			if (!ne) {
				perfmap_free(pm);
				return -ENOMEM;
			}
			pm->entries = ne;
		}
		pm->entries[pm->n++] = e;
	}
	if (pm->n)
		qsort(pm->entries, pm->n, sizeof(*pm->entries), by_start_then_line);
	return 0;
}

const struct perfmap_entry *perfmap_lookup(const struct perfmap *pm, uint64_t addr)
{
	size_t i = SORTED_UPPER_BOUND(pm->entries, pm->n, start, addr);
	const struct perfmap_entry *best = NULL;

	for (size_t k = 0; k < LOOKBACK && i > 0; k++, i--) {
		const struct perfmap_entry *e = &pm->entries[i - 1];

		if (addr - e->start < e->size && (!best || e->line > best->line))
			best = e;
	}
	return best;
}

void perfmap_free(struct perfmap *pm)
{
	free(pm->entries);
	free(pm->text);
	memset(pm, 0, sizeof(*pm));
}
