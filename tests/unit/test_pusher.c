// SPDX-License-Identifier: GPL-2.0
/*
 * transport/pusher.c and otlp_http_post() against a small HTTP/1.1 server
 * written here: a thread accepting on 127.0.0.1 (an ephemeral port),
 * reading each request by its Content-Length, answering the statuses a
 * test scripts (or never answering), and recording every request's
 * headers and body (gunzipped when it says gzip).
 *
 * What is checked: (a) 200s: every body arrives once, in order, over one
 * kept-alive connection, and the spool is empty after; (b) 503 twice (one
 * with Retry-After: 0), then 200: delivered once, two retries counted;
 * (c) 400 with a text body: refused, not retried, said once on stderr
 * with the backend's message and without the headers' secrets, and the
 * next body sent; (d) a server that never answers: the request times out
 * (OTEL timeout 300 ms) and is sent again; (e) nothing listening: the
 * bodies stay spooled, pusher_stop() returns within about its drain time,
 * and a new pusher on the same spool delivers them in order once a server
 * is up; pusher_stop() also cuts a POST that hangs; (f) a header from
 * OTEL_EXPORTER_OTLP_HEADERS reaches the server; (g) gzip: the server
 * gets the original bytes back; and the classification of single POSTs:
 * a google.rpc.Status message from a 500, Retry-After in seconds and as a
 * date on 429 and 503.
 *
 * Every wait is on a condition with a deadline of seconds; no result
 * depends on how fast the machine is.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <zlib.h>
#include <cmocka.h>

#include "transport/otlp_http.h"
#include "transport/pusher.h"

#define WAIT_MS 10000
#define MAX_REQUESTS 64
#define MAX_SCRIPT 8

struct reply {
	int status;           /* 0: never answer (until the client closes) */
	const char *headers;  /* "Name: value\r\n"... */
	const void *body;
	size_t body_len;
};

struct request {
	char *head;           /* request line and headers */
	uint8_t *body;        /* gunzipped when Content-Encoding: gzip */
	size_t len, raw_len;
	bool gzipped;
	int status;           /* answered with; 0: not answered */
	int conn;             /* which connection, from 1 */
};

struct server {
	int lfd, port;
	pthread_t thread;
	pthread_mutex_t lock;
	struct reply script[MAX_SCRIPT]; /* answered in turn, then 200s */
	int n_script, next;
	struct request req[MAX_REQUESTS];
	int n_req, n_conn;
	atomic_bool stop;
};

static struct server srv;
static char spool_path[64];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Evaluates expr until it holds, for at most WAIT_MS. */
#define WAIT_UNTIL(expr)                                                          \
	do {                                                                      \
		uint64_t until_ = now_ms() + WAIT_MS;                             \
		while (!(expr)) {                                                 \
			if (now_ms() > until_)                                    \
				fail_msg("waited %d ms for %s", WAIT_MS, #expr);  \
			usleep(2000);                                             \
		}                                                                 \
	} while (0)

/* ---- the server ---- */

/* Reads more of fd into *buf: >0, or 0 at EOF, error or stop. */
static ssize_t read_some(int fd, uint8_t **buf, size_t *n, size_t *cap)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t r;

	while (!atomic_load(&srv.stop)) {
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		if (*n == *cap) {
			*cap *= 2;
			*buf = realloc(*buf, *cap);
			assert_non_null(*buf);
		}
		r = read(fd, *buf + *n, *cap - *n);
		if (r > 0)
			*n += r;
		return r > 0 ? r : 0;
	}
	return 0;
}

static uint8_t *gunzip(const uint8_t *in, size_t n, size_t *out_n)
{
	size_t cap = 4 * n + 64;
	uint8_t *out = malloc(cap);
	z_stream zs = { 0 };
	int ret;

	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)in;
	zs.avail_in = n;
	for (;;) {
		zs.next_out = out + zs.total_out;
		zs.avail_out = cap - zs.total_out;
		ret = inflate(&zs, Z_FINISH);
		if (ret == Z_STREAM_END)
			break;
		assert_true(ret == Z_BUF_ERROR || ret == Z_OK);
		cap *= 2;
		out = realloc(out, cap);
	}
	*out_n = zs.total_out;
	inflateEnd(&zs);
	return out;
}

