/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The spool: request bodies not yet accepted by the backend, on disk, in
 * the order they were put, so that nothing is lost while the backend is
 * down or the collector restarts.
 *
 * One directory (SPOOL_DEFAULT_DIR unless given), opened with
 * safedir_open() (no symlink followed, nothing writable by others; it and
 * at most its parent made when missing), and locked with flock() so that
 * two collectors never send the same entries.  One file per body, named
 * <20-digit sequence>.otlp, plus .gz when the body is gzip-compressed:
 * the name sorts as the sequence, and says what the bytes are, so an
 * operator can send one by hand (curl --data-binary @FILE).  The bytes
 * are the body as it goes on the wire, nothing added.
 *
 * A body is written under a temporary name (".tmp." and the sequence)
 * with O_EXCL|O_NOFOLLOW, 0600 (a profile names functions and files),
 * fsync'd, renamed to its name, and the directory fsync'd: only then does
 * spool_put() return, so a crash leaves either a whole entry or a
 * temporary, and temporaries are removed by the next spool_open().  The
 * next sequence follows the highest one there, across restarts.
 *
 * At most max_bytes of bodies are kept: a put that would go over removes
 * the oldest entries first (they are the least useful: a profiling
 * backend shows the recent past), and a body larger than max_bytes on its
 * own is refused; both counted as dropped.  An entry that cannot be read
 * back as it was written (not a regular file of ours, not its recorded
 * size, not gzip when named .gz) is removed, counted as dropped and said
 * on stderr once, never retried.
 *
 * Not thread-safe: one owner (the pusher's thread) calls everything.
 */
#ifndef COLLECTOR_SPOOL_H
#define COLLECTOR_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_DEFAULT_DIR "/var/spool/collector/otlp"
/* About four hours of a busy machine's 10 s intervals at 180 KB each
 * (gzipped): an outage a site notices and mends before the oldest go. */
#define SPOOL_DEFAULT_MAX_BYTES (256ULL << 20)

struct spool;

struct spool_entry {
	uint64_t seq;
	void *body;   /* malloc'd; spool_entry_free() */
	size_t len;
	bool gzipped;
};

/* dir: NULL for SPOOL_DEFAULT_DIR; max_bytes: 0 for SPOOL_DEFAULT_MAX_BYTES.
 * NULL with err (err_size bytes) saying why: the directory refused (and
 * which component), in use by another collector, or no memory. */
struct spool *spool_open(const char *dir, uint64_t max_bytes, char *err, size_t err_size);
void spool_close(struct spool *s);

/* Writes body (len bytes, gzip-compressed when gzipped) as the newest
 * entry.  0; -EFBIG when len > max_bytes (counted dropped); another
 * negative errno when it could not be written (nothing kept). */
int spool_put(struct spool *s, const void *body, size_t len, bool gzipped);

/* Reads the oldest entry into e.  0; -ENOENT when the spool is empty;
 * -ENOMEM.  Unreadable entries on the way are removed and dropped. */
int spool_oldest(struct spool *s, struct spool_entry *e);
void spool_entry_free(struct spool_entry *e);

/* Removes entry seq: 0, -ENOENT when there is none, or the error of
 * unlink (the entry is forgotten all the same). */
int spool_remove(struct spool *s, uint64_t seq);

size_t spool_count(const struct spool *s);
uint64_t spool_bytes(const struct spool *s);
uint64_t spool_dropped(const struct spool *s);
const char *spool_dir(const struct spool *s);

#endif /* COLLECTOR_SPOOL_H */
