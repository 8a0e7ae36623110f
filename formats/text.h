/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Text the writers share: UTF-8 checks (protobuf and JSON strings are
 * UTF-8; paths and symbols need not be), and JSON written by hand for the
 * files too big to build as a json-c tree first (speedscope: a stack per
 * sample; the flame graph's data): strings escaped as RFC 8259 wants (and '<' as \u003c, so
 * that the text can stand inside an HTML <script> element), and unsigned
 * integers without printf's cost (a speedscope file is mostly numbers).
 */
#ifndef COLLECTOR_FORMATS_TEXT_H
#define COLLECTOR_FORMATS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length of the valid UTF-8 sequence at s[0..n) (n >= 1), or 0: no
 * overlong forms, surrogates or code points past U+10FFFF. */
size_t utf8_seq_len(const unsigned char *s, size_t n);
bool utf8_valid(const char *s, size_t n);
/* Replaces every byte that is not part of valid UTF-8 by '?'. */
void utf8_sanitize(char *s);

/* "s", quoted and escaped; bytes that are not valid UTF-8 become U+FFFD. */
void json_put_string(FILE *fp, const char *s);
void json_put_uint(FILE *fp, uint64_t v);

#endif /* COLLECTOR_FORMATS_TEXT_H */
