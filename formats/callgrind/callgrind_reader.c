// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind profile reader and `collector dump` support.
 *
 * Follows the format reference (callgrind-format.xml) and, where they are
 * stricter, the real readers: callgrind_annotate 3.19 and KCachegrind's
 * CachegrindLoader.  Every number is range-checked, every name reference
 * must have been defined, and nothing read from the file sizes an
 * allocation beyond what the file's length can justify.
 */
#include "formats/callgrind/callgrind_reader.h"
#include "formats/callgrind/callgrind.h"
#include "formats/format.h"
#include "lib/hashmix.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* KCachegrind recognizes the format by "events:" at a line start within
 * the first 2047 bytes. */
#define KCACHEGRIND_SNIFF_BYTES 2047
#define MAX_EVENTS 64

/* ---- small hash map: u64 key -> u32 value ------------------------------- */

struct u64map {
	uint64_t *keys;
	uint32_t *vals; /* UINT32_MAX = empty slot */
	size_t cap, len;
};


static int u64map_grow(struct u64map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = malloc(ncap * sizeof(*keys));
	uint32_t *vals = malloc(ncap * sizeof(*vals));

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	memset(vals, 0xff, ncap * sizeof(*vals));
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (m->vals[i] == UINT32_MAX)
			continue;
		for (j = hash_mix64(m->keys[i]) & (ncap - 1); vals[j] != UINT32_MAX; j = (j + 1) & (ncap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = ncap;
	return 0;
}

/* Returns the slot of key (existing or empty), growing first if needed. */
static int u64map_slot(struct u64map *m, uint64_t key, size_t *slot)
{
	size_t j;

	if ((m->len + 1) * 2 > m->cap) {
		int err = u64map_grow(m);

		if (err)
			return err;
	}
	for (j = hash_mix64(key) & (m->cap - 1); m->vals[j] != UINT32_MAX; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			break;
	*slot = j;
	return 0;
}

static uint32_t u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return UINT32_MAX;
	for (size_t j = hash_mix64(key) & (m->cap - 1); m->vals[j] != UINT32_MAX;
	     j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			return m->vals[j];
	return UINT32_MAX;
}

static void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- parser state ------------------------------------------------------ */

enum name_kind { NAME_OB = 0, NAME_FL = 1, NAME_FN = 2 };

struct parser {
	const char *data;
	size_t n;
	struct callgrind_profile *p;
	struct callgrind_error *err;

	size_t names_cap, records_cap, costs_cap;
	struct u64map name_index;        /* string hash -> name id (chained by probing) */
	struct u64map compressed[3];     /* (id) -> name id, per kind */

	/* current position */
	uint32_t ob, fl, file, fn;
	uint32_t cob, cfi, cfn;
	uint64_t addr, line;
	bool body;                      /* events: seen */
	size_t totals_off;              /* where totals: stands */
	uint64_t *tmp_costs;
};

static int fail(struct parser *ps, size_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parser *ps, size_t offset, const char *fmt, ...)
{
	va_list ap;

	ps->err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(ps->err->reason, sizeof(ps->err->reason), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static uint64_t hash_str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static char *dup_range(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

/* Interns s[0..n); collisions of the 64-bit hash are resolved by probing
 * successive keys (hash + k), so equal strings always get one id. */
static int intern_name(struct parser *ps, const char *s, size_t n, uint32_t *id)
{
	struct callgrind_profile *p = ps->p;
	uint64_t h = hash_str(s, n);

	for (uint64_t k = 0;; k++) {
		size_t slot;
		int err = u64map_slot(&ps->name_index, h + k, &slot);

		if (err)
			return err;
		if (ps->name_index.vals[slot] == UINT32_MAX) {
			char *copy = dup_range(s, n);

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
			p->names[p->n_names] = copy;
			ps->name_index.keys[slot] = h + k;
			ps->name_index.vals[slot] = p->n_names;
			ps->name_index.len++;
			*id = p->n_names++;
			return 0;
		}
		{
			const char *have = p->names[ps->name_index.vals[slot]];

			if (strlen(have) == n && !memcmp(have, s, n)) {
				*id = ps->name_index.vals[slot];
				return 0;
			}
		}
	}
}

/* ---- tokens ------------------------------------------------------------ */

struct cursor {
	const char *s;   /* current character */
	const char *end; /* end of the line (excluding '\n') */
	size_t base;     /* file offset of the line start */
	const char *line;
};

static size_t cur_off(const struct cursor *c)
{
	return c->base + (size_t)(c->s - c->line);
}

static void skip_spaces(struct cursor *c)
{
	while (c->s < c->end && *c->s == ' ')
		c->s++;
}

/* Number := HexNumber | Digit+ ; rejects overflow. */
static int parse_number(struct parser *ps, struct cursor *c, uint64_t *v)
{
	uint64_t x = 0;
	const char *start = c->s;
	size_t at = cur_off(c);

	if (c->end - c->s > 2 && c->s[0] == '0' && (c->s[1] == 'x' || c->s[1] == 'X')) {
		c->s += 2;
		start = c->s;
		while (c->s < c->end && isxdigit((unsigned char)*c->s)) {
			unsigned d = isdigit((unsigned char)*c->s) ? (unsigned)(*c->s - '0')
							       : (unsigned)(tolower(*c->s) - 'a' + 10);

			if (x >> 60)
				return fail(ps, at, "hexadecimal number exceeds 64 bits");
			x = x << 4 | d;
			c->s++;
		}
		if (c->s == start)
			return fail(ps, cur_off(c), "hexadecimal number without digits");
	} else {
		while (c->s < c->end && isdigit((unsigned char)*c->s)) {
			unsigned d = (unsigned)(*c->s - '0');

			if (x > (UINT64_MAX - d) / 10)
				return fail(ps, at, "number exceeds 64 bits");
			x = x * 10 + d;
			c->s++;
		}
		if (c->s == start)
			return fail(ps, cur_off(c), "number expected");
	}
	if (c->s < c->end && *c->s != ' ')
		return fail(ps, cur_off(c), "unexpected character '%c' in number",
			    isprint((unsigned char)*c->s) ? *c->s : '?');
	*v = x;
	return 0;
}

/* SubPosition := Number | "+" Number | "-" Number | "*" */
static int parse_subposition(struct parser *ps, struct cursor *c, uint64_t prev, uint64_t *v,
			     const char *what)
{
	uint64_t d;
	int err;

	if (c->s >= c->end)
		return fail(ps, cur_off(c), "%s expected", what);
	if (*c->s == '*') {
		c->s++;
		if (c->s < c->end && *c->s != ' ')
			return fail(ps, cur_off(c), "garbage after '*' in %s", what);
		*v = prev;
		return 0;
	}
	if (*c->s == '+' || *c->s == '-') {
		size_t at = cur_off(c);
		char sign = *c->s++;

		err = parse_number(ps, c, &d);
		if (err)
			return err;
		if (sign == '+' ? d > UINT64_MAX - prev : d > prev)
			return fail(ps, at, "relative %s %c%llu leaves the 64-bit range", what, sign,
				    (unsigned long long)d);
		*v = sign == '+' ? prev + d : prev - d;
		return 0;
	}
	if (!isdigit((unsigned char)*c->s))
		return fail(ps, cur_off(c), "%s expected", what);
	return parse_number(ps, c, v);
}

/* Parses the subpositions selected by positions:, relative to (addr, line). */
static int parse_positions(struct parser *ps, struct cursor *c, uint64_t *addr, uint64_t *line)
{
	int err;

	*addr = 0;
	*line = 0;
	if (ps->p->pos_instr) {
		err = parse_subposition(ps, c, ps->addr, addr, "instruction address");
		if (err)
			return err;
		skip_spaces(c);
	}
	if (ps->p->pos_line) {
		err = parse_subposition(ps, c, ps->line, line, "line number");
		if (err)
			return err;
		skip_spaces(c);
	}
	return 0;
}

static bool is_name(const char *s, size_t n)
{
	if (!n || !isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)s[i]))
			return false;
	return true;
}

/* Reads n_events costs (fewer means zeros) into ps->tmp_costs. */
static int parse_costs(struct parser *ps, struct cursor *c)
{
	size_t i = 0;
	int err;

	memset(ps->tmp_costs, 0, ps->p->n_events * sizeof(uint64_t));
	skip_spaces(c);
	while (c->s < c->end) {
		if (i == ps->p->n_events)
			return fail(ps, cur_off(c), "more costs than the %zu events", ps->p->n_events);
		if (!isdigit((unsigned char)*c->s))
			return fail(ps, cur_off(c), "cost expected");
		err = parse_number(ps, c, &ps->tmp_costs[i++]);
		if (err)
			return err;
		skip_spaces(c);
	}
	return 0;
}

/* ---- name specifications ------------------------------------------------ */

/* PositionName := ( "(" Number ")" )? (Space* NoNewLineChar*)? */
static int parse_name(struct parser *ps, struct cursor *c, enum name_kind kind, uint32_t *id)
{
	struct u64map *map = &ps->compressed[kind];
	const char *s = c->s;
	size_t at = cur_off(c);
	int err;

	if (c->end - s >= 2 && s[0] == '(' && isdigit((unsigned char)s[1])) {
		uint64_t num = 0;
		const char *q = s + 1;
		uint32_t have;

		while (q < c->end && isdigit((unsigned char)*q)) {
			if (num > (UINT64_MAX - 9) / 10)
				return fail(ps, at, "compressed name id too large");
			num = num * 10 + (uint64_t)(*q++ - '0');
		}
		if (q >= c->end || *q != ')')
			return fail(ps, at, "compressed name id without ')'");
		q++;
		while (q < c->end && *q == ' ')
			q++;
		have = u64map_get(map, num);
		if (q == c->end) {
			if (have == UINT32_MAX)
				return fail(ps, at, "undefined compressed name (%llu)",
					    (unsigned long long)num);
			*id = have;
		} else {
			size_t slot;

			err = intern_name(ps, q, (size_t)(c->end - q), id);
			if (err)
				return err;
			if (have != UINT32_MAX && have != *id)
				return fail(ps, at, "compressed name (%llu) redefined",
					    (unsigned long long)num);
			err = u64map_slot(map, num, &slot);
			if (err)
				return err;
			if (map->vals[slot] == UINT32_MAX)
				map->len++;
			map->keys[slot] = num;
			map->vals[slot] = *id;
		}
	} else {
		while (s < c->end && *s == ' ')
			s++;
		if (s == c->end)
			return fail(ps, at, "empty name");
		err = intern_name(ps, s, (size_t)(c->end - s), id);
		if (err)
			return err;
	}
	c->s = c->end;
	return 0;
}

/* ---- records ------------------------------------------------------------ */

static int add_record(struct parser *ps, const struct callgrind_record *r)
{
	struct callgrind_profile *p = ps->p;

	if (p->n_records == ps->records_cap) {
		size_t ncap = ps->records_cap ? ps->records_cap * 2 : 256;
		struct callgrind_record *nr = realloc(p->records, ncap * sizeof(*nr));
		uint64_t *nc;

		if (!nr)
			return -ENOMEM;
		p->records = nr;
		nc = realloc(p->costs, ncap * p->n_events * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		p->costs = nc;
		ps->records_cap = ncap;
	}
	p->records[p->n_records] = *r;
	p->records[p->n_records].costs = p->n_records * p->n_events;
	memcpy(p->costs + p->n_records * p->n_events, ps->tmp_costs,
	       p->n_events * sizeof(uint64_t));
	p->n_records++;
	return 0;
}

/* A cost line (self cost, or the cost line after calls= when call != NULL). */
static int cost_line(struct parser *ps, struct cursor *c, const struct callgrind_record *call)
{
	struct callgrind_record r;
	uint64_t addr, line;
	int err;

	if (ps->fn == CALLGRIND_NO_NAME)
		return fail(ps, cur_off(c), "cost line before any fn=");
	err = parse_positions(ps, c, &addr, &line);
	if (err)
		return err;
	err = parse_costs(ps, c);
	if (err)
		return err;
	ps->addr = addr;
	ps->line = line;
	if (call) {
		r = *call;
	} else {
		memset(&r, 0, sizeof(r));
		r.kind = CALLGRIND_COST;
		for (size_t i = 0; i < ps->p->n_events; i++) {
			if (ps->p->self_sum[i] > UINT64_MAX - ps->tmp_costs[i])
				return fail(ps, c->base, "sum of %s costs exceeds 64 bits",
					    ps->p->events[i]);
			ps->p->self_sum[i] += ps->tmp_costs[i];
		}
	}
	r.object = ps->ob;
	r.fn_file = ps->fl;
	r.file = ps->file;
	r.function = ps->fn;
	r.addr = addr;
	r.line = line;
	r.offset = c->base;
	return add_record(ps, &r);
}

/* ---- header ------------------------------------------------------------- */

static bool has_prefix(const struct cursor *c, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(c->end - c->s) >= n && !memcmp(c->s, prefix, n);
}

static char *rest_of_line(struct cursor *c)
{
	skip_spaces(c);
	return dup_range(c->s, (size_t)(c->end - c->s));
}

static int parse_events(struct parser *ps, struct cursor *c)
{
	struct callgrind_profile *p = ps->p;
	int err = 0;

	if (ps->body)
		return fail(ps, c->base, "second events: line (multi-part files are not supported)");
	if (c->base >= KCACHEGRIND_SNIFF_BYTES)
		return fail(ps, c->base,
			    "events: starts after byte %d: KCachegrind does not recognize the file",
			    KCACHEGRIND_SNIFF_BYTES);
	p->events = calloc(MAX_EVENTS, sizeof(*p->events));
	p->event_long = calloc(MAX_EVENTS, sizeof(*p->event_long));
	if (!p->events || !p->event_long)
		return -ENOMEM;
	skip_spaces(c);
	while (c->s < c->end) {
		const char *s = c->s;

		while (c->s < c->end && *c->s != ' ')
			c->s++;
		if (!is_name(s, (size_t)(c->s - s)))
			return fail(ps, c->base + (size_t)(s - c->line),
				    "event name is not a Name (letters and digits)");
		if (p->n_events == MAX_EVENTS)
			return fail(ps, c->base, "more than %d events", MAX_EVENTS);
		for (size_t i = 0; i < p->n_events; i++)
			if (strlen(p->events[i]) == (size_t)(c->s - s) &&
			    !memcmp(p->events[i], s, (size_t)(c->s - s)))
				return fail(ps, c->base + (size_t)(s - c->line),
					    "event %s listed twice", p->events[i]);
		p->events[p->n_events] = dup_range(s, (size_t)(c->s - s));
		if (!p->events[p->n_events])
			return -ENOMEM;
		p->n_events++;
		skip_spaces(c);
	}
	if (!p->n_events)
		return fail(ps, c->base, "events: lists no event");
	p->self_sum = calloc(p->n_events, sizeof(uint64_t));
	ps->tmp_costs = calloc(p->n_events, sizeof(uint64_t));
	if (!p->self_sum || !ps->tmp_costs)
		err = -ENOMEM;
	ps->body = true;
	return err;
}

/* event: Name [= formula] [: long name]; long names are kept for events
 * defined before events: (callgrind_annotate accepts them only there). */
struct pending_event {
	char *name, *long_name;
};

static int parse_event_spec(struct parser *ps, struct cursor *c, struct pending_event *pe,
			    size_t *n_pe)
{
	const char *s;
	size_t n;

	skip_spaces(c);
	s = c->s;
	while (c->s < c->end && isalnum((unsigned char)*c->s))
		c->s++;
	n = (size_t)(c->s - s);
	if (!is_name(s, n))
		return fail(ps, cur_off(c), "event: needs a Name (letters and digits)");
	skip_spaces(c);
	if (c->s < c->end && *c->s == '=') {
		while (c->s < c->end && *c->s != ':')
			c->s++;
	}
	if (c->s < c->end && *c->s != ':')
		return fail(ps, cur_off(c), "event: expects '=' or ':' after the name");
	if (*n_pe == MAX_EVENTS)
		return fail(ps, c->base, "more than %d event: lines", MAX_EVENTS);
	pe[*n_pe].name = dup_range(s, n);
	if (c->s < c->end)
		c->s++;
	pe[*n_pe].long_name = rest_of_line(c);
	if (!pe[*n_pe].name || !pe[*n_pe].long_name)
		return -ENOMEM;
	(*n_pe)++;
	return 0;
}

static int parse_desc(struct parser *ps, struct cursor *c)
{
	struct callgrind_profile *p = ps->p;
	struct callgrind_desc *nd;
	const char *s;
	size_t n;

	skip_spaces(c);
	s = c->s;
	/* The grammar says Name; Valgrind writes types with spaces ("I1
	 * cache"), which both real readers accept: allow them. */
	while (c->s < c->end && *c->s != ':')
		c->s++;
	n = (size_t)(c->s - s);
	while (n && s[n - 1] == ' ')
		n--;
	if (c->s == c->end || !n)
		return fail(ps, c->base, "desc: needs 'type: value'");
	c->s++;
	nd = realloc(p->desc, (p->n_desc + 1) * sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	p->desc = nd;
	nd[p->n_desc].type = dup_range(s, n);
	nd[p->n_desc].value = rest_of_line(c);
	p->n_desc++;
	if (!nd[p->n_desc - 1].type || !nd[p->n_desc - 1].value)
		return -ENOMEM;
	return 0;
}

static int parse_summary(struct parser *ps, struct cursor *c, uint64_t **dst, const char *what)
{
	int err;

	if (!ps->body)
		return fail(ps, c->base, "%s before events: (KCachegrind rejects the file)", what);
	if (*dst)
		return fail(ps, c->base, "second %s line", what);
	err = parse_costs(ps, c);
	if (err)
		return err;
	*dst = malloc(ps->p->n_events * sizeof(uint64_t));
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, ps->tmp_costs, ps->p->n_events * sizeof(uint64_t));
	return 0;
}

/* ---- main loop ---------------------------------------------------------- */

static int parse_lines(struct parser *ps)
{
	struct callgrind_profile *p = ps->p;
	struct pending_event pe[MAX_EVENTS];
	size_t n_pe = 0, pos = 0, lineno = 0;
	struct callgrind_record pending_call;
	bool call_pending = false, jump_pending = false, saw_body_line = false;
	size_t call_off = 0;
	int err = 0;

	memset(pe, 0, sizeof(pe));
	while (pos < ps->n) {
		const char *nl = memchr(ps->data + pos, '\n', ps->n - pos);
		struct cursor c;

		c.line = c.s = ps->data + pos;
		c.end = nl ? nl : ps->data + ps->n;
		c.base = pos;
		pos = (size_t)(c.end - ps->data) + (nl ? 1 : 0);
		lineno++;

		{
			const char *bad = memchr(c.s, '\t', (size_t)(c.end - c.s));

			if (bad) {
				err = fail(ps, c.base + (size_t)(bad - c.s),
					   "tab character (KCachegrind needs spaces)");
				goto out;
			}
			bad = memchr(c.s, '\0', (size_t)(c.end - c.s));
			if (bad) {
				err = fail(ps, c.base + (size_t)(bad - c.s), "NUL byte");
				goto out;
			}
		}
		if (c.end > c.s && c.end[-1] == '\r') {
			err = fail(ps, (size_t)(c.end - 1 - ps->data), "carriage return at line end");
			goto out;
		}
		if (lineno == 1 && has_prefix(&c, "# callgrind format")) {
			p->has_format_line = true;
			continue;
		}
		if (c.s == c.end || *c.s == '#')
			continue;

		if (call_pending || jump_pending) {
			if (!(isdigit((unsigned char)*c.s) || *c.s == '+' || *c.s == '-' ||
			      *c.s == '*')) {
				err = fail(ps, c.base, "%s is not followed by a cost line",
					   call_pending ? "calls=" : "jump=/jcnd=");
				goto out;
			}
			if (call_pending) {
				err = cost_line(ps, &c, &pending_call);
				call_pending = false;
			} else {
				uint64_t a, l;

				err = parse_positions(ps, &c, &a, &l);
				if (!err)
					err = parse_costs(ps, &c);
				ps->addr = a;
				ps->line = l;
				jump_pending = false;
			}
			if (err)
				goto out;
			continue;
		}

		if (!ps->body) {
			/* header */
			if (has_prefix(&c, "version:")) {
				uint64_t v;

				if (lineno != 1 + (p->has_format_line ? 1 : 0)) {
					err = fail(ps, c.base,
						   "version: must follow the format line directly");
					goto out;
				}
				c.s += 8;
				skip_spaces(&c);
				err = parse_number(ps, &c, &v);
				if (err)
					goto out;
				if (v >= 2) {
					err = fail(ps, c.base,
						   "version %llu: callgrind_annotate reads only version 1",
						   (unsigned long long)v);
					goto out;
				}
				p->version = (unsigned)v;
			} else if (has_prefix(&c, "creator:")) {
				c.s += 8;
				free(p->creator);
				p->creator = rest_of_line(&c);
				if (!p->creator)
					err = -ENOMEM;
			} else if (has_prefix(&c, "cmd:")) {
				c.s += 4;
				free(p->cmd);
				p->cmd = rest_of_line(&c);
				if (!p->cmd)
					err = -ENOMEM;
			} else if (has_prefix(&c, "pid:")) {
				c.s += 4;
				skip_spaces(&c);
				err = parse_number(ps, &c, &p->pid);
				p->has_pid = true;
			} else if (has_prefix(&c, "thread:") || has_prefix(&c, "part:")) {
				uint64_t v;

				c.s = memchr(c.s, ':', (size_t)(c.end - c.s)) + 1;
				skip_spaces(&c);
				err = parse_number(ps, &c, &v);
			} else if (has_prefix(&c, "desc:")) {
				c.s += 5;
				err = parse_desc(ps, &c);
			} else if (has_prefix(&c, "positions:")) {
				c.s += 10;
				p->pos_instr = p->pos_line = false;
				skip_spaces(&c);
				while (c.s < c.end) {
					if (has_prefix(&c, "instr") && !p->pos_line && !p->pos_instr) {
						p->pos_instr = true;
						c.s += 5;
					} else if (has_prefix(&c, "line") && !p->pos_line) {
						p->pos_line = true;
						c.s += 4;
					} else {
						err = fail(ps, cur_off(&c),
							   "positions: takes 'instr' then 'line'");
						goto out;
					}
					if (c.s < c.end && *c.s != ' ') {
						err = fail(ps, cur_off(&c), "bad positions: word");
						goto out;
					}
					skip_spaces(&c);
				}
			} else if (has_prefix(&c, "event:")) {
				c.s += 6;
				err = parse_event_spec(ps, &c, pe, &n_pe);
			} else if (has_prefix(&c, "events:")) {
				c.s += 7;
				err = parse_events(ps, &c);
			} else if (has_prefix(&c, "summary:")) {
				err = fail(ps, c.base,
					   "summary: before events: (KCachegrind rejects the file)");
			} else {
				err = fail(ps, c.base, "unknown header line (events: not seen yet)");
			}
			if (err)
				goto out;
			continue;
		}

		/* body */
		if (isdigit((unsigned char)*c.s) || *c.s == '+' || *c.s == '-' || *c.s == '*') {
			err = cost_line(ps, &c, NULL);
			saw_body_line = true;
		} else if (has_prefix(&c, "fn=")) {
			c.s += 3;
			/* KCachegrind and callgrind_annotate open the function in
			 * the file of the last fl= */
			ps->file = ps->fl;
			err = parse_name(ps, &c, NAME_FN, &ps->fn);
			saw_body_line = true;
		} else if (has_prefix(&c, "fl=")) {
			c.s += 3;
			err = parse_name(ps, &c, NAME_FL, &ps->fl);
			ps->file = ps->fl;
			saw_body_line = true;
		} else if (has_prefix(&c, "fi=") || has_prefix(&c, "fe=")) {
			c.s += 3;
			if (ps->fn == CALLGRIND_NO_NAME) {
				err = fail(ps, c.base, "fi=/fe= before any fn=");
				goto out;
			}
			err = parse_name(ps, &c, NAME_FL, &ps->file);
		} else if (has_prefix(&c, "ob=")) {
			c.s += 3;
			err = parse_name(ps, &c, NAME_OB, &ps->ob);
			ps->fn = CALLGRIND_NO_NAME; /* KCachegrind: a new object closes the function */
			saw_body_line = true;
		} else if (has_prefix(&c, "cob=")) {
			c.s += 4;
			err = parse_name(ps, &c, NAME_OB, &ps->cob);
		} else if (has_prefix(&c, "cfi=") || has_prefix(&c, "cfl=")) {
			c.s += 4;
			err = parse_name(ps, &c, NAME_FL, &ps->cfi);
		} else if (has_prefix(&c, "cfn=")) {
			c.s += 4;
			err = parse_name(ps, &c, NAME_FN, &ps->cfn);
		} else if (has_prefix(&c, "jfi=")) {
			uint32_t ignored;

			c.s += 4;
			err = parse_name(ps, &c, NAME_FL, &ignored);
		} else if (has_prefix(&c, "jfn=")) {
			uint32_t ignored;

			c.s += 4;
			err = parse_name(ps, &c, NAME_FN, &ignored);
		} else if (has_prefix(&c, "calls=")) {
			uint64_t ta, tl;

			c.s += 6;
			call_off = c.base;
			if (ps->cfn == CALLGRIND_NO_NAME) {
				err = fail(ps, c.base, "calls= without cfn=");
				goto out;
			}
			skip_spaces(&c);
			memset(&pending_call, 0, sizeof(pending_call));
			pending_call.kind = CALLGRIND_CALL;
			err = parse_number(ps, &c, &pending_call.calls);
			if (err)
				goto out;
			skip_spaces(&c);
			/* both real readers ignore the target: it does not move
			 * the current position */
			err = parse_positions(ps, &c, &ta, &tl);
			if (err)
				goto out;
			if (c.s != c.end) {
				err = fail(ps, cur_off(&c), "garbage after calls= target");
				goto out;
			}
			pending_call.target_addr = ta;
			pending_call.target_line = tl;
			/* cob=/cfi= apply to one call only; they default to the
			 * current object and file */
			pending_call.called_object = ps->cob != CALLGRIND_NO_NAME ? ps->cob : ps->ob;
			pending_call.called_file = ps->cfi != CALLGRIND_NO_NAME ? ps->cfi : ps->file;
			pending_call.called_function = ps->cfn;
			ps->cob = ps->cfi = CALLGRIND_NO_NAME;
			call_pending = true;
			saw_body_line = true;
		} else if (has_prefix(&c, "jump=") || has_prefix(&c, "jcnd=")) {
			bool cond = c.s[1] == 'c';
			uint64_t a, l, v;

			c.s += 5;
			skip_spaces(&c);
			if (cond) {
				/* the spec says "N N", Valgrind writes "N/N" */
				const char *slash = memchr(c.s, '/', (size_t)(c.end - c.s));
				const char *sp = memchr(c.s, ' ', (size_t)(c.end - c.s));

				if (slash && (!sp || slash < sp)) {
					struct cursor t = c;

					t.end = slash;
					err = parse_number(ps, &t, &v);
					c.s = slash + 1;
				} else {
					err = parse_number(ps, &c, &v);
					skip_spaces(&c);
				}
				if (err)
					goto out;
			}
			err = parse_number(ps, &c, &v);
			if (err)
				goto out;
			skip_spaces(&c);
			err = parse_positions(ps, &c, &a, &l);
			if (err)
				goto out;
			if (c.s != c.end) {
				err = fail(ps, cur_off(&c), "garbage after jump target");
				goto out;
			}
			p->n_jumps++;
			jump_pending = true;
		} else if (has_prefix(&c, "summary:")) {
			c.s += 8;
			if (saw_body_line) {
				err = fail(ps, c.base,
					   "summary: after body lines (the spec makes it a header line)");
				goto out;
			}
			err = parse_summary(ps, &c, &p->summary, "summary:");
		} else if (has_prefix(&c, "totals:")) {
			c.s += 7;
			ps->totals_off = c.base;
			err = parse_summary(ps, &c, &p->totals, "totals:");
		} else if (has_prefix(&c, "events:")) {
			err = fail(ps, c.base,
				   "second events: line (multi-part files are not supported)");
		} else {
			err = fail(ps, c.base, "unknown line in the body");
		}
		if (err)
			goto out;
	}
	if (call_pending) {
		err = fail(ps, call_off, "calls= at the end of the file without its cost line");
		goto out;
	}
	if (!ps->body) {
		err = fail(ps, ps->n, "no events: line");
		goto out;
	}
	if (ps->n && ps->data[ps->n - 1] != '\n') {
		err = fail(ps, ps->n, "the last line has no newline (a truncated file?)");
		goto out;
	}
	if (p->totals) {
		for (size_t i = 0; i < p->n_events; i++)
			if (p->totals[i] != p->self_sum[i]) {
				err = fail(ps, ps->totals_off,
					   "totals: %s is %llu but the cost lines sum to %llu",
					   p->events[i], (unsigned long long)p->totals[i],
					   (unsigned long long)p->self_sum[i]);
				goto out;
			}
	}
	if (p->summary && !p->totals) {
		/* Callgrind writes summary: equal to the cost lines' sum; less
		 * than it means the file was cut short. */
		for (size_t i = 0; i < p->n_events; i++)
			if (p->summary[i] != p->self_sum[i]) {
				err = fail(ps, ps->n,
					   "summary: %s is %llu but the cost lines sum to %llu "
					   "(a truncated file?)",
					   p->events[i], (unsigned long long)p->summary[i],
					   (unsigned long long)p->self_sum[i]);
				goto out;
			}
	}
	if (p->summary) {
		for (size_t i = 0; i < p->n_events; i++)
			if (p->summary[i] < p->self_sum[i]) {
				err = fail(ps, ps->n,
					   "summary: %s is %llu, less than the cost lines' sum %llu",
					   p->events[i], (unsigned long long)p->summary[i],
					   (unsigned long long)p->self_sum[i]);
				goto out;
			}
	}
	/* long names of the events */
	for (size_t j = 0; j < n_pe; j++)
		for (size_t i = 0; i < p->n_events; i++)
			if (!strcmp(pe[j].name, p->events[i]) && !p->event_long[i]) {
				p->event_long[i] = pe[j].long_name;
				pe[j].long_name = NULL;
			}
out:
	for (size_t j = 0; j < n_pe; j++) {
		free(pe[j].name);
		free(pe[j].long_name);
	}
	return err;
}

int callgrind_parse(const char *data, size_t n, struct callgrind_profile *p,
		    struct callgrind_error *err)
{
	struct parser ps;
	int ret;

	memset(p, 0, sizeof(*p));
	memset(err, 0, sizeof(*err));
	memset(&ps, 0, sizeof(ps));
	p->version = 1;
	p->pos_line = true; /* the default without positions: */
	ps.data = data;
	ps.n = n;
	ps.p = p;
	ps.err = err;
	ps.ob = ps.fl = ps.file = ps.fn = CALLGRIND_NO_NAME;
	ps.cob = ps.cfi = ps.cfn = CALLGRIND_NO_NAME;
	ret = parse_lines(&ps);
	if (ret == -ENOMEM) {
		err->offset = 0;
		snprintf(err->reason, sizeof(err->reason), "out of memory");
	}
	u64map_free(&ps.name_index);
	for (int i = 0; i < 3; i++)
		u64map_free(&ps.compressed[i]);
	free(ps.tmp_costs);
	if (ret)
		callgrind_profile_free(p);
	return ret;
}

int callgrind_read_file(const char *path, struct callgrind_profile *p,
			struct callgrind_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, ret;

	memset(p, 0, sizeof(*p));
	memset(err, 0, sizeof(*err));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err->reason, sizeof(err->reason), "cannot open: %s", strerror(errno));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		snprintf(err->reason, sizeof(err->reason), "cannot stat: %s", strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(err->reason, sizeof(err->reason), "not a regular file");
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(err->reason, sizeof(err->reason), "out of memory");
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			err->offset = got;
			snprintf(err->reason, sizeof(err->reason), "read error: %s",
				 strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	ret = callgrind_parse(buf, got, p, err);
out:
	free(buf);
	close(fd);
	return ret;
}

void callgrind_profile_free(struct callgrind_profile *p)
{
	for (size_t i = 0; i < p->n_events; i++) {
		free(p->events[i]);
		free(p->event_long[i]);
	}
	free(p->events);
	free(p->event_long);
	for (size_t i = 0; i < p->n_desc; i++) {
		free(p->desc[i].type);
		free(p->desc[i].value);
	}
	free(p->desc);
	for (size_t i = 0; i < p->n_names; i++)
		free(p->names[i]);
	free(p->names);
	free(p->records);
	free(p->costs);
	free(p->summary);
	free(p->totals);
	free(p->self_sum);
	free(p->creator);
	free(p->cmd);
	memset(p, 0, sizeof(*p));
}

/* ---- collector dump ------------------------------------------------------ */

bool callgrind_recognize(const char *path, const unsigned char *head, size_t n)
{
	static const char magic[] = "# callgrind format";
	size_t lim = n < KCACHEGRIND_SNIFF_BYTES ? n : KCACHEGRIND_SNIFF_BYTES;

	(void)path;
	if (n >= sizeof(magic) - 1 && !memcmp(head, magic, sizeof(magic) - 1))
		return true;
	/* Files without the format line (older Callgrind, Cachegrind): as
	 * KCachegrind, look for "events:" at a line start, and insist that
	 * the file is text. */
	for (size_t i = 0; i < lim; i++) {
		if (head[i] == 0)
			return false;
		if ((i == 0 || head[i - 1] == '\n') && lim - i >= 7 &&
		    !memcmp(head + i, "events:", 7))
			return true;
	}
	return false;
}

static void print_costs(FILE *out, const struct callgrind_profile *p, const uint64_t *c)
{
	for (size_t i = 0; i < p->n_events; i++)
		fprintf(out, " %s=%llu", p->events[i], (unsigned long long)c[i]);
}

int callgrind_dump(const char *path, FILE *out, bool check)
{
	struct callgrind_profile p;
	struct callgrind_error err;
	int ret;

	ret = callgrind_read_file(path, &p, &err);
	if (ret) {
		fprintf(stderr, "%s: offset %zu: %s\n", path, err.offset, err.reason);
		return ret;
	}
	if (check)
		goto done;
	fprintf(out, "format: callgrind, version %u%s\n", p.version,
		p.has_format_line ? "" : " (no '# callgrind format' line)");
	fprintf(out, "creator: %s\n", p.creator ? p.creator : "(none)");
	if (p.has_pid)
		fprintf(out, "pid: %llu\n", (unsigned long long)p.pid);
	fprintf(out, "cmd: %s\n", p.cmd ? p.cmd : "(none)");
	fprintf(out, "positions:%s%s\n", p.pos_instr ? " instr" : "", p.pos_line ? " line" : "");
	for (size_t i = 0; i < p.n_events; i++)
		fprintf(out, "event %zu: %s%s%s\n", i, p.events[i], p.event_long[i] ? " : " : "",
			p.event_long[i] ? p.event_long[i] : "");
	for (size_t i = 0; i < p.n_desc; i++)
		fprintf(out, "desc: %s: %s\n", p.desc[i].type, p.desc[i].value);
	if (p.summary) {
		fprintf(out, "summary:");
		print_costs(out, &p, p.summary);
		fputc('\n', out);
	}
	if (p.totals) {
		fprintf(out, "totals:");
		print_costs(out, &p, p.totals);
		fputc('\n', out);
	}
	fprintf(out, "records: %zu, jumps: %zu\n", p.n_records, p.n_jumps);
	for (size_t i = 0; i < p.n_records; i++) {
		const struct callgrind_record *r = &p.records[i];

		fprintf(out, "%s ob=%s fl=%s", r->kind == CALLGRIND_CALL ? "call" : "cost",
			callgrind_name(&p, r->object), callgrind_name(&p, r->fn_file));
		if (r->file != r->fn_file)
			fprintf(out, " fi=%s", callgrind_name(&p, r->file));
		fprintf(out, " fn=%s", callgrind_name(&p, r->function));
		if (p.pos_instr)
			fprintf(out, " instr=0x%llx", (unsigned long long)r->addr);
		if (p.pos_line)
			fprintf(out, " line=%llu", (unsigned long long)r->line);
		if (r->kind == CALLGRIND_CALL) {
			fprintf(out, " -> cob=%s cfi=%s cfn=%s calls=%llu",
				callgrind_name(&p, r->called_object),
				callgrind_name(&p, r->called_file),
				callgrind_name(&p, r->called_function),
				(unsigned long long)r->calls);
			if (p.pos_instr)
				fprintf(out, " target=0x%llx", (unsigned long long)r->target_addr);
			if (p.pos_line)
				fprintf(out, " target_line=%llu",
					(unsigned long long)r->target_line);
		}
		print_costs(out, &p, callgrind_record_costs(&p, r));
		fputc('\n', out);
	}
done:
	callgrind_profile_free(&p);
	if (ferror(out))
		return -EIO;
	return 0;
}
