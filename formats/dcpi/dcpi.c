// SPDX-License-Identifier: GPL-2.0
/*
 * DCPI per-image profiles (dcpiformat(4), binary version 0.07).
 *
 * One file per image that got samples, under OUT/dcpi/, holding the sample
 * count of every sampled byte address of the image, relative to the start
 * of its text segment (tstart).  Addresses are file-relative, so the counts
 * of every process that maps the same file merge into one profile, as DCPI
 * did for system-wide sampling.  Kernel samples go to kernel.kallsyms.prof,
 * relative to _stext.
 *
 * Header lines written, in this order:
 *   image     14 digits of the file's mtime (UTC yyyymmddhhmmss), then the
 *             low 6 hex digits of its CRC-32 (all zero when unknown)
 *   epoch     UTC start of the run, YYMMDDHHMM (the form readers accept)
 *   platform  linux-<arch>
 *   event     the perf event and its unit ("cpu-clock ns", "page-faults
 *             faults")
 *   period    event units per sample (the sampling period in ns; for an
 *             event counted at a frequency, the mean period of its samples)
 *   tsize     text segment size, decimal
 *   tstart    text segment start, file-relative, hex without "0x"
 *   cpuspeed  MHz, 0 when unknown;  cpucount;  path (the image as mapped)
 *   version   0.07, the binary layout that follows
 *   clamped N (only when needed) N counts or footer totals clamped to
 *             UINT32_MAX instead of wrapping
 *   outside N (only when needed) N samples at addresses below tstart or
 *             more than 4 GiB above it, which a u32 offset cannot hold
 *   lost N    (only when needed) events the whole run lost (ring buffer
 *             full, stack walks failed): these counts are a lower bound
 *   samples   padded with spaces to a header length multiple of 4
 * The sampled instruction is frame 0 of the sample's stack, or its user PC
 * through the process's mappings when it has no stack.
 *
 * A run of several events (-e, --off-cpu) has a profile per event and
 * image, as DCPI had: OUT/dcpi/<event>/<image>.prof, each with its event's
 * header; a run of one event keeps OUT/dcpi/<image>.prof.
 */
#include "formats/format.h"
#include "formats/dcpi/dcpi.h"
#include "formats/dcpi/dcpi_reader.h"
#include "lib/bytes.h"
#include "lib/hashtab.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#define DCPI_PLATFORM "linux-x86_64"
#elif defined(__aarch64__)
#define DCPI_PLATFORM "linux-aarch64"
#else
#define DCPI_PLATFORM "linux"
#endif

/*
 * Chunk split.  A chunk costs 8 bytes of {offset, number} plus 4 bytes per
 * address; joining two sampled addresses separated by g unsampled ones
 * costs 4*g bytes of zero counts, starting a new chunk costs 8.  The choice
 * at each gap is independent of the others, so joining exactly when
 * 4*g <= 8 gives the smallest file; at g == 2 both cost the same and
 * joining wins for having fewer chunks to read.
 */
#define DCPI_MAX_JOINED_GAP 2

/* ---- header fields ---------------------------------------------------- */

void dcpi_image_field(char buf[21], int64_t mtime, uint32_t crc32)
{
	struct tm tm;
	time_t t = (time_t)mtime;

	/* yyyymmddhhmmss needs a four-digit year; anything else is unknown */
	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999) {
		snprintf(buf, 21, "00000000000000%06" PRIx32, crc32 & 0xffffff);
		return;
	}
	strftime(buf, 15, "%Y%m%d%H%M%S", &tm);
	snprintf(buf + 14, 7, "%06" PRIx32, crc32 & 0xffffff);
}

void dcpi_epoch_field(char buf[11], uint64_t epoch_ns)
{
	time_t t = (time_t)(epoch_ns / 1000000000ULL);
	struct tm tm;

	if (!gmtime_r(&t, &tm)) {
		t = 0;
		gmtime_r(&t, &tm);
	}
	strftime(buf, 11, "%y%m%d%H%M", &tm);
}

