// SPDX-License-Identifier: GPL-2.0
/* Bodies queued by the caller, spooled and sent by one thread (see
 * pusher.h). */
#include "transport/pusher.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "transport/spool.h"

/* the exponential backoff's factor and jitter (see pusher.h) */
#define BACKOFF_MULTIPLIER 1.5
#define BACKOFF_JITTER 0.5
/* after a local failure (no memory to read an entry) */
#define LOCAL_RETRY_MS 1000

struct pending {
	struct pending *next;
	void *body;
	size_t len;
};

struct pusher {
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* to the thread: work, or stop */
	pthread_cond_t finished;   /* to pusher_stop(): the thread is done */
	pthread_t thread;
	bool started, stopping, done, joined;

	/* under lock */
	struct pending *head, **tail;
	uint64_t queued_bytes;
	uint64_t deadline_ms;      /* when stopping: monotonic */
	struct pusher_stats stats;
	uint64_t dropped_here;     /* dropped before reaching the spool */

	/* the thread's (and pusher_stop's after the join) */
	struct spool *spool;
	struct otlp_http *http;
	char *url;                 /* display_url */
	uint64_t max_bytes;
	bool gzip, verbose;
	unsigned int initial_ms, max_ms;
	double backoff_ms;         /* the next wait's middle; 0: no failure yet */
	uint64_t next_attempt_ms;  /* monotonic; 0: now */
	unsigned int seed;
	bool outage_said;
	bool status_said[600];
	int put_errno_said;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits on cond (CLOCK_MONOTONIC) until deadline ms: ETIMEDOUT or 0. */
static int wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t deadline)
{
	struct timespec ts = { .tv_sec = deadline / 1000, .tv_nsec = deadline % 1000 * 1000000 };

	return pthread_cond_timedwait(cond, lock, &ts);
}

/* The next retry's wait: the current interval within +-BACKOFF_JITTER,
 * and the interval grown for the one after. */
static uint64_t next_backoff(struct pusher *p)
{
	double mid, r;

	if (p->backoff_ms == 0)
		p->backoff_ms = p->initial_ms;
	mid = p->backoff_ms;
	r = (double)rand_r(&p->seed) / RAND_MAX; /* 0..1 */
	p->backoff_ms *= BACKOFF_MULTIPLIER;
	if (p->backoff_ms > p->max_ms)
		p->backoff_ms = p->max_ms;
	return (uint64_t)(mid * (1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * r));
}

/* The size before compression of a gzip body: its trailer's ISIZE (the
 * length modulo 2^32, exact for any body OTLP would take). */
static uint64_t gzip_isize(const uint8_t *b, size_t n)
{
	if (n < 4)
		return n;
	return (uint64_t)b[n - 4] | (uint64_t)b[n - 3] << 8 | (uint64_t)b[n - 2] << 16 |
	       (uint64_t)b[n - 1] << 24;
}

/* The spool's figures into the statistics (lock held). */
static void note_spool(struct pusher *p)
{
	p->stats.spooled = spool_count(p->spool);
	p->stats.spooled_bytes = spool_bytes(p->spool);
	p->stats.dropped = p->dropped_here + spool_dropped(p->spool);
}

/* Gzips (when configured) and spools one submitted body (lock not held). */
static void spool_one(struct pusher *p, struct pending *q)
{
	void *gz = NULL;
	size_t gz_n = 0;
	int ret;

	/* no memory to compress: spooled as it is, still deliverable */
	if (p->gzip && otlp_gzip(q->body, q->len, &gz, &gz_n) == 0)
		ret = spool_put(p->spool, gz, gz_n, true);
	else
		ret = spool_put(p->spool, q->body, q->len, false);
	free(gz);
	if (ret && ret != -EFBIG) {
		pthread_mutex_lock(&p->lock);
		p->dropped_here++;
		pthread_mutex_unlock(&p->lock);
		if (p->put_errno_said != -ret)
			fprintf(stderr, "collector: an interval could not be spooled in %s (%s): "
				"dropped\n", spool_dir(p->spool), strerror(-ret));
		p->put_errno_said = -ret;
	}
	free(q->body);
	free(q);
}

/* What the backend answered, into the statistics, the spool and the
 * schedule of the next attempt. */