/* Records one request; returns the reply it gets. */
static struct reply record(const uint8_t *head, size_t head_len, const uint8_t *body,
			   size_t len, int conn)
{
	struct reply rep = { .status = 200, .headers = "Content-Type: application/x-protobuf\r\n" };
	struct request *r;

	pthread_mutex_lock(&srv.lock);
	assert_true(srv.n_req < MAX_REQUESTS);
	r = &srv.req[srv.n_req];
	r->head = strndup((const char *)head, head_len);
	r->gzipped = strcasestr(r->head, "\r\nContent-Encoding: gzip\r\n") != NULL;
	r->raw_len = len;
	if (r->gzipped) {
		r->body = gunzip(body, len, &r->len);
	} else {
		r->body = malloc(len + 1);
		memcpy(r->body, body, len);
		r->len = len;
	}
	r->conn = conn;
	if (srv.next < srv.n_script)
		rep = srv.script[srv.next++];
	r->status = rep.status;
	srv.n_req++;
	pthread_mutex_unlock(&srv.lock);
	return rep;
}

static void answer(int fd, const struct reply *rep)
{
	char head[512];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %d Scripted\r\nContent-Length: %zu\r\n%s\r\n",
			 rep->status, rep->body_len, rep->headers ? rep->headers : "");

	assert_int_equal(write(fd, head, n), n);
	if (rep->body_len)
		assert_int_equal(write(fd, rep->body, rep->body_len), (ssize_t)rep->body_len);
}

/* Requests on one connection until the client closes it. */
static void serve_conn(int fd, int conn)
{
	size_t n = 0, cap = 65536;
	uint8_t *buf = malloc(cap), *end;

	for (;;) {
		size_t head_len, len = 0;
		const char *cl;
		struct reply rep;

		while (!(end = memmem(buf, n, "\r\n\r\n", 4)))
			if (!read_some(fd, &buf, &n, &cap))
				goto out;
		head_len = end - buf + 4;
		buf[head_len - 1] = '\0'; /* for strcasestr; the last '\n' */
		cl = strcasestr((char *)buf, "\r\nContent-Length:");
		if (cl)
			len = strtoul(cl + 17, NULL, 10);
		buf[head_len - 1] = '\n';
		while (n < head_len + len)
			if (!read_some(fd, &buf, &n, &cap))
				goto out;
		rep = record(buf, head_len, buf + head_len, len, conn);
		memmove(buf, buf + head_len + len, n - head_len - len);
		n -= head_len + len;
		if (!rep.status) {
			/* never answered: wait for the client to give up */
			while (read_some(fd, &buf, &n, &cap))
				n = 0;
			goto out;
		}
		answer(fd, &rep);
	}
out:
	free(buf);
}

static void *serve(void *arg)
{
	struct pollfd pfd = { .fd = srv.lfd, .events = POLLIN };
	int fd;

	(void)arg;
	while (!atomic_load(&srv.stop)) {
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		fd = accept4(srv.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&srv.lock);
		srv.n_conn++;
		pthread_mutex_unlock(&srv.lock);
		serve_conn(fd, srv.n_conn);
		close(fd);
	}
	return NULL;
}

/* A listening socket on 127.0.0.1, its port in *port. */
static int listen_any(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Starts the server with a script of replies (then 200s). */
static void server_start(const struct reply *script, int n)
{
	memset(&srv, 0, sizeof(srv));
	pthread_mutex_init(&srv.lock, NULL);
	atomic_init(&srv.stop, false);
	assert_true(n <= MAX_SCRIPT);
	if (n)
		memcpy(srv.script, script, n * sizeof(*script));
	srv.n_script = n;
	srv.lfd = listen_any(&srv.port);
	assert_int_equal(pthread_create(&srv.thread, NULL, serve, NULL), 0);
}

static void server_stop(void)
{
	if (!srv.thread)
		return;
	atomic_store(&srv.stop, true);
	pthread_join(srv.thread, NULL);
	close(srv.lfd);
	for (int i = 0; i < srv.n_req; i++) {
		free(srv.req[i].head);
		free(srv.req[i].body);
	}
	pthread_mutex_destroy(&srv.lock);
	memset(&srv, 0, sizeof(srv));
}

static int server_requests(void)
{
	int n;

	pthread_mutex_lock(&srv.lock);
	n = srv.n_req;
	pthread_mutex_unlock(&srv.lock);
	return n;
}

static void server_url(char *buf, size_t size, int port)
{
	snprintf(buf, size, "http://127.0.0.1:%d", port);
}

/* ---- the pusher's side ---- */

static void clear_env(void)
{
	static const char *const names[] = { "ENDPOINT", "HEADERS", "COMPRESSION", "TIMEOUT",
					      "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY",
					      "PROTOCOL" };
	char name[80];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_%s", names[i]);
		unsetenv(name);
		snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_PROFILES_%s", names[i]);
		unsetenv(name);
	}
}

