// SPDX-License-Identifier: GPL-2.0
/* One OTLP/HTTP POST through libcurl, its answer classified (see
 * otlp_http.h); gzip through zlib. */
#include "transport/otlp_http.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#ifndef COLLECTOR_VERSION
#define COLLECTOR_VERSION "unknown"
#endif

/* Enough of an error body for a message; the rest is read and dropped. */
#define RESPONSE_KEEP 16384
/* A backend that is up accepts a connection in milliseconds; one that is
 * not reachable (packets dropped) is given up on sooner than the whole
 * request's timeout, so that the retry's backoff starts sooner. */
#define CONNECT_TIMEOUT_MS 5000L
/* How often a POST looks at its interrupt flag when nothing wakes it
 * (otlp_http_interrupt() wakes it at once). */
#define POLL_MS 1000
/* The largest body gzipped in one call; OTLP recommends 20 MiB bodies. */
#define GZIP_MAX_IN (1UL << 30)

struct otlp_http {
	CURLM *multi;
	CURL *easy;
	struct curl_slist *headers;      /* the configured ones, Content-Type, Expect */
	struct curl_slist *headers_gzip; /* the same and Content-Encoding: gzip */
	atomic_bool interrupted;
	char errbuf[CURL_ERROR_SIZE];
	char *response;                  /* the first RESPONSE_KEEP bytes of the body */
	size_t response_len;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_code;

/* libcurl's global state, set up once and kept for the process's life:
 * curl_global_cleanup() is not safe while another thread may use curl. */
static void curl_init_once(void)
{
	curl_init_code = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t keep_response(char *data, size_t size, size_t nmemb, void *arg)
{
	struct otlp_http *h = arg;
	size_t n = size * nmemb, room = RESPONSE_KEEP - h->response_len;

	if (n < room)
		room = n;
	memcpy(h->response + h->response_len, data, room);
	h->response_len += room;
	return n;
}

static bool add_line(struct curl_slist **list, const char *line)
{
	struct curl_slist *next = curl_slist_append(*list, line);

	if (next)
		*list = next;
	return next != NULL;
}

/* The request's headers: Content-Type, gzip's when gzip, "Expect:" (no
 * 100-continue round trip before a large body), the configured ones. */
static struct curl_slist *make_headers(const struct otlp_http_config *c, bool gzip)
{
	struct curl_slist *list = NULL;
	bool ok;
	char *line;

	ok = add_line(&list, "Content-Type: application/x-protobuf") &&
	     (!gzip || add_line(&list, "Content-Encoding: gzip")) && add_line(&list, "Expect:");
	for (size_t i = 0; ok && i < c->n_headers; i++) {
		if (asprintf(&line, "%s: %s", c->headers[i].name, c->headers[i].value) < 0) {
			ok = false;
			break;
		}
		ok = add_line(&list, line);
		explicit_bzero(line, strlen(line));
		free(line);
	}
	if (ok)
		return list;
	curl_slist_free_all(list);
	return NULL;
}

static bool setup_easy(struct otlp_http *h, const struct otlp_http_config *c)
{
	CURL *e = h->easy;
	long connect_ms = c->timeout_ms < CONNECT_TIMEOUT_MS ? c->timeout_ms : CONNECT_TIMEOUT_MS;
	bool ok;

	ok = !curl_easy_setopt(e, CURLOPT_URL, c->url) &&
	     !curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") &&
	     !curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) &&
	     !curl_easy_setopt(e, CURLOPT_POST, 1L) &&
	     !curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, c->timeout_ms) &&
	     !curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, connect_ms) &&
	     !curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L) &&
	     !curl_easy_setopt(e, CURLOPT_USERAGENT, "collector/" COLLECTOR_VERSION
			       " (OTLP/HTTP exporter; C)") &&
	     !curl_easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf) &&
	     !curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, keep_response) &&
	     !curl_easy_setopt(e, CURLOPT_WRITEDATA, h) &&
	     /* verified unless the user's CA says otherwise: these are
	      * curl's defaults, set again so that no one reads them as off */
	     !curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L) &&
	     !curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	if (ok && c->ca_file)
		ok = !curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
	if (ok && c->client_cert)
		ok = !curl_easy_setopt(e, CURLOPT_SSLCERT, c->client_cert);
	if (ok && c->client_key)
		ok = !curl_easy_setopt(e, CURLOPT_SSLKEY, c->client_key);
	return ok;
}

