// SPDX-License-Identifier: GPL-2.0
/*
 * Callgrind writer: one OUT/callgrind.out.<pid> per process that has
 * samples (callgrind.out.<pid>.<generation> for the images a later exec
 * started; "-<process entry id>" is appended if a reused pid repeats a
 * name), for callgrind_annotate and KCachegrind.  cmd: is the process's
 * command line (or comm), cut at 512 bytes with the whole kept in a
 * comment.
 *
 * Layout of a file, in the order both real readers need:
 *
 *   # callgrind format / version: 1 / creator: / pid: / cmd: / desc: ...
 *   positions: instr line
 *   event: <Name> : <long name> ...        (before events:, for annotate)
 *   events: Samples Ns [TracedNs]          (ends the header, < byte 2047)
 *   summary: ...                           (after events:, as Valgrind
 *                                           writes it: KCachegrind rejects
 *                                           it before events: and
 *                                           callgrind_annotate ignores it
 *                                           there with a warning)
 *   ob= / fl= / fn= blocks, fi= for inlined code, cost and calls= lines
 *   totals: ...
 *
 * Functions.  A resolved location belongs to its out-of-line function; its
 * cost line carries the address (file-relative, as the spec wants) and the
 * line, and fi= names the source file of the address when it is not the
 * function's own (inlined code).  Code that no symbol covers is grouped per
 * image as "[unknown] <image basename>": one function per unknown address
 * would flood the function list and invent call edges at every return
 * address, while the cost lines keep every exact address.
 *
 * Calls.  For each sample and each distinct (call site, callee function)
 * edge on its stack, the sample adds once to the edge: calls= is the number
 * of samples in which the edge was on the stack and the cost line after it
 * the sampled inclusive cost, so a recursive function is counted once per
 * stack, not once per frame.  Consecutive frames of one unknown group are
 * one node, not a call.
 *
 * Traced functions (uprobes).  Their wall-clock time is the separate event
 * TracedNs, never added to the sampled CPU time: each traced call's self
 * time is a cost line at the function's entry address, and each call whose
 * caller is known (the enclosing traced call on the thread, else the only
 * caller the samples show) is a calls= line with the exact call count and
 * the traced inclusive time, merged into the sampled edge between the same
 * two functions when there is one.
 */
#include "formats/format.h"
#include "formats/callgrind/callgrind.h"
#include "formats/callgrind/callgrind_internal.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define HEADER_EVENTS_LIMIT 1900 /* "events:" must start before byte 2047 */
#define CMD_MAX 512

/* ---- header --------------------------------------------------------------- */

struct hbuf {
	char *s;
	size_t len, cap;
};

