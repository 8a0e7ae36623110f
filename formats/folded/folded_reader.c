// SPDX-License-Identifier: GPL-2.0
/* Reader of folded stacks (folded_reader.h). */
#include "formats/folded/folded_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/infile.h"

/* Checks line[0..len) (no newline): fills the count and the stack's length
 * (up to the last space) and its frame count, or says what is wrong. */
static const char *check_line(const char *line, size_t len, uint64_t *count, size_t *stack_len,
			      uint32_t *n_frames, size_t *bad_at)
{
	size_t sp = len, i;
	uint64_t v = 0;

	*bad_at = 0;
	if (len && line[len - 1] == '\r')
		len--;
	while (sp > 0 && line[sp - 1] != ' ')
		sp--;
	if (!len)
		return "empty line";
	if (!sp)
		return "no count: a line ends with a space and the sample count";
	if (sp == len) {
		*bad_at = len;
		return "no count after the last space";
	}
	for (i = sp; i < len; i++) {
		if (line[i] < '0' || line[i] > '9') {
			*bad_at = i;
			return "the count is not a decimal number";
		}
		if (v > (INT64_MAX - (uint64_t)(line[i] - '0')) / 10) {
			*bad_at = sp;
			return "the count does not fit 63 bits";
		}
		v = v * 10 + (uint64_t)(line[i] - '0');
	}
	*n_frames = 1;
	for (i = 0; i + 1 < sp; i++) {
		if (line[i] == '\0') {
			*bad_at = i;
			return "NUL byte in a frame";
		}
		if (line[i] == ';' && (i == 0 || line[i - 1] == ';')) {
			*bad_at = i;
			return "empty frame";
		}
		*n_frames += line[i] == ';';
	}
	if (sp == 1 || line[sp - 2] == ';') {
		*bad_at = sp - 1;
		return "empty frame";
	}
	*count = v;
	*stack_len = sp - 1;
	return NULL;
}

bool folded_first_line_ok(const char *data, size_t n)
{
	const char *nl = memchr(data, '\n', n);
	uint64_t count;
	size_t stack_len, bad_at;
	uint32_t frames;

	return nl && !check_line(data, (size_t)(nl - data), &count, &stack_len, &frames, &bad_at) &&
	       frames >= 2;
}

int folded_parse(const char *data, size_t n, struct folded_profile *p, struct format_error *err)
{
	size_t pos = 0, cap = 0;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (n && data[n - 1] != '\n')
		return format_fail(err, n, "the file does not end with a newline (cut short?)");
	p->text = malloc(n + 1);
	if (!p->text)
		return -ENOMEM;
	memcpy(p->text, data, n);
	p->text[n] = '\0';
	while (pos < n) {
		const char *nl = memchr(p->text + pos, '\n', n - pos);
		size_t len = (size_t)(nl - (p->text + pos)), stack_len, bad_at;
		struct folded_line *l;
		const char *why;
		uint64_t count;
		uint32_t frames;

		why = check_line(p->text + pos, len, &count, &stack_len, &frames, &bad_at);
		if (why) {
			rc = format_fail(err, pos + bad_at, "%s", why);
			break;
		}
		if (p->total + count < p->total || p->total + count > INT64_MAX) {
			rc = format_fail(err, pos, "the counts add up to more than 63 bits");
			break;
		}
		if (p->n_lines == cap) {
			struct folded_line *nl2;

			cap = cap ? cap * 2 : 256;
			nl2 = realloc(p->lines, cap * sizeof(*nl2));
			if (!nl2) {
				rc = -ENOMEM;
				break;
			}
			p->lines = nl2;
		}
		l = &p->lines[p->n_lines++];
		p->text[pos + stack_len] = '\0';
		l->stack = p->text + pos;
		l->n_frames = frames;
		l->count = count;
		l->offset = pos;
		p->total += count;
		if (frames > p->max_frames)
			p->max_frames = frames;
		pos += len + 1;
	}
	if (rc)
		folded_profile_free(p);
	return rc;
}

static int parse_cb(const unsigned char *data, size_t n, void *obj, struct format_error *err)
{
	return folded_parse((const char *)data, n, obj, err);
}

int folded_read_file(const char *path, struct folded_profile *p, struct format_error *err)
{
	return format_parse_file(path, err, parse_cb, p);
}

void folded_profile_free(struct folded_profile *p)
{
	free(p->text);
	free(p->lines);
	memset(p, 0, sizeof(*p));
}

static int cmp_root(const void *a, const void *b)
{
	const struct folded_line *x = *(struct folded_line *const *)a;
	const struct folded_line *y = *(struct folded_line *const *)b;
	size_t lx = strcspn(x->stack, ";"), ly = strcspn(y->stack, ";");
	int c = strncmp(x->stack, y->stack, lx < ly ? lx : ly);

	return c ? c : (lx > ly) - (lx < ly);
}

void folded_print(const struct folded_profile *p, FILE *out)
{
	struct folded_line **by_root = malloc((p->n_lines + 1) * sizeof(*by_root));

	fprintf(out, "stacks %zu\nsamples %llu\nmax_frames %u\n", p->n_lines,
		(unsigned long long)p->total, p->max_frames);
	if (by_root) {
		/* the samples of each root frame (the process name) */
		for (size_t i = 0; i < p->n_lines; i++)
			by_root[i] = &p->lines[i];
		qsort(by_root, p->n_lines, sizeof(*by_root), cmp_root);
		for (size_t i = 0; i < p->n_lines;) {
			size_t j = i, len = strcspn(by_root[i]->stack, ";");
			uint64_t sum = 0;

			for (; j < p->n_lines && !cmp_root(&by_root[i], &by_root[j]); j++)
				sum += by_root[j]->count;
			fprintf(out, "root %.*s samples %llu stacks %zu\n", (int)len, by_root[i]->stack,
				(unsigned long long)sum, j - i);
			i = j;
		}
		free(by_root);
	}
	for (size_t i = 0; i < p->n_lines; i++)
		fprintf(out, "%10llu  %s\n", (unsigned long long)p->lines[i].count,
			p->lines[i].stack);
}
