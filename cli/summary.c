// SPDX-License-Identifier: GPL-2.0
/* The end-of-run summary. */
#include "cli/summary.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"

#define TOP_N 20

static uint64_t key_of(const struct model *m, uint32_t loc)
{
	uint32_t f = m->locations.items[loc].function;

	return f != MODEL_NONE ? f : (1ULL << 32 | loc);
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

void summary_entry_name(const struct model *m, uint64_t key, char *buf, size_t size)
{
	if (key >> 32) {
		const struct model_location *l = &m->locations.items[(uint32_t)key];
		const struct model_image *img = &m->images.items[l->image];

		snprintf(buf, size, "[unknown] %s+0x%llx", basename_of(img->path),
			 (unsigned long long)l->addr);
	} else {
		snprintf(buf, size, "%s", m->functions.items[key].name);
	}
}

static const char *entry_image(const struct model *m, uint64_t key)
{
	uint32_t img = key >> 32 ? m->locations.items[(uint32_t)key].image
				 : m->functions.items[key].image;

	return basename_of(m->images.items[img].path);
}

long summary_function_counts(const struct model *m, uint32_t event, bool weighted,
			     struct summary_entry **out)
{
	uint64_t *per_stack = calloc(m->stacks.len ? m->stacks.len : 1, sizeof(*per_stack));
	MODEL_VEC(struct summary_entry) entries = { 0 };
	struct idmap index = { 0 };
	uint64_t seen[2 * 128];
	size_t i;

	if (!per_stack)
		return -ENOMEM;
	for (i = 0; i < m->samples.len; i++) {
		const struct model_sample *sm = &m->samples.items[i];

		if (event == SUMMARY_ALL_EVENTS || sm->event == event)
			per_stack[sm->stack] += weighted ? sm->weight : 1;
	}
	for (i = 0; i < m->stacks.len; i++) {
		const struct model_stack *s = &m->stacks.items[i];
		const uint32_t *frames = model_stack_frames(m, s);
		size_t n_seen = 0;

		if (!per_stack[i] || !s->n_frames)
			continue;
		for (uint32_t f = 0; f < s->n_frames; f++) {
			uint64_t key = key_of(m, frames[f]);
			uint32_t e = idmap_get(&index, key);
			bool dup = false;

			if (e == UINT32_MAX) {
				struct summary_entry *ne = MODEL_VEC_PUSH(entries);

				ne->key = key;
				e = entries.len - 1;
				idmap_put(&index, key, e);
			}
			if (f == 0)
				entries.items[e].self += per_stack[i];
			/* a recursive function counts once per stack */
			for (size_t k = 0; k < n_seen; k++)
				dup |= seen[k] == key;
			if (!dup) {
				entries.items[e].total += per_stack[i];
				if (n_seen < sizeof(seen) / sizeof(seen[0]))
					seen[n_seen++] = key;
			}
		}
	}
	free(per_stack);
	idmap_free(&index);
	*out = entries.items;
	return entries.len;
}

static int by_self(const void *a, const void *b)
{
	const struct summary_entry *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int by_total(const void *a, const void *b)
{
	const struct summary_entry *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* A top-functions table: of every sample (one event), or of one event's
 * (what its column counts: "samples", or for off-cpu "ms"). */
static void print_top(FILE *out, const struct model *m, struct summary_entry *e, long n,
		      bool self, const char *of_event, uint64_t total, bool in_ms)
{
	char name[256];

	qsort(e, n, sizeof(*e), self ? by_self : by_total);
	fprintf(out, "\nTop functions by %s %s%s%s:\n", self ? "self" : "total",
		in_ms ? "time" : "samples", of_event ? " of " : "", of_event ? of_event : "");
	fprintf(out, "  %6s %10s  %-40s %s\n", self ? "self%" : "total%", in_ms ? "ms" : "samples",
		"function", "image");
	for (long i = 0; i < n && i < TOP_N; i++) {
		uint64_t v = self ? e[i].self : e[i].total;

		if (!v)
			break;
		summary_entry_name(m, e[i].key, name, sizeof(name));
		if (in_ms)
			fprintf(out, "  %5.1f%% %10.1f  %-40s %s\n", 100.0 * v / total, v / 1e6, name,
				entry_image(m, e[i].key));
		else
			fprintf(out, "  %5.1f%% %10llu  %-40s %s\n", 100.0 * v / total,
				(unsigned long long)v, name, entry_image(m, e[i].key));
	}
}

/* The tables of each event (one event: as they always were). */
static void print_event_tables(FILE *out, const struct model *m)
{
	uint32_t n_events = model_event_count(m);

	for (uint32_t ev = 0; ev < n_events; ev++) {
		const struct model_event *e = model_event(m, ev);
		/* off-cpu samples are blocked intervals of any length: their
		 * time is what counts */
		bool in_ms = !strcmp(e->name, "off-cpu");
		struct summary_entry *entries = NULL;
		uint64_t total = 0;
		long n;

		for (size_t i = 0; i < m->samples.len; i++)
			if (m->samples.items[i].event == ev)
				total += in_ms ? m->samples.items[i].weight : 1;
		if (!total)
			continue;
		n = summary_function_counts(m, ev, in_ms, &entries);
		if (n > 0) {
			print_top(out, m, entries, n, true, n_events > 1 ? e->name : NULL, total,
				  in_ms);
			print_top(out, m, entries, n, false, n_events > 1 ? e->name : NULL, total,
				  in_ms);
		}
		free(entries);
	}
}

/* The samples line, and with several events a line for each. */
static void print_events(FILE *out, const struct model *m, const struct summary_figures *f,
			 uint64_t samples)
{
	uint32_t n_events = model_event_count(m);
	char rate[64];

	if (n_events == 1) {
		model_event_rate(model_event(m, 0), rate, sizeof(rate));
		fprintf(out, "  samples         %llu (%s %s on %d CPUs)\n",
			(unsigned long long)samples, model_event(m, 0)->name, rate, f->cpus);
		return;
	}
	fprintf(out, "  samples         %llu of %u events on %d CPUs\n",
		(unsigned long long)samples, n_events, f->cpus);
	for (uint32_t ev = 0; ev < n_events; ev++) {
		const struct model_event *e = model_event(m, ev);

		model_event_rate(e, rate, sizeof(rate));
		if (e->aggregated)
			fprintf(out, "    %-18s %llu intervals of at least %.3f us in %llu stacks, "
				"%llu %s; %llu shorter ones not attributed\n", e->name,
				(unsigned long long)e->occurrences,
				model_stat_value(m, MODEL_STAT_OFFCPU_MIN_NS) / 1e3,
				(unsigned long long)e->samples, (unsigned long long)e->total, e->unit,
				(unsigned long long)model_stat_value(m,
						MODEL_STAT_OFFCPU_SHORT_SWITCHES));
		else
			fprintf(out, "    %-18s %llu samples (%s), %llu %s, %llu lost\n", e->name,
				(unsigned long long)e->samples, rate, (unsigned long long)e->total,
				e->unit, (unsigned long long)e->lost);
	}
	if (model_has_wall(m))
		summary_print_wall(out, m, f->window_start_ns);
}

struct traced_total {
	uint32_t func;
	uint64_t calls, total_ns, self_ns;
	uint64_t hist[MODEL_HIST_BUCKETS];
};

static int by_traced_total(const void *a, const void *b)
{
	const struct traced_total *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* The histogram counts calls by floor(log2(ns)): a percentile is reported
 * as the upper bound of its bucket. */
static uint64_t hist_percentile(const uint64_t *hist, uint64_t calls, double p)
{
	uint64_t want = (uint64_t)(calls * p + 0.999999), seen = 0;

	for (int b = 0; b < MODEL_HIST_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= want && seen)
			return b >= 63 ? UINT64_MAX : (2ULL << b) - 1;
	}
	return 0;
}

/* --call-graph cfi: how the unwinder in BPF fared, and its tables. */
static void print_cfi(FILE *out, const struct model *m)
{
	fprintf(out, "    unwound in BPF: %llu frames by frame pointer (no table), %llu samples "
		"before their image's table, %llu walks stopped outside every mapping; "
		"%llu mappings found in the kernel's VMAs before their process's table\n",
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_FP_FRAMES),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_SAMPLES_BEFORE_TABLES),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_STOPPED_OUTSIDE),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_MAPPINGS_LEARNED));
	fprintf(out, "    %llu samples unwound in user space: no table yet\n",
		(unsigned long long)model_stat_value(m, MODEL_STAT_UNWOUND_SAMPLES));
	if (model_stat_value(m, MODEL_STAT_OFFCPU_STACKS_UNWOUND))
		fprintf(out, "    %llu off-CPU intervals unwound in user space: no table yet "
			"(%llu lost their stacks or time)\n",
			(unsigned long long)model_stat_value(m, MODEL_STAT_OFFCPU_STACKS_UNWOUND),
			(unsigned long long)model_stat_value(m, MODEL_STAT_OFFCPU_STACKS_DROPPED));
	/* the tables' figures: recorded with -v only */
	if (!model_stat_value(m, MODEL_STAT_CFI_TABLE_MAP_BYTES))
		return;
	fprintf(out, "    unwind tables: %llu images, %llu rows and %llu page index entries "
		"(%.1f MiB of %.1f MiB of maps), built and loaded in %.1f ms; %.1f MiB of the "
		"collector's own\n",
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_IMAGES),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_ROWS),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_INDEX_ENTRIES),
		(model_stat_value(m, MODEL_STAT_CFI_TABLE_ROWS) +
		 model_stat_value(m, MODEL_STAT_CFI_TABLE_INDEX_ENTRIES)) * 8 / 1048576.0,
		model_stat_value(m, MODEL_STAT_CFI_TABLE_MAP_BYTES) / 1048576.0,
		model_stat_value(m, MODEL_STAT_CFI_TABLE_BUILD_US) / 1e3,
		model_stat_value(m, MODEL_STAT_CFI_TABLE_LOADER_BYTES) / 1048576.0);
	fprintf(out, "    unwind tables evicted: %llu images, %llu rows (no process mapped "
		"them); %llu images without a table for want of space; %llu with CFI from a "
		"debug file; %llu opens failed (tried again)\n",
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_EVICTED_IMAGES),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_EVICTED_ROWS),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_NO_SPACE),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_DEBUG_FILES),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_OPEN_FAILED));
	fprintf(out, "    unwind tables built: %llu images from their CFI, %llu read from the "
		"cache on disk (%llu cache files refused and rebuilt); mapping tables from "
		"them written at exec %llu, at a first request %llu\n",
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_BUILT),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_CACHE_HITS),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_CACHE_REFUSED),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_SERVED_EXEC),
		(unsigned long long)model_stat_value(m, MODEL_STAT_CFI_TABLE_SERVED_FIRST));
	fprintf(out, "    process maps: read %llu times, a reading shared between the decoder and "
		"the tables %llu times, kept current by the kernel's mmap records %llu times "
		"(%llu mappings recorded, %llu records lost); %llu exec'd processes' maps left "
		"for a first sample\n",
		(unsigned long long)model_stat_value(m, MODEL_STAT_MAPS_READ),
		(unsigned long long)model_stat_value(m, MODEL_STAT_MAPS_REUSED),
		(unsigned long long)model_stat_value(m, MODEL_STAT_MAPS_FOLLOWED),
		(unsigned long long)model_stat_value(m, MODEL_STAT_MMAP_RECORDS),
		(unsigned long long)model_stat_value(m, MODEL_STAT_MMAP_RECORDS_LOST),
		(unsigned long long)model_stat_value(m, MODEL_STAT_MAPS_DEFERRED));
}

