// SPDX-License-Identifier: GPL-2.0
/* OTLP/HTTP exporter configuration from --otlp and OTEL_EXPORTER_OTLP_*
 * (see otlp_http.h). */
#include "transport/otlp_http.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "lib/kvlist.h"

#define ENV_PREFIX "OTEL_EXPORTER_OTLP_"
#define ENV_PROFILES_PREFIX "OTEL_EXPORTER_OTLP_PROFILES_"
#define TIMEOUT_MAX_MS 3600000L

/* The value of OTEL_EXPORTER_OTLP_PROFILES_<what>, else of
 * OTEL_EXPORTER_OTLP_<what>, else NULL; empty counts as unset (the SDK
 * environment specification).  name: the variable's name, for messages. */
static const char *env_pick(const char *what, char *name, size_t name_size)
{
	const char *v;

	snprintf(name, name_size, ENV_PROFILES_PREFIX "%s", what);
	v = getenv(name);
	if (v && *v)
		return v;
	snprintf(name, name_size, ENV_PREFIX "%s", what);
	v = getenv(name);
	return v && *v ? v : NULL;
}

/* RFC 9110's tchar: what a header name may be made of. */
static bool is_tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Headers the exporter sets itself: one given again would contradict the
 * body it describes. */
static bool reserved_header(const char *name)
{
	static const char *const reserved[] = { "Content-Type", "Content-Encoding",
						"Content-Length", "Transfer-Encoding", "Host" };

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcasecmp(name, reserved[i]))
			return true;
	return false;
}

int otlp_http_parse_headers(struct otlp_http_config *c, const char *name, const char *value,
			    char *err, size_t err_size)
{
	struct otlp_http_header *grown;
	char why[200];
	struct kv *list;
	size_t n;
	int ret = kvlist_parse(value, &list, &n, why, sizeof(why));

	if (ret == -EINVAL)
		snprintf(err, err_size, "%s: %s", name, why);
	if (ret)
		return ret;
	for (size_t i = 0; i < n && !ret; i++) {
		for (const char *k = list[i].key; *k && !ret; k++)
			if (!is_tchar(*k)) {
				snprintf(err, err_size, "%s: the key '%s' is not an HTTP header name "
					 "(letters, digits and !#$%%&'*+-.^_`|~ only)", name,
					 list[i].key);
				ret = -EINVAL;
			}
		if (!ret && reserved_header(list[i].key)) {
			snprintf(err, err_size, "%s: it sets %s, which the exporter sets itself; "
				 "remove it", name, list[i].key);
			ret = -EINVAL;
		}
	}
	grown = ret ? NULL : realloc(c->headers, (c->n_headers + n + 1) * sizeof(*c->headers));
	if (!ret && !grown)
		ret = -ENOMEM;
	if (ret) {
		kvlist_free(list, n);
		return ret;
	}
	/* the strings move into the config */
	c->headers = grown;
	for (size_t i = 0; i < n; i++)
		c->headers[c->n_headers++] = (struct otlp_http_header){ list[i].key, list[i].value };
	free(list);
	return 0;
}

/* A copy of the URL in u without user, password, query and fragment. */
static char *display_url(CURLU *u)
{
	CURLU *d = curl_url_dup(u);
	char *s = NULL, *out;

	if (!d)
		return NULL;
	curl_url_set(d, CURLUPART_USER, NULL, 0);
	curl_url_set(d, CURLUPART_PASSWORD, NULL, 0);
	curl_url_set(d, CURLUPART_OPTIONS, NULL, 0);
	curl_url_set(d, CURLUPART_QUERY, NULL, 0);
	curl_url_set(d, CURLUPART_FRAGMENT, NULL, 0);
	if (curl_url_get(d, CURLUPART_URL, &s, 0) != CURLUE_OK)
		s = NULL;
	out = s ? strdup(s) : NULL;
	curl_free(s);
	curl_url_cleanup(d);
	return out;
}

/*
 * c->url from a URL given by src (an option or a variable's name); with
 * append, OTLP_PROFILES_PATH added to its path after one slash (kept as is
 * when keep_suffix and the path already ends in it).  The URL is parsed
 * with libcurl's parser, so a query stays after the path.
 */
static int set_url(struct otlp_http_config *c, const char *src, const char *url, bool append,
		   bool keep_suffix, char *err, size_t err_size)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *path = NULL, *full = NULL, *joined = NULL;
	int ret = -EINVAL;

	if (!u)
		return -ENOMEM;
	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcasecmp(scheme, "http") && strcasecmp(scheme, "https")) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
		snprintf(err, err_size, "%s: not an http:// or https:// URL with a host "
			 "(e.g. http://localhost:4318)", src);
		goto cleanup;
	}
	ret = -ENOMEM;
	if (append) {
		size_t n, suffix = strlen(OTLP_PROFILES_PATH);

		if (curl_url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
			goto cleanup;
		n = strlen(path);
		if (!(keep_suffix && n >= suffix && !strcmp(path + n - suffix, OTLP_PROFILES_PATH))) {
			/* "http://h:4318/base/" and ".../base" both give
			 * ".../base/v1development/profiles" (the spec's "correcting
			 * for double slashes") */
			if (n && path[n - 1] == '/')
				path[--n] = '\0';
			if (asprintf(&joined, "%s%s", path, OTLP_PROFILES_PATH) < 0) {
				joined = NULL;
				goto cleanup;
			}
			if (curl_url_set(u, CURLUPART_PATH, joined, 0) != CURLUE_OK)
				goto cleanup;
		}
	}
	if (curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK)
		goto cleanup;
	c->url = strdup(full);
	c->display_url = display_url(u);
	if (c->url && c->display_url)
		ret = 0;
cleanup:
	free(joined);
	curl_free(full);
	curl_free(path);
	curl_free(host);
	curl_free(scheme);
	curl_url_cleanup(u);
	return ret;
}

