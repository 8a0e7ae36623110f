/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DCPI per-image profiles, binary version 0.07 (dcpiformat(4)): the reader,
 * and the low-level encoder the writer (dcpi.c) and its tests share.
 *
 * A profile is an ASCII header of "keyword value" lines ended by a line
 * "samples" (optionally followed by spaces), then little-endian u32 chunks
 * {offset, number, count[number]} with strictly increasing, non-overlapping
 * offsets relative to tstart, then a footer {addresses with a sample, sum of
 * the counts}.
 */
#ifndef COLLECTOR_DCPI_READER_H
#define COLLECTOR_DCPI_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/infile.h"

/* One header line, split at the first run of blanks: "key value". */
struct dcpi_line {
	char *key;
	char *value;
	size_t offset;        /* byte offset of the line in the file */
};

struct dcpi_chunk {
	uint32_t offset;      /* relative to tstart */
	uint32_t number;      /* addresses (and counts) in the chunk */
	size_t first;         /* index of its first count in dcpi_profile.counts */
	size_t file_offset;   /* byte offset of the chunk in the file */
};

struct dcpi_profile {
	struct dcpi_line *lines;  /* every header line in file order */
	size_t n_lines;
	size_t header_len;        /* bytes up to and including the terminator's '\n' */

	/* Fields decoded from the header (pointers into lines[]). */
	const char *image;        /* hex digits */
	const char *epoch;        /* YYMMDDHHMM or YYYYMMDDHHMMSS */
	const char *platform;
	const char *event;
	const char *path;         /* NULL when absent */
	const char *version;      /* NULL when absent (read as 0.07) */
	uint64_t period, tsize, cpuspeed;
	uint64_t tstart;          /* 0 when absent */
	bool has_tstart;
	uint64_t cpucount;        /* 0 when absent */
	uint64_t clamped;         /* "clamped N" line (collector's), 0 when absent */

	struct dcpi_chunk *chunks;
	size_t n_chunks;
	uint32_t *counts;         /* every chunk's counts, in file order */
	size_t n_counts;
	uint32_t total_offsets;   /* footer */
	uint32_t total_samples;
};

/* Where and why a file was rejected. */
/* Parses buf[0..len).  Returns 0, or -EINVAL with *err filled (or -ENOMEM).
 * On failure *p holds nothing that needs freeing. */
int dcpi_parse(const unsigned char *buf, size_t len, struct dcpi_profile *p,
	       struct format_error *err);
/* Reads and parses a file; -errno when it cannot be read. */
int dcpi_read_file(const char *path, struct dcpi_profile *p, struct format_error *err);
void dcpi_profile_free(struct dcpi_profile *p);

/* Prints a parsed profile as text: header lines, chunks with one
 * "address count" line per address, then the footer. */
void dcpi_print(const struct dcpi_profile *p, FILE *out);

/* ---- encoder (dcpi.c) -------------------------------------------------- */

/* What one image profile's header says. */
struct dcpi_image_info {
	const char *path;         /* image path as mapped */
	int64_t mtime;            /* seconds since the Unix epoch, UTC */
	uint32_t crc32;           /* CRC-32 of the whole image file */
	uint64_t tstart, tsize;   /* text segment, file-relative */
	uint64_t run_start_ns;    /* epoch ns: start of the profiling epoch */
	const char *event;        /* perf event name, e.g. "cpu-clock" */
	const char *unit;         /* its unit, "ns" when NULL */
	uint64_t period;          /* event units (ns for cpu-clock) per sample */
	uint32_t cpu_mhz;         /* 0 when unknown */
	uint32_t ncpus;
	uint64_t lost;            /* events the run lost, 0: no `lost` line */
};

/* A sampled address (file-relative, not relative to tstart) and its count. */
struct dcpi_addr_count {
	uint64_t addr;
	uint64_t count;
};

/* Statistics of one encoded profile. */
struct dcpi_encode_stats {
	uint64_t chunks;
	uint64_t clamped;         /* counts and totals clamped to UINT32_MAX */
	uint64_t outside;         /* samples whose address has no u32 offset from tstart */
};

/*
 * Writes one complete profile to fp.  `counts` must be sorted by address,
 * without duplicates and without zero counts.  Addresses below tstart or
 * more than UINT32_MAX above it cannot be encoded; their samples are left out
 * and counted in an "outside" header line.  Returns 0 or -EIO.
 */
int dcpi_encode(FILE *fp, const struct dcpi_image_info *info,
		const struct dcpi_addr_count *counts, size_t n, struct dcpi_encode_stats *st);

/* The header's `image` field: 14 digits of the mtime (UTC yyyymmddhhmmss)
 * then the low 6 hex digits of the CRC-32.  buf needs 21 bytes. */
void dcpi_image_field(char buf[21], int64_t mtime, uint32_t crc32);
/* The header's `epoch` field, UTC YYMMDDHHMM.  buf needs 11 bytes. */
void dcpi_epoch_field(char buf[11], uint64_t epoch_ns);

#endif /* COLLECTOR_DCPI_READER_H */