static void print_traced(FILE *out, const struct model *m)
{
	struct traced_total *t = calloc(m->traced.len, sizeof(*t));
	uint64_t overhead = model_stat_value(m, MODEL_STAT_PROBE_OVERHEAD_NS);
	size_t i;

	if (!t)
		return;
	for (i = 0; i < m->traced.len; i++)
		t[i].func = i;
	for (i = 0; i < m->func_stats.len; i++) {
		const struct model_func_stats *fs = &m->func_stats.items[i];
		struct traced_total *tt = &t[fs->func];

		tt->calls += fs->calls;
		tt->total_ns += fs->total_ns;
		tt->self_ns += fs->self_ns;
		for (int b = 0; b < MODEL_HIST_BUCKETS; b++)
			tt->hist[b] += fs->hist[b];
	}
	qsort(t, m->traced.len, sizeof(*t), by_traced_total);
	fprintf(out, "\nTraced functions (wall-clock time between entry and return, probes "
		"included):\n");
	fprintf(out, "  %-32s %10s %12s %12s %10s %10s %10s\n", "function", "calls", "total ms",
		"self ms", "mean ns", "p50 ns<=", "p99 ns<=");
	for (i = 0; i < m->traced.len && i < TOP_N; i++) {
		const struct model_traced_function *tf = &m->traced.items[t[i].func];

		if (!t[i].calls)
			break;
		fprintf(out, "  %-32s %10llu %12.3f %12.3f %10.0f %10llu %10llu\n",
			m->functions.items[tf->function].name, (unsigned long long)t[i].calls,
			t[i].total_ns / 1e6, t[i].self_ns / 1e6, (double)t[i].total_ns / t[i].calls,
			(unsigned long long)hist_percentile(t[i].hist, t[i].calls, 0.5),
			(unsigned long long)hist_percentile(t[i].hist, t[i].calls, 0.99));
	}
	runtimes_summary(out, m, RUNTIME_SUMMARY_TRACE, NULL);
	if (overhead)
		fprintf(out, "  measured probe cost: about %llu ns per call (entry + return), "
			"included in the times above\n", (unsigned long long)overhead);
	free(t);
}

