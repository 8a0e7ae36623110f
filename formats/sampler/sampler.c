// SPDX-License-Identifier: GPL-2.0
/*
 * Sampler "full profiles" (the Intrusive ELF Profiler's format), one per
 * target process image: OUT/sampler/<comm>.<pid>.prof for a pid's first
 * image, <comm>.<pid>.<generation>.prof after each exec (an exec replaces
 * the VMMaps, which a profile holds once).  <comm> keeps [A-Za-z0-9._+-]
 * and turns every other byte into '_'; if two entries still share a name
 * (a reused pid), the later gets "~2", "~3"... before ".prof".
 *
 * Each Sample is one period of the sampling clock, on a grid that starts
 * at the run's start, so that sample i of two processes covers the same
 * time.  It holds the PMU value of that period and every thread of the
 * process alive during it, with its user PC and cumulative on-CPU time as of
 * the period's end:
 *   - PC: that of its last sample in the period; else where it last stopped
 *     (switch-out) or was last sampled, whichever is later; else 0;
 *   - cputime: the largest cumulative value any event of the thread has
 *     reported so far (never decreasing), and at the thread's last period
 *     the model's final value for it.
 *
 * PMU value.  Where the run read RAPL energy counters (model.energy), the
 * magic is 3 (power) and the value the machine's package power in watts
 * over the period, from the cumulative energy interpolated at the period's
 * bounds (RAPL measures packages, not processes).  Without them the magic
 * is 0 (custom) and the value is the process's CPU utilization in the
 * period, in busy cores: the CPU time its samples stand for divided by the
 * period.  For an event that counts (-e page-faults...; a run of several
 * events has sampler/ files per event, under OUT/<event>/ for all but the
 * first), the custom value is the event's count in the period: what its
 * samples stand for.
 */
#include "formats/format.h"
#include "formats/sampler/sampler.h"
#include "formats/sampler/sampler_reader.h"
#include "lib/bytes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct vmmap {
	uint64_t bias, end;
	uint32_t image;
};

/* Per thread of the process being written. */
struct thread_state {
	uint32_t thread;       /* model_thread id */
	uint64_t last_pc;      /* latest PC known from a switch-out or sample */
	uint64_t period_pc;    /* PC of its last sample in period `sampled` */
	uint64_t sampled;      /* period index + 1 of its last sample with a PC */
	uint64_t event_period; /* period index + 1 of its last event */
	uint64_t cputime;
};

/* The event lists of every process, built once with a counting sort:
 * items[first[p] .. first[p + 1]) are process p's, in time order.  This
 * costs 4 bytes per sample and switch, but writes each file in one pass
 * over its own events without keeping one file open per process (system-
 * wide runs have thousands) or rescanning every event for every process. */
struct by_process {
	uint32_t *items;
	size_t *first;
};

struct writer {
	const struct model *m;
	const struct export_options *opts;
	struct by_process samples, switches, threads;
	uint32_t *local;       /* model thread id -> index in states, per process */
	struct thread_state *states;
	unsigned char *buf;    /* one encoded Sample */
	size_t buf_cap;
	char **names;
	size_t n_names;
	uint64_t period;
};

static int group(struct by_process *g, size_t n_processes, size_t n,
		 uint32_t (*process_of)(const struct model *, size_t), const struct model *m)
{
	size_t *fill;

	g->first = calloc(n_processes + 2, sizeof(*g->first));
	g->items = malloc((n ? n : 1) * sizeof(*g->items));
	fill = calloc(n_processes + 1, sizeof(*fill));
	if (!g->first || !g->items || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t p = process_of(m, i);

		if (p < n_processes)
			g->first[p + 1]++;
	}
	for (size_t p = 0; p < n_processes; p++)
		g->first[p + 1] += g->first[p];
	for (size_t i = 0; i < n; i++) {
		uint32_t p = process_of(m, i);

		if (p < n_processes)
			g->items[g->first[p] + fill[p]++] = i;
	}
	free(fill);
	return 0;
}

static uint32_t sample_process(const struct model *m, size_t i)
{
	const struct model_sample *s = &m->samples.items[i];

	/* a sample must agree with its thread about the process */
	if (s->thread >= m->threads.len || m->threads.items[s->thread].process != s->process)
		return MODEL_NONE;
	return s->process;
}

static uint32_t switch_process(const struct model *m, size_t i)
{
	const struct model_switch *s = &m->switches.items[i];

	if (s->thread >= m->threads.len || m->threads.items[s->thread].process != s->process)
		return MODEL_NONE;
	return s->process;
}

