// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind reader: the tokens of a line.  Numbers are range-checked,
 * subpositions resolved against the previous cost line, and names interned
 * (equal names get one id) with their "(id)" compression resolved.
 */
#include "formats/callgrind/callgrind_parser.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cg_fail(struct parser *ps, size_t offset, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	format_vfail(ps->err, offset, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

char *cg_dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

char *cg_rest_of_line(struct cursor *c)
{
	skip_spaces(c);
	return cg_dup_range(c->s, (size_t)(c->end - c->s));
}

bool cg_is_name(const char *s, size_t n)
{
	if (!n || !isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]))
			return false;
	return true;
}

/* ---- numbers ------------------------------------------------------------- */

static int hex_number(struct parser *ps, struct cursor *c, uint64_t *v)
{
	size_t at = cur_off(c);
	const char *start;
	uint64_t x = 0;

	c->s += 2;
	start = c->s;
	while (c->s < c->end && isxdigit((unsigned char)*c->s)) {
		unsigned d = isdigit((unsigned char)*c->s) ? (unsigned)(*c->s - '0')
						       : (unsigned)(tolower(*c->s) - 'a' + 10);

		if (x >> 60)
			return cg_fail(ps, at, "hexadecimal number exceeds 64 bits");
		x = x << 4 | d;
		c->s++;
	}
	if (c->s == start)
		return cg_fail(ps, cur_off(c), "hexadecimal number without digits");
	*v = x;
	return 0;
}

static int dec_number(struct parser *ps, struct cursor *c, uint64_t *v)
{
	size_t at = cur_off(c);
	const char *start = c->s;
	uint64_t x = 0;

	while (c->s < c->end && isdigit((unsigned char)*c->s)) {
		unsigned d = (unsigned)(*c->s - '0');

		if (x > (UINT64_MAX - d) / 10)
			return cg_fail(ps, at, "number exceeds 64 bits");
		x = x * 10 + d;
		c->s++;
	}
	if (c->s == start)
		return cg_fail(ps, cur_off(c), "number expected");
	*v = x;
	return 0;
}

int cg_number(struct parser *ps, struct cursor *c, uint64_t *v)
{
	uint64_t x = 0;
	int err;

	if (c->end - c->s > 2 && c->s[0] == '0' && (c->s[1] == 'x' || c->s[1] == 'X'))
		err = hex_number(ps, c, &x);
	else
		err = dec_number(ps, c, &x);
	if (err)
		return err;
	if (c->s < c->end && *c->s != ' ')
		return cg_fail(ps, cur_off(c), "unexpected character '%c' in number",
			       isprint((unsigned char)*c->s) ? *c->s : '?');
	*v = x;
	return 0;
}

/* SubPosition := Number | "+" Number | "-" Number | "*" */
static int subposition(struct parser *ps, struct cursor *c, uint64_t prev, uint64_t *v,
		       const char *what)
{
	uint64_t d;
	int err;

	if (c->s >= c->end)
		return cg_fail(ps, cur_off(c), "%s expected", what);
	if (*c->s == '*') {
		c->s++;
		if (c->s < c->end && *c->s != ' ')
			return cg_fail(ps, cur_off(c), "garbage after '*' in %s", what);
		*v = prev;
		return 0;
	}
	if (*c->s == '+' || *c->s == '-') {
		size_t at = cur_off(c);
		char sign = *c->s++;

		err = cg_number(ps, c, &d);
		if (err)
			return err;
		if (sign == '+' ? d > UINT64_MAX - prev : d > prev)
			return cg_fail(ps, at, "relative %s %c%llu leaves the 64-bit range", what,
				       sign, (unsigned long long)d);
		*v = sign == '+' ? prev + d : prev - d;
		return 0;
	}
	if (!isdigit((unsigned char)*c->s))
		return cg_fail(ps, cur_off(c), "%s expected", what);
	return cg_number(ps, c, v);
}

