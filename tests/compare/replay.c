// SPDX-License-Identifier: GPL-2.0
/*
 * replay FILE OUTDIR: rebuilds the model of a run from what
 * COLLECTOR_SAVE_RECORDS=FILE saved (session/save_records.h) and writes every
 * format that applies into OUTDIR, and the end-of-run summary into
 * OUTDIR/summary.txt.  REPLAY_KALLSYMS=PATH: the kernel's symbols from
 * PATH (a copy of /proc/kallsyms) rather than /proc/kallsyms.
 *
 * It takes the run's steps in the run's order: the facts, the --trace
 * specs resolved, the tracker with the -p targets added at the ktime they
 * were, the attach statistics, the symbols warmed, the window opened, every
 * ring record handed to the tracker (and the window closed where it was),
 * the kernel's counters and aggregates, the tracker finished, the events
 * sealed and sorted.  The targets must still exist, stopped (SIGSTOP), so
 * that /proc/PID/maps, map_files and the threads' CPU times read the same
 * for two replays.
 *
 * Built against the current tree (-I. from its top), or, with
 * -DREPLAY_OLD_LAYOUT, against the tree before the reorganisation into
 * layers (-Iuser -Iexporters -Ibpf), whose end-of-run counter writes were
 * static functions of user/record.c and user/tracing.c: they are copied
 * below as they were.  tests/compare/compare-outputs.sh builds both and
 * compares their outputs; tests/compare/README.md says more.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef REPLAY_OLD_LAYOUT
#include "collector.h"
#include "export.h"
#include "launch.h"
#include "model.h"
#include "summary.h"
#include "symbolize.h"
#include "tracker.h"
#include "tracing.h"
#else
#include "bpf/collector.h"
#include "cli/summary.h"
#include "session/targets.h"
#include "decode/kernel_counters.h"
#include "decode/run.h"
#include "decode/trace_specs.h"
#include "decode/tracker.h"
#include "formats/registry.h"
#include "model/model.h"
#include "symbols/symbolize.h"
#endif

/* relative: an old tree has no session/ folder to find it in */
#include "../../session/save_records.h"

#define MAX_SPECS 64

struct item {
	uint32_t tag, len;
	const unsigned char *data;
};

struct saved {
	unsigned char *buf;
	struct item *items;
	size_t n;
};

static int load(const char *path, struct saved *s)
{
	struct save_item_head head;
	size_t off = 0, len, cap = 0;
	FILE *f = fopen(path, "rb");
	struct stat st;

	if (!f || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	len = st.st_size;
	s->buf = malloc(len + 1);
	if (!s->buf || fread(s->buf, 1, len, f) != len) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	while (off + sizeof(head) <= len) {
		memcpy(&head, s->buf + off, sizeof(head));
		off += sizeof(head);
		if (head.len > len - off)
			break;
		if (s->n == cap) {
			cap = cap ? 2 * cap : 4096;
			s->items = realloc(s->items, cap * sizeof(*s->items));
			if (!s->items)
				return -1;
		}
		s->items[s->n++] = (struct item){ head.tag, head.len, s->buf + off };
		off += head.len;
	}
	if (off != len || !s->n || s->items[0].tag != SAVE_MAGIC ||
	    s->items[0].len != strlen(SAVE_RECORDS_MAGIC) ||
	    memcmp(s->items[0].data, SAVE_RECORDS_MAGIC, s->items[0].len)) {
		fprintf(stderr, "replay: %s: not a whole file of saved records (%s)\n", path,
			off != len ? "truncated" : "no magic");
		return -1;
	}
	return 0;
}

/* The first item with this tag, or NULL. */
static const struct item *find(const struct saved *s, uint32_t tag)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].tag == tag)
			return &s->items[i];
	return NULL;
}

/* The value of the n-th "key=value" of the text items with this tag. */
static const char *fact_nth(const struct saved *s, uint32_t tag, const char *key, int nth)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < s->n; i++) {
		const char *p = (const char *)s->items[i].data, *end = p + s->items[i].len;

		if (s->items[i].tag != tag)
			continue;
		for (; p < end; p += strlen(p) + 1)
			if (!strncmp(p, key, klen) && p[klen] == '=' && nth-- == 0)
				return p + klen + 1;
	}
	return NULL;
}