static void after_post(struct pusher *p, const struct spool_entry *e, int ret,
		       const struct otlp_http_result *r)
{
	char why[300];
	uint64_t delay;

	if (ret == 0 || ret == -EREMOTEIO) {
		spool_remove(p->spool, e->seq);
		p->backoff_ms = 0;
		p->next_attempt_ms = 0;
		if (p->outage_said)
			fprintf(stderr, "collector: OTLP endpoint %s accepts intervals again\n", p->url);
		p->outage_said = false;
	}
	if (ret == -EREMOTEIO && !p->status_said[r->status % 600]) {
		p->status_said[r->status % 600] = true;
		fprintf(stderr, "collector: OTLP endpoint %s refused an interval: HTTP %ld: %s; "
			"not retried\n", p->url, r->status, r->message[0] ? r->message : "(no message)");
	}
	if (ret && ret != -EREMOTEIO && ret != -ECANCELED) {
		if (r->retry_after_ms >= 0)
			delay = r->retry_after_ms < PUSHER_RETRY_AFTER_CAP_MS ? r->retry_after_ms
									  : PUSHER_RETRY_AFTER_CAP_MS;
		else
			delay = next_backoff(p);
		p->next_attempt_ms = now_ms() + delay;
		if (r->status)
			snprintf(why, sizeof(why), "HTTP %ld%s%s", r->status, r->message[0] ? ": " : "",
				 r->message);
		else
			snprintf(why, sizeof(why), "%s", r->message);
		if (!p->outage_said)
			fprintf(stderr, "collector: OTLP endpoint %s unavailable (%s): intervals are "
				"kept in %s and sent once it accepts them\n", p->url, why,
				spool_dir(p->spool));
		p->outage_said = true;
		if (p->verbose)
			fprintf(stderr, "collector: OTLP: interval %" PRIu64 " not sent (%s); next "
				"try in %" PRIu64 " ms\n", e->seq, why, delay);
	} else if (p->verbose && ret != -ECANCELED) {
		fprintf(stderr, "collector: OTLP: interval %" PRIu64 " (%zu bytes) %s: HTTP %ld\n",
			e->seq, e->len, ret ? "refused" : "sent", r->status);
	}
	pthread_mutex_lock(&p->lock);
	if (ret == 0) {
		p->stats.sent++;
		p->stats.bytes_out += e->len;
		p->stats.bytes_in += e->gzipped ? gzip_isize(e->body, e->len) : e->len;
	} else if (ret == -EREMOTEIO) {
		p->stats.refused++;
	} else if (ret != -ECANCELED) {
		p->stats.retries++;
	}
	note_spool(p);
	pthread_mutex_unlock(&p->lock);
}

/* One attempt at the oldest spooled entry (lock not held). */
static void send_oldest(struct pusher *p)
{
	struct otlp_http_result r;
	struct spool_entry e;
	int ret = spool_oldest(p->spool, &e);

	if (ret) {
		/* -ENOENT: every entry left was unreadable, and is gone */
		if (ret == -ENOMEM)
			p->next_attempt_ms = now_ms() + LOCAL_RETRY_MS;
		pthread_mutex_lock(&p->lock);
		note_spool(p);
		pthread_mutex_unlock(&p->lock);
		return;
	}
	ret = otlp_http_post(p->http, e.body, e.len, e.gzipped, &r);
	after_post(p, &e, ret, &r);
	spool_entry_free(&e);
}

static void *run(void *arg)
{
	struct pusher *p = arg;
	struct pending *q;
	uint64_t now;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		/* what was submitted goes to disk first, whatever else */
		while ((q = p->head)) {
			p->head = NULL;
			p->tail = &p->head;
			p->queued_bytes = 0;
			pthread_mutex_unlock(&p->lock);
			while (q) {
				struct pending *next = q->next;

				spool_one(p, q);
				q = next;
			}
			pthread_mutex_lock(&p->lock);
		}
		note_spool(p);
		now = now_ms();
		if (p->stopping && now >= p->deadline_ms)
			break;
		if (!spool_count(p->spool)) {
			if (p->stopping)
				break;
			pthread_cond_wait(&p->wake, &p->lock);
			continue;
		}
		if (now < p->next_attempt_ms) {
			/* no backoff waited past the drain's end */
			if (p->stopping && p->next_attempt_ms >= p->deadline_ms)
				break;
			wait_until(&p->wake, &p->lock, p->next_attempt_ms);
			continue;
		}
		pthread_mutex_unlock(&p->lock);
		send_oldest(p);
		pthread_mutex_lock(&p->lock);
	}
	p->done = true;
	pthread_cond_broadcast(&p->finished);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static int init_sync(struct pusher *p)
{
	pthread_condattr_t attr;
	int ret;

	if (pthread_condattr_init(&attr))
		return -ENOMEM;
	ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&p->wake, &attr);
	if (!ret && (ret = pthread_cond_init(&p->finished, &attr)))
		pthread_cond_destroy(&p->wake);
	pthread_condattr_destroy(&attr);
	if (ret)
		return -ret;
	pthread_mutex_init(&p->lock, NULL);
	return 0;
}

struct pusher *pusher_start(const struct pusher_config *cfg, char *err, size_t err_size)
{
	struct pusher *p = calloc(1, sizeof(*p));
	sigset_t all, old;
	int ret;