int cg_positions(struct parser *ps, struct cursor *c, uint64_t *addr, uint64_t *line)
{
	int err;

	*addr = 0;
	*line = 0;
	if (ps->p->pos_instr) {
		err = subposition(ps, c, ps->addr, addr, "instruction address");
		if (err)
			return err;
		skip_spaces(c);
	}
	if (ps->p->pos_line) {
		err = subposition(ps, c, ps->line, line, "line number");
		if (err)
			return err;
		skip_spaces(c);
	}
	return 0;
}

int cg_costs(struct parser *ps, struct cursor *c)
{
	size_t i = 0;
	int err;

	memset(ps->tmp_costs, 0, ps->p->n_events * sizeof(uint64_t));
	skip_spaces(c);
	while (c->s < c->end) {
		if (i == ps->p->n_events)
			return cg_fail(ps, cur_off(c), "more costs than the %zu events",
				       ps->p->n_events);
		if (!isdigit((unsigned char)*c->s))
			return cg_fail(ps, cur_off(c), "cost expected");
		err = cg_number(ps, c, &ps->tmp_costs[i++]);
		if (err)
			return err;
		skip_spaces(c);
	}
	return 0;
}

/* ---- names ------------------------------------------------------------------ */

/* Interns s[0..n): equal strings always get one id. */
static int intern_name(struct parser *ps, const char *s, size_t n, uint32_t *id)
{
	struct callgrind_profile *p = ps->p;
	struct name_key k = { s, n, hash_bytes(0, s, n), p->names };
	struct name_entry *e;
	char *copy;

	e = name_index_find(&ps->names, &k);
	if (e) {
		*id = e->id;
		return 0;
	}
	copy = cg_dup_range(s, n);
	if (!copy)
		return -ENOMEM;
	if (p->n_names == ps->names_cap) {
		size_t ncap = ps->names_cap ? ps->names_cap * 2 : 64;
		char **nn = realloc(p->names, ncap * sizeof(*nn));

		if (!nn) {
			free(copy);
			return -ENOMEM;
		}
		p->names = nn;
		ps->names_cap = ncap;
	}
	e = name_index_insert_hashed(&ps->names, k.hash);
	if (!e) {
		free(copy);
		return -ENOMEM;
	}
	p->names[p->n_names] = copy;
	*e = (struct name_entry){ k.hash, (uint32_t)p->n_names };
	*id = p->n_names++;
	return 0;
}

/* "(num) name" defines the compressed id num, "(num)" uses it. */
static int compressed_name(struct parser *ps, struct cursor *c, struct idmap *map, uint32_t *id)
{
	size_t at = cur_off(c);
	const char *q = c->s + 1;
	uint64_t num = 0;
	uint32_t have;
	int err;

	while (q < c->end && isdigit((unsigned char)*q)) {
		if (num > (UINT64_MAX - 9) / 10)
			return cg_fail(ps, at, "compressed name id too large");
		num = num * 10 + (uint64_t)(*q++ - '0');
	}
	if (q >= c->end || *q != ')')
		return cg_fail(ps, at, "compressed name id without ')'");
	q++;
	while (q < c->end && *q == ' ')
		q++;
	have = idmap_get(map, num);
	if (q == c->end) {
		if (have == UINT32_MAX)
			return cg_fail(ps, at, "undefined compressed name (%llu)",
				       (unsigned long long)num);
		*id = have;
		return 0;
	}
	err = intern_name(ps, q, (size_t)(c->end - q), id);
	if (err)
		return err;
	if (have != UINT32_MAX && have != *id)
		return cg_fail(ps, at, "compressed name (%llu) redefined", (unsigned long long)num);
	return idmap_put(map, num, *id);
}

int cg_name(struct parser *ps, struct cursor *c, enum name_kind kind, uint32_t *id)
{
	const char *s = c->s;
	int err;

	if (c->end - s >= 2 && s[0] == '(' && isdigit((unsigned char)s[1])) {
		err = compressed_name(ps, c, &ps->compressed[kind], id);
	} else {
		size_t at = cur_off(c);

		while (s < c->end && *s == ' ')
			s++;
		if (s == c->end)
			return cg_fail(ps, at, "empty name");
		err = intern_name(ps, s, (size_t)(c->end - s), id);
	}
	if (err)
		return err;
	c->s = c->end;
	return 0;
}
