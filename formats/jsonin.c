// SPDX-License-Identifier: GPL-2.0
/* Parsing a whole JSON text with json-c (jsonin.h). */
#include "formats/jsonin.h"

#include <errno.h>
#include <json-c/json.h>

#define JSON_PIECE (1 << 30)

int json_parse_strict(const char *data, size_t n, struct json_object **root,
		      struct format_error *err)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	enum json_tokener_error jerr = json_tokener_continue;
	json_object *obj = NULL;
	size_t pos = 0;

	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	do {
		int piece = (int)(n - pos > JSON_PIECE ? JSON_PIECE : n - pos);

		obj = json_tokener_parse_ex(tok, data + pos, piece);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_continue)
			pos += json_tokener_get_parse_end(tok);
		else
			pos += (size_t)piece;
	} while (jerr == json_tokener_continue && pos < n);
	if (jerr == json_tokener_continue) {
		json_tokener_free(tok);
		return format_fail(err, n, "the JSON text ends early (cut short?)");
	}
	if (jerr != json_tokener_success || !obj) {
		json_tokener_free(tok);
		json_object_put(obj);
		return format_fail(err, pos, "not valid JSON: %s", json_tokener_error_desc(jerr));
	}
	json_tokener_free(tok);
	for (; pos < n; pos++)
		if (data[pos] != ' ' && data[pos] != '\n' && data[pos] != '\r' && data[pos] != '\t') {
			json_object_put(obj);
			return format_fail(err, pos, "text after the JSON value");
		}
	*root = obj;
	return 0;
}