static int setup(void **state)
{
	(void)state;
	clear_env();
	/* most tests compare bodies as sent: gzip is tested on its own */
	setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "none", 1);
	snprintf(spool_path, sizeof(spool_path), "/tmp/test_pusher.XXXXXX");
	return mkdtemp(spool_path) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	server_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", spool_path);
	return system(cmd) == 0 ? 0 : -1;
}

static struct pusher *start_pusher(int port)
{
	struct otlp_http_config hc;
	struct pusher_config pc = { .http = &hc, .spool_dir = spool_path,
				    .initial_backoff_ms = 20, .max_backoff_ms = 100 };
	char err[512], url[64];
	struct pusher *p;

	server_url(url, sizeof(url), port);
	if (otlp_http_config_init(&hc, url, err, sizeof(err)))
		fail_msg("config: %s", err);
	p = pusher_start(&pc, err, sizeof(err));
	if (!p)
		fail_msg("pusher_start: %s", err);
	otlp_http_config_free(&hc);
	return p;
}

static struct pusher_stats stats(struct pusher *p)
{
	struct pusher_stats s;

	pusher_stats(p, &s);
	return s;
}

static char *body_text(int i)
{
	char *b;

	assert_true(asprintf(&b, "interval %d: some encoded profile bytes", i) > 0);
	return b;
}

static void submit(struct pusher *p, int i)
{
	char *b = body_text(i);

	assert_int_equal(pusher_submit(p, b, strlen(b)), 0);
}

/* Request k's body is body i's. */
static void expect_body(int k, int i)
{
	char *want = body_text(i);

	assert_true(k < srv.n_req);
	assert_int_equal(srv.req[k].len, strlen(want));
	assert_memory_equal(srv.req[k].body, want, strlen(want));
	free(want);
}

static int spool_files(void)
{
	DIR *d = opendir(spool_path);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += strstr(de->d_name, ".otlp") != NULL;
	closedir(d);
	return n;
}

/* stderr into a file while capturing; its text back after. */
static int saved_stderr = -1;
static char capture_path[] = "/tmp/test_pusher_stderr.XXXXXX";

