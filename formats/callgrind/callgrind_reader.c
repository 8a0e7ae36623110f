// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind profile reader: the lines, one handler per kind, and the checks
 * of the whole file.
 *
 * Follows the format reference (callgrind-format.xml) and, where they are
 * stricter, the real readers: callgrind_annotate 3.19 and KCachegrind's
 * CachegrindLoader.  Every number is range-checked, every name reference
 * must have been defined, and nothing read from the file sizes an
 * allocation beyond what the file's length can justify.
 */
#include "formats/callgrind/callgrind_parser.h"
#include "formats/format.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* Adds the costs just read to the sum of all self costs. */
static int add_self_sum(struct parser *ps, const struct cursor *c)
{
	struct callgrind_profile *p = ps->p;

	for (size_t i = 0; i < p->n_events; i++) {
		if (p->self_sum[i] > UINT64_MAX - ps->tmp_costs[i])
			return cg_fail(ps, c->base, "sum of %s costs exceeds 64 bits",
				       p->events[i]);
		p->self_sum[i] += ps->tmp_costs[i];
	}
	return 0;
}

/* A cost line (self cost, or the cost line after calls= when call != NULL). */
static int cost_line(struct parser *ps, struct cursor *c, const struct callgrind_record *call)
{
	struct callgrind_record r;
	uint64_t addr, line;
	int err;

	if (ps->fn == CALLGRIND_NO_NAME)
		return cg_fail(ps, cur_off(c), "cost line before any fn=");
	err = cg_positions(ps, c, &addr, &line);
	if (err)
		return err;
	err = cg_costs(ps, c);
	if (err)
		return err;
	ps->addr = addr;
	ps->line = line;
	if (call) {
		r = *call;
	} else {
		memset(&r, 0, sizeof(r));
		r.kind = CALLGRIND_COST;
		err = add_self_sum(ps, c);
		if (err)
			return err;
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

/* ---- header lines ----------------------------------------------------------- */

static int parse_events(struct parser *ps, struct cursor *c)
{
	struct callgrind_profile *p = ps->p;
	int err = 0;

	if (ps->body)
		return cg_fail(ps, c->base,
			       "second events: line (multi-part files are not supported)");
	if (c->base >= KCACHEGRIND_SNIFF_BYTES)
		return cg_fail(ps, c->base,
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
		if (!cg_is_name(s, (size_t)(c->s - s)))
			return cg_fail(ps, c->base + (size_t)(s - c->line),
				       "event name is not a Name (letters and digits)");
		if (p->n_events == MAX_EVENTS)
			return cg_fail(ps, c->base, "more than %d events", MAX_EVENTS);
		for (size_t i = 0; i < p->n_events; i++)
			if (strlen(p->events[i]) == (size_t)(c->s - s) &&
			    !memcmp(p->events[i], s, (size_t)(c->s - s)))
				return cg_fail(ps, c->base + (size_t)(s - c->line),
					       "event %s listed twice", p->events[i]);
		p->events[p->n_events] = cg_dup_range(s, (size_t)(c->s - s));
		if (!p->events[p->n_events])
			return -ENOMEM;
		p->n_events++;
		skip_spaces(c);
	}
	if (!p->n_events)
		return cg_fail(ps, c->base, "events: lists no event");
	p->self_sum = calloc(p->n_events, sizeof(uint64_t));
	ps->tmp_costs = calloc(p->n_events, sizeof(uint64_t));
	if (!p->self_sum || !ps->tmp_costs)
		err = -ENOMEM;
	ps->body = true;
	return err;
}

static int parse_event_spec(struct parser *ps, struct cursor *c)
{
	struct pending_event *pe = &ps->pe[ps->n_pe];
	const char *s;
	size_t n;

	skip_spaces(c);
	s = c->s;
	while (c->s < c->end && isalnum((unsigned char)*c->s))
		c->s++;
	n = (size_t)(c->s - s);
	if (!cg_is_name(s, n))
		return cg_fail(ps, cur_off(c), "event: needs a Name (letters and digits)");
	skip_spaces(c);
	if (c->s < c->end && *c->s == '=') {
		while (c->s < c->end && *c->s != ':')
			c->s++;
	}
	if (c->s < c->end && *c->s != ':')
		return cg_fail(ps, cur_off(c), "event: expects '=' or ':' after the name");
	if (ps->n_pe == MAX_EVENTS)
		return cg_fail(ps, c->base, "more than %d event: lines", MAX_EVENTS);
	pe->name = cg_dup_range(s, n);
	if (c->s < c->end)
		c->s++;
	pe->long_name = cg_rest_of_line(c);
	if (!pe->name || !pe->long_name)
		return -ENOMEM;
	ps->n_pe++;
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
		return cg_fail(ps, c->base, "desc: needs 'type: value'");
	c->s++;
	nd = realloc(p->desc, (p->n_desc + 1) * sizeof(*nd));
	if (!nd)
		return -ENOMEM;
	p->desc = nd;
	nd[p->n_desc].type = cg_dup_range(s, n);
	nd[p->n_desc].value = cg_rest_of_line(c);
	p->n_desc++;
	if (!nd[p->n_desc - 1].type || !nd[p->n_desc - 1].value)
		return -ENOMEM;
	return 0;
}

static int parse_version(struct parser *ps, struct cursor *c)
{
	uint64_t v;
	int err;

	if (ps->lineno != 1 + (ps->p->has_format_line ? 1 : 0))
		return cg_fail(ps, c->base, "version: must follow the format line directly");
	skip_spaces(c);
	err = cg_number(ps, c, &v);
	if (err)
		return err;
	if (v >= 2)
		return cg_fail(ps, c->base, "version %llu: callgrind_annotate reads only version 1",
			       (unsigned long long)v);
	ps->p->version = (unsigned)v;
	return 0;
}

static int parse_text(char **dst, struct cursor *c)
{
	free(*dst);
	*dst = cg_rest_of_line(c);
	return *dst ? 0 : -ENOMEM;
}

static int parse_positions_spec(struct parser *ps, struct cursor *c)
{
	struct callgrind_profile *p = ps->p;

	p->pos_instr = p->pos_line = false;
	skip_spaces(c);
	while (c->s < c->end) {
		if (has_prefix(c, "instr") && !p->pos_line && !p->pos_instr) {
			p->pos_instr = true;
			c->s += 5;
		} else if (has_prefix(c, "line") && !p->pos_line) {
			p->pos_line = true;
			c->s += 4;
		} else {
			return cg_fail(ps, cur_off(c), "positions: takes 'instr' then 'line'");
		}
		if (c->s < c->end && *c->s != ' ')
			return cg_fail(ps, cur_off(c), "bad positions: word");
		skip_spaces(c);
	}
	return 0;
}

/* A line before events: (the header). */
static int header_line(struct parser *ps, struct cursor *c)
{
	struct callgrind_profile *p = ps->p;
	uint64_t v;

	if (has_prefix(c, "version:"))
		return c->s += 8, parse_version(ps, c);
	if (has_prefix(c, "creator:"))
		return c->s += 8, parse_text(&p->creator, c);
	if (has_prefix(c, "cmd:"))
		return c->s += 4, parse_text(&p->cmd, c);
	if (has_prefix(c, "pid:")) {
		c->s += 4;
		skip_spaces(c);
		p->has_pid = true;
		return cg_number(ps, c, &p->pid);
	}
	if (has_prefix(c, "thread:") || has_prefix(c, "part:")) {
		c->s = memchr(c->s, ':', (size_t)(c->end - c->s)) + 1;
		skip_spaces(c);
		return cg_number(ps, c, &v);
	}
	if (has_prefix(c, "desc:"))
		return c->s += 5, parse_desc(ps, c);
	if (has_prefix(c, "positions:"))
		return c->s += 10, parse_positions_spec(ps, c);
	if (has_prefix(c, "event:"))
		return c->s += 6, parse_event_spec(ps, c);
	if (has_prefix(c, "events:"))
		return c->s += 7, parse_events(ps, c);
	if (has_prefix(c, "summary:"))
		return cg_fail(ps, c->base, "summary: before events: (KCachegrind rejects the file)");
	return cg_fail(ps, c->base, "unknown header line (events: not seen yet)");
}

/* ---- body lines ------------------------------------------------------------- */

static int parse_summary(struct parser *ps, struct cursor *c, uint64_t **dst, const char *what)
{
	int err;

	if (!ps->body)
		return cg_fail(ps, c->base, "%s before events: (KCachegrind rejects the file)", what);
	if (*dst)
		return cg_fail(ps, c->base, "second %s line", what);
	err = cg_costs(ps, c);
	if (err)
		return err;
	*dst = malloc(ps->p->n_events * sizeof(uint64_t));
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, ps->tmp_costs, ps->p->n_events * sizeof(uint64_t));
	return 0;
}

/* calls=Number Target: waits for its cost line. */
static int parse_calls(struct parser *ps, struct cursor *c)
{
	struct callgrind_record *r = &ps->pending_call;
	uint64_t ta, tl;
	int err;

	ps->call_off = c->base;
	if (ps->cfn == CALLGRIND_NO_NAME)
		return cg_fail(ps, c->base, "calls= without cfn=");
	skip_spaces(c);
	memset(r, 0, sizeof(*r));
	r->kind = CALLGRIND_CALL;
	err = cg_number(ps, c, &r->calls);
	if (err)
		return err;
	skip_spaces(c);
	/* both real readers ignore the target: it does not move the current
	 * position */
	err = cg_positions(ps, c, &ta, &tl);
	if (err)
		return err;
	if (c->s != c->end)
		return cg_fail(ps, cur_off(c), "garbage after calls= target");
	r->target_addr = ta;
	r->target_line = tl;
	/* cob=/cfi= apply to one call only; they default to the current
	 * object and file */
	r->called_object = ps->cob != CALLGRIND_NO_NAME ? ps->cob : ps->ob;
	r->called_file = ps->cfi != CALLGRIND_NO_NAME ? ps->cfi : ps->file;
	r->called_function = ps->cfn;
	ps->cob = ps->cfi = CALLGRIND_NO_NAME;
	ps->call_pending = true;
	return 0;
}

/* jump=/jcnd=: validated, not kept; waits for its cost line. */
static int parse_jump(struct parser *ps, struct cursor *c)
{
	bool cond = c->s[1] == 'c';
	uint64_t a, l, v;
	int err = 0;

	c->s += 5;
	skip_spaces(c);
	if (cond) {
		/* the spec says "N N", Valgrind writes "N/N" */
		const char *slash = memchr(c->s, '/', (size_t)(c->end - c->s));
		const char *sp = memchr(c->s, ' ', (size_t)(c->end - c->s));

		if (slash && (!sp || slash < sp)) {
			struct cursor t = *c;

			t.end = slash;
			err = cg_number(ps, &t, &v);
			c->s = slash + 1;
		} else {
			err = cg_number(ps, c, &v);
			skip_spaces(c);
		}
		if (err)
			return err;
	}
	err = cg_number(ps, c, &v);
	if (err)
		return err;
	skip_spaces(c);
	err = cg_positions(ps, c, &a, &l);
	if (err)
		return err;
	if (c->s != c->end)
		return cg_fail(ps, cur_off(c), "garbage after jump target");
	ps->p->n_jumps++;
	ps->jump_pending = true;
	return 0;
}

/* The name lines of the body: the current object, file and function, and
 * those of the next call.  *handled is false for any other line. */
static int name_line(struct parser *ps, struct cursor *c, bool *handled)
{
	uint32_t ignored;
	int err;

	*handled = true;
	if (has_prefix(c, "fn=")) {
		c->s += 3;
		/* KCachegrind and callgrind_annotate open the function in the
		 * file of the last fl= */
		ps->file = ps->fl;
		ps->saw_body_line = true;
		return cg_name(ps, c, NAME_FN, &ps->fn);
	}
	if (has_prefix(c, "fl=")) {
		c->s += 3;
		err = cg_name(ps, c, NAME_FL, &ps->fl);
		ps->file = ps->fl;
		ps->saw_body_line = true;
		return err;
	}
	if (has_prefix(c, "fi=") || has_prefix(c, "fe=")) {
		c->s += 3;
		if (ps->fn == CALLGRIND_NO_NAME)
			return cg_fail(ps, c->base, "fi=/fe= before any fn=");
		return cg_name(ps, c, NAME_FL, &ps->file);
	}
	if (has_prefix(c, "ob=")) {
		c->s += 3;
		err = cg_name(ps, c, NAME_OB, &ps->ob);
		ps->fn = CALLGRIND_NO_NAME; /* KCachegrind: a new object closes the function */
		ps->saw_body_line = true;
		return err;
	}
	if (has_prefix(c, "cob="))
		return c->s += 4, cg_name(ps, c, NAME_OB, &ps->cob);
	if (has_prefix(c, "cfi=") || has_prefix(c, "cfl="))
		return c->s += 4, cg_name(ps, c, NAME_FL, &ps->cfi);
	if (has_prefix(c, "cfn="))
		return c->s += 4, cg_name(ps, c, NAME_FN, &ps->cfn);
	if (has_prefix(c, "jfi="))
		return c->s += 4, cg_name(ps, c, NAME_FL, &ignored);
	if (has_prefix(c, "jfn="))
		return c->s += 4, cg_name(ps, c, NAME_FN, &ignored);
	*handled = false;
	return 0;
}

static bool starts_cost_line(const struct cursor *c)
{
	return isdigit((unsigned char)*c->s) || *c->s == '+' || *c->s == '-' || *c->s == '*';
}

/* A line after events: (the body). */
static int body_line(struct parser *ps, struct cursor *c)
{
	bool handled;
	int err;

	if (starts_cost_line(c)) {
		ps->saw_body_line = true;
		return cost_line(ps, c, NULL);
	}
	err = name_line(ps, c, &handled);
	if (handled)
		return err;
	if (has_prefix(c, "calls=")) {
		ps->saw_body_line = true;
		return c->s += 6, parse_calls(ps, c);
	}
	if (has_prefix(c, "jump=") || has_prefix(c, "jcnd="))
		return parse_jump(ps, c);
	if (has_prefix(c, "summary:")) {
		if (ps->saw_body_line)
			return cg_fail(ps, c->base,
				       "summary: after body lines (the spec makes it a header line)");
		return c->s += 8, parse_summary(ps, c, &ps->p->summary, "summary:");
	}
	if (has_prefix(c, "totals:")) {
		ps->totals_off = c->base;
		return c->s += 7, parse_summary(ps, c, &ps->p->totals, "totals:");
	}
	if (has_prefix(c, "events:"))
		return cg_fail(ps, c->base, "second events: line (multi-part files are not supported)");
	return cg_fail(ps, c->base, "unknown line in the body");
}

/* The cost line a calls= or jump= waits for. */
static int pending_cost_line(struct parser *ps, struct cursor *c)
{
	uint64_t a, l;
	int err;

	if (!starts_cost_line(c))
		return cg_fail(ps, c->base, "%s is not followed by a cost line",
			       ps->call_pending ? "calls=" : "jump=/jcnd=");
	if (ps->call_pending) {
		ps->call_pending = false;
		return cost_line(ps, c, &ps->pending_call);
	}
	err = cg_positions(ps, c, &a, &l);
	if (!err)
		err = cg_costs(ps, c);
	ps->addr = a;
	ps->line = l;
	ps->jump_pending = false;
	return err;
}

/* ---- lines ------------------------------------------------------------------ */

/* The line at *pos into c; moves *pos past it.  Rejects what no real
 * reader takes: tabs, NUL bytes, carriage returns. */
static int next_line(struct parser *ps, size_t *pos, struct cursor *c)
{
	const char *nl = memchr(ps->data + *pos, '\n', ps->n - *pos), *bad;

	c->line = c->s = ps->data + *pos;
	c->end = nl ? nl : ps->data + ps->n;
	c->base = *pos;
	*pos = (size_t)(c->end - ps->data) + (nl ? 1 : 0);
	ps->lineno++;
	bad = memchr(c->s, '\t', (size_t)(c->end - c->s));
	if (bad)
		return cg_fail(ps, c->base + (size_t)(bad - c->s),
			       "tab character (KCachegrind needs spaces)");
	bad = memchr(c->s, '\0', (size_t)(c->end - c->s));
	if (bad)
		return cg_fail(ps, c->base + (size_t)(bad - c->s), "NUL byte");
	if (c->end > c->s && c->end[-1] == '\r')
		return cg_fail(ps, (size_t)(c->end - 1 - ps->data), "carriage return at line end");
	return 0;
}

static int parse_line(struct parser *ps, struct cursor *c)
{
	if (ps->lineno == 1 && has_prefix(c, "# callgrind format")) {
		ps->p->has_format_line = true;
		return 0;
	}
	if (c->s == c->end || *c->s == '#')
		return 0;
	if (ps->call_pending || ps->jump_pending)
		return pending_cost_line(ps, c);
	return ps->body ? body_line(ps, c) : header_line(ps, c);
}

/* Each event's costs summed over all cost lines must match totals: and
 * summary: (which Callgrind writes equal to the sum; less means the file
 * was cut short). */
static int check_sums(struct parser *ps)
{
	const struct callgrind_profile *p = ps->p;

	for (size_t i = 0; p->totals && i < p->n_events; i++)
		if (p->totals[i] != p->self_sum[i])
			return cg_fail(ps, ps->totals_off,
				       "totals: %s is %llu but the cost lines sum to %llu",
				       p->events[i], (unsigned long long)p->totals[i],
				       (unsigned long long)p->self_sum[i]);
	for (size_t i = 0; p->summary && !p->totals && i < p->n_events; i++)
		if (p->summary[i] != p->self_sum[i])
			return cg_fail(ps, ps->n,
				       "summary: %s is %llu but the cost lines sum to %llu "
				       "(a truncated file?)",
				       p->events[i], (unsigned long long)p->summary[i],
				       (unsigned long long)p->self_sum[i]);
	for (size_t i = 0; p->summary && i < p->n_events; i++)
		if (p->summary[i] < p->self_sum[i])
			return cg_fail(ps, ps->n,
				       "summary: %s is %llu, less than the cost lines' sum %llu",
				       p->events[i], (unsigned long long)p->summary[i],
				       (unsigned long long)p->self_sum[i]);
	return 0;
}

/* What can only be checked at the end of the file. */
static int finish(struct parser *ps)
{
	struct callgrind_profile *p = ps->p;
	int err;

	if (ps->call_pending)
		return cg_fail(ps, ps->call_off,
			       "calls= at the end of the file without its cost line");
	if (!ps->body)
		return cg_fail(ps, ps->n, "no events: line");
	if (ps->n && ps->data[ps->n - 1] != '\n')
		return cg_fail(ps, ps->n, "the last line has no newline (a truncated file?)");
	err = check_sums(ps);
	if (err)
		return err;
	/* long names of the events */
	for (size_t j = 0; j < ps->n_pe; j++)
		for (size_t i = 0; i < p->n_events; i++)
			if (!strcmp(ps->pe[j].name, p->events[i]) && !p->event_long[i]) {
				p->event_long[i] = ps->pe[j].long_name;
				ps->pe[j].long_name = NULL;
			}
	return 0;
}

static int parse_lines(struct parser *ps)
{
	size_t pos = 0;
	int err = 0;

	while (pos < ps->n && !err) {
		struct cursor c;

		err = next_line(ps, &pos, &c);
		if (!err)
			err = parse_line(ps, &c);
	}
	return err ? err : finish(ps);
}

int callgrind_parse(const char *data, size_t n, struct callgrind_profile *p,
		    struct format_error *err)
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
	for (size_t j = 0; j < ps.n_pe; j++) {
		free(ps.pe[j].name);
		free(ps.pe[j].long_name);
	}
	name_index_free(&ps.names);
	for (int i = 0; i < 3; i++)
		idmap_free(&ps.compressed[i]);
	free(ps.tmp_costs);
	if (ret)
		callgrind_profile_free(p);
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
static int parse_cb(const unsigned char *data, size_t n, void *p, struct format_error *err)
{
	return callgrind_parse((const char *)data, n, p, err);
}

int callgrind_read_file(const char *path, struct callgrind_profile *p,
			struct format_error *err)
{
	memset(p, 0, sizeof(*p));
	return format_parse_file(path, err, parse_cb, p);
}
