// SPDX-License-Identifier: GPL-2.0
/*
 * transport/otlp_config.c and the parts of transport/otlp_http.c that need
 * no server: the endpoint from --otlp and the environment (each source's
 * precedence, the path appended or not, trailing slashes, a bad URL, the
 * URL shown without credentials); headers (precedence, percent-decoding,
 * a malformed entry refused with the variable named and no value shown);
 * compression, timeout, protocol, certificates; the google.rpc.Status
 * message reader on good bytes and on garbage; Retry-After in seconds and
 * as each HTTP date form; gzip read back by zlib.  The POSTs themselves
 * are tested against a server in test_pusher.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "transport/otlp_http.h"

static const char *const suffixes[] = { "ENDPOINT", "HEADERS", "COMPRESSION", "TIMEOUT",
					"CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY",
					"PROTOCOL" };

static void clear_env(void)
{
	char name[80];

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_%s", suffixes[i]);
		unsetenv(name);
		snprintf(name, sizeof(name), "OTEL_EXPORTER_OTLP_PROFILES_%s", suffixes[i]);
		unsetenv(name);
	}
}

static int setup(void **state)
{
	(void)state;
	clear_env();
	return 0;
}

/* config_init must succeed; its URL is want (when given). */
static void expect_url(const char *option, const char *want)
{
	struct otlp_http_config c;
	char err[512] = "";

	if (otlp_http_config_init(&c, option, err, sizeof(err)))
		fail_msg("config_init(%s): %s", option ? option : "NULL", err);
	assert_string_equal(c.url, want);
	otlp_http_config_free(&c);
}

/* config_init must fail with -EINVAL and a message holding each of the
 * NULL-terminated strings given. */
static void expect_error(const char *option, ...)
{
	struct otlp_http_config c;
	char err[512] = "";
	const char *want;
	va_list ap;

	assert_int_equal(otlp_http_config_init(&c, option, err, sizeof(err)), -EINVAL);
	assert_null(c.url);
	va_start(ap, option);
	while ((want = va_arg(ap, const char *)))
		if (!strstr(err, want))
			fail_msg("error \"%s\" does not say \"%s\"", err, want);
	va_end(ap);
}

static void test_endpoint(void **state)
{
	(void)state;
	expect_url(NULL, "http://localhost:4318/v1development/profiles");
	/* --otlp: a base URL, the path appended after one slash */
	expect_url("http://h:4318", "http://h:4318/v1development/profiles");
	expect_url("http://h:4318/", "http://h:4318/v1development/profiles");
	expect_url("https://h/base", "https://h/base/v1development/profiles");
	expect_url("https://h/base/", "https://h/base/v1development/profiles");
	expect_url("http://h:4318/v1development/profiles", "http://h:4318/v1development/profiles");
	expect_url("http://h/x?tenant=a", "http://h/x/v1development/profiles?tenant=a");
	/* OTEL_EXPORTER_OTLP_ENDPOINT: a base URL too */
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:1/prefix/", 1);
	expect_url(NULL, "http://base:1/prefix/v1development/profiles");
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:1", 1);
	expect_url(NULL, "http://base:1/v1development/profiles");
	/* the profiles variable wins, and is used as is */
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "http://sig:2/custom/path", 1);
	expect_url(NULL, "http://sig:2/custom/path");
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "http://sig:2", 1);
	expect_url(NULL, "http://sig:2/");
	/* --otlp wins over both */
	expect_url("http://opt:3", "http://opt:3/v1development/profiles");
	/* an empty variable counts as unset */
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "", 1);
	expect_url(NULL, "http://base:1/v1development/profiles");
	clear_env();
}

static void test_bad_url(void **state)
{
	(void)state;
	expect_error("ftp://h/", "--otlp", "http://", NULL);
	expect_error("localhost:4318", "--otlp", "http://", NULL);
	expect_error("http://", "--otlp", NULL);
	expect_error("", "--otlp", NULL);
	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "grpc://h:4317", 1);
	expect_error(NULL, "OTEL_EXPORTER_OTLP_ENDPOINT", NULL);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "h:4318/x", 1);
	expect_error(NULL, "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", NULL);
	clear_env();
}