static const char *fact(const struct saved *s, uint32_t tag, const char *key)
{
	const char *v = fact_nth(s, tag, key, 0);

	return v ? v : "";
}

static uint64_t fact_u64(const struct saved *s, uint32_t tag, const char *key)
{
	return strtoull(fact(s, tag, key), NULL, 10);
}

/* The run's events (-e, --off-cpu), one "event" fact each; a run saved
 * before they were has none: one cpu-clock event. */
static void set_events(struct model *m, const struct saved *s)
{
#ifdef MODEL_MAX_EVENTS /* a tree that has events (the driver builds against older ones) */
	const char *v;

	for (int i = 0; (v = fact_nth(s, SAVE_FACTS, "event", i)); i++) {
		char name[64], unit[32], desc[128];
		int clock = 0, aggregated = 0;
		unsigned int freq = 0;
		unsigned long long period = 0;
		struct model_event e = { .name = name, .unit = unit, .description = desc };

		desc[0] = 0;
		if (sscanf(v, "%63[^\t]\t%31[^\t]\t%d\t%d\t%u\t%llu\t%127[^\n]", name, unit, &clock,
			   &aggregated, &freq, &period, desc) < 6)
			continue;
		e.clock = clock;
		e.aggregated = aggregated;
		e.freq_hz = freq;
		e.period = period;
		model_add_event(m, &e);
	}
#else
	(void)m;
	(void)s;
#endif
}

/* Each event's lost samples, as the run read them from the kernel after
 * its sampler's counters; a run saved before they were has none. */
static void events_lost(struct model *m, const struct saved *s)
{
#ifdef MODEL_MAX_EVENTS
	uint64_t lost[MODEL_MAX_EVENTS] = { 0 };
	const char *v;
	uint32_t n = 0;

	for (; n < MODEL_MAX_EVENTS && (v = fact_nth(s, SAVE_END, "event_lost", n)); n++)
		lost[n] = strtoull(v, NULL, 10);
	decode_events_lost(m, lost, n);
#else
	(void)m;
	(void)s;
#endif
}

/* The run's facts as the window opened, into the model. */
static void set_facts(struct model *m, const struct saved *s)
{
	struct model_run *run = &m->run;

	run->system_wide = fact_u64(s, SAVE_FACTS, "system_wide");
	run->freq_hz = fact_u64(s, SAVE_FACTS, "freq_hz");
	run->period_ns = fact_u64(s, SAVE_FACTS, "period_ns");
	run->ktime_to_epoch_ns = strtoll(fact(s, SAVE_FACTS, "ktime_to_epoch_ns"), NULL, 10);
	snprintf(run->hostname, sizeof(run->hostname), "%s", fact(s, SAVE_FACTS, "hostname"));
	run->host_id = fact_u64(s, SAVE_FACTS, "host_id");
	run->ncpus = fact_u64(s, SAVE_FACTS, "ncpus");
	run->cpu_mhz = fact_u64(s, SAVE_FACTS, "cpu_mhz");
	run->trace_nargs = fact_u64(s, SAVE_FACTS, "trace_nargs");
	snprintf(run->call_graph, sizeof(run->call_graph), "%s", fact(s, SAVE_FACTS, "call_graph"));
	if (fact_nth(s, SAVE_FACTS, "command", 0))
		model_set_command_line(m, fact(s, SAVE_FACTS, "command"));
	set_events(m, s);
}

#ifdef REPLAY_OLD_LAYOUT
/* ---- copied from the old user/record.c and user/tracing.c ---------------- */

/* Reads the symbols and line tables of an image now rather than on its
 * first sample, inside the targets' time. */
static void warm_image(struct symbolizer *sym, struct model *m, const char *path)
{
	struct stat st;
	uint32_t img;

	if (stat(path, &st) != 0)
		return;
	img = symbolizer_image(sym, path, NULL, st.st_dev, st.st_ino);
	symbolizer_location(sym, img, m->images.items[img].text_start);
}

/*
 * One-off work before sampling starts: the kernel's symbols, the images the
 * targets map (for a command not started yet: its executable, and the C
 * library, which the collector maps too).
 */
