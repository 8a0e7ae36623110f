/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pusher: encoded request bodies handed over by the caller (the
 * profiler's drain loop, once an interval) and delivered to the OTLP
 * endpoint by one thread of its own, so that the caller never waits on
 * the network.
 *
 * pusher_submit() only queues the body in memory (a short mutex) and
 * wakes the thread.  The thread gzips it (when configured), puts it in
 * the spool (transport/spool.h: on disk, synced), then sends the spooled
 * entries one at a time, oldest first, so nothing is reordered and an
 * entry is removed only once the backend has answered it:
 *
 *   2xx                      removed, counted sent
 *   retryable (429, 502, 503, 504, no answer)
 *                            kept; the next attempt after the server's
 *                            Retry-After (at most 5 minutes), else after
 *                            an exponential backoff with jitter
 *   any other status         removed, counted refused, the status and
 *                            the backend's message said once per status
 *
 * A submit while the backend is down does not cut the backoff short: the
 * new body waits in the spool behind the older ones.  Entries an earlier
 * run left in the spool are sent first.  When the backend stays down the
 * spool's cap drops the oldest intervals (counted dropped).
 *
 * pusher_stop() takes no more bodies, spools what was queued, sends for
 * at most drain_ms (a POST still running then is cut off, and no backoff
 * is waited past it), stops the thread and says on stderr how many
 * intervals stay in the spool for the next run.  What the backend's
 * headers hold (tokens) is never printed.
 *
 * Every function may be called from any thread.
 */
#ifndef COLLECTOR_PUSHER_H
#define COLLECTOR_PUSHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/otlp_http.h"

/*
 * The backoff of the OpenTelemetry Collector's exporters (configretry):
 * 5 s first, times 1.5 after each failure, at most 30 s, each wait drawn
 * within +-50% of that.  No limit on the time spent retrying (theirs is
 * 5 minutes): the spool keeps the data, and its cap bounds what is kept.
 */
#define PUSHER_DEFAULT_INITIAL_BACKOFF_MS 5000U
#define PUSHER_DEFAULT_MAX_BACKOFF_MS 30000U
/* A Retry-After is the server's word, but a garbled one must not park
 * the pusher for a day. */
#define PUSHER_RETRY_AFTER_CAP_MS 300000L

struct pusher_config {
	const struct otlp_http_config *http; /* copied at start */
	const char *spool_dir;               /* NULL: SPOOL_DEFAULT_DIR */
	uint64_t spool_max_bytes;            /* 0: SPOOL_DEFAULT_MAX_BYTES */
	unsigned int initial_backoff_ms;     /* 0: PUSHER_DEFAULT_INITIAL_BACKOFF_MS */
	unsigned int max_backoff_ms;         /* 0: PUSHER_DEFAULT_MAX_BACKOFF_MS */
	bool verbose;                        /* a line per POST on stderr */
};

struct pusher_stats {
	uint64_t submitted;     /* bodies taken by pusher_submit() */
	uint64_t sent;          /* accepted by the backend (2xx) */
	uint64_t bytes_in;      /* of those sent: before compression */
	uint64_t bytes_out;     /* of those sent: on the wire */
	uint64_t retries;       /* attempts that failed and were to be tried again */
	uint64_t refused;       /* answered with a status not to retry */
	uint64_t dropped;       /* spool full (oldest dropped, or too large), unreadable, or not written */
	uint64_t spooled;       /* entries in the spool now */
	uint64_t spooled_bytes;
};

struct pusher;

/* Opens the spool and the HTTP handle and starts the thread.  NULL with
 * err (err_size bytes) saying why. */
struct pusher *pusher_start(const struct pusher_config *cfg, char *err, size_t err_size);

/*
 * Takes ownership of body (malloc'd, len bytes, an encoded request, not
 * compressed) and returns at once: 0, or -ESHUTDOWN after pusher_stop(),
 * -EINVAL for an empty body, -ENOMEM (body freed in every case).  A body
 * still larger than the spool's cap once compressed is dropped later.
 */
int pusher_submit(struct pusher *p, void *body, size_t len);

/* Stops (see above); returns within about drain_ms.  A second call does
 * nothing.  The statistics stay readable until pusher_free(). */
void pusher_stop(struct pusher *p, int drain_ms);

void pusher_stats(struct pusher *p, struct pusher_stats *s);

/* pusher_stop(p, 0) if not stopped yet, then frees p.  NULL is fine. */
void pusher_free(struct pusher *p);

#endif /* COLLECTOR_PUSHER_H */