static uint32_t thread_process(const struct model *m, size_t i)
{
	return m->threads.items[i].process;
}

static void free_group(struct by_process *g)
{
	free(g->items);
	free(g->first);
}

static char *profile_name(struct writer *w, const struct model_process *p)
{
	char comm[sizeof(p->comm)], *name, **nv;

	export_file_name(comm, sizeof(comm), p->comm, sizeof(p->comm), "unknown");
	name = malloc(96);
	if (!name)
		return NULL;
	for (unsigned k = 1;; k++) {
		int len = snprintf(name, 96, "%s.%d", comm, (int)p->pid);
		bool taken = false;

		if (p->generation)
			len += snprintf(name + len, 96 - len, ".%" PRIu32, p->generation);
		if (k > 1)
			len += snprintf(name + len, 96 - len, "~%u", k);
		snprintf(name + len, 96 - len, ".prof");
		for (size_t i = 0; i < w->n_names && !taken; i++)
			taken = !strcmp(w->names[i], name);
		if (!taken)
			break;
	}
	nv = realloc(w->names, (w->n_names + 1) * sizeof(*nv));
	if (!nv) {
		free(name);
		return NULL;
	}
	w->names = nv;
	w->names[w->n_names++] = name;
	return name;
}

/* Cumulative energy (µJ) at epoch time t, interpolated between the two
 * readings around it; constant before the first and after the last. */
static double energy_at(const struct model *m, uint64_t t)
{
	const struct model_energy *e = m->energy.items;
	size_t lo = 0, hi = m->energy.len - 1;

	if (t <= e[0].time_ns)
		return (double)e[0].energy_uj;
	if (t >= e[hi].time_ns)
		return (double)e[hi].energy_uj;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].time_ns <= t)
			lo = mid;
		else
			hi = mid;
	}
	if (e[hi].time_ns == e[lo].time_ns)
		return (double)e[lo].energy_uj;
	return e[lo].energy_uj + (double)(e[hi].energy_uj - e[lo].energy_uj) *
		(double)(t - e[lo].time_ns) / (double)(e[hi].time_ns - e[lo].time_ns);
}

static int cmp_vmmap(const void *a, const void *b)
{
	const struct vmmap *x = a, *y = b;

	if (x->bias != y->bias)
		return x->bias < y->bias ? -1 : 1;
	return x->image < y->image ? -1 : x->image > y->image;
}

/*
 * The executable file-backed mappings, one per (image, load bias): address =
 * load bias, so that the reference reader's `PC - address` is the
 * file-relative address for PIE executables and libraries (ET_EXEC images
 * have bias 0 and it uses the PC as is), and size = mapping end - bias.
 */
static int collect_vmmaps(const struct model *m, const struct model_process *p,
			  struct vmmap **out, size_t *n_out)
{
	struct vmmap *v = malloc((p->maps.len ? p->maps.len : 1) * sizeof(*v));
	size_t n = 0, k = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->maps.len; i++) {
		const struct model_mapping *mp = &p->maps.items[i];

		if (!mp->exec || mp->image >= m->images.len ||
		    m->images.items[mp->image].kind != MODEL_IMAGE_ELF || mp->end <= mp->bias)
			continue;
		v[n++] = (struct vmmap){ mp->bias, mp->end, mp->image };
	}
	qsort(v, n, sizeof(*v), cmp_vmmap);
	for (size_t i = 0; i < n; i++) {
		if (k && v[k - 1].bias == v[i].bias && v[k - 1].image == v[i].image) {
			if (v[i].end > v[k - 1].end)
				v[k - 1].end = v[i].end;
			continue;
		}
		v[k++] = v[i];
	}
	*out = v;
	*n_out = k;
	return 0;
}

static int write_vmmaps(struct outfile *f, const struct model *m, const struct vmmap *v,
			size_t n)
{
	unsigned char rec[SAMPLER_VMMAP_SIZE];

	for (size_t i = 0; i < n; i++) {
		const char *path = m->images.items[v[i].image].path;
		size_t len = strlen(path);

		/* the label names the file by its absolute path, which the reference
		 * reader finds under search path "/"; a path that does not fit in
		 * 255 bytes plus NUL is cut */
		if (len > SAMPLER_LABEL_SIZE - 1)
			len = SAMPLER_LABEL_SIZE - 1;
		memset(rec, 0, sizeof(rec));
		le64_put(rec, v[i].bias);
		le64_put(rec + 8, v[i].end - v[i].bias);
		memcpy(rec + 16, path, len);
		if (outfile_write(f, rec, sizeof(rec)))
			return -EIO;
	}
	return 0;
}

