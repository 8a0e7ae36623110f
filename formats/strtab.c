// SPDX-License-Identifier: GPL-2.0
/* A protobuf string table (strtab.h). */
#include "formats/strtab.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/text.h"

int strtab_init(struct strtab *t, const struct model *m)
{
	memset(t, 0, sizeof(*t));
	return frame_table_init(&t->names, m);
}

void strtab_free(struct strtab *t)
{
	frame_table_free(&t->names);
	for (size_t i = 0; i < t->n_owned; i++)
		free(t->owned[i]);
	free(t->owned);
	memset(t, 0, sizeof(*t));
}

char *strtab_own(struct strtab *t, char *s)
{
	char **o;

	if (!s) {
		t->err = -ENOMEM;
		return NULL;
	}
	o = realloc(t->owned, (t->n_owned + 1) * sizeof(*o));
	if (!o) {
		free(s);
		t->err = -ENOMEM;
		return NULL;
	}
	t->owned = o;
	t->owned[t->n_owned++] = s;
	return s;
}

int64_t strtab_id(struct strtab *t, const char *s)
{
	long id;

	if (!s || !*s)
		return 0;
	if (!utf8_valid(s, strlen(s))) {
		char *copy = strtab_own(t, strdup(s));

		if (!copy)
			return 0;
		utf8_sanitize(copy);
		s = copy;
	}
	id = frame_table_name(&t->names, s, 0);
	if (id < 0) {
		t->err = (int)id;
		return 0;
	}
	return id + 1;
}

int64_t strtab_printf(struct strtab *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		s = NULL;
	return strtab_own(t, s) ? strtab_id(t, s) : 0;
}

char **strtab_array(const struct strtab *t)
{
	char **a = malloc(strtab_count(t) * sizeof(*a));

	if (!a)
		return NULL;
	a[0] = "";
	for (size_t i = 0; i < t->names.names.len; i++)
		a[i + 1] = (char *)t->names.names.items[i].text;
	return a;
}