static void warm_symbols(struct symbolizer *sym, struct model *m, char *const *command)
{
	char line[4608], *exe;
	FILE *f;

	symbolizer_kernel_image(sym);
	for (size_t p = 0; p < m->processes.len; p++) {
		const struct model_process *proc = &m->processes.items[p];

		for (size_t i = 0; i < proc->maps.len; i++) {
			uint32_t img = proc->maps.items[i].image;

			symbolizer_location(sym, img, m->images.items[img].text_start);
			proc = &m->processes.items[p];
		}
	}
	if (!command)
		return;
	exe = launch_find_command(command[0]);
	if (exe)
		warm_image(sym, m, exe);
	free(exe);
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path || !strstr(path, "/libc.so"))
			continue;
		path[strcspn(path, "\n")] = 0;
		warm_image(sym, m, path);
		break;
	}
	if (f)
		fclose(f);
}

static const char *const counter_names[COLLECTOR_CNT_MAX] = {
	[COLLECTOR_CNT_RB_FULL_SAMPLE] = "ring buffer full (samples)",
	[COLLECTOR_CNT_RB_FULL_TASK] = "ring buffer full (fork/exec/exit)",
	[COLLECTOR_CNT_RB_FULL_SWITCH] = "ring buffer full (switches)",
	[COLLECTOR_CNT_KSTACK_FAIL] = "kernel stack walk failed",
	[COLLECTOR_CNT_AGG_FULL] = "aggregation map full",
	[COLLECTOR_CNT_TARGETS_FULL] = "children not followed",
};

static void record_counters(struct model *m, const uint64_t c[COLLECTOR_CNT_MAX])
{
	for (int i = 0; i < COLLECTOR_CNT_MAX; i++)
		if (counter_names[i])
			model_count_lost(m, counter_names[i], c[i]);
	model_count_stat(m, "ring_wakeups", c[COLLECTOR_CNT_WAKEUPS]);
}

static const char *const trace_lost_names[COLLECTOR_TCNT_MAX] = {
	[COLLECTOR_TCNT_RB_FULL_ENTRY] = "ring buffer full (traced entries)",
	[COLLECTOR_TCNT_RB_FULL_EXIT] = "ring buffer full (traced exits)",
	[COLLECTOR_TCNT_DEPTH_OVERFLOW] = "traced calls nested too deep",
	[COLLECTOR_TCNT_STATS_FULL] = "per-function map full",
	[COLLECTOR_TCNT_SHADOW_FULL] = "per-thread call stack map full",
	[COLLECTOR_TCNT_CLAIM_FULL] = "per-thread call aggregates not merged (claim map full)",
};

static const char *const trace_stat_names[COLLECTOR_TCNT_MAX] = {
	[COLLECTOR_TCNT_EXIT_NO_ENTRY] = "traced_exits_without_entry",
	[COLLECTOR_TCNT_FRAMES_DROPPED] = "traced_entries_without_exit",
	[COLLECTOR_TCNT_WAKEUPS] = "trace_ring_wakeups",
	[COLLECTOR_TCNT_SLOT_TAKEN] = "traced_calls_past_thread_slots",
};

/* model thread of (tgid, tid): the newest thread entry with that tid */
static uint32_t find_thread(const struct model *m, uint32_t tgid, uint32_t tid)
{
	for (size_t i = m->threads.len; i-- > 0;) {
		const struct model_thread *th = &m->threads.items[i];

		if ((uint32_t)th->tid == tid &&
		    (uint32_t)m->processes.items[th->process].pid == tgid)
			return i;
	}
	return MODEL_NONE;
}

/* add_stats() of user/tracing.c, on the model instead of struct tracing */
static void add_stats(struct model *m, const struct collector_func_key *key,
		      const struct collector_func_stats *fs)
{
	struct model_func_stats *ms;
	uint32_t thread;

	if (key->tgid == (uint32_t)getpid() || key->func >= m->traced.len)
		return; /* the calibration's calls */
	thread = find_thread(m, key->tgid, key->tid);
	if (thread == MODEL_NONE) {
		model_count_stat(m, "traced_stats_unknown_thread", 1);
		return;
	}
	ms = model_add_func_stats(m);
	ms->func = key->func;
	ms->thread = thread;
	ms->process = m->threads.items[thread].process;
	ms->calls = fs->calls;
	ms->total_ns = fs->total_ns;
	ms->self_ns = fs->self_ns;
	memcpy(ms->hist, fs->hist, sizeof(ms->hist));
}