struct otlp_http *otlp_http_open(const struct otlp_http_config *c)
{
	struct otlp_http *h;

	pthread_once(&curl_once, curl_init_once);
	if (curl_init_code != CURLE_OK) {
		errno = EIO;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	atomic_init(&h->interrupted, false);
	h->response = malloc(RESPONSE_KEEP);
	h->multi = curl_multi_init();
	h->easy = curl_easy_init();
	h->headers = make_headers(c, false);
	h->headers_gzip = make_headers(c, true);
	if (!h->response || !h->multi || !h->easy || !h->headers || !h->headers_gzip ||
	    !setup_easy(h, c)) {
		otlp_http_close(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

void otlp_http_close(struct otlp_http *h)
{
	if (!h)
		return;
	if (h->easy)
		curl_easy_cleanup(h->easy);
	if (h->multi)
		curl_multi_cleanup(h->multi);
	curl_slist_free_all(h->headers);
	curl_slist_free_all(h->headers_gzip);
	free(h->response);
	free(h);
}

void otlp_http_interrupt(struct otlp_http *h)
{
	atomic_store(&h->interrupted, true);
	curl_multi_wakeup(h->multi);
}

/* Copies s[0..n) into out as one line of printable ASCII. */
static void printable(const char *s, size_t n, char *out, size_t out_size)
{
	size_t o = 0;

	if (!out_size)
		return;
	for (size_t i = 0; i < n && o + 1 < out_size; i++) {
		unsigned char ch = s[i];

		out[o++] = ch == '\n' || ch == '\r' || ch == '\t' ? ' '
			 : ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

/* A varint at *p (at most 10 bytes, before end): 0, or -1. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (int shift = 0; shift < 70 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		r |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 0);
		if (!(b & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return -1;
}

int otlp_status_message(const uint8_t *buf, size_t n, char *out, size_t out_size)
{
	const uint8_t *p = buf, *end = buf + n;
	bool found = false;
	uint64_t tag, v;

	if (out_size)
		out[0] = '\0';
	while (p < end) {
		if (read_varint(&p, end, &tag) || tag >> 3 == 0)
			return -EBADMSG;
		switch (tag & 7) {
		case 0: /* varint: code */
			if (read_varint(&p, end, &v))
				return -EBADMSG;
			break;
		case 1: /* 64-bit */
		case 5: /* 32-bit */
			v = (tag & 7) == 1 ? 8 : 4;
			if ((uint64_t)(end - p) < v)
				return -EBADMSG;
			p += v;
			break;
		case 2: /* length-delimited: message (2), details (3) */
			if (read_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return -EBADMSG;
			if (tag >> 3 == 2) {
				printable((const char *)p, v, out, out_size);
				found = true;
			}
			p += v;
			break;
		default: /* groups, and wire types that do not exist */
			return -EBADMSG;
		}
	}
	return found ? 0 : -EBADMSG;
}

long otlp_retry_after_ms(const char *value, time_t now)
{
	const char *s = value;
	time_t when;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s >= '0' && *s <= '9') {
		char *end;
		unsigned long long sec = strtoull(s, &end, 10);

		while (*end == ' ' || *end == '\t')
			end++;
		if (*end)
			return -1;
		return sec > LONG_MAX / 1000 ? LONG_MAX : (long)sec * 1000;
	}
	when = curl_getdate(s, &now);
	if (when == -1)
		return -1;
	return when <= now ? 0 : (when - now > LONG_MAX / 1000 ? LONG_MAX : (when - now) * 1000);
}

/* The backend's message: a google.rpc.Status when the body is protobuf
 * (what OTLP says it is) or has no type and parses as one, else the body
 * as text when it is text. */
static void response_message(struct otlp_http *h, struct otlp_http_result *r)
{
	char *type = NULL;
	bool proto, text;

	curl_easy_getinfo(h->easy, CURLINFO_CONTENT_TYPE, &type);
	proto = type && (!strncasecmp(type, "application/x-protobuf", 22) ||
			 !strncasecmp(type, "application/protobuf", 20));
	text = type && (!strncasecmp(type, "text/", 5) || !strncasecmp(type, "application/json", 16));
	if ((proto || !type) &&
	    otlp_status_message((const uint8_t *)h->response, h->response_len, r->message,
				sizeof(r->message)) == 0)
		return;
	if (text || (!type && !memchr(h->response, '\0', h->response_len)))
		printable(h->response, h->response_len, r->message, sizeof(r->message));
	else if (h->response_len)
		snprintf(r->message, sizeof(r->message), "(a %zu-byte %s body)", h->response_len,
			 type ? type : "binary");
}

/* Runs the transfer added to h->multi: its result, or CURLE_ABORTED_BY_CALLBACK
 * when interrupted. */
static CURLcode run_transfer(struct otlp_http *h)
{
	CURLcode code = CURLE_OK;
	int running = 1, queued;
	CURLMcode mc = CURLM_OK;
	CURLMsg *m;

	while (running) {
		if (atomic_load(&h->interrupted))
			return CURLE_ABORTED_BY_CALLBACK;
		mc = curl_multi_perform(h->multi, &running);
		if (mc != CURLM_OK || !running)
			break;
		mc = curl_multi_poll(h->multi, NULL, 0, POLL_MS, NULL);
		if (mc != CURLM_OK)
			break;
	}
	if (mc != CURLM_OK) {
		snprintf(h->errbuf, sizeof(h->errbuf), "%s", curl_multi_strerror(mc));
		return CURLE_FAILED_INIT;
	}
	while ((m = curl_multi_info_read(h->multi, &queued)))
		if (m->msg == CURLMSG_DONE && m->easy_handle == h->easy)
			code = m->data.result;
	return code;
}

int otlp_http_post(struct otlp_http *h, const void *body, size_t len, bool gzipped,
		   struct otlp_http_result *r)
{
	struct curl_header *retry_after;
	CURLcode code;

	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
	r->retryable = true;
	h->errbuf[0] = '\0';
	h->response_len = 0;
	if (curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS, body) ||
	    curl_easy_setopt(h->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len) ||
	    curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, gzipped ? h->headers_gzip : h->headers) ||
	    curl_multi_add_handle(h->multi, h->easy)) {
		snprintf(r->message, sizeof(r->message), "libcurl: out of memory");
		return -ENOMEM;
	}
	code = run_transfer(h);
	curl_multi_remove_handle(h->multi, h->easy);
	if (code == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(r->message, sizeof(r->message), "interrupted");
		return -ECANCELED;
	}
	if (code != CURLE_OK) {
		/* no answer: refused, reset, timed out, TLS, name not resolved */
		snprintf(r->message, sizeof(r->message), "%s",
			 h->errbuf[0] ? h->errbuf : curl_easy_strerror(code));
		return -EAGAIN;
	}
	curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &r->status);
	if (r->status >= 200 && r->status < 300) {
		r->retryable = false;
		return 0;
	}
	r->retryable = r->status == 429 || r->status == 502 || r->status == 503 || r->status == 504;
	if (curl_easy_header(h->easy, "Retry-After", 0, CURLH_HEADER, -1, &retry_after) ==
	    CURLHE_OK)
		r->retry_after_ms = otlp_retry_after_ms(retry_after->value, time(NULL));
	response_message(h, r);
	return r->retryable ? -EAGAIN : -EREMOTEIO;
}

int otlp_gzip(const void *in, size_t n, void **out, size_t *out_n)
{
	z_stream zs = { 0 };
	uLong bound;
	void *buf = NULL;
	int ret = -EIO;

	*out = NULL;
	*out_n = 0;
	if (n > GZIP_MAX_IN)
		return -EFBIG;
	/* 15 + 16: a gzip wrapper (header and crc32 trailer), not zlib's */
	if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, n);
	buf = malloc(bound);
	if (!buf) {
		ret = -ENOMEM;
		goto cleanup;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = n;
	zs.next_out = buf;
	zs.avail_out = bound;
	/* deflateBound's room is enough for one Z_FINISH to end the stream */
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		goto cleanup;
	*out = buf;
	*out_n = zs.total_out;
	buf = NULL;
	ret = 0;
cleanup:
	deflateEnd(&zs);
	free(buf);
	return ret;
}