static int hb_printf(struct hbuf *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int hb_printf(struct hbuf *h, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (h->len + (size_t)n + 1 > h->cap) {
		size_t ncap = (h->len + (size_t)n + 1) * 2;
		char *s = realloc(h->s, ncap);

		if (!s)
			return -ENOMEM;
		h->s = s;
		h->cap = ncap;
	}
	va_start(ap, fmt);
	vsnprintf(h->s + h->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	h->len += (size_t)n;
	return 0;
}

/* Copies s without control characters, at most max bytes. */
static char *clean_text(const char *s, size_t max)
{
	size_t n = strlen(s), i;
	char *d;

	if (n > max)
		n = max;
	d = malloc(n + 4);
	if (!d)
		return NULL;
	for (i = 0; i < n; i++)
		d[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
	if (strlen(s) > max) {
		memcpy(d + i, "...", 3);
		i += 3;
	}
	d[i] = 0;
	return d;
}

/* The cost column of event ev: Ns for the first event when it is the
 * default cpu-clock (the files of one-event runs as they always were),
 * else the event's name in CamelCase, Ns appended for a clock:
 * PageFaults, ContextSwitches, TaskClockNs, OffCpuNs. */
static void event_column(const struct model *m, uint32_t ev, char *buf, size_t size)
{
	const struct model_event *e = model_event(m, ev);
	size_t n = 0;
	bool up = true;

	if (ev == 0 && !strcmp(e->name, "cpu-clock")) {
		snprintf(buf, size, "Ns");
		return;
	}
	for (const char *c = e->name; *c && n + 3 < size; c++) {
		if (!isalnum((unsigned char)*c)) {
			up = true;
			continue;
		}
		buf[n++] = up ? toupper((unsigned char)*c) : tolower((unsigned char)*c);
		up = false;
	}
	if (e->clock && n + 3 < size)
		buf[n++] = 'N', buf[n++] = 's';
	buf[n] = 0;
}

static bool is_default_clock(const struct model *m)
{
	return !strcmp(model_event(m, 0)->name, "cpu-clock");
}

/* Several events (or one not the default): how each was sampled. */
static int desc_events(struct hbuf *d, const struct model *m)
{
	int err = hb_printf(d, "desc: Sampling: Samples counts samples of every event; each "
			    "event's column what its samples stand for in its unit\n");
	char col[64];

	for (uint32_t ev = 0; !err && ev < model_event_count(m); ev++) {
		const struct model_event *e = model_event(m, ev);

		event_column(m, ev, col, sizeof(col));
		if (e->period)
			err = hb_printf(d, "desc: Event %s: %s (%s), a sample every %" PRIu64 " %s\n",
					col, e->name, e->unit, e->period, e->unit);
		else if (e->freq_hz)
			err = hb_printf(d, "desc: Event %s: %s (%s), sampled at %" PRIu32 " Hz\n",
					col, e->name, e->unit, e->freq_hz);
		else
			err = hb_printf(d, "desc: Event %s: %s (%s)\n", col, e->name, e->unit);
	}
	return err;
}

/* The event: lines and the events: line. */
static void write_event_lines(FILE *fp, const struct model *m, bool traced)
{
	char col[64];

	if (model_event_count(m) == 1 && is_default_clock(m)) {
		fputs("event: Samples : Samples (CPU-clock)\n"
		      "event: Ns : CPU time in ns (sampled)\n", fp);
	} else {
		fputs("event: Samples : Samples (every event)\n", fp);
		for (uint32_t ev = 0; ev < model_event_count(m); ev++) {
			const struct model_event *e = model_event(m, ev);

			event_column(m, ev, col, sizeof(col));
			fprintf(fp, "event: %s : %s (%s, sampled)\n", col, e->description, e->unit);
		}
	}
	if (model_has_wall(m))
		fputs("event: WallNs : Wall-clock time in ns: on-CPU (sampled) + off-CPU\n", fp);
	if (traced)
		fputs("event: TracedNs : Wall-clock time of traced calls in ns (uprobes)\n", fp);
	fputs("events: Samples", fp);
	for (uint32_t ev = 0; ev < model_event_count(m); ev++) {
		event_column(m, ev, col, sizeof(col));
		fprintf(fp, " %s", col);
	}
	if (model_has_wall(m))
		fputs(" WallNs", fp);
	fputs(traced ? " TracedNs\n" : "\n", fp);
}

/* desc: lines of one file, each ending with '\n': the counts of this run
 * first, the explanations after, since the header has room for ~1.5 KiB
 * and what does not fit becomes comments after it. */
static int build_descs(const struct model *m, const struct model_process *proc,
		       const struct proc_info *pi, const struct proc_ctx *pc, bool traced,
		       struct hbuf *d)
{
	int err = 0;

	for (size_t i = 0; !err && i < m->lost.len; i++) {
		char *cause = clean_text(m->lost.items[i].name ? m->lost.items[i].name : "?", 200);

		if (!cause)
			return -ENOMEM;
		err = hb_printf(d, "desc: Lost: %" PRIu64 " events (%s)\n",
				m->lost.items[i].value, cause);
		free(cause);
	}
	if (!err)
		err = hb_printf(d, "desc: TruncatedStacks: %" PRIu64 " of %" PRIu64
			       " samples have a user stack that does not reach a known root\n",
			       pi->truncated, pi->samples);
	if (!err && proc->generation)
		err = hb_printf(d, "desc: Exec: image %" PRIu32 " of pid %d (after %" PRIu32
			       " exec%s)\n", proc->generation, (int)proc->pid, proc->generation,
			       proc->generation > 1 ? "s" : "");
	if (!err && traced && pc->unattributed_calls)
		err = hb_printf(d, "desc: TracedUnattributed: %" PRIu64 " traced calls had no "
			       "known caller (no enclosing traced call, several sampled callers)\n",
			       pc->unattributed_calls);
	if (!err && traced && pi->trace_unmatched)
		err = hb_printf(d, "desc: TracedUnmatched: %" PRIu64 " traced entries or exits "
			       "without their pair were dropped\n", pi->trace_unmatched);
	if (!err && model_event_count(m) == 1 && is_default_clock(m))
		err = hb_printf(d, "desc: Sampling: %s at %" PRIu32 " Hz, period %" PRIu64
			       " ns; Samples counts samples, Ns the CPU time they stand for\n",
			       m->run.event ? m->run.event : "cpu-clock", m->run.freq_hz,
			       m->run.period_ns);
	else if (!err)
		err = desc_events(d, m);
	if (!err)
		err = hb_printf(d, "desc: CallCounts: calls= gives the number of samples in "
			       "which the call was on the stack (a recursive call counts once "
			       "per sample), not executed calls%s\n",
			       traced ? "; calls into traced functions with a known caller are "
					"exact counts from uprobes" : "");
	if (!err)
		err = hb_printf(d, "desc: Jumps: no jump=/jcnd= lines: they need branch "
			       "records, which need a hardware PMU that this machine lacks\n");
	if (!err && traced)
		err = hb_printf(d, "desc: Traced: TracedNs is wall-clock time of traced calls "
			       "(uprobes), kept apart from sampled CPU time: self time at each "
			       "traced function's entry address, inclusive time on calls= lines\n");
	if (!err)
		err = hb_printf(d, "desc: Unknown: [unknown] IMAGE holds the code of IMAGE that "
			       "no symbol covers; its cost lines keep the exact addresses\n");
	return err;
}

/* The header, up to and with summary:.  desc: lines go in the header
 * (callgrind_annotate reads them only there) as long as events: stays where
 * KCachegrind looks for it; the rest become comments after the header.
 * Returns how far the descs were written. */
static size_t write_header(struct writer *w, const struct model *m,
			   const struct model_process *proc, const char *cmd,
			   const struct hbuf *descs, bool traced, const uint64_t *totals, int n_ev)
{
	FILE *fp = w->fp;
	size_t dpos = 0, head_len;

	head_len = (size_t)fprintf(fp, "# callgrind format\nversion: 1\ncreator: collector %s\n"
				   "pid: %d\ncmd: %s\n", COLLECTOR_VERSION, (int)proc->pid,
				   *cmd ? cmd : "???");
	/* positions:, event:, events: */
	head_len += 200 + (traced ? 100 : 0) + 80 * model_event_count(m);
	while (dpos < descs->len) {
		size_t n = (size_t)(strchr(descs->s + dpos, '\n') - (descs->s + dpos)) + 1;

		if (head_len + n > HEADER_EVENTS_LIMIT)
			break;
		fwrite(descs->s + dpos, 1, n, fp);
		head_len += n;
		dpos += n;
	}
	fputs("positions: instr line\n", fp);
	write_event_lines(fp, m, traced);
	w_puts(w, "summary:");
	for (int e = 0; e < n_ev; e++) {
		w_putc(w, ' ');
		put_u64(w, totals[e]);
	}
	w_putc(w, '\n');
	w_flush(w);
	return dpos;
}

/* The desc: lines that did not fit in the header as comments, and the
 * whole command line when cmd: had to cut it. */
static int write_comments(FILE *fp, const struct model_process *proc, const struct hbuf *descs,
			  size_t dpos)
{
	while (dpos < descs->len) {
		size_t n = (size_t)(strchr(descs->s + dpos, '\n') - (descs->s + dpos)) + 1;

		fputs("# ", fp);
		fwrite(descs->s + dpos, 1, n, fp);
		dpos += n;
	}
	if (strlen(proc->cmdline ? proc->cmdline : "") > CMD_MAX) {
		char *full = clean_text(proc->cmdline, SIZE_MAX - 4);

		if (!full)
			return -ENOMEM;
		fprintf(fp, "# cmd (complete): %s\n", full);
		free(full);
	}
	return 0;
}

/* The file's text, from its header to totals:. */
static int write_text(struct writer *w, struct proc_ctx *pc, const struct model_process *proc,
		      const char *cmd, const struct hbuf *descs, bool traced)
{
	int n_ev = pc->ev_traced + traced;
	uint64_t totals[N_EV] = { 0 };
	size_t dpos;
	int err;

	for (size_t i = 0; i < pc->items.len; i++) {
		const struct item *it = item_at(pc, (uint32_t)i);

		if (it->kind == ITEM_SELF)
			for (int e = 0; e < n_ev; e++)
				totals[e] += it->cost[e];
	}
	dpos = write_header(w, pc->m, proc, cmd, descs, traced, totals, n_ev);
	err = write_comments(w->fp, proc, descs, dpos);
	if (!err)
		err = find_homonyms(w, pc);
	if (!err)
		err = write_body(w, pc, n_ev);
	if (err) {
		w->len = 0;
		return err;
	}
	w_puts(w, "\ntotals:");
	for (int e = 0; e < n_ev; e++) {
		w_putc(w, ' ');
		put_u64(w, totals[e]);
	}
	w_putc(w, '\n');
	w_flush(w);
	return 0;
}

static int write_process(const struct model *m, const struct export_options *opts,
			 const struct aggregates *ag, uint32_t process, size_t s_begin,
			 size_t s_end, const char *relpath)
{
	const struct model_process *proc = &m->processes.items[process];
	bool traced = m->traced.len > 0;
	struct hbuf descs = { 0 };
	struct proc_ctx pc;
	struct writer w;
	struct outfile f;
	char *cmd = NULL;
	int err;

	memset(&w, 0, sizeof(w));
	err = build_items(&pc, m, ag, process, s_begin, s_end, traced);
	if (!err)
		err = build_descs(m, proc, &ag->procs[process], &pc, traced, &descs);
	if (err)
		goto out;
	cmd = clean_text(proc->cmdline && *proc->cmdline ? proc->cmdline : proc->comm, CMD_MAX);
	if (!cmd || writer_init(&w, m)) {
		err = -ENOMEM;
		goto out;
	}
	err = outfile_open(&f, opts, relpath);
	if (err)
		goto out;
	w.fp = f.fp;
	err = write_text(&w, &pc, proc, cmd, &descs, traced);
	if (err)
		outfile_abort(&f);
	else
		err = outfile_commit(&f);
out:
	writer_free(&w);
	proc_ctx_free(&pc);
	free(descs.s);
	free(cmd);
	return err;
}

/* ---- entry point ---------------------------------------------------------- */

struct proc_run {
	uint32_t process;
	size_t begin, end; /* in ag.stacks */
};

static const struct model *sort_model;

static int cmp_proc_run(const void *a, const void *b)
{
	const struct proc_run *ra = a, *rb = b;
	const struct model_process *x = &sort_model->processes.items[ra->process];
	const struct model_process *y = &sort_model->processes.items[rb->process];

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->generation != y->generation)
		return x->generation < y->generation ? -1 : 1;
	return ra->process < rb->process ? -1 : ra->process > rb->process;
}

int callgrind_write(const struct model *m, const struct export_options *opts)
{
	struct aggregates ag;
	struct proc_run *runs = NULL;
	size_t n_runs = 0;
	int err = 0;

	if (!m->samples.len)
		return 0;
	memset(&ag, 0, sizeof(ag));
	ag.stacks.size = sizeof(struct stack_agg);
	ag.pairs.size = sizeof(struct trace_pair);
	ag.selfs.size = sizeof(struct trace_self);
	ag.procs = calloc(m->processes.len ? m->processes.len : 1, sizeof(*ag.procs));
	if (!ag.procs)
		return -ENOMEM;
	err = aggregate_samples(m, &ag);
	if (!err)
		err = aggregate_trace(m, &ag);
	if (err)
		goto out;
	runs = calloc(m->processes.len ? m->processes.len : 1, sizeof(*runs));
	if (!runs) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < ag.stacks.len;) {
		const struct stack_agg *sa = ag.stacks.items;
		size_t j = i;

		while (j < ag.stacks.len && sa[j].process == sa[i].process)
			j++;
		runs[n_runs++] = (struct proc_run){ sa[i].process, i, j };
		i = j;
	}
	sort_model = m;
	qsort(runs, n_runs, sizeof(*runs), cmp_proc_run);
	for (size_t r = 0; r < n_runs; r++) {
		const struct model_process *p = &m->processes.items[runs[r].process];
		char name[96];
		int len;

		if (p->generation)
			len = snprintf(name, sizeof(name), "callgrind.out.%d.%" PRIu32, (int)p->pid,
				       p->generation);
		else
			len = snprintf(name, sizeof(name), "callgrind.out.%d", (int)p->pid);
		/* a reused pid: the same (pid, generation) twice in one run */
		if (r && m->processes.items[runs[r - 1].process].pid == p->pid &&
		    m->processes.items[runs[r - 1].process].generation == p->generation)
			snprintf(name + len, sizeof(name) - (size_t)len, "-%" PRIu32,
				 runs[r].process);
		err = write_process(m, opts, &ag, runs[r].process, runs[r].begin, runs[r].end,
				    name);
		if (err)
			goto out;
	}
out:
	free(runs);
	vec_free(&ag.stacks);
	vec_free(&ag.pairs);
	vec_free(&ag.selfs);
	free(ag.procs);
	return err;
}

const struct format callgrind_format = {
	.name = "callgrind",
	.needs = FORMAT_NEEDS_SAMPLES | FORMAT_NEEDS_TRACE_EVENTS,
	.write = callgrind_write,
	.recognize = callgrind_recognize,
	.dump = callgrind_dump,
};