static uint64_t period_of(const struct writer *w, uint64_t origin, uint64_t lo, uint64_t hi,
			  uint64_t t)
{
	uint64_t k = t > origin ? (t - origin) / w->period : 0;

	return k < lo ? lo : k > hi ? hi : k;
}

static int ensure_buf(struct writer *w, size_t n)
{
	if (n > w->buf_cap) {
		unsigned char *nb = realloc(w->buf, n);

		if (!nb)
			return -ENOMEM;
		w->buf = nb;
		w->buf_cap = n;
	}
	return 0;
}

/* One process's events and the periods its file covers. */
struct process_events {
	const uint32_t *si, *wi, *ti;  /* its samples, switches, threads */
	size_t ns, nw, nt;
	size_t a, b;                   /* the next sample and switch */
	uint64_t origin, begin, end, k_lo, k_hi;
};

static void process_events(const struct writer *w, uint32_t p, struct process_events *pe)
{
	memset(pe, 0, sizeof(*pe));
	pe->si = w->samples.items + w->samples.first[p];
	pe->wi = w->switches.items + w->switches.first[p];
	pe->ti = w->threads.items + w->threads.first[p];
	pe->ns = w->samples.first[p + 1] - w->samples.first[p];
	pe->nw = w->switches.first[p + 1] - w->switches.first[p];
	pe->nt = w->threads.first[p + 1] - w->threads.first[p];
}

/* The periods: the run's, cut to the process's lifetime, stretched to
 * hold every event of the process. */
static void process_periods(const struct writer *w, const struct model_process *p,
			    struct process_events *pe)
{
	const struct model *m = w->m;
	uint64_t first_t = UINT64_MAX, last_t = 0;

	if (pe->ns) {
		first_t = m->samples.items[pe->si[0]].time_ns;
		last_t = m->samples.items[pe->si[pe->ns - 1]].time_ns;
	}
	if (pe->nw) {
		if (m->switches.items[pe->wi[0]].time_ns < first_t)
			first_t = m->switches.items[pe->wi[0]].time_ns;
		if (m->switches.items[pe->wi[pe->nw - 1]].time_ns > last_t)
			last_t = m->switches.items[pe->wi[pe->nw - 1]].time_ns;
	}
	pe->origin = m->run.start_ns ? m->run.start_ns : first_t;
	pe->begin = p->start_ns > pe->origin ? p->start_ns : pe->origin;
	if (first_t < pe->begin)
		pe->begin = first_t > pe->origin ? first_t : pe->origin;
	pe->end = m->run.end_ns;
	if (p->end_ns && (p->end_ns < pe->end || !pe->end))
		pe->end = p->end_ns;
	if (pe->end <= last_t)
		pe->end = last_t + 1;
	if (pe->end <= pe->begin)
		pe->end = pe->begin + 1;
	pe->k_lo = (pe->begin - pe->origin) / w->period;
	pe->k_hi = (pe->end - pe->origin - 1) / w->period;
}

/* This period's samples and switches, merged in time order, into the
 * threads' states; returns the CPU time the samples stand for. */
static uint64_t replay_period(struct writer *w, struct process_events *pe, uint64_t k)
{
	const struct model *m = w->m;
	uint64_t busy_ns = 0;

	for (;;) {
		const struct model_sample *s = pe->a < pe->ns ? &m->samples.items[pe->si[pe->a]] : NULL;
		const struct model_switch *sw = pe->b < pe->nw ? &m->switches.items[pe->wi[pe->b]]
							       : NULL;
		struct thread_state *st;

		if (s && period_of(w, pe->origin, pe->k_lo, pe->k_hi, s->time_ns) > k)
			s = NULL;
		if (sw && period_of(w, pe->origin, pe->k_lo, pe->k_hi, sw->time_ns) > k)
			sw = NULL;
		if (!s && !sw)
			break;
		if (s && (!sw || s->time_ns <= sw->time_ns)) {
			st = &w->states[w->local[s->thread]];
			busy_ns += s->weight;
			if (s->cputime_ns > st->cputime)
				st->cputime = s->cputime_ns;
			if (s->user_pc) {
				st->period_pc = st->last_pc = s->user_pc;
				st->sampled = k + 1;
			}
			pe->a++;
		} else {
			st = &w->states[w->local[sw->thread]];
			if (sw->cputime_ns > st->cputime)
				st->cputime = sw->cputime_ns;
			if (sw->off && sw->user_pc)
				st->last_pc = sw->user_pc;
			pe->b++;
		}
		st->event_period = k + 1;
	}
	return busy_ns;
}

