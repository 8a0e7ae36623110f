// SPDX-License-Identifier: GPL-2.0
/* UTF-8 and JSON text (text.h). */
#include "formats/text.h"

#include <stdbool.h>
#include <string.h>

size_t utf8_seq_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq_len(u + i, n - i);

		if (!k)
			return false;
		i += k;
	}
	return true;
}

void utf8_sanitize(char *s)
{
	unsigned char *u = (unsigned char *)s;
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq_len(u + i, n - i);

		if (!k) {
			u[i++] = '?';
			continue;
		}
		i += k;
	}
}

/* The writers own their FILE (one thread each): its lock is not taken per
 * character.  Measured: a million samples in speedscope (44 MB of numbers)
 * spent a fifth of their writing in the lock (0.41 s, now 0.32 s:
 * build/bench/exporters-bench speedscope 1000000). */
void json_put_string(FILE *fp, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	fputc_unlocked('"', fp);
	while (*s) {
		unsigned char c = *s;
		size_t n;

		if (c == '"' || c == '\\') {
			fputc_unlocked('\\', fp);
			fputc_unlocked(c, fp);
		} else if (c == '\n') {
			fputs_unlocked("\\n", fp);
		} else if (c < 0x20 || c == '<' || c == 0x7f) {
			fprintf(fp, "\\u%04x", c);
		} else if (c < 0x80) {
			fputc_unlocked(c, fp);
		} else if ((n = utf8_seq_len(s, strnlen((const char *)s, 4))) > 1) {
			fwrite_unlocked(s, 1, n, fp);
			s += n;
			continue;
		} else {
			fputs_unlocked("\\ufffd", fp);
		}
		s++;
	}
	fputc_unlocked('"', fp);
}

void json_put_uint(FILE *fp, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, (size_t)(buf + sizeof(buf) - p), fp);
}
