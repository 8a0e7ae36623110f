// SPDX-License-Identifier: GPL-2.0
/*
 * Reader of sampler full profiles, by the reference reader's rules: packed
 * structs (header 32, sample 12, thread 20, VMMap 272 bytes), nothing
 * before, between or after them.  Every count from the file is checked
 * against the bytes that remain before it is trusted.
 */
#include "formats/sampler/sampler_reader.h"
#include "formats/format.h"
#include "lib/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void sampler_profile_free(struct sampler_profile *p)
{
	free(p->vmmaps);
	free(p->samples);
	free(p->threads);
	memset(p, 0, sizeof(*p));
}

static void parse_vmmaps(const unsigned char *buf, size_t pos, struct sampler_profile *p)
{
	for (uint32_t i = 0; i < p->n_vmmaps; i++, pos += SAMPLER_VMMAP_SIZE) {
		struct sampler_vmmap *v = &p->vmmaps[i];
		const unsigned char *label = buf + pos + 16;
		const unsigned char *nul = memchr(label, '\0', SAMPLER_LABEL_SIZE);
		size_t n = nul ? (size_t)(nul - label) : SAMPLER_LABEL_SIZE;

		v->address = le64_get(buf + pos);
		v->size = le64_get(buf + pos + 8);
		memcpy(v->label, label, n);
		v->label[n] = '\0';
		v->file_offset = pos;
	}
}

/* Samples in buf[pos..end): exactly p->n_samples of them, filling it. */
static int parse_samples(const unsigned char *buf, size_t pos, size_t end,
			 struct sampler_profile *p, struct format_error *err)
{
	size_t cap = 0;

	for (uint64_t i = 0; i < p->n_samples; i++) {
		struct sampler_sample *s = &p->samples[i];
		uint32_t nt;

		if (end - pos < SAMPLER_SAMPLE_SIZE)
			return format_fail(err, pos, "sample %" PRIu64 " of %" PRIu64
					   " truncated: %zu bytes left", i, p->n_samples, end - pos);
		memcpy(&s->pmu, buf + pos, 8);
		nt = le32_get(buf + pos + 8);
		if (!isfinite(s->pmu))
			return format_fail(err, pos, "sample %" PRIu64 ": PMU value is not a finite number",
					   i);
		if (nt > (end - pos - SAMPLER_SAMPLE_SIZE) / SAMPLER_THREAD_SIZE)
			return format_fail(err, pos + 8, "sample %" PRIu64 ": %" PRIu32
					   " threads do not fit in the %zu bytes left", i, nt,
					   end - pos - SAMPLER_SAMPLE_SIZE);
		s->n_threads = nt;
		s->first = p->n_threads;
		s->file_offset = pos;
		pos += SAMPLER_SAMPLE_SIZE;
		if (p->n_threads + nt > cap) {
			size_t ncap = cap ? cap : 64;
			struct sampler_thread *nth;

			while (ncap < p->n_threads + nt)
				ncap *= 2;
			nth = realloc(p->threads, ncap * sizeof(*nth));
			if (!nth)
				return -ENOMEM;
			p->threads = nth;
			cap = ncap;
		}
		for (uint32_t k = 0; k < nt; k++, pos += SAMPLER_THREAD_SIZE) {
			struct sampler_thread *t = &p->threads[p->n_threads++];

			t->tid = le32_get(buf + pos);
			t->pc = le64_get(buf + pos + 4);
			t->cputime = le64_get(buf + pos + 12);
		}
	}
	if (pos != end)
		return format_fail(err, pos, "%zu bytes after the last sample where %s expected",
				   end - pos, p->layout == SAMPLER_LAYOUT_REFERENCE ?
				   "the VMMaps (or the end of file) are" : "the end of file is");
	return 0;
}

static int parse_layout(const unsigned char *buf, size_t len, enum sampler_layout layout,
			struct sampler_profile *p, struct format_error *err)
{
	size_t vm_bytes, vm_pos, s_pos, s_end;
	int rc;

	memset(p, 0, sizeof(*p));
	if (len < SAMPLER_HEADER_SIZE)
		return format_fail(err, len, "file of %zu bytes is shorter than the %d-byte header", len,
				   SAMPLER_HEADER_SIZE);
	p->layout = layout;
	p->magic = le32_get(buf);
	p->wall_us = le64_get(buf + 4);
	p->latency_us = le64_get(buf + 12);
	p->n_samples = le64_get(buf + 20);
	p->n_vmmaps = le32_get(buf + 28);
	if (p->magic > SAMPLER_MAGIC_POWER)
		return format_fail(err, 0, "unknown magic %" PRIu32 " (0 custom, 1 current, 2 voltage, "
				   "3 power)", p->magic);
	if (p->n_vmmaps > (len - SAMPLER_HEADER_SIZE) / SAMPLER_VMMAP_SIZE)
		return format_fail(err, 28, "%" PRIu32 " VMMaps do not fit in the %zu bytes after the "
				   "header", p->n_vmmaps, len - SAMPLER_HEADER_SIZE);
	vm_bytes = (size_t)p->n_vmmaps * SAMPLER_VMMAP_SIZE;
	if (layout == SAMPLER_LAYOUT_SPEC) {
		vm_pos = SAMPLER_HEADER_SIZE;
		s_pos = vm_pos + vm_bytes;
		s_end = len;
	} else {
		s_pos = SAMPLER_HEADER_SIZE;
		s_end = len - vm_bytes;
		vm_pos = s_end;
	}
	if (p->n_samples > (s_end - s_pos) / SAMPLER_SAMPLE_SIZE)
		return format_fail(err, 20, "%" PRIu64 " samples do not fit in the %zu bytes for samples",
				   p->n_samples, s_end - s_pos);
	p->vmmaps = calloc(p->n_vmmaps ? p->n_vmmaps : 1, sizeof(*p->vmmaps));
	p->samples = calloc(p->n_samples ? p->n_samples : 1, sizeof(*p->samples));
	if (!p->vmmaps || !p->samples)
		return -ENOMEM;
	rc = parse_samples(buf, s_pos, s_end, p, err);
	if (rc)
		return rc;
	parse_vmmaps(buf, vm_pos, p);
	return 0;
}

