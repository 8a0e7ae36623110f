// SPDX-License-Identifier: GPL-2.0
/* --otlp: the run's push to an OpenTelemetry backend (push.h). */
#include "session/push.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/otlp/otlp.h"
#include "transport/otlp_http.h"
#include "transport/pusher.h"
#include "transport/spool.h"

struct push {
	struct otlp_http_config http;
	struct pusher *pusher;
	char *spool_dir;
	bool quiet;
	unsigned int encoded;       /* intervals encoded */
	uint64_t encoded_bytes;
	uint64_t encode_ns;         /* the drain loop's time spent encoding */
	unsigned int failed;        /* intervals not encoded or not taken */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int push_open(struct push **out, const struct collector_options *o)
{
	struct push *p = calloc(1, sizeof(*p));
	struct pusher_config cfg = {
		.http = &p->http,
		.spool_dir = o->otlp_spool,
		.spool_max_bytes = o->otlp_spool_bytes,
		.verbose = o->verbose,
	};
	char err[512] = "";
	int rc;

	*out = NULL;
	if (!p) {
		fprintf(stderr, "collector: out of memory\n");
		return EXIT_FAILURE_RUN;
	}
	p->quiet = o->quiet;
	rc = otlp_http_config_init(&p->http, o->otlp_url, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "collector: --otlp: %s\n", rc == -ENOMEM ? "out of memory" : err);
		push_free(p);
		return rc == -ENOMEM ? EXIT_FAILURE_RUN : EXIT_USAGE;
	}
	p->spool_dir = strdup(o->otlp_spool ? o->otlp_spool : SPOOL_DEFAULT_DIR);
	p->pusher = p->spool_dir ? pusher_start(&cfg, err, sizeof(err)) : NULL;
	if (!p->pusher) {
		fprintf(stderr, "collector: --otlp: %s\n", p->spool_dir ? err : "out of memory");
		push_free(p);
		return EXIT_OUTPUT;
	}
	if (!o->quiet)
		fprintf(stderr, "collector: pushing profiles to %s (spool %s)\n",
			p->http.display_url, p->spool_dir);
	*out = p;
	return 0;
}

int push_model(struct push *p, const struct model *m)
{
	uint64_t t0 = thread_cpu_ns();
	uint8_t *body = NULL;
	size_t len = 0;
	int err = otlp_encode(m, &body, &len);

	if (!err) {
		p->encoded++;
		p->encoded_bytes += len;
		err = pusher_submit(p->pusher, body, len);
	}
	p->encode_ns += thread_cpu_ns() - t0;
	if (err) {
		if (!p->failed++)
			fprintf(stderr, "collector: --otlp: an interval could not be pushed: %s\n",
				strerror(-err));
	}
	return err;
}

void push_finish(struct push *p)
{
	/* the exporter's own timeout, and a second for the spool */
	pusher_stop(p->pusher, (int)p->http.timeout_ms + 1000);
}

static double mib(uint64_t bytes)
{
	return bytes / (1024.0 * 1024.0);
}

void push_print_summary(FILE *out, struct push *p)
{
	struct pusher_stats s;

	pusher_stats(p->pusher, &s);
	fprintf(out, "  OTLP push       %" PRIu64 " of %u intervals accepted by %s", s.sent,
		p->encoded, p->http.display_url);
	if (s.sent)
		fprintf(out, " (%.2f MiB of protobuf, %.2f MiB sent%s)", mib(s.bytes_in),
			mib(s.bytes_out), p->http.gzip ? " gzip'd" : "");
	fputc('\n', out);
	fprintf(out, "    %" PRIu64 " retries, %" PRIu64 " refused, %" PRIu64 " dropped, %" PRIu64
		" waiting in %s (%.2f MiB)%s; encoding took %.3f s of the collector's CPU\n",
		s.retries, s.refused, s.dropped, s.spooled, p->spool_dir, mib(s.spooled_bytes),
		s.spooled ? ", sent at the next start" : "", p->encode_ns / 1e9);
	if (p->failed)
		fprintf(out, "    %u intervals could not be encoded or queued\n", p->failed);
}

const char *push_spool_dir(const struct push *p)
{
	return p->spool_dir;
}

void push_free(struct push *p)
{
	if (!p)
		return;
	pusher_free(p->pusher);
	otlp_http_config_free(&p->http);
	free(p->spool_dir);
	free(p);
}