static int config_url(struct otlp_http_config *c, const char *url_option, char *err,
		      size_t err_size)
{
	char name[64];
	const char *v;

	if (url_option)
		return set_url(c, "--otlp", url_option, true, true, err, err_size);
	snprintf(name, sizeof(name), ENV_PROFILES_PREFIX "ENDPOINT");
	v = getenv(name);
	if (v && *v)
		return set_url(c, name, v, false, false, err, err_size);
	snprintf(name, sizeof(name), ENV_PREFIX "ENDPOINT");
	v = getenv(name);
	if (v && *v)
		return set_url(c, name, v, true, false, err, err_size);
	return set_url(c, "the default endpoint", OTLP_DEFAULT_ENDPOINT, false, false, err,
		       err_size);
}

/* A PEM file's path from variable what, checked readable now so that a
 * typo is said at start, not at the first push. */
static int config_file(char **out, const char *what, char *err, size_t err_size)
{
	char name[64];
	const char *v = env_pick(what, name, sizeof(name));
	int fd;

	if (!v)
		return 0;
	fd = open(v, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "%s=%s cannot be read: %s", name, v, strerror(errno));
		return -EINVAL;
	}
	close(fd);
	*out = strdup(v);
	return *out ? 0 : -ENOMEM;
}

/* Protocol, compression and timeout. */
static int config_scalars(struct otlp_http_config *c, char *err, size_t err_size)
{
	char name[64], *end;
	const char *v;

	/* only http/protobuf is spoken: a grpc endpoint (port 4317) would
	 * otherwise fail every push with a puzzling error */
	v = env_pick("PROTOCOL", name, sizeof(name));
	if (v && strcmp(v, "http/protobuf")) {
		snprintf(err, err_size, "%s=%s: collector sends OTLP over HTTP with protobuf only; "
			 "set %sPROTOCOL=http/protobuf", name, v, ENV_PROFILES_PREFIX);
		return -EINVAL;
	}
	c->gzip = true;
	v = env_pick("COMPRESSION", name, sizeof(name));
	if (v && !strcmp(v, "none")) {
		c->gzip = false;
	} else if (v && strcmp(v, "gzip")) {
		snprintf(err, err_size, "%s=%s: the compression is gzip or none", name, v);
		return -EINVAL;
	}
	c->timeout_ms = OTLP_DEFAULT_TIMEOUT_MS;
	v = env_pick("TIMEOUT", name, sizeof(name));
	if (v) {
		errno = 0;
		c->timeout_ms = strtol(v, &end, 10);
		if (errno || *end || end == v || *v == '-' || *v == '+' || c->timeout_ms < 1 ||
		    c->timeout_ms > TIMEOUT_MAX_MS) {
			snprintf(err, err_size, "%s=%s: the timeout is a whole number of "
				 "milliseconds from 1 to %ld", name, v, TIMEOUT_MAX_MS);
			return -EINVAL;
		}
	}
	return 0;
}

int otlp_http_config_init(struct otlp_http_config *c, const char *url_option, char *err,
			  size_t err_size)
{
	char name[64];
	const char *v;
	int ret;

	memset(c, 0, sizeof(*c));
	snprintf(err, err_size, "out of memory");
	ret = config_url(c, url_option, err, err_size);
	if (!ret)
		ret = config_scalars(c, err, err_size);
	v = env_pick("HEADERS", name, sizeof(name));
	if (!ret && v)
		ret = otlp_http_parse_headers(c, name, v, err, err_size);
	if (!ret)
		ret = config_file(&c->ca_file, "CERTIFICATE", err, err_size);
	if (!ret)
		ret = config_file(&c->client_cert, "CLIENT_CERTIFICATE", err, err_size);
	if (!ret)
		ret = config_file(&c->client_key, "CLIENT_KEY", err, err_size);
	if (!ret && c->client_key && !c->client_cert) {
		snprintf(err, err_size, "%s is set without %s: a client key needs its "
			 "certificate", ENV_PREFIX "CLIENT_KEY", ENV_PREFIX "CLIENT_CERTIFICATE");
		ret = -EINVAL;
	}
	if (ret)
		otlp_http_config_free(c);
	return ret;
}

void otlp_http_config_free(struct otlp_http_config *c)
{
	for (size_t i = 0; i < c->n_headers; i++) {
		free(c->headers[i].name);
		free(c->headers[i].value);
	}
	free(c->headers);
	free(c->url);
	free(c->display_url);
	free(c->ca_file);
	free(c->client_cert);
	free(c->client_key);
	memset(c, 0, sizeof(*c));
}