static void capture_start(void)
{
	int fd = mkstemp(capture_path);

	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static char *capture_end(void)
{
	FILE *f;
	char *text = calloc(1, 65536);

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	f = fopen(capture_path, "r");
	assert_non_null(f);
	(void)!fread(text, 1, 65535, f);
	fclose(f);
	unlink(capture_path);
	strcpy(capture_path, "/tmp/test_pusher_stderr.XXXXXX");
	return text;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	for (const char *s = text; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* ---- the tests ---- */

static void test_delivered_in_order(void **state)
{
	struct pusher *p;
	struct pusher_stats s;

	(void)state;
	server_start(NULL, 0);
	p = start_pusher(srv.port);
	for (int i = 0; i < 5; i++)
		submit(p, i);
	WAIT_UNTIL(stats(p).sent == 5);
	pusher_stop(p, 1000);
	s = stats(p);
	assert_int_equal(s.submitted, 5);
	assert_int_equal(s.retries, 0);
	assert_int_equal(s.spooled, 0);
	assert_int_equal(s.bytes_in, s.bytes_out);
	pusher_free(p);
	assert_int_equal(server_requests(), 5);
	for (int i = 0; i < 5; i++) {
		expect_body(i, i);
		assert_non_null(strstr(srv.req[i].head, "POST /v1development/profiles HTTP/1.1\r\n"));
		assert_non_null(strcasestr(srv.req[i].head, "\r\nContent-Type: application/x-protobuf\r\n"));
		assert_non_null(strcasestr(srv.req[i].head, "\r\nUser-Agent: collector/"));
		assert_false(srv.req[i].gzipped);
		/* the connection kept and reused */
		assert_int_equal(srv.req[i].conn, 1);
	}
	assert_int_equal(spool_files(), 0);
}

static void test_retried_503(void **state)
{
	const struct reply script[] = { { 503, "Retry-After: 0\r\n", NULL, 0 },
					{ 503, NULL, NULL, 0 } };
	struct pusher *p;

	(void)state;
	server_start(script, 2);
	p = start_pusher(srv.port);
	submit(p, 7);
	WAIT_UNTIL(stats(p).sent == 1);
	assert_int_equal(stats(p).retries, 2);
	assert_int_equal(stats(p).refused, 0);
	pusher_free(p);
	assert_int_equal(server_requests(), 3);
	for (int k = 0; k < 3; k++)
		expect_body(k, 7);
	assert_int_equal(srv.req[0].status, 503);
	assert_int_equal(srv.req[1].status, 503);
	assert_int_equal(srv.req[2].status, 200);
}

static void test_refused_400(void **state)
{
	static const char why[] = "profile rejected: no samples";
	const struct reply script[] = {
		{ 400, "Content-Type: text/plain\r\n", why, sizeof(why) - 1 },
		{ 400, "Content-Type: text/plain\r\n", why, sizeof(why) - 1 },
	};
	struct pusher *p;
	char *err;

	(void)state;
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20s3cr3t-t0ken", 1);
	server_start(script, 2);
	capture_start();
	p = start_pusher(srv.port);
	submit(p, 1);
	submit(p, 2);
	submit(p, 3);
	WAIT_UNTIL(stats(p).sent == 1 && stats(p).refused == 2);
	assert_int_equal(stats(p).retries, 0);
	assert_int_equal(stats(p).spooled, 0);
	pusher_free(p);
	err = capture_end();
	/* refused ones are not sent again; the next one is sent */
	assert_int_equal(server_requests(), 3);
	expect_body(0, 1);
	expect_body(1, 2);
	expect_body(2, 3);
	assert_non_null(strcasestr(srv.req[0].head, "\r\nauthorization: Bearer s3cr3t-t0ken\r\n"));
	/* said once per status, with the backend's message, no secret */
	assert_int_equal(count_of(err, "refused an interval: HTTP 400: profile rejected: no "
				  "samples; not retried"), 1);
	assert_non_null(strstr(err, "collector: OTLP endpoint http://127.0.0.1:"));
	assert_null(strstr(err, "s3cr3t"));
	free(err);
}

static void test_timeout_retried(void **state)
{
	const struct reply script[] = { { 0, NULL, NULL, 0 } };
	struct pusher *p;

	(void)state;
	setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "300", 1);
	server_start(script, 1);
	p = start_pusher(srv.port);
	submit(p, 4);
	WAIT_UNTIL(stats(p).sent == 1);
	assert_true(stats(p).retries >= 1);
	pusher_free(p);
	assert_int_equal(server_requests(), 2);
	expect_body(0, 4);
	expect_body(1, 4);
	assert_int_equal(srv.req[0].status, 0);
	assert_int_equal(srv.req[1].status, 200);
	/* the timed-out connection was given up, a new one made */
	assert_int_equal(srv.req[1].conn, 2);
}

static void test_down_then_up(void **state)
{
	struct pusher *p;
	uint64_t t0, took;
	int port, fd;
	char *err;

	(void)state;
	/* a port nothing listens on: one just released */
	fd = listen_any(&port);
	close(fd);
	capture_start();
	p = start_pusher(port);
	for (int i = 0; i < 3; i++)
		submit(p, i);
	WAIT_UNTIL(stats(p).spooled == 3 && stats(p).retries >= 2);
	t0 = now_ms();
	pusher_stop(p, 200);
	took = now_ms() - t0;
	err = capture_end();
	if (took > 200 + 1500)
		fail_msg("pusher_stop(200) took %llu ms", (unsigned long long)took);
	assert_int_equal(stats(p).sent, 0);
	assert_int_equal(stats(p).spooled, 3);
	/* said once, and where they stay */
	assert_int_equal(count_of(err, "intervals are kept in"), 1);
	assert_non_null(strstr(err, "3 intervals"));
	assert_non_null(strstr(err, spool_path));
	free(err);
	/* a submit after stop is refused, the body freed */
	assert_int_equal(pusher_submit(p, body_text(9), 10), -ESHUTDOWN);
	pusher_free(p);
	assert_int_equal(spool_files(), 3);

	/* the next run, with a server up: the earlier bodies first, in order */
	server_start(NULL, 0);
	p = start_pusher(srv.port);
	assert_int_equal(stats(p).spooled, 3);
	submit(p, 3);
	WAIT_UNTIL(stats(p).sent == 4);
	pusher_free(p);
	assert_int_equal(server_requests(), 4);
	for (int i = 0; i < 4; i++)
		expect_body(i, i);
	assert_int_equal(spool_files(), 0);
}

static void test_stop_cuts_hung_post(void **state)
{
	const struct reply script[] = { { 0, NULL, NULL, 0 } };
	struct pusher *p;
	uint64_t t0, took;

	(void)state;
	server_start(script, 1); /* the timeout is the default 10 s */
	p = start_pusher(srv.port);
	submit(p, 5);
	WAIT_UNTIL(server_requests() == 1);
	capture_start();
	t0 = now_ms();
	pusher_stop(p, 300);
	took = now_ms() - t0;
	free(capture_end());
	if (took > 300 + 1500)
		fail_msg("pusher_stop(300) took %llu ms with a POST hanging", (unsigned long long)took);
	assert_int_equal(stats(p).spooled, 1);
	assert_int_equal(stats(p).sent, 0);
	pusher_free(p);
	assert_int_equal(spool_files(), 1);
}

static void test_configured_header(void **state)
{
	struct pusher *p;

	(void)state;
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=se%20cret%2C1, x-tenant = t1", 1);
	server_start(NULL, 0);
	p = start_pusher(srv.port);
	submit(p, 0);
	WAIT_UNTIL(stats(p).sent == 1);
	pusher_free(p);
	assert_int_equal(server_requests(), 1);
	assert_non_null(strstr(srv.req[0].head, "\r\nx-api-key: se cret,1\r\n"));
	assert_non_null(strstr(srv.req[0].head, "\r\nx-tenant: t1\r\n"));
}

static void test_gzip(void **state)
{
	size_t n = 50000;
	char *body = malloc(n), *copy = malloc(n);
	struct pusher_stats s;
	struct pusher *p;

	(void)state;
	setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", 1);
	for (size_t i = 0; i < n; i++)
		body[i] = "profile-"[i % 8] + (i / 4096);
	memcpy(copy, body, n);
	server_start(NULL, 0);
	p = start_pusher(srv.port);
	assert_int_equal(pusher_submit(p, body, n), 0);
	WAIT_UNTIL(stats(p).sent == 1);
	s = stats(p);
	pusher_free(p);
	assert_int_equal(server_requests(), 1);
	assert_true(srv.req[0].gzipped);
	assert_int_equal(srv.req[0].len, n);
	assert_memory_equal(srv.req[0].body, copy, n);
	assert_int_equal(s.bytes_in, n);
	assert_int_equal(s.bytes_out, srv.req[0].raw_len);
	assert_true(s.bytes_out < n / 4);
	free(copy);
}

static void test_post_classified(void **state)
{
	/* google.rpc.Status { code = 3; message = "bad data" } */
	static const uint8_t status[] = { 0x08, 0x03, 0x12, 0x08, 'b', 'a', 'd', ' ',
					  'd', 'a', 't', 'a' };
	char date_header[96];
	time_t later = time(NULL) + 60;
	struct tm tm;
	const struct reply script[] = {
		{ 500, "Content-Type: application/x-protobuf\r\n", status, sizeof(status) },
		{ 429, "Retry-After: 2\r\n", NULL, 0 },
		{ 503, date_header, NULL, 0 },
		{ 413, NULL, NULL, 0 },
	};
	struct otlp_http_config hc;
	struct otlp_http_result r;
	struct otlp_http *h;
	char err[512], url[64];

	(void)state;
	strftime(date_header, sizeof(date_header), "Retry-After: %a, %d %b %Y %H:%M:%S GMT\r\n",
		 gmtime_r(&later, &tm));
	server_start(script, 4);
	server_url(url, sizeof(url), srv.port);
	assert_int_equal(otlp_http_config_init(&hc, url, err, sizeof(err)), 0);
	h = otlp_http_open(&hc);
	assert_non_null(h);
	otlp_http_config_free(&hc);

	assert_int_equal(otlp_http_post(h, "x", 1, false, &r), -EREMOTEIO);
	assert_int_equal(r.status, 500);
	assert_false(r.retryable);
	assert_string_equal(r.message, "bad data");

	assert_int_equal(otlp_http_post(h, "x", 1, false, &r), -EAGAIN);
	assert_int_equal(r.status, 429);
	assert_true(r.retryable);
	assert_int_equal(r.retry_after_ms, 2000);

	assert_int_equal(otlp_http_post(h, "x", 1, false, &r), -EAGAIN);
	assert_int_equal(r.status, 503);
	assert_true(r.retry_after_ms > 50000 && r.retry_after_ms <= 61000);

	/* too large: the OTLP spec says never retry it */
	assert_int_equal(otlp_http_post(h, "x", 1, false, &r), -EREMOTEIO);
	assert_int_equal(r.status, 413);
	assert_int_equal(r.retry_after_ms, -1);

	assert_int_equal(otlp_http_post(h, "x", 1, false, &r), 0);
	assert_int_equal(r.status, 200);

	/* interrupted: this and every later POST, at once */
	otlp_http_interrupt(h);
	assert_int_equal(otlp_http_post(h, "x", 1, false, &r), -ECANCELED);
	otlp_http_close(h);
	assert_int_equal(server_requests(), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_delivered_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retried_503, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_400, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(test_down_then_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_cuts_hung_post, setup, teardown),
		cmocka_unit_test_setup_teardown(test_configured_header, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gzip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_post_classified, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