/* Sample k: its PMU value and every thread alive during it, encoded into
 * w->buf; returns its length. */
static size_t encode_period(struct writer *w, struct process_events *pe, uint64_t k)
{
	const struct model *m = w->m;
	uint64_t p_start = pe->origin + k * w->period, p_end = p_start + w->period;
	uint64_t busy_ns = replay_period(w, pe, k);
	size_t pos = SAMPLER_SAMPLE_SIZE;
	uint32_t n_live = 0;
	double pmu;

	for (size_t i = 0; i < pe->nt; i++) {
		struct thread_state *st = &w->states[i];
		const struct model_thread *t = &m->threads.items[st->thread];
		bool live = (t->start_ns < p_end && (!t->end_ns || t->end_ns > p_start)) ||
			    st->event_period == k + 1;
		bool last = k == pe->k_hi || (t->end_ns && t->end_ns <= p_end);

		if (!live)
			continue;
		if (last && t->cputime_ns > st->cputime)
			st->cputime = t->cputime_ns;
		le32_put(w->buf + pos, (uint32_t)t->tid);
		le64_put(w->buf + pos + 4, st->sampled == k + 1 ? st->period_pc : st->last_pc);
		le64_put(w->buf + pos + 12, st->cputime);
		pos += SAMPLER_THREAD_SIZE;
		n_live++;
	}
	if (m->energy.len >= 2)
		pmu = (energy_at(m, p_end) - energy_at(m, p_start)) /
		      ((double)w->period / 1e9) / 1e6;
	else if (model_event(m, 0)->clock)
		pmu = (double)busy_ns / (double)w->period;
	else
		pmu = (double)busy_ns; /* the count: no time to divide */
	memcpy(w->buf, &pmu, sizeof(pmu));
	le32_put(w->buf + 8, n_live);
	return pos;
}

/* The header, the VMMaps in the spec layout, the samples, the VMMaps in
 * the reference layout. */
static int write_profile(struct writer *w, struct outfile *f, struct process_events *pe,
			 const struct vmmap *vm, size_t n_vm)
{
	const struct model *m = w->m;
	unsigned char hdr[SAMPLER_HEADER_SIZE];
	int rc;

	le32_put(hdr, m->energy.len >= 2 ? SAMPLER_MAGIC_POWER : SAMPLER_MAGIC_CUSTOM);
	le64_put(hdr + 4, (pe->end - pe->begin) / 1000);
	le64_put(hdr + 12, (m->run.collector_cpu_ns + m->run.bpf_run_ns) / 1000);
	le64_put(hdr + 20, pe->k_hi - pe->k_lo + 1);
	le32_put(hdr + 28, (uint32_t)n_vm);
	rc = outfile_write(f, hdr, sizeof(hdr));
	if (!rc && w->opts->sampler_layout_spec)
		rc = write_vmmaps(f, m, vm, n_vm);
	if (rc)
		return rc;
	for (size_t i = 0; i < pe->nt; i++) {
		w->local[pe->ti[i]] = i;
		w->states[i] = (struct thread_state){ .thread = pe->ti[i] };
	}
	rc = ensure_buf(w, SAMPLER_SAMPLE_SIZE + pe->nt * SAMPLER_THREAD_SIZE);
	for (uint64_t k = pe->k_lo; k <= pe->k_hi && !rc; k++)
		rc = outfile_write(f, w->buf, encode_period(w, pe, k));
	if (!rc && !w->opts->sampler_layout_spec)
		rc = write_vmmaps(f, m, vm, n_vm);
	return rc;
}