static void test_display_url(void **state)
{
	struct otlp_http_config c;
	char err[512];

	(void)state;
	assert_int_equal(otlp_http_config_init(&c, "https://user:s3cret@h:4318/p?token=t0k", err,
					       sizeof(err)), 0);
	assert_non_null(strstr(c.url, "s3cret"));
	assert_non_null(strstr(c.url, "token=t0k"));
	assert_null(strstr(c.display_url, "s3cret"));
	assert_null(strstr(c.display_url, "user"));
	assert_null(strstr(c.display_url, "t0k"));
	assert_string_equal(c.display_url, "https://h:4318/p/v1development/profiles");
	otlp_http_config_free(&c);
}

static void test_headers(void **state)
{
	struct otlp_http_config c;
	char err[512];

	(void)state;
	setenv("OTEL_EXPORTER_OTLP_HEADERS",
	       " api-key = abc%20def ,x-tenant=a%2Cb%3Dc,,empty=,plus=a+b", 1);
	assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.n_headers, 4);
	assert_string_equal(c.headers[0].name, "api-key");
	assert_string_equal(c.headers[0].value, "abc def");
	assert_string_equal(c.headers[1].name, "x-tenant");
	assert_string_equal(c.headers[1].value, "a,b=c");
	assert_string_equal(c.headers[2].name, "empty");
	assert_string_equal(c.headers[2].value, "");
	assert_string_equal(c.headers[3].value, "a+b");
	otlp_http_config_free(&c);
	/* the profiles variable wins: the other is not merged in */
	setenv("OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "only=this", 1);
	assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.n_headers, 1);
	assert_string_equal(c.headers[0].name, "only");
	assert_string_equal(c.headers[0].value, "this");
	otlp_http_config_free(&c);
	clear_env();
}

static void test_bad_headers(void **state)
{
	(void)state;
	/* no '=': the variable and the entry named, the values never */
	setenv("OTEL_EXPORTER_OTLP_HEADERS", "a=tok3n,justtext", 1);
	expect_error(NULL, "OTEL_EXPORTER_OTLP_HEADERS", "entry 2", "'='", NULL);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "k=%zzsecret", 1);
	expect_error(NULL, "OTEL_EXPORTER_OTLP_PROFILES_HEADERS", "entry 1", "%-escape", NULL);
	unsetenv("OTEL_EXPORTER_OTLP_PROFILES_HEADERS");
	{
		struct otlp_http_config c;
		char err[512];
		const char *bad[] = { "a=tok3n,justtext", "k=%zztok3n", "k=tok3n%",
				      "k=tok3n%0d%0aX-Injected: 1", "bad key=tok3n", "=tok3n",
				      "k=tok\x01" "3n", "content-type=tok3n" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			setenv("OTEL_EXPORTER_OTLP_HEADERS", bad[i], 1);
			err[0] = '\0';
			assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), -EINVAL);
			if (strstr(err, "tok3n") || strstr(err, "3n"))
				fail_msg("error for %s shows the value: %s", bad[i], err);
			assert_non_null(strstr(err, "OTEL_EXPORTER_OTLP_HEADERS"));
		}
		/* parsed alone, into a config the caller frees: all or nothing */
		memset(&c, 0, sizeof(c));
		assert_int_equal(otlp_http_parse_headers(&c, "X", "a=1,b", err, sizeof(err)),
				 -EINVAL);
		assert_int_equal(c.n_headers, 0);
		otlp_http_config_free(&c);
	}
	clear_env();
}

static void test_compression_timeout(void **state)
{
	struct otlp_http_config c;
	char err[512];

	(void)state;
	assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), 0);
	assert_true(c.gzip);
	assert_int_equal(c.timeout_ms, 10000);
	otlp_http_config_free(&c);
	setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "none", 1);
	setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500", 1);
	assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), 0);
	assert_false(c.gzip);
	assert_int_equal(c.timeout_ms, 2500);
	otlp_http_config_free(&c);
	/* the profiles variables win */
	setenv("OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", "gzip", 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "300", 1);
	assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), 0);
	assert_true(c.gzip);
	assert_int_equal(c.timeout_ms, 300);
	otlp_http_config_free(&c);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION", "zstd", 1);
	expect_error(NULL, "OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION=zstd", "gzip or none", NULL);
	unsetenv("OTEL_EXPORTER_OTLP_PROFILES_COMPRESSION");
	const char *bad[] = { "abc", "-5", "0", "10s", "", "99999999999999999999" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", bad[i], 1);
		if (!bad[i][0]) { /* empty: unset, the other one's 2500 */
			assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), 0);
			assert_int_equal(c.timeout_ms, 2500);
			otlp_http_config_free(&c);
			continue;
		}
		expect_error(NULL, "OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "milliseconds", NULL);
	}
	clear_env();
	/* only http/protobuf is spoken */
	setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
	expect_error(NULL, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "http/protobuf", NULL);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "http/protobuf", 1);
	assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), 0);
	otlp_http_config_free(&c);
	clear_env();
}