/* A <rest_of_line> value: no newline inside, no blank first. */
static size_t put_rest(FILE *fp, const char *key, const char *v)
{
	size_t n = fprintf(fp, "%s ", key) + 1;

	if (!v || !*v)
		v = "?";
	for (const char *c = v; *c; c++, n++)
		fputc(*c == '\n' || ((*c == ' ' || *c == '\t') && c == v) ? '?' : *c, fp);
	fputc('\n', fp);
	return n;
}

static int put_le32(FILE *fp, uint32_t v)
{
	unsigned char le[4];

	le32_put(le, v);
	return fwrite(le, 4, 1, fp) == 1 ? 0 : -EIO;
}

static bool encodable(const struct dcpi_image_info *info, uint64_t addr)
{
	return addr >= info->tstart && addr - info->tstart <= UINT32_MAX;
}

static uint32_t clamp32(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

int dcpi_encode(FILE *fp, const struct dcpi_image_info *info,
		const struct dcpi_addr_count *counts, size_t n, struct dcpi_encode_stats *st)
{
	uint64_t nonzero = 0, sum = 0;
	char image[21], epoch[11];
	size_t hlen = 0;
	size_t i;

	memset(st, 0, sizeof(*st));
	/* Everything the header says is known before the first byte is written. */
	for (i = 0; i < n; i++) {
		if (!encodable(info, counts[i].addr)) {
			st->outside += counts[i].count;
			continue;
		}
		if (counts[i].count > UINT32_MAX)
			st->clamped++;
		nonzero++;
		sum += clamp32(counts[i].count);
	}
	if (sum > UINT32_MAX)
		st->clamped++;
	if (nonzero > UINT32_MAX)
		st->clamped++;

	dcpi_image_field(image, info->mtime, info->crc32);
	dcpi_epoch_field(epoch, info->run_start_ns);
	hlen += fprintf(fp, "image %s\n", image);
	hlen += fprintf(fp, "epoch %s\n", epoch);
	hlen += fprintf(fp, "platform %s\n", DCPI_PLATFORM);
	/* the event's unit: one sample stands for `period` ns of CPU time */
	hlen += fprintf(fp, "event %s %s\n", info->event && *info->event ? info->event : "cpu-clock",
			info->unit && *info->unit ? info->unit : "ns");
	hlen += fprintf(fp, "period %" PRIu64 "\n", info->period);
	hlen += fprintf(fp, "tsize %" PRIu64 "\n", info->tsize);
	hlen += fprintf(fp, "tstart %" PRIx64 "\n", info->tstart);
	hlen += fprintf(fp, "cpuspeed %" PRIu32 "\n", info->cpu_mhz);
	hlen += fprintf(fp, "cpucount %" PRIu32 "\n", info->ncpus);
	hlen += put_rest(fp, "path", info->path);
	hlen += fprintf(fp, "version 0.07\n");
	if (st->clamped)
		hlen += fprintf(fp, "clamped %" PRIu64 "\n", st->clamped);
	if (st->outside)
		hlen += fprintf(fp, "outside %" PRIu64 "\n", st->outside);
	if (info->lost)
		hlen += fprintf(fp, "lost %" PRIu64 "\n", info->lost);
	/* Spaces after "samples" (the terminator allows them) so that the
	 * header, newline included, is a multiple of 4 bytes long and the
	 * binary part 32-bit aligned, as the spec recommends. */
	hlen += fprintf(fp, "samples");
	while ((hlen + 1) % 4) {
		fputc(' ', fp);
		hlen++;
	}
	fputc('\n', fp);

	i = 0;
	while (i < n) {
		size_t first, last;
		uint64_t base;

		if (!encodable(info, counts[i].addr)) {
			i++;
			continue;
		}
		first = last = i;
		for (i++; i < n && encodable(info, counts[i].addr) &&
			  counts[i].addr - counts[last].addr - 1 <= DCPI_MAX_JOINED_GAP; i++)
			last = i;
		base = counts[first].addr;
		if (put_le32(fp, (uint32_t)(base - info->tstart)) ||
		    put_le32(fp, (uint32_t)(counts[last].addr - base + 1)))
			return -EIO;
		for (size_t k = first; k <= last; k++) {
			/* the zero counts of the gap before this address */
			if (k > first)
				for (uint64_t a = counts[k - 1].addr + 1; a < counts[k].addr; a++)
					if (put_le32(fp, 0))
						return -EIO;
			if (put_le32(fp, clamp32(counts[k].count)))
				return -EIO;
		}
		st->chunks++;
	}
	if (put_le32(fp, clamp32(nonzero)) || put_le32(fp, clamp32(sum)))
		return -EIO;
	return ferror(fp) ? -EIO : 0;
}

/* ---- counting --------------------------------------------------------- */

/* (image, file-relative address) -> sample count */
struct addr_key {
	uint32_t image;
	uint64_t addr;
};

struct addr_count_entry {
	uint64_t addr;
	uint64_t count;
	uint32_t image;
};

static inline uint64_t addr_key_hash(const struct addr_key *k)
{
	return hash_pair(k->addr, k->image);
}

static inline uint64_t addr_entry_hash(const struct addr_count_entry *e)
{
	return hash_pair(e->addr, e->image);
}

static inline bool addr_match(const struct addr_count_entry *e, const struct addr_key *k)
{
	return e->addr == k->addr && e->image == k->image;
}

HASHTAB_DEFINE(addr_table, struct addr_count_entry, struct addr_key, addr_entry_hash,
	       addr_key_hash, addr_match)

static int table_add(struct addr_table *t, uint32_t image, uint64_t addr, uint64_t count)
{
	struct addr_key k = { image, addr };
	struct addr_count_entry *e;
	bool fresh;

	e = addr_table_upsert(t, &k, &fresh);
	if (!e)
		return -ENOMEM;
	if (fresh) {
		e->addr = addr;
		e->image = image;
	}
	e->count += count;
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct addr_count_entry *x = a, *y = b;

	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* An image a profile can be written for: JIT code and other anonymous
 * text has no file to profile against. */
static bool profiled_image(const struct model *m, uint32_t image)
{
	return image < m->images.len && m->images.items[image].kind != MODEL_IMAGE_ANON &&
	       m->images.items[image].kind != MODEL_IMAGE_RUNTIME;
}

/*
 * The sampled instruction of each sample, counted: frame 0 of its stack
 * (counted per location in loc_count, a dense array: no hashing per
 * sample), else its user PC through the process's mappings (counted in t).
 * A kernel-mode sample without kernel frames has no known instruction;
 * *unplaced counts the samples that have none.
 */
static int count_sample(const struct model *m, const struct model_sample *s,
			uint64_t *loc_count, struct addr_table *t, size_t *unplaced)
{
	const struct model_mapping *mp;

	if (s->stack < m->stacks.len && m->stacks.items[s->stack].n_frames) {
		const struct model_stack *st = &m->stacks.items[s->stack];
		uint32_t loc = model_stack_frames(m, st)[0];

		if ((s->kernel_mode && !st->n_kernel) || loc >= m->locations.len) {
			(*unplaced)++;
			return 0;
		}
		/* a runtime's frame (Python's in place of the evaluator's): the native PC */
		if (m->images.items[m->locations.items[loc].image].kind != MODEL_IMAGE_RUNTIME) {
			loc_count[loc]++;
			return 0;
		}
	}
	if (s->kernel_mode || !s->user_pc || s->process >= m->processes.len ||
	    !(mp = model_find_mapping(m, s->process, s->user_pc)) ||
	    !profiled_image(m, mp->image)) {
		(*unplaced)++;
		return 0;
	}
	return table_add(t, mp->image, s->user_pc - mp->bias, 1);
}

/* The counts of every sample, by (image, file-relative address), in t. */
static int count_samples(const struct model *m, uint32_t event, struct addr_table *t,
			 size_t *unplaced)
{
	uint64_t *loc_count = calloc(m->locations.len + 1, sizeof(*loc_count));
	int rc = 0;

	if (!loc_count)
		return -ENOMEM;
	for (size_t i = 0; i < m->samples.len && !rc; i++)
		if (m->samples.items[i].event == event)
			rc = count_sample(m, &m->samples.items[i], loc_count, t, unplaced);
	for (size_t loc = 0; loc < m->locations.len && !rc; loc++) {
		const struct model_location *l = &m->locations.items[loc];

		if (!loc_count[loc])
			continue;
		if (profiled_image(m, l->image))
			rc = table_add(t, l->image, l->addr, loc_count[loc]);
		else
			*unplaced += loc_count[loc];
	}
	free(loc_count);
	return rc;
}

/* ---- file names ------------------------------------------------------- */

struct names {
	char **v;
	size_t n;
};

static bool name_taken(const struct names *nm, const char *s)
{
	for (size_t i = 0; i < nm->n; i++)
		if (!strcmp(nm->v[i], s))
			return true;
	return false;
}

/*
 * The image's base name, brackets removed ("[kernel.kallsyms]" ->
 * "kernel.kallsyms"), every byte outside [A-Za-z0-9._+-] replaced by '_'
 * and a leading dot too (no hidden files, no "." or ".."), then ".prof";
 * when another image already took that name, "~2", "~3"... before ".prof".
 */
static char *profile_name(struct names *nm, const char *path)
{
	const char *base = strrchr(path, '/');
	char clean[201], *name;
	size_t n, blen;
	char **nv;

	base = base ? base + 1 : path;
	blen = strlen(base);
	if (blen >= 2 && base[0] == '[' && base[blen - 1] == ']') {
		base++;
		blen -= 2;
	}
	n = export_file_name(clean, sizeof(clean), base, blen, "image");
	name = malloc(n + 32);
	if (!name)
		return NULL;
	sprintf(name, "%s.prof", clean);
	for (unsigned k = 2; name_taken(nm, name); k++)
		sprintf(name, "%s~%u.prof", clean, k);
	nv = realloc(nm->v, (nm->n + 1) * sizeof(*nv));
	if (!nv) {
		free(name);
		return NULL;
	}
	nm->v = nv;
	nm->v[nm->n++] = name;
	return name;
}

/* ---- writer ------------------------------------------------------------ */

/* Event units per sample: the period it was sampled with, for a clock at
 * a frequency 1 s / frequency, else the mean weight of its samples. */
static uint64_t event_period(const struct model *m, uint32_t event)
{
	const struct model_event *e = model_event(m, event);
	uint64_t samples = 0, total = 0;

	if (e->period)
		return e->period;
	if (e->clock && e->freq_hz)
		return 1000000000ULL / e->freq_hz;
	for (size_t i = 0; i < m->samples.len; i++) {
		if (m->samples.items[i].event == event) {
			samples++;
			total += m->samples.items[i].weight;
		}
	}
	return samples ? (total + samples / 2) / samples : 0;
}

static int write_image(const struct model *m, const struct export_options *opts,
		       struct names *nm, uint32_t event, const char *dir, uint32_t image,
		       const struct dcpi_addr_count *counts, size_t n)
{
	const struct model_image *img = &m->images.items[image];
	struct dcpi_image_info info = {
		.path = img->path,
		.mtime = img->mtime,
		.crc32 = img->crc32,
		.tstart = img->text_start,
		.tsize = img->text_size,
		.run_start_ns = m->run.start_ns,
		.lost = model_total_lost(m),
		.event = model_event(m, event)->name,
		.unit = model_event(m, event)->unit,
		.period = event_period(m, event),
		.cpu_mhz = m->run.cpu_mhz,
		.ncpus = m->run.ncpus,
	};
	struct dcpi_encode_stats st;
	struct outfile f;
	char rel[300];
	const char *name;
	int rc;

	name = profile_name(nm, img->path);
	if (!name)
		return -ENOMEM;
	snprintf(rel, sizeof(rel), "%s/%s", dir, name);
	rc = outfile_open(&f, opts, rel);
	if (rc)
		return rc;
	rc = dcpi_encode(f.fp, &info, counts, n, &st);
	if (rc) {
		fprintf(stderr, "collector: cannot write %s/%s\n", opts->dir, rel);
		outfile_abort(&f);
		return rc;
	}
	if (!opts->quiet && (st.clamped || st.outside))
		fprintf(stderr, "collector: %s/%s: %" PRIu64 " counts clamped, %" PRIu64
			" samples outside the text segment\n", opts->dir, rel, st.clamped,
			st.outside);
	return outfile_commit(&f);
}

/* The profiles of one event, under dir. */
static int write_event(const struct model *m, const struct export_options *opts, uint32_t event,
		       const char *dir)
{
	struct addr_table t = { 0 };
	struct addr_count_entry *sorted = NULL, *e;
	struct dcpi_addr_count *counts = NULL;
	struct names nm = { 0 };
	size_t n = 0, i, unplaced = 0;
	int rc = 0;

	rc = count_samples(m, event, &t, &unplaced);
	if (rc)
		goto cleanup;
	if (unplaced && !opts->quiet)
		fprintf(stderr, "collector: dcpi: %zu of %" PRIu64 " %s samples have no instruction "
			"in a file-backed or kernel image; left out\n", unplaced,
			model_event_count(m) > 1 ? model_event(m, event)->samples : m->samples.len,
			model_event(m, event)->name);
	if (!t.len)
		goto cleanup;
	/* the counts in (image, addr) order */
	sorted = malloc(t.len * sizeof(*sorted));
	counts = malloc(t.len * sizeof(*counts));
	if (!sorted || !counts) {
		rc = -ENOMEM;
		goto cleanup;
	}
	HASHTAB_FOR_EACH(&t, e)
		sorted[n++] = *e;
	addr_table_free(&t);
	qsort(sorted, n, sizeof(*sorted), cmp_entry);
	for (i = 0; i < n; i++)
		counts[i] = (struct dcpi_addr_count){ sorted[i].addr, sorted[i].count };
	rc = export_mkdir(opts, dir);
	if (rc)
		goto cleanup;
	for (i = 0; i < n && !rc;) {
		size_t first = i;

		while (i < n && sorted[i].image == sorted[first].image)
			i++;
		rc = write_image(m, opts, &nm, event, dir, sorted[first].image, counts + first,
				 i - first);
	}
cleanup:
	for (i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	free(counts);
	free(sorted);
	addr_table_free(&t);
	return rc;
}

int dcpi_write(const struct model *m, const struct export_options *opts)
{
	char dir[PATH_MAX];
	int rc = 0;

	if (model_event_count(m) == 1)
		return write_event(m, opts, 0, "dcpi");
	rc = export_mkdir(opts, "dcpi");
	for (uint32_t ev = 0; ev < model_event_count(m) && !rc; ev++) {
		char name[80];

		export_file_name(name, sizeof(name), model_event(m, ev)->name,
				 strlen(model_event(m, ev)->name), "event");
		snprintf(dir, sizeof(dir), "dcpi/%s", name);
		rc = write_event(m, opts, ev, dir);
	}
	return rc;
}

/* ---- collector dump ---------------------------------------------------- */

/* A DCPI profile starts with a header line whose keyword is one of the
 * grammar's (or the ones collector writes), followed by a blank. */
bool dcpi_recognize(const char *path, const unsigned char *head, size_t n)
{
	static const char *const first_words[] = {
		"image", "epoch", "platform", "event", "period", "tsize", "cpuspeed",
		"cpuamask", "cpuimplv", "cpucount", "path", "tstart", "version",
	};

	(void)path;
	for (size_t i = 0; i < sizeof(first_words) / sizeof(first_words[0]); i++) {
		size_t w = strlen(first_words[i]);

		if (n > w && !memcmp(head, first_words[i], w) &&
		    (head[w] == ' ' || head[w] == '\t'))
			return true;
	}
	return false;
}

int dcpi_dump(const char *path, FILE *out, bool check)
{
	struct dcpi_profile p;
	struct format_error err;
	int rc;

	rc = dcpi_read_file(path, &p, &err);
	if (rc)
		return format_report(path, rc, &err);
	if (!check)
		dcpi_print(&p, out);
	dcpi_profile_free(&p);
	return 0;
}

const struct format dcpi_format = {
	.name = "dcpi",
	.needs = FORMAT_NEEDS_SAMPLES,
	.needs_image_crc = true, /* the image line: mtime and CRC */
	.write = dcpi_write,
	.recognize = dcpi_recognize,
	.dump = dcpi_dump,
};