static int write_process(struct writer *w, uint32_t pid_index)
{
	const struct model *m = w->m;
	const struct model_process *p = &m->processes.items[pid_index];
	struct process_events pe;
	struct vmmap *vm = NULL;
	struct outfile f = { 0 };
	size_t n_vm = 0;
	char rel[128];
	const char *name;
	int rc;

	process_events(w, pid_index, &pe);
	process_periods(w, p, &pe);
	rc = collect_vmmaps(m, p, &vm, &n_vm);
	if (rc)
		return rc;
	name = profile_name(w, p);
	if (!name) {
		rc = -ENOMEM;
		goto cleanup;
	}
	snprintf(rel, sizeof(rel), "sampler/%s", name);
	rc = outfile_open(&f, w->opts, rel);
	if (rc)
		goto cleanup;
	rc = write_profile(w, &f, &pe, vm, n_vm);
	if (rc)
		goto cleanup;
	rc = outfile_commit(&f);
	f.fp = NULL;
cleanup:
	if (f.fp) {
		fprintf(stderr, "collector: cannot write %s/%s: %s\n", w->opts->dir, rel,
			strerror(-rc));
		outfile_abort(&f);
	}
	free(vm);
	return rc;
}

int sampler_write(const struct model *m, const struct export_options *opts)
{
	struct writer w = { .m = m, .opts = opts };
	size_t np = m->processes.len, max_threads = 0;
	bool any = false;
	int rc;

	w.period = m->run.period_ns ? m->run.period_ns :
		   m->run.freq_hz ? 1000000000ULL / m->run.freq_hz : 0;
	rc = group(&w.samples, np, m->samples.len, sample_process, m);
	if (!rc)
		rc = group(&w.switches, np, m->switches.len, switch_process, m);
	if (!rc)
		rc = group(&w.threads, np, m->threads.len, thread_process, m);
	if (rc)
		goto cleanup;
	for (size_t p = 0; p < np; p++) {
		size_t n = w.threads.first[p + 1] - w.threads.first[p];

		if (n > max_threads)
			max_threads = n;
		if (w.samples.first[p + 1] > w.samples.first[p] ||
		    w.switches.first[p + 1] > w.switches.first[p])
			any = true;
	}
	if (!any)
		goto cleanup;
	if (!w.period) {
		fprintf(stderr, "collector: sampler: the run has no sampling period\n");
		rc = -EINVAL;
		goto cleanup;
	}
	w.local = malloc((m->threads.len ? m->threads.len : 1) * sizeof(*w.local));
	w.states = malloc((max_threads ? max_threads : 1) * sizeof(*w.states));
	if (!w.local || !w.states) {
		rc = -ENOMEM;
		goto cleanup;
	}
	rc = export_mkdir(opts, "sampler");
	for (size_t p = 0; p < np && !rc; p++) {
		if (w.samples.first[p + 1] == w.samples.first[p] &&
		    w.switches.first[p + 1] == w.switches.first[p])
			continue;
		rc = write_process(&w, p);
	}
cleanup:
	free_group(&w.samples);
	free_group(&w.switches);
	free_group(&w.threads);
	free(w.local);
	free(w.states);
	free(w.buf);
	for (size_t i = 0; i < w.n_names; i++)
		free(w.names[i]);
	free(w.names);
	return rc;
}

/* ---- collector dump ---------------------------------------------------- */

/*
 * The format has no signature: a known magic (0-3, so three zero bytes
 * follow the first, which no text format and no XRay header has), and
 * counts that fit in the file's size.
 */
bool sampler_recognize(const char *path, const unsigned char *head, size_t n)
{
	struct stat st;
	uint32_t magic, n_vm;
	uint64_t n_samples;

	if (n < SAMPLER_HEADER_SIZE)
		return false;
	magic = le32_get(head);
	n_samples = le64_get(head + 20);
	n_vm = le32_get(head + 28);
	if (magic > SAMPLER_MAGIC_POWER)
		return false;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	return (uint64_t)n_vm * SAMPLER_VMMAP_SIZE <= (uint64_t)st.st_size - SAMPLER_HEADER_SIZE &&
	       n_samples <= ((uint64_t)st.st_size - SAMPLER_HEADER_SIZE) / SAMPLER_SAMPLE_SIZE;
}

int sampler_dump(const char *path, FILE *out, bool check)
{
	struct sampler_profile p;
	struct format_error err;
	int rc;

	rc = sampler_read_file(path, SAMPLER_LAYOUT_AUTO, &p, &err);
	if (!rc) {
		rc = sampler_check_cputime(&p, &err);
		if (!rc && !check)
			sampler_print(&p, out);
		sampler_profile_free(&p);
	}
	return rc ? format_report(path, rc, &err) : 0;
}

const struct format sampler_format = {
	.name = "sampler",
	.needs = FORMAT_NEEDS_SAMPLES,
	.uses_switches = true,
	.samples_in_time_order = true, /* each sample a record with its time */
	.write = sampler_write,
	.recognize = sampler_recognize,
	.dump = sampler_dump,
	.one_event = true,
};