/* the counter part of tracing_collect() */
static void trace_counters(struct model *m, const uint64_t c[COLLECTOR_TCNT_MAX])
{
	for (uint32_t k = 0; k < COLLECTOR_TCNT_MAX; k++) {
		if (trace_lost_names[k])
			model_count_lost(m, trace_lost_names[k], c[k]);
		else if (trace_stat_names[k])
			model_count_stat(m, trace_stat_names[k], c[k]);
	}
}

/* ---- the steps, in each tree's words ------------------------------------ */

static int resolve_specs(struct model *m, struct symbolizer *sym, char **specs, int n,
			 const pid_t *pids, int n_pids)
{
	struct tracing_config cfg = {
		.specs = specs, .n_specs = n, .pids = pids, .n_pids = n_pids,
		.stream_events = true, .n_args = m->run.trace_nargs,
		.system_wide = m->run.system_wide,
	};

	return tracing_resolve(m, sym, &cfg);
}

static void trace_attach(struct model *m, const struct save_trace_attach *ta)
{
	/* as the old record.c and tracing_attach() counted them, in order */
	if (ta->probe_overhead_ns >= 0)
		model_count_stat(m, "probe_overhead_ns", (uint64_t)(ta->probe_overhead_ns + 0.5));
	for (uint64_t i = 0; i < ta->skipped; i++)
		model_count_stat(m, "traced_functions_skipped", 1);
	model_count_stat(m, "attach_us", (uint64_t)(ta->attach_seconds * 1e6));
}

static void warm(struct symbolizer *sym, struct model *m)
{
	warm_symbols(sym, m, NULL);
}

static uint64_t kernel_samples(struct model *m, uint64_t by_ip, uint64_t not_counted)
{
	model_count_stat(m, "kernel_samples", by_ip + not_counted);
	return by_ip + not_counted;
}

static void sampler_counters(struct model *m, const uint64_t c[COLLECTOR_CNT_MAX])
{
	record_counters(m, c);
}

static void func_stats(struct model *m, const struct collector_func_key *key,
		       const struct collector_func_stats *fs)
{
	add_stats(m, key, fs);
}

static unsigned int applicable(const struct model *m)
{
	return export_applicable_formats(m);
}

static int write_formats(const struct model *m, unsigned int mask,
			 const struct export_options *eo)
{
	return export_all(m, mask, eo);
}

#else /* the layout in layers */

static int resolve_specs(struct model *m, struct symbolizer *sym, char **specs, int n,
			 const pid_t *pids, int n_pids)
{
	struct trace_specs_config cfg = {
		.specs = specs, .n_specs = n, .pids = pids, .n_pids = n_pids,
	};
	struct trace_files files = { 0 };
	int err = trace_specs_resolve(m, sym, &cfg, &files);

	trace_files_free(&files);
	return err;
}

static void trace_attach(struct model *m, const struct save_trace_attach *ta)
{
	decode_trace_attach(m, ta->skipped, ta->attach_seconds, ta->probe_overhead_ns);
}

/* the run reads nothing ahead any more (session/session.c's start()) */
static void warm(struct symbolizer *sym, struct model *m)
{
	(void)sym;
	(void)m;
}

static uint64_t kernel_samples(struct model *m, uint64_t by_ip, uint64_t not_counted)
{
	return decode_kernel_samples(m, by_ip, not_counted);
}

static void sampler_counters(struct model *m, const uint64_t c[COLLECTOR_CNT_MAX])
{
	decode_sampler_counters(m, NULL, c); /* every registered runtime's */
}

static void trace_counters(struct model *m, const uint64_t c[COLLECTOR_TCNT_MAX])
{
	decode_trace_counters(m, c);
}

static void func_stats(struct model *m, const struct collector_func_key *key,
		       const struct collector_func_stats *fs)
{
	decode_func_stats(m, key, fs);
}

/* REPLAY_FORMATS=LIST: only these of the formats that apply (the ones the
 * other revision knows, so that formats new since then are left out). */
static unsigned int applicable(const struct model *m)
{
	const char *only = getenv("REPLAY_FORMATS");
	unsigned int mask = formats_applicable(m), known;

	if (only && formats_parse(only, &known) == 0)
		mask &= known;
	return mask;
}

static int write_formats(const struct model *m, unsigned int mask,
			 const struct export_options *eo)
{
	return formats_write(m, mask, eo);
}

#endif

/* ---- the run, replayed --------------------------------------------------- */

