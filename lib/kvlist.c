// SPDX-License-Identifier: GPL-2.0
/* key=value lists of the OpenTelemetry environment variables (kvlist.h). */
#include "lib/kvlist.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* s[0..n) without the spaces around it, percent-decoded (decode) into a
 * new string; NULL with *bad set on a bad escape or a control character
 * (a decoded CR or LF would end an HTTP header line and start another),
 * or on ENOMEM. */
static char *take(const char *s, size_t n, bool decode, bool *bad)
{
	char *out, *o;

	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	out = o = malloc(n + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int ch = (unsigned char)s[i];

		if (decode && ch == '%') {
			int hi = i + 1 < n ? hex_digit(s[i + 1]) : -1;
			int lo = i + 2 < n ? hex_digit(s[i + 2]) : -1;

			if (hi < 0 || lo < 0)
				goto bad;
			ch = hi << 4 | lo;
			i += 2;
		}
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f)
			goto bad;
		*o++ = (char)ch;
	}
	*o = 0;
	return out;
bad:
	*bad = true;
	free(out);
	return NULL;
}

int kvlist_parse(const char *text, struct kv **list, size_t *n, char *err, size_t err_size)
{
	struct kv *l = NULL;
	size_t count = 0, entry = 0;
	const char *p = text ? text : "";

	*list = NULL;
	*n = 0;
	while (*p) {
		size_t len = strcspn(p, ","), klen;
		const char *eq = memchr(p, '=', len);
		bool bad = false, blank = true;
		struct kv kv, *nl;

		entry++;
		for (size_t i = 0; i < len; i++)
			blank = blank && isspace((unsigned char)p[i]);
		if (blank) { /* "a=1,,b=2" or a trailing comma */
			p += len + (p[len] == ',');
			continue;
		}
		klen = eq ? (size_t)(eq - p) : 0;
		kv.key = eq ? take(p, klen, false, &bad) : NULL;
		if (kv.key && !kv.key[0]) {
			free(kv.key);
			kv.key = NULL;
		}
		if (!kv.key) {
			snprintf(err, err_size, "entry %zu has %s: write key=value pairs separated "
				 "by commas", entry, eq ? "no key" : "no '='");
			goto invalid;
		}
		kv.value = take(eq + 1, len - klen - 1, true, &bad);
		if (!kv.value) {
			if (bad)
				snprintf(err, err_size, "entry %zu (key '%s'): a bad %%-escape or a "
					 "control character in the value; percent-encode it (%%XX, "
					 "two hex digits)", entry, kv.key);
			free(kv.key);
			if (bad)
				goto invalid;
			kvlist_free(l, count);
			return -ENOMEM;
		}
		nl = realloc(l, (count + 1) * sizeof(*nl));
		if (!nl) {
			free(kv.key);
			free(kv.value);
			kvlist_free(l, count);
			return -ENOMEM;
		}
		l = nl;
		l[count++] = kv;
		p += len + (p[len] == ',');
	}
	*list = l;
	*n = count;
	return 0;
invalid:
	kvlist_free(l, count);
	return -EINVAL;
}

void kvlist_free(struct kv *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(list[i].key);
		free(list[i].value);
	}
	free(list);
}

const char *kvlist_get(const struct kv *list, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i].key, key))
			return list[i].value;
	return NULL;
}