static void test_certificates(void **state)
{
	struct otlp_http_config c;
	char err[512], ca[] = "/tmp/test_otlp_ca.XXXXXX";
	int fd = mkstemp(ca);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", "/no/such/ca.pem", 1);
	expect_error(NULL, "OTEL_EXPORTER_OTLP_CERTIFICATE=/no/such/ca.pem", "cannot be read",
		     NULL);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_CERTIFICATE", ca, 1);
	setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", ca, 1);
	setenv("OTEL_EXPORTER_OTLP_PROFILES_CLIENT_KEY", ca, 1);
	assert_int_equal(otlp_http_config_init(&c, NULL, err, sizeof(err)), 0);
	assert_string_equal(c.ca_file, ca);
	assert_string_equal(c.client_cert, ca);
	assert_string_equal(c.client_key, ca);
	otlp_http_config_free(&c);
	/* a key without its certificate */
	unsetenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE");
	expect_error(NULL, "CLIENT_KEY", "CLIENT_CERTIFICATE", NULL);
	unlink(ca);
	clear_env();
}

/* google.rpc.Status { code = 3; message = "bad data"; details = [...] } */
static const uint8_t status_good[] = { 0x08, 0x03, 0x12, 0x08, 'b', 'a', 'd', ' ', 'd', 'a',
				       't', 'a', 0x1a, 0x03, 0x0a, 0x01, 'x' };

static void test_status_message(void **state)
{
	char out[256], small[5];
	uint8_t buf[64];

	(void)state;
	assert_int_equal(otlp_status_message(status_good, sizeof(status_good), out, sizeof(out)), 0);
	assert_string_equal(out, "bad data");
	/* fixed64 and fixed32 fields skipped; unprintable bytes shown as '?' */
	{
		const uint8_t b[] = { 0x21, 1, 2, 3, 4, 5, 6, 7, 8, 0x2d, 1, 2, 3, 4,
				      0x12, 0x04, 'a', '\n', 0x07, 'b' };

		assert_int_equal(otlp_status_message(b, sizeof(b), out, sizeof(out)), 0);
		assert_string_equal(out, "a ?b");
	}
	/* truncated to the room given */
	assert_int_equal(otlp_status_message(status_good, sizeof(status_good), small,
					     sizeof(small)), 0);
	assert_string_equal(small, "bad"); /* and trailing blanks trimmed */
	/* no message field, empty, or not a Status */
	assert_int_equal(otlp_status_message(status_good, 2, out, sizeof(out)), -EBADMSG);
	assert_int_equal(otlp_status_message(NULL, 0, out, sizeof(out)), -EBADMSG);
	{
		const char *text = "Bad Request: profile is empty";

		assert_int_equal(otlp_status_message((const uint8_t *)text, strlen(text), out,
						     sizeof(out)), -EBADMSG);
	}
	/* a length past the end, in the message and in a skipped field */
	{
		const uint8_t b1[] = { 0x12, 0x7f, 'a' };
		const uint8_t b2[] = { 0x1a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x12, 0x01, 'a' };
		const uint8_t b3[] = { 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0x01 };
		const uint8_t b4[] = { 0x0b, 0x12, 0x01, 'a' }; /* a group */
		const uint8_t b5[] = { 0x02, 0x00 };            /* field 0 */
		const uint8_t b6[] = { 0x21, 1, 2, 3 };         /* fixed64 cut */

		assert_int_equal(otlp_status_message(b1, sizeof(b1), out, sizeof(out)), -EBADMSG);
		assert_int_equal(otlp_status_message(b2, sizeof(b2), out, sizeof(out)), -EBADMSG);
		assert_int_equal(otlp_status_message(b3, sizeof(b3), out, sizeof(out)), -EBADMSG);
		assert_int_equal(otlp_status_message(b4, sizeof(b4), out, sizeof(out)), -EBADMSG);
		assert_int_equal(otlp_status_message(b5, sizeof(b5), out, sizeof(out)), -EBADMSG);
		assert_int_equal(otlp_status_message(b6, sizeof(b6), out, sizeof(out)), -EBADMSG);
	}
	/* garbage of every kind: never a read out of bounds (ASan), always a
	 * terminated string */
	srand(1);
	for (int round = 0; round < 20000; round++) {
		size_t n = rand() % sizeof(buf);
		uint8_t *heap;

		for (size_t i = 0; i < n; i++)
			buf[i] = round % 3 ? rand() : (rand() % 4 ? 0x12 : 0x80 | rand());
		heap = malloc(n ? n : 1);
		memcpy(heap, buf, n);
		out[sizeof(out) - 1] = 'X';
		otlp_status_message(heap, n, out, sizeof(out));
		assert_true(strlen(out) < sizeof(out));
		free(heap);
	}
}

