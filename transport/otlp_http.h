/* SPDX-License-Identifier: GPL-2.0 */
/*
 * OTLP/HTTP: where and how to send an encoded ExportProfilesServiceRequest,
 * and one POST of it.  Bytes only: nothing here knows what a profile is.
 *
 * Configuration (otlp_http_config_init) follows the OpenTelemetry
 * exporter specification (specification/protocol/exporter.md), the
 * variables every OTLP exporter reads:
 *
 *   endpoint     --otlp=URL (a base URL: /v1development/profiles is
 *                appended unless the URL already ends in it), else
 *                OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT (the whole URL, as
 *                is), else OTEL_EXPORTER_OTLP_ENDPOINT (a base URL, the
 *                path appended after one slash), else
 *                http://localhost:4318/v1development/profiles.  http://
 *                or https:// only.
 *   _HEADERS     key1=value1,key2=value2: keys are HTTP header names,
 *                values percent-decoded (the W3C Baggage format the
 *                specification names); whitespace around either trimmed.
 *   _COMPRESSION gzip or none.  The default here is gzip, where the
 *                specification's is none: a profile is large and repetitive
 *                (gzip level 1 shrinks one several times), and OTLP/HTTP
 *                lets the client gzip (the Collector's receiver accepts it).
 *   _TIMEOUT     milliseconds the whole request may take (default 10000,
 *                the specification's).
 *   _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY: PEM files, the CA to
 *                verify the server with (else the system's), and this
 *                client's certificate and key for mutual TLS.
 *
 * For each, OTEL_EXPORTER_OTLP_PROFILES_X wins over OTEL_EXPORTER_OTLP_X;
 * an empty variable counts as unset (the SDK environment specification).
 * Header values are secrets (tokens): no message ever shows one, and the
 * URL is shown without its user information or query (display_url).
 *
 * Sending (otlp_http_post): one CURL easy handle per struct otlp_http, so
 * the connection is kept and reused between POSTs; driven through a multi
 * handle only so that otlp_http_interrupt() can end a POST in progress at
 * once from another thread.  The answer is classified as the OTLP/HTTP
 * specification says: 2xx delivered; 429, 502, 503, 504 and every failure
 * to get an answer (refused, reset, timed out, TLS) retryable, with the
 * server's Retry-After; any other status refused for good, with the
 * server's message (a text body, or the message of a google.rpc.Status
 * protobuf body).  A TLS or address problem stays retryable on purpose:
 * it is fixed by fixing the configuration, and the data must still be
 * there then.
 *
 * One struct otlp_http is used by one thread at a time, except
 * otlp_http_interrupt(), which any thread may call.
 */
#ifndef COLLECTOR_OTLP_HTTP_H
#define COLLECTOR_OTLP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define OTLP_PROFILES_PATH "/v1development/profiles"
#define OTLP_DEFAULT_ENDPOINT "http://localhost:4318" OTLP_PROFILES_PATH
#define OTLP_DEFAULT_TIMEOUT_MS 10000L

struct otlp_http_header {
	char *name;
	char *value; /* percent-decoded; never printed */
};

struct otlp_http_config {
	char *url;          /* where POSTs go */
	char *display_url;  /* url without user information and query, for messages */
	struct otlp_http_header *headers;
	size_t n_headers;
	bool gzip;          /* Content-Encoding: gzip */
	long timeout_ms;    /* the whole request */
	char *ca_file;      /* NULL: the system's CAs */
	char *client_cert;
	char *client_key;
};

/*
 * Fills c from url_option (--otlp=URL; NULL when --otlp had none) and the
 * environment.  0, or -EINVAL with err (err_size bytes) saying which
 * variable or option is wrong and what it should be (-ENOMEM: no memory).
 * c is left empty on failure; otlp_http_config_free() either way.
 */
int otlp_http_config_init(struct otlp_http_config *c, const char *url_option,
			  char *err, size_t err_size);
void otlp_http_config_free(struct otlp_http_config *c);

/*
 * Parses a headers variable's value (name: the variable, for messages;
 * lib/kvlist.h's form) into c->headers: all of its entries, or none.  0,
 * or -EINVAL with err naming the variable and the entry by its position or
 * key (never its value): a malformed entry, a key that is no header name,
 * a header the exporter sets itself.  Used by config_init; here for the
 * tests.
 */
int otlp_http_parse_headers(struct otlp_http_config *c, const char *name, const char *value,
			    char *err, size_t err_size);

struct otlp_http_result {
	long status;         /* HTTP status, 0 when no answer */
	bool retryable;
	long retry_after_ms; /* -1 if none */
	char message[256];   /* the backend's own message or curl's error */
};

struct otlp_http;

/* NULL with errno set when libcurl cannot be set up.  c is copied: the
 * caller may free it afterwards. */
struct otlp_http *otlp_http_open(const struct otlp_http_config *c);
void otlp_http_close(struct otlp_http *h);

/*
 * POSTs body (len bytes; already gzip-compressed when gzipped) and fills r.
 * 0: a 2xx answer.  -EAGAIN: not delivered, try again later (r->retryable;
 * r->retry_after_ms when the server said when).  -EREMOTEIO: refused for
 * good (r->status, r->message).  -ECANCELED: otlp_http_interrupt() was
 * called (now or before).  -ENOMEM and other local errors: not delivered,
 * r->retryable set.
 */
int otlp_http_post(struct otlp_http *h, const void *body, size_t len, bool gzipped,
		   struct otlp_http_result *r);

/* Ends a POST in progress (and makes every later one fail) with
 * -ECANCELED, within milliseconds.  Any thread; async-signal-unsafe. */
void otlp_http_interrupt(struct otlp_http *h);

/*
 * A Retry-After header's value, delay-seconds or an HTTP-date (the three
 * forms HTTP allows, parsed by libcurl), as milliseconds from now (0 for a
 * date already past); -1 when it is neither.
 */
long otlp_retry_after_ms(const char *value, time_t now);

/*
 * The message (field 2, a string) of a google.rpc.Status protobuf in
 * buf[0..n), into out (out_size bytes, NUL-terminated, bytes that are not
 * printable ASCII shown as '?').  0, or -EBADMSG when buf is not such a
 * message or has no message field.  Bounded by n, whatever buf holds.
 */
int otlp_status_message(const uint8_t *buf, size_t n, char *out, size_t out_size);

/* in[0..n) gzip-compressed (zlib, level 1: each interval is compressed on
 * the way out, and speed matters more there than the last few per cent)
 * into a malloc'd *out of *out_n bytes.  0, or -ENOMEM / -EIO. */
int otlp_gzip(const void *in, size_t n, void **out, size_t *out_n);

#endif /* COLLECTOR_OTLP_HTTP_H */