struct replay {
	struct saved s;
	struct model m;
	struct symbolizer *sym;
	struct tracker *tracker;
	pid_t collector_pid;
	pid_t pids[MAX_SPECS];
	int n_pids;
	struct summary_figures fig;
};

/* Up to the window's start: the facts, --trace, the tracker and targets. */
static int replay_start(struct replay *r)
{
	const struct item *it;
	char *specs[MAX_SPECS];
	int n_specs = 0;

	set_facts(&r->m, &r->s);
	r->collector_pid = fact_u64(&r->s, SAVE_FACTS, "pid");
	r->sym = symbolizer_new(&r->m);
	if (!r->sym)
		return -ENOMEM;
	/* one copy of /proc/kallsyms for both replays: other tools' BPF
	 * programs come and go in it, and a kernel address in the JIT area
	 * would take the name of whichever is loaded at the time */
	if (getenv("REPLAY_KALLSYMS"))
		symbolizer_set_kallsyms_path(r->sym, getenv("REPLAY_KALLSYMS"));
	for (size_t i = 0; i < r->s.n && r->n_pids < MAX_SPECS; i++)
		if (r->s.items[i].tag == SAVE_TARGET)
			r->pids[r->n_pids++] = ((const struct save_target *)r->s.items[i].data)->pid;
	while (n_specs < MAX_SPECS && fact_nth(&r->s, SAVE_FACTS, "trace", n_specs)) {
		specs[n_specs] = (char *)fact_nth(&r->s, SAVE_FACTS, "trace", n_specs);
		n_specs++;
	}
	if (n_specs && resolve_specs(&r->m, r->sym, specs, n_specs, r->pids, r->n_pids) != 0)
		return -EINVAL;
	r->tracker = tracker_new(&r->m, r->sym);
	if (!r->tracker)
		return -ENOMEM;
	if (!strcmp(r->m.run.call_graph, "dwarf") && tracker_enable_unwinding(r->tracker) != 0)
		return -ENOMEM;
	if (!r->m.run.system_wide)
		tracker_ignore_process(r->tracker, r->collector_pid);
	for (size_t i = 0; i < r->s.n; i++) {
		const struct save_target *st = (const void *)r->s.items[i].data;

		if (r->s.items[i].tag != SAVE_TARGET)
			continue;
		if (tracker_add_process(r->tracker, st->pid, st->ktime_ns) != 0) {
			fprintf(stderr, "replay: PID %d is gone: replay while the targets are "
				"stopped, not ended\n", st->pid);
			return -ESRCH;
		}
	}
	if ((it = find(&r->s, SAVE_EXPECT_EXEC)))
		tracker_expect_exec(r->tracker, *(const int32_t *)it->data);
	if ((it = find(&r->s, SAVE_TRACE_ATTACH)))
		trace_attach(&r->m, (const struct save_trace_attach *)it->data);
	warm(r->sym, &r->m);
	r->m.run.start_ktime_ns = fact_u64(&r->s, SAVE_FACTS, "start_ktime_ns");
	r->m.run.start_ns = r->m.run.start_ktime_ns + r->m.run.ktime_to_epoch_ns;
	tracker_begin_window(r->tracker);
	if ((it = find(&r->s, SAVE_EXEC_ALLOWED)))
		tracker_exec_allowed(r->tracker, *(const uint64_t *)it->data);
	return 0;
}

/* Every record, and the window's end where it came. */
static void replay_records(struct replay *r)
{
	for (size_t i = 0; i < r->s.n; i++) {
		const struct item *it = &r->s.items[i];

		if (it->tag == SAVE_RECORD) {
			tracker_handle_record(r->tracker, it->data, it->len);
		} else if (it->tag == SAVE_WINDOW_END) {
			r->m.run.end_ktime_ns = *(const uint64_t *)it->data;
			r->m.run.end_ns = r->m.run.end_ktime_ns + r->m.run.ktime_to_epoch_ns;
			tracker_end_window(r->tracker);
		} else if (it->tag == SAVE_ENERGY) {
			struct model_energy *e = MODEL_VEC_PUSH(r->m.energy);

			memcpy(&e->time_ns, it->data, sizeof(uint64_t));
			memcpy(&e->energy_uj, it->data + sizeof(uint64_t), sizeof(uint64_t));
		}
	}
}