/* The achieved rate far below the requested one (per CPU-second of the
 * targets, so not for -a, where idle CPUs take no samples): the machine
 * cannot take the sampling interrupts that often.  Said plainly, with
 * what to do. */
static void print_rate_warning(FILE *out, const struct model *m, const struct summary_figures *f,
			       uint64_t samples)
{
	double rate;

	if (!f->target_cpu_ns || m->run.system_wide || !m->run.freq_hz ||
	    model_event_count(m) > 1)
		return;
	/* the run's samples: with --interval the model holds the last
	 * interval's only (it said 15% of 999 Hz for a run that had 100%) */
	rate = samples / (f->target_cpu_ns / 1e9);
	if (rate >= m->run.freq_hz / 2.0)
		return;
	fprintf(out, "    the achieved rate is %.0f%% of the requested %u Hz: this machine cannot "
		"take its sampling interrupts that often; a lower -F gives samples as evenly "
		"spaced as asked\n", 100.0 * rate / m->run.freq_hz, m->run.freq_hz);
}

void summary_print(FILE *out, const struct model *m, const struct summary_figures *f)
{
	/* the sampling events' samples: not off-cpu's sums (the off-cpu
	 * line says how many intervals they hold) */
	uint64_t samples = f->intervals ? f->interval_samples : model_sample_count(m);
	uint64_t lost = model_total_lost(m);
	uint64_t truncated = 0, user_stacks = 0;
	size_t i;

	for (i = 0; i < m->samples.len; i++) {
		const struct model_stack *s = &m->stacks.items[m->samples.items[i].stack];

		if (s->n_frames > s->n_kernel) {
			user_stacks++;
			truncated += s->truncated;
		}
	}
	fprintf(out, "\ncollector: %s\n", m->run.command_line ? m->run.command_line
		: m->run.system_wide ? "system-wide" : "processes");
	fprintf(out, "  duration        %.3f s\n", f->duration_s);
	print_events(out, m, f, samples);
	/* the rate of one event sampled at -F; with several, each line says */
	if (model_event_count(m) > 1 || !model_event(m, 0)->freq_hz)
		;
	else if (f->target_cpu_ns && !m->run.system_wide)
		fprintf(out, "  rate            %.0f samples per CPU-second of the targets "
			"(requested %u Hz; targets used %.3f CPU-s)\n",
			samples / (f->target_cpu_ns / 1e9), m->run.freq_hz,
			f->target_cpu_ns / 1e9);
	else if (f->duration_s > 0)
		fprintf(out, "  rate            %.0f samples/s over %d CPUs (requested %u Hz per CPU)\n",
			samples / f->duration_s, f->cpus, m->run.freq_hz);
	print_rate_warning(out, m, f, samples);
	if (f->aggregated)
		fprintf(out, "  in-kernel sums  the samples were summed by stack in the kernel, no ring "
			"record each (%llu counted there; --no-aggregate streams them)\n",
			(unsigned long long)f->kernel_samples);
	if (f->intervals)
		fprintf(out, "  intervals       %u sets of files, one per interval (the tables below: "
			"the last interval's %llu samples)\n", f->intervals,
			(unsigned long long)model_sample_count(m));
	fprintf(out, "  processes       %zu, threads %zu\n", m->processes.len, m->threads.len);
	fprintf(out, "  lost events     %llu\n", (unsigned long long)lost);
	for (i = 0; i < m->lost.len; i++)
		if (m->lost.items[i].value)
			fprintf(out, "    %-28s %llu\n", m->lost.items[i].name,
				(unsigned long long)m->lost.items[i].value);
	if (user_stacks) {
		fprintf(out, "  truncated stacks %.1f%% (%llu of %llu user stacks end before a "
			"thread's start; call graph: %s)\n", 100.0 * truncated / user_stacks,
			(unsigned long long)truncated, (unsigned long long)user_stacks,
			m->run.call_graph[0] ? m->run.call_graph : "fp");
		if (!strcmp(m->run.call_graph, "cfi"))
			print_cfi(out, m);
		else if (truncated * 10 > user_stacks && strcmp(m->run.call_graph, "dwarf") != 0)
			fprintf(out, "    frame pointers were walked: use --call-graph cfi or "
				"--call-graph dwarf, or rebuild the target with "
				"-fno-omit-frame-pointer, for whole call chains\n");
	}
	if (model_stat_value(m, MODEL_STAT_UNWOUND_SAMPLES)) {
		uint64_t n = model_stat_value(m, MODEL_STAT_UNWOUND_SAMPLES);

		fprintf(out, "  unwinding       %.1f us per sample in user space (%llu samples, "
			"%llu bytes per sample through the ring)\n",
			model_stat_value(m, MODEL_STAT_UNWIND_NS_TOTAL) / 1e3 / n, (unsigned long long)n,
			(unsigned long long)(model_stat_value(m, MODEL_STAT_STACK_RECORD_BYTES) / n));
	}
	if (f->sampler_runs)
		fprintf(out, "  profiler CPU    %.3f s: %.3f s own, %.3f s BPF (sampler: %llu runs, "
			"%.1f us each; %llu ring wakeups)\n",
			(m->run.collector_cpu_ns + m->run.bpf_run_ns) / 1e9,
			m->run.collector_cpu_ns / 1e9, m->run.bpf_run_ns / 1e9,
			(unsigned long long)f->sampler_runs,
			m->run.bpf_run_ns / 1e3 / f->sampler_runs,
			(unsigned long long)model_stat_value(m, MODEL_STAT_RING_WAKEUPS));
	runtimes_summary(out, m, RUNTIME_SUMMARY_WALKS, f->runtimes);
	/* a runtime's walk is loaded at its first process: samples in that
	 * moment, or all of them when it could not load */
	if (model_stat_value(m, MODEL_STAT_RUNTIME_WALK_UNLOADED))
		fprintf(out, "  runtimes        %llu samples or switch-outs met a language runtime's "
			"code before its walk was loaded: their stacks end at its first frame\n",
			(unsigned long long)model_stat_value(m, MODEL_STAT_RUNTIME_WALK_UNLOADED));
	if (m->traced.len)
		print_traced(out, m);
	if (!samples && !model_sum_records(m)) {
		fprintf(out, "\nNo samples: the targets did not run on a CPU while sampled.\n");
		return;
	}
	print_event_tables(out, m);
	runtimes_summary(out, m, RUNTIME_SUMMARY_TABLES, f->runtimes);
}
