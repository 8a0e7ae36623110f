/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of the Intrusive ELF Profiler's ("sampler") full profile, as its
 * reference writer lays it out: every struct packed, little-endian,
 *
 *   header   32 bytes: u32 magic, u64 wall time (us), u64 latency (us),
 *                      u64 sample count, u32 VMMap count
 *   sample   12 bytes: f64 PMU value, u32 thread count, then per thread
 *   thread   20 bytes: u32 tid, u64 PC, u64 cputime (ns)
 *   VMMap   272 bytes: u64 address, u64 size, char label[256]
 *
 * The reference layout puts the VMMaps after the last sample; the spec's
 * README lists them right after the header ("spec" layout).
 */
#ifndef COLLECTOR_SAMPLER_READER_H
#define COLLECTOR_SAMPLER_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/infile.h"

#define SAMPLER_HEADER_SIZE 32
#define SAMPLER_SAMPLE_SIZE 12   /* without its threads */
#define SAMPLER_THREAD_SIZE 20
#define SAMPLER_VMMAP_SIZE 272
#define SAMPLER_LABEL_SIZE 256

enum sampler_magic {
	SAMPLER_MAGIC_CUSTOM = 0,
	SAMPLER_MAGIC_CURRENT = 1,
	SAMPLER_MAGIC_VOLTAGE = 2,
	SAMPLER_MAGIC_POWER = 3,
};

enum sampler_layout {
	SAMPLER_LAYOUT_AUTO = 0,      /* reading: reference, else spec */
	SAMPLER_LAYOUT_REFERENCE = 1, /* VMMaps after the samples */
	SAMPLER_LAYOUT_SPEC = 2,      /* VMMaps right after the header */
};

struct sampler_vmmap {
	uint64_t address;
	uint64_t size;
	char label[SAMPLER_LABEL_SIZE + 1]; /* up to the first NUL */
	size_t file_offset;
};

struct sampler_thread {
	uint32_t tid;
	uint64_t pc;
	uint64_t cputime;
};

struct sampler_sample {
	double pmu;
	uint32_t n_threads;
	size_t first;          /* index of its first thread in sampler_profile.threads */
	size_t file_offset;
};

struct sampler_profile {
	uint32_t magic;
	uint64_t wall_us;
	uint64_t latency_us;
	uint64_t n_samples;
	uint32_t n_vmmaps;
	enum sampler_layout layout;  /* the one the file parsed with */
	struct sampler_vmmap *vmmaps;
	struct sampler_sample *samples;
	struct sampler_thread *threads;
	size_t n_threads;            /* over all samples */
};

/* Parses buf[0..len) in `layout` (AUTO tries the reference layout, then the
 * spec's, and reports the reference layout's error when both fail).
 * Returns 0, or -EINVAL with *err filled, or -ENOMEM. */
int sampler_parse(const unsigned char *buf, size_t len, enum sampler_layout layout,
		  struct sampler_profile *p, struct format_error *err);
int sampler_read_file(const char *path, enum sampler_layout layout, struct sampler_profile *p,
		      struct format_error *err);
void sampler_profile_free(struct sampler_profile *p);

/* What collector's own files promise beyond the layout: no thread's cputime
 * decreases from one sample to the next.  0 or -EINVAL with *err. */
int sampler_check_cputime(const struct sampler_profile *p, struct format_error *err);

/* Header, VMMaps, then one line per sample and per thread. */
void sampler_print(const struct sampler_profile *p, FILE *out);

#endif /* COLLECTOR_SAMPLER_READER_H */