/*
 * The end of the run: counters, aggregates, the tracker finished.  The old
 * tree read the live threads' aggregates, then the tracer's counters, then
 * the map's aggregates; the new one reads every aggregate before the
 * counters.  Both put the aggregates in one order and the counters in
 * another list (model.func_stats, model.lost; model.stats is looked up by
 * name only), so the replay feeds both in the new order.
 */
static void replay_finish(struct replay *r)
{
	uint64_t counters[COLLECTOR_CNT_MAX] = { 0 }, tcounters[COLLECTOR_TCNT_MAX] = { 0 };
	const struct item *it;
	uint64_t by_ip = 0;

	if ((it = find(&r->s, SAVE_COUNTERS)))
		memcpy(counters, it->data, it->len < sizeof(counters) ? it->len : sizeof(counters));
	sampler_counters(&r->m, counters);
	events_lost(&r->m, &r->s);
	if ((it = find(&r->s, SAVE_KERNEL_SAMPLES)))
		memcpy(&by_ip, it->data, sizeof(by_ip));
	r->fig.kernel_samples = kernel_samples(&r->m, by_ip, counters[COLLECTOR_CNT_AGG_FULL]);
	for (size_t i = 0; i < r->s.n; i++) {
		const struct collector_func_key *key = (const void *)r->s.items[i].data;
		struct collector_func_stats fs;

		if (r->s.items[i].tag != SAVE_FUNC_STATS ||
		    r->s.items[i].len != sizeof(*key) + sizeof(fs))
			continue;
		/* the run left out its own calibration calls by its pid */
		if (key->tgid == (uint32_t)r->collector_pid)
			continue;
		memcpy(&fs, r->s.items[i].data + sizeof(*key), sizeof(fs));
		func_stats(&r->m, key, &fs);
	}
	if ((it = find(&r->s, SAVE_TRACE_COUNTERS))) {
		memcpy(tcounters, it->data, it->len < sizeof(tcounters) ? it->len : sizeof(tcounters));
		trace_counters(&r->m, tcounters);
	}
	tracker_finish(r->tracker);
	r->m.run.collector_cpu_ns = fact_u64(&r->s, SAVE_END, "collector_cpu_ns");
	r->m.run.bpf_run_ns = fact_u64(&r->s, SAVE_END, "bpf_run_ns");
	model_seal_events(&r->m);
	model_sort_by_time(&r->m);
#ifdef MODEL_MAX_EVENTS
	model_events_tally(&r->m); /* a tree that has events */
#endif
	r->fig.duration_s = (r->m.run.end_ktime_ns - r->m.run.start_ktime_ns) / 1e9;
	r->fig.target_cpu_ns = tracker_target_cpu_ns(r->tracker);
	r->fig.cpus = fact_u64(&r->s, SAVE_END, "cpus");
}

static int write_outputs(struct replay *r, const char *outdir)
{
	struct export_options eo = { .dir = outdir, .quiet = true };
	char path[4096];
	FILE *f;
	int err;

	err = write_formats(&r->m, applicable(&r->m), &eo);
	snprintf(path, sizeof(path), "%s/summary.txt", outdir);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "replay: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	summary_print(f, &r->m, &r->fig);
	if (fclose(f) != 0)
		return -EIO;
	return err;
}

int main(int argc, char **argv)
{
	struct replay r = { 0 };
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: replay FILE OUTDIR   (FILE from COLLECTOR_SAVE_RECORDS)\n");
		return 2;
	}
	if (load(argv[1], &r.s) != 0)
		return 1;
	if (!find(&r.s, SAVE_FACTS) || !find(&r.s, SAVE_WINDOW_END) || !find(&r.s, SAVE_END)) {
		fprintf(stderr, "replay: %s: the run did not reach its end\n", argv[1]);
		return 1;
	}
	if (mkdir(argv[2], 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "replay: cannot create %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	model_init(&r.m);
	/* as the run did: events spill to unnamed files in the output directory */
	model_spill_events(&r.m, argv[2]);
	err = replay_start(&r);
	if (!err) {
		replay_records(&r);
		replay_finish(&r);
		err = write_outputs(&r, argv[2]);
	}
	tracker_free(r.tracker);
	symbolizer_free(r.sym);
	model_free(&r.m);
	free(r.s.items);
	free(r.s.buf);
	if (err)
		fprintf(stderr, "replay: failed: %s\n", strerror(-err));
	return err ? 1 : 0;
}