	if (!p || init_sync(p)) {
		free(p);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	p->tail = &p->head;
	p->gzip = cfg->http->gzip;
	p->verbose = cfg->verbose;
	p->initial_ms = cfg->initial_backoff_ms ? cfg->initial_backoff_ms
						: PUSHER_DEFAULT_INITIAL_BACKOFF_MS;
	p->max_ms = cfg->max_backoff_ms ? cfg->max_backoff_ms : PUSHER_DEFAULT_MAX_BACKOFF_MS;
	if (p->max_ms < p->initial_ms)
		p->max_ms = p->initial_ms;
	p->seed = (unsigned int)getpid() ^ (unsigned int)now_ms();
	p->spool = spool_open(cfg->spool_dir, cfg->spool_max_bytes, err, err_size);
	if (!p->spool)
		goto fail;
	p->max_bytes = cfg->spool_max_bytes ? cfg->spool_max_bytes : SPOOL_DEFAULT_MAX_BYTES;
	p->url = strdup(cfg->http->display_url ? cfg->http->display_url : "");
	p->http = p->url ? otlp_http_open(cfg->http) : NULL;
	if (!p->http) {
		snprintf(err, err_size, "OTLP: libcurl could not be set up: %s", strerror(errno));
		goto fail;
	}
	note_spool(p);
	/* the profiler's signals (SIGINT, SIGCHLD...) stay with its own
	 * threads: this one blocks them all; so a SIGPIPE from a TLS write to
	 * a connection the server closed (OpenSSL writes without
	 * MSG_NOSIGNAL) only stays pending here, and the write fails */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&p->thread, NULL, run, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		snprintf(err, err_size, "OTLP: no thread: %s", strerror(ret));
		goto fail;
	}
	p->started = true;
	return p;
fail:
	pusher_free(p);
	return NULL;
}

int pusher_submit(struct pusher *p, void *body, size_t len)
{
	struct pending *q = NULL;
	int ret = 0;

	if (!len)
		ret = -EINVAL;
	else if (!(q = malloc(sizeof(*q))))
		ret = -ENOMEM;
	pthread_mutex_lock(&p->lock);
	if (!ret && p->stopping)
		ret = -ESHUTDOWN;
	if (ret != -EINVAL && ret != -ESHUTDOWN) {
		p->stats.submitted++;
		if (ret) {
			p->dropped_here++;
			p->stats.dropped++;
		}
	}
	if (!ret) {
		/* the backend down and the disk slow: what waits in memory is
		 * bounded like the spool, the oldest dropped */
		while (p->head && p->queued_bytes + len > p->max_bytes) {
			struct pending *old = p->head;

			p->head = old->next;
			if (!p->head)
				p->tail = &p->head;
			p->queued_bytes -= old->len;
			p->dropped_here++;
			p->stats.dropped++;
			free(old->body);
			free(old);
		}
		*q = (struct pending){ .body = body, .len = len };
		*p->tail = q;
		p->tail = &q->next;
		p->queued_bytes += len;
		pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->lock);
	if (ret) {
		free(q);
		free(body);
	}
	return ret;
}

void pusher_stop(struct pusher *p, int drain_ms)
{
	uint64_t n;

	if (!p || !p->started || p->joined)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = true;
	p->deadline_ms = now_ms() + (drain_ms > 0 ? drain_ms : 0);
	/* the last chance of this run: one attempt now, whatever the
	 * backoff said (the backend may be back), then the backoff again
	 * within the drain */
	if (drain_ms > 0)
		p->next_attempt_ms = 0;
	pthread_cond_broadcast(&p->wake);
	while (!p->done && wait_until(&p->finished, &p->lock, p->deadline_ms) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&p->lock);
	/* a POST still running at the deadline is cut off; its entry stays */
	otlp_http_interrupt(p->http);
	pthread_join(p->thread, NULL);
	p->joined = true;
	n = spool_count(p->spool);
	if (n)
		fprintf(stderr, "collector: %" PRIu64 " interval%s (%" PRIu64 " bytes) not yet "
			"accepted by %s stay%s in %s for the next run\n", n, n == 1 ? "" : "s",
			spool_bytes(p->spool), p->url, n == 1 ? "s" : "", spool_dir(p->spool));
}

void pusher_stats(struct pusher *p, struct pusher_stats *s)
{
	pthread_mutex_lock(&p->lock);
	*s = p->stats;
	pthread_mutex_unlock(&p->lock);
}

void pusher_free(struct pusher *p)
{
	struct pending *q;

	if (!p)
		return;
	pusher_stop(p, 0);
	while ((q = p->head)) {
		p->head = q->next;
		free(q->body);
		free(q);
	}
	otlp_http_close(p->http);
	spool_close(p->spool);
	free(p->url);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->finished);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