static void test_retry_after(void **state)
{
	/* Sun, 06 Nov 1994 08:49:37 GMT, RFC 9110's example */
	const time_t date = 784111777;

	(void)state;
	assert_int_equal(otlp_retry_after_ms("0", date), 0);
	assert_int_equal(otlp_retry_after_ms("5", date), 5000);
	assert_int_equal(otlp_retry_after_ms(" 120 ", date), 120000);
	assert_int_equal(otlp_retry_after_ms("99999999999999999999999", date), LONG_MAX);
	assert_int_equal(otlp_retry_after_ms("5s", date), -1);
	assert_int_equal(otlp_retry_after_ms("-5", date), -1);
	assert_int_equal(otlp_retry_after_ms("soon", date), -1);
	assert_int_equal(otlp_retry_after_ms("", date), -1);
	/* the three date forms HTTP allows */
	assert_int_equal(otlp_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", date - 30), 30000);
	assert_int_equal(otlp_retry_after_ms("Sunday, 06-Nov-94 08:49:37 GMT", date - 7), 7000);
	assert_int_equal(otlp_retry_after_ms("Sun Nov  6 08:49:37 1994", date - 1), 1000);
	/* a date already past: now */
	assert_int_equal(otlp_retry_after_ms("Sun, 06 Nov 1994 08:49:37 GMT", date + 60), 0);
}

static void test_gzip(void **state)
{
	size_t n = 100000, out_n, back_n;
	uint8_t *in = malloc(n), *back = malloc(n + 1);
	void *out;
	z_stream zs = { 0 };

	(void)state;
	for (size_t i = 0; i < n; i++)
		in[i] = (uint8_t)(i % 251 < 200 ? 'a' + i % 7 : i * 31);
	assert_int_equal(otlp_gzip(in, n, &out, &out_n), 0);
	assert_true(out_n < n / 2);
	assert_int_equal(((uint8_t *)out)[0], 0x1f);
	assert_int_equal(((uint8_t *)out)[1], 0x8b);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = out;
	zs.avail_in = out_n;
	zs.next_out = back;
	zs.avail_out = n + 1;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	back_n = zs.total_out;
	inflateEnd(&zs);
	assert_int_equal(back_n, n);
	assert_memory_equal(back, in, n);
	free(out);
	/* an empty body is a valid gzip stream too */
	assert_int_equal(otlp_gzip("", 0, &out, &out_n), 0);
	assert_true(out_n >= 20);
	free(out);
	free(in);
	free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_endpoint, setup),
		cmocka_unit_test_setup(test_bad_url, setup),
		cmocka_unit_test_setup(test_display_url, setup),
		cmocka_unit_test_setup(test_headers, setup),
		cmocka_unit_test_setup(test_bad_headers, setup),
		cmocka_unit_test_setup(test_compression_timeout, setup),
		cmocka_unit_test_setup(test_certificates, setup),
		cmocka_unit_test(test_status_message),
		cmocka_unit_test(test_retry_after),
		cmocka_unit_test(test_gzip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
