// SPDX-License-Identifier: GPL-2.0
/*
 * Reader of DCPI per-image profiles, binary version 0.07, exactly per the
 * grammar of dcpiformat(4).  Every length comes from the file and is checked
 * against the bytes that remain before it is used.
 */
#include "formats/dcpi/dcpi_reader.h"
#include "formats/format.h"
#include "lib/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static bool all_hex(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}

/* Decimal digits to u64; false on overflow. */
static bool parse_dec(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	for (; *s; s++) {
		unsigned d = *s - '0';

		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static bool parse_hex(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	for (; *s; s++) {
		unsigned d = *s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10;

		if (x >> 60)
			return false;
		x = x << 4 | d;
	}
	*v = x;
	return true;
}

/* Two decimal digits at s as a number. */
static unsigned two(const char *s)
{
	return (s[0] - '0') * 10 + (s[1] - '0');
}

/* <time>: YYMMDDHHMM, or YYYYMMDDHHMMSS; fields must be a real UTC time. */
static bool valid_epoch(const char *s)
{
	size_t n = strlen(s);
	const char *md;

	if (!all_digits(s) || (n != 10 && n != 14))
		return false;
	md = s + (n == 10 ? 2 : 4);
	if (two(md) < 1 || two(md) > 12 || two(md + 2) < 1 || two(md + 2) > 31 ||
	    two(md + 4) > 23 || two(md + 6) > 59)
		return false;
	return n == 10 || two(md + 8) <= 60; /* a leap second is a real time */
}

enum key_kind {
	KEY_REQUIRED = 1,  /* exactly once */
	KEY_ONCE = 2,      /* at most once: collector interprets it */
};

enum value_kind {
	VAL_REST,          /* <rest_of_line> */
	VAL_DEC,           /* <digit>+ */
	VAL_HEX,           /* <hex_digit>+ */
	VAL_TIME,          /* <time> */
	VAL_ADDR,          /* hex, optionally 0x-prefixed, at most 64 bits */
	VAL_VERSION,       /* a binary layout this reader knows */
};

static const struct known_key {
	const char *name;
	enum key_kind kind;
	enum value_kind value;
} known_keys[] = {
	{ "image", KEY_REQUIRED, VAL_HEX },
	{ "epoch", KEY_REQUIRED, VAL_TIME },
	{ "platform", KEY_REQUIRED, VAL_REST },
	{ "event", KEY_REQUIRED, VAL_REST },
	{ "period", KEY_REQUIRED, VAL_DEC },
	{ "tsize", KEY_REQUIRED, VAL_DEC },
	{ "cpuspeed", KEY_REQUIRED, VAL_DEC },
	{ "cpuamask", 0, VAL_HEX },
	{ "cpuimplv", 0, VAL_DEC },
	{ "cpucount", KEY_ONCE, VAL_DEC },
	{ "path", KEY_ONCE, VAL_REST },
	/* not in the grammar's list, but they decide how the binary part reads */
	{ "tstart", KEY_ONCE, VAL_ADDR },
	{ "version", KEY_ONCE, VAL_VERSION },
	/* collector's own: counts clamped to UINT32_MAX, samples left out */
	{ "clamped", KEY_ONCE, VAL_DEC },
	{ "outside", KEY_ONCE, VAL_DEC },
};
#define N_KNOWN (sizeof(known_keys) / sizeof(known_keys[0]))

void dcpi_profile_free(struct dcpi_profile *p)
{
	for (size_t i = 0; i < p->n_lines; i++) {
		free(p->lines[i].key);
		free(p->lines[i].value);
	}
	free(p->lines);
	free(p->chunks);
	free(p->counts);
	memset(p, 0, sizeof(*p));
}

static char *dup_range(const unsigned char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static int check_value(const struct known_key *k, const char *v, uint64_t *num)
{
	*num = 0;
	switch (k->value) {
	case VAL_REST:
		return 0;
	case VAL_DEC:
		if (!all_digits(v))
			return -1;
		return parse_dec(v, num) ? 0 : -2;
	case VAL_HEX:
		return all_hex(v) ? 0 : -1;
	case VAL_TIME:
		return valid_epoch(v) ? 0 : -1;
	case VAL_ADDR:
		if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
			v += 2;
		if (!all_hex(v))
			return -1;
		return parse_hex(v, num) ? 0 : -2;
	case VAL_VERSION:
		/* 0.06 and 0.07 share the binary layout documented in the spec */
		return strcmp(v, "0.07") == 0 || strcmp(v, "0.06") == 0 ? 0 : -3;
	}
	return -1;
}

static void set_field(struct dcpi_profile *p, const char *key, const char *v, uint64_t num)
{
	if (!strcmp(key, "image"))
		p->image = v;
	else if (!strcmp(key, "epoch"))
		p->epoch = v;
	else if (!strcmp(key, "platform"))
		p->platform = v;
	else if (!strcmp(key, "event"))
		p->event = v;
	else if (!strcmp(key, "path"))
		p->path = v;
	else if (!strcmp(key, "version"))
		p->version = v;
	else if (!strcmp(key, "period"))
		p->period = num;
	else if (!strcmp(key, "tsize"))
		p->tsize = num;
	else if (!strcmp(key, "cpuspeed"))
		p->cpuspeed = num;
	else if (!strcmp(key, "cpucount"))
		p->cpucount = num;
	else if (!strcmp(key, "clamped"))
		p->clamped = num;
	else if (!strcmp(key, "tstart")) {
		p->tstart = num;
		p->has_tstart = true;
	}
}

/* Keeps the line key (line[0..w)) value (line[v..n)) at file offset pos. */
static int add_line(struct dcpi_profile *p, size_t *cap, const unsigned char *line, size_t w,
		    size_t v, size_t n, size_t pos)
{
	struct dcpi_line *l;

	if (p->n_lines == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct dcpi_line *nl = realloc(p->lines, ncap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		p->lines = nl;
		*cap = ncap;
	}
	l = &p->lines[p->n_lines];
	l->key = dup_range(line, w);
	l->value = dup_range(line + v, n - v);
	l->offset = pos;
	if (!l->key || !l->value) {
		free(l->key);
		free(l->value);
		return -ENOMEM;
	}
	p->n_lines++;
	return 0;
}

/* The checks of a known keyword's line (l, at pos, its value at pos + v):
 * how often it may appear, what its value must be. */
static int check_known_line(struct dcpi_profile *p, size_t *seen, const struct dcpi_line *l,
			    size_t pos, size_t v, struct format_error *err)
{
	const struct known_key *k = NULL;
	uint64_t num;
	int rc;

	for (size_t i = 0; i < N_KNOWN; i++)
		if (!strcmp(known_keys[i].name, l->key))
			k = &known_keys[i];
	if (!k)
		return 0;
	if (seen[k - known_keys]++ && k->kind)
		return format_fail(err, pos, "header line '%s' appears more than once", k->name);
	rc = check_value(k, l->value, &num);
	if (rc == -1)
		return format_fail(err, pos + v, "malformed value of header line '%s'", k->name);
	if (rc == -2)
		return format_fail(err, pos + v, "value of header line '%s' too large", k->name);
	if (rc == -3)
		return format_fail(err, pos + v, "unsupported binary version '%s'", l->value);
	set_field(p, l->key, l->value, num);
	return 0;
}

/* <terminator>: "samples" <space>* (the newline excluded from n). */
static bool is_terminator(const unsigned char *line, size_t n)
{
	size_t i = 7;

	if (n < 7 || memcmp(line, "samples", 7))
		return false;
	while (i < n && is_blank(line[i]))
		i++;
	return i == n;
}

static int parse_header(const unsigned char *buf, size_t len, struct dcpi_profile *p,
			struct format_error *err)
{
	size_t seen[N_KNOWN] = { 0 }, cap = 0, pos = 0;
	int rc;

	for (;;) {
		const unsigned char *line = buf + pos, *nl, *nul;
		size_t n, w, v;

		nl = memchr(line, '\n', len - pos);
		if (!nl)
			return format_fail(err, pos, "header line without newline: no 'samples' terminator");
		n = nl - line;
		nul = memchr(line, '\0', n);
		if (nul)
			return format_fail(err, nul - buf, "NUL byte in the header");
		if (is_terminator(line, n)) {
			p->header_len = pos + n + 1;
			break;
		}
		for (w = 0; w < n && !is_blank(line[w]); w++)
			;
		if (w == 0)
			return format_fail(err, pos, "header line does not start with a keyword");
		for (v = w; v < n && is_blank(line[v]); v++)
			;
		if (v == w)
			return format_fail(err, pos + w, "header keyword without blank and value");
		if (v == n)
			return format_fail(err, pos + v, "header keyword without value");
		rc = add_line(p, &cap, line, w, v, n, pos);
		if (!rc)
			rc = check_known_line(p, seen, &p->lines[p->n_lines - 1], pos, v, err);
		if (rc)
			return rc;
		pos += n + 1;
	}
	for (size_t i = 0; i < N_KNOWN; i++)
		if (known_keys[i].kind == KEY_REQUIRED && !seen[i])
			return format_fail(err, p->header_len - 1, "missing required header line '%s'",
					   known_keys[i].name);
	return 0;
}

static int parse_samples(const unsigned char *buf, size_t len, struct dcpi_profile *p,
			 struct format_error *err)
{
	size_t pos = p->header_len, end, cap_chunks = 0, cap_counts = 0;
	uint64_t next_free = 0, nonzero = 0, sum = 0;

	if (len - pos < 8)
		return format_fail(err, pos, "%zu bytes after the header: no room for the 8-byte footer",
				   len - pos);
	end = len - 8;
	while (pos < end) {
		struct dcpi_chunk *c;
		uint32_t off, num;

		if (end - pos < 8)
			return format_fail(err, pos, "truncated chunk: %zu bytes before the footer",
					   end - pos);
		off = le32_get(buf + pos);
		num = le32_get(buf + pos + 4);
		if (num == 0)
			return format_fail(err, pos + 4, "chunk with no addresses");
		if (num > (end - pos - 8) / 4)
			return format_fail(err, pos + 4, "chunk of %" PRIu32
					   " addresses runs past the footer", num);
		if (p->n_chunks && off < next_free)
			return format_fail(err, pos, "chunk offset 0x%" PRIx32
					   " not after the previous chunk (which ends at 0x%" PRIx64 ")",
					   off, next_free);
		if (p->n_chunks == cap_chunks) {
			size_t ncap = cap_chunks ? cap_chunks * 2 : 64;
			struct dcpi_chunk *nc = realloc(p->chunks, ncap * sizeof(*nc));

			if (!nc)
				return -ENOMEM;
			p->chunks = nc;
			cap_chunks = ncap;
		}
		if (p->n_counts + num > cap_counts) {
			size_t ncap = cap_counts ? cap_counts : 256;
			uint32_t *nc;

			while (ncap < p->n_counts + num)
				ncap *= 2;
			nc = realloc(p->counts, ncap * sizeof(*nc));
			if (!nc)
				return -ENOMEM;
			p->counts = nc;
			cap_counts = ncap;
		}
		c = &p->chunks[p->n_chunks++];
		c->offset = off;
		c->number = num;
		c->first = p->n_counts;
		c->file_offset = pos;
		pos += 8;
		for (uint32_t i = 0; i < num; i++, pos += 4) {
			uint32_t v = le32_get(buf + pos);

			p->counts[p->n_counts++] = v;
			nonzero += v != 0;
			sum += v;
		}
		next_free = (uint64_t)off + num;
	}
	p->total_offsets = le32_get(buf + end);
	p->total_samples = le32_get(buf + end + 4);
	if (p->total_offsets != (nonzero > UINT32_MAX ? UINT32_MAX : nonzero))
		return format_fail(err, end, "footer says %" PRIu32 " sampled addresses, chunks hold %"
				   PRIu64, p->total_offsets, nonzero);
	if (sum > UINT32_MAX) {
		/* the writer clamps a total that does not fit and says so */
		if (p->total_samples != UINT32_MAX || !p->clamped)
			return format_fail(err, end + 4, "footer total %" PRIu32 " but chunks hold %"
					   PRIu64 " samples and no 'clamped' line", p->total_samples, sum);
	} else if (p->total_samples != sum) {
		return format_fail(err, end + 4, "footer says %" PRIu32 " samples, chunks hold %" PRIu64,
				   p->total_samples, sum);
	}
	return 0;
}

int dcpi_parse(const unsigned char *buf, size_t len, struct dcpi_profile *p,
	       struct format_error *err)
{
	int rc;

	memset(p, 0, sizeof(*p));
	memset(err, 0, sizeof(*err));
	rc = parse_header(buf, len, p, err);
	if (!rc)
		rc = parse_samples(buf, len, p, err);
	if (rc) {
		if (rc == -ENOMEM)
			format_fail(err, 0, "out of memory");
		dcpi_profile_free(p);
	}
	return rc;
}

static int parse_cb(const unsigned char *data, size_t n, void *p, struct format_error *err)
{
	return dcpi_parse(data, n, p, err);
}

int dcpi_read_file(const char *path, struct dcpi_profile *p, struct format_error *err)
{
	memset(p, 0, sizeof(*p));
	return format_parse_file(path, err, parse_cb, p);
}

void dcpi_print(const struct dcpi_profile *p, FILE *out)
{
	for (size_t i = 0; i < p->n_lines; i++)
		fprintf(out, "%s %s\n", p->lines[i].key, p->lines[i].value);
	fprintf(out, "samples\n");
	for (size_t c = 0; c < p->n_chunks; c++) {
		const struct dcpi_chunk *ch = &p->chunks[c];

		fprintf(out, "chunk offset 0x%" PRIx32 " number %" PRIu32 "\n", ch->offset,
			ch->number);
		for (uint32_t i = 0; i < ch->number; i++)
			fprintf(out, "  0x%" PRIx64 " %" PRIu32 "\n",
				p->tstart + ch->offset + (uint64_t)i, p->counts[ch->first + i]);
	}
	fprintf(out, "total_offsets %" PRIu32 "\n", p->total_offsets);
	fprintf(out, "total_samples %" PRIu32 "\n", p->total_samples);
}
