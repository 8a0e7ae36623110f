/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lists of key=value pairs as the OpenTelemetry environment variables
 * spell them (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS): the
 * W3C Baggage form, "key1=value1,key2=value2", spaces around keys and
 * values dropped, values percent-decoded ("%2C" is a comma).  Such values
 * can be secrets (a header's token): a message about a list names the
 * entry by its position and key, never its value.
 */
#ifndef COLLECTOR_KVLIST_H
#define COLLECTOR_KVLIST_H

#include <stddef.h>

struct kv {
	char *key, *value;
};

/*
 * Parses text into a new array *list of *n pairs (kvlist_free()); an
 * empty or NULL text is an empty list, and so is an empty entry ("a=1,,").
 * An entry without '=' or with an empty key, a '%' not followed by two hex
 * digits, or a control character in a value (decoded or not: a CR or LF
 * would let a header value write another header) is -EINVAL with why it
 * is wrong in err (err_size bytes, no value quoted); -ENOMEM.
 */
int kvlist_parse(const char *text, struct kv **list, size_t *n, char *err, size_t err_size);
void kvlist_free(struct kv *list, size_t n);
/* The value of key in list, or NULL. */
const char *kvlist_get(const struct kv *list, size_t n, const char *key);

#endif /* COLLECTOR_KVLIST_H */