int sampler_parse(const unsigned char *buf, size_t len, enum sampler_layout layout,
		  struct sampler_profile *p, struct format_error *err)
{
	struct format_error spec_err;
	int rc;

	memset(err, 0, sizeof(*err));
	if (layout != SAMPLER_LAYOUT_AUTO) {
		rc = parse_layout(buf, len, layout, p, err);
		goto out;
	}
	rc = parse_layout(buf, len, SAMPLER_LAYOUT_REFERENCE, p, err);
	if (rc != -EINVAL)
		goto out;
	sampler_profile_free(p);
	memset(&spec_err, 0, sizeof(spec_err));
	rc = parse_layout(buf, len, SAMPLER_LAYOUT_SPEC, p, &spec_err);
out:
	if (rc) {
		if (rc == -ENOMEM)
			format_fail(err, 0, "out of memory");
		sampler_profile_free(p);
	}
	return rc;
}

struct parse_ctx {
	enum sampler_layout layout;
	struct sampler_profile *p;
};

static int parse_cb(const unsigned char *data, size_t n, void *ctx, struct format_error *err)
{
	struct parse_ctx *pc = ctx;

	return sampler_parse(data, n, pc->layout, pc->p, err);
}

int sampler_read_file(const char *path, enum sampler_layout layout, struct sampler_profile *p,
		      struct format_error *err)
{
	struct parse_ctx pc = { layout, p };

	memset(p, 0, sizeof(*p));
	return format_parse_file(path, err, parse_cb, &pc);
}

struct tid_entry {
	uint32_t tid;
	size_t index;      /* into p->threads: file order */
};

static int cmp_tid_entry(const void *a, const void *b)
{
	const struct tid_entry *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int sampler_check_cputime(const struct sampler_profile *p, struct format_error *err)
{
	struct tid_entry *e;
	size_t i;
	int rc = 0;

	memset(err, 0, sizeof(*err));
	if (!p->n_threads)
		return 0;
	e = malloc(p->n_threads * sizeof(*e));
	if (!e)
		return -ENOMEM;
	for (i = 0; i < p->n_threads; i++)
		e[i] = (struct tid_entry){ p->threads[i].tid, i };
	qsort(e, p->n_threads, sizeof(*e), cmp_tid_entry);
	for (i = 1; i < p->n_threads && !rc; i++) {
		const struct sampler_thread *a = &p->threads[e[i - 1].index];
		const struct sampler_thread *b = &p->threads[e[i].index];
		uint64_t s = 0;

		if (a->tid != b->tid || b->cputime >= a->cputime)
			continue;
		/* the sample that holds the later entry, for the offset */
		while (s + 1 < p->n_samples && p->samples[s + 1].first <= e[i].index)
			s++;
		rc = format_fail(err, p->samples[s].file_offset + SAMPLER_SAMPLE_SIZE +
				 (e[i].index - p->samples[s].first) * SAMPLER_THREAD_SIZE + 12,
				 "sample %" PRIu64 ": cputime of thread %" PRIu32 " decreases from %"
				 PRIu64 " to %" PRIu64, s, b->tid, a->cputime, b->cputime);
	}
	free(e);
	return rc;
}

static const char *magic_name(uint32_t magic)
{
	switch (magic) {
	case SAMPLER_MAGIC_CUSTOM: return "custom";
	case SAMPLER_MAGIC_CURRENT: return "current";
	case SAMPLER_MAGIC_VOLTAGE: return "voltage";
	case SAMPLER_MAGIC_POWER: return "power";
	}
	return "?";
}

void sampler_print(const struct sampler_profile *p, FILE *out)
{
	fprintf(out, "magic %" PRIu32 " (%s)\n", p->magic, magic_name(p->magic));
	fprintf(out, "wall_time_us %" PRIu64 "\n", p->wall_us);
	fprintf(out, "latency_us %" PRIu64 "\n", p->latency_us);
	fprintf(out, "samples %" PRIu64 "\n", p->n_samples);
	fprintf(out, "vmmaps %" PRIu32 "\n", p->n_vmmaps);
	fprintf(out, "layout %s\n", p->layout == SAMPLER_LAYOUT_SPEC ? "spec" : "reference");
	for (uint32_t i = 0; i < p->n_vmmaps; i++)
		fprintf(out, "vmmap %" PRIu32 " address 0x%" PRIx64 " size 0x%" PRIx64
			" label %s\n", i, p->vmmaps[i].address, p->vmmaps[i].size,
			p->vmmaps[i].label);
	for (uint64_t i = 0; i < p->n_samples; i++) {
		const struct sampler_sample *s = &p->samples[i];

		fprintf(out, "sample %" PRIu64 " pmu %.6g threads %" PRIu32 "\n", i, s->pmu,
			s->n_threads);
		for (uint32_t k = 0; k < s->n_threads; k++) {
			const struct sampler_thread *t = &p->threads[s->first + k];

			fprintf(out, "  tid %" PRIu32 " pc 0x%" PRIx64 " cputime %" PRIu64 "\n",
				t->tid, t->pc, t->cputime);
		}
	}
}
