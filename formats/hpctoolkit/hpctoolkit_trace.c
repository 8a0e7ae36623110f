// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit writer: trace.db, each thread's timeline of leaf contexts.
 *
 * Elements come from the samples of one event (time, leaf context: the
 * first event the kernel does not sum by stack, hk_tree.trace_event) and
 * from the
 * sched_switch records: switched out -> ctxId 0 ("not running"), never two
 * 0s in a row.  A thread's line ends with a 0 at its exit (or the end of the
 * run), as hpcprof ends its lines, so the last sample has a duration.
 * Every thread profile has a line, in profile order (hpcviewer ignores
 * profIndex and takes trace i for profile i + 1): a thread that ran no
 * sample gets one "not running" element at its start.
 *
 * Samples and switches are each time-ordered in the model, so one merged
 * walk gives every thread's elements in order.  A first walk counts them
 * (which fixes every line's offset), the second streams them through small
 * per-thread buffers written at their line's position: memory is linear in
 * threads, not in samples.
 */
#include "formats/hpctoolkit/hpctoolkit_internal.h"
#include "lib/bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEM 12          /* {Elem}: u64 timestamp, u32 ctxId */
#define BUF_ELEMS 1024   /* per-thread buffer */

struct line_state {
	uint64_t count;    /* elements so far */
	uint64_t last_ts;
	bool last_zero;
	uint8_t *buf;      /* pass 2 */
	uint32_t n_buf;
};

struct walk {
	struct hk_tree *t;
	struct line_state *ls; /* by profile index - 1 */
	bool emit;
	FILE *fp;
	int err;
	uint64_t min_ts, max_ts;
};

static void flush_line(struct walk *w, struct hk_thread *th, struct line_state *l)
{
	uint64_t off = th->trace_off + (l->count - l->n_buf) * ELEM;

	if (!l->n_buf || w->err)
		return;
	if (fseeko(w->fp, off, SEEK_SET) != 0 || fwrite(l->buf, ELEM, l->n_buf, w->fp) != l->n_buf)
		w->err = errno ? -errno : -EIO;
	l->n_buf = 0;
}

static void element(struct walk *w, uint32_t prof, uint64_t ts, uint32_t ctx)
{
	struct line_state *l = &w->ls[prof - 1];

	if (!ctx && l->last_zero)
		return;
	l->last_zero = !ctx;
	l->last_ts = ts;
	if (ts < w->min_ts)
		w->min_ts = ts;
	if (ts > w->max_ts)
		w->max_ts = ts;
	l->count++;
	if (!w->emit)
		return;
	le64_put(l->buf + l->n_buf * ELEM, ts);
	le32_put(l->buf + l->n_buf * ELEM + 8, ctx);
	if (++l->n_buf == BUF_ELEMS)
		flush_line(w, &w->t->threads[prof - 1], l);
}

static void walk_all(struct walk *w)
{
	struct hk_tree *t = w->t;
	const struct model *m = t->m;
	size_t i = 0, j = 0;

	while (i < m->samples.len || j < m->switches.len) {
		bool take_sample = j >= m->switches.len ||
				   (i < m->samples.len &&
				    m->samples.items[i].time_ns <= m->switches.items[j].time_ns);

		if (take_sample) {
			const struct model_sample *s = &m->samples.items[i++];
			uint32_t prof;

			if (s->event != t->trace_event || s->thread >= m->threads.len ||
			    !(prof = t->thread_prof[s->thread]))
				continue;
			element(w, prof, s->time_ns, hk_sample_ctx(t, s));
		} else {
			const struct model_switch *sw = &m->switches.items[j++];
			uint32_t prof;

			if (!sw->off || sw->thread >= m->threads.len ||
			    !(prof = t->thread_prof[sw->thread]))
				continue;
			/* a thread that never ran in a sample has no line */
			if (w->ls[prof - 1].count)
				element(w, prof, sw->time_ns, 0);
		}
	}
	for (size_t p = 0; p < t->n_threads; p++) {
		const struct model_thread *th = &m->threads.items[t->threads[p].thread];
		uint64_t start = th->start_ns ? th->start_ns : m->run.start_ns;

		if (!start && w->min_ts != UINT64_MAX)
			start = w->min_ts;
		if (!w->ls[p].count)
			element(w, p + 1, start, 0);
	}
	/* close each line at the thread's exit, or at the end of the run */
	for (size_t p = 0; p < t->n_threads; p++) {
		const struct model_thread *th = &m->threads.items[t->threads[p].thread];
		struct line_state *l = &w->ls[p];
		uint64_t end = th->end_ns ? th->end_ns : m->run.end_ns;

		if (l->count && !l->last_zero && end > l->last_ts)
			element(w, p + 1, end, 0);
	}
}

int hk_write_trace(struct hk_tree *t, const struct export_options *opts, const char *relpath)
{
	struct walk w = { .t = t, .min_ts = UINT64_MAX };
	struct hk_buf head = { 0 };
	struct outfile f;
	size_t n_lines = 0, sec, th_arr, sec_size = t->draft ? 0x10 : 0x20;
	uint64_t pos;
	int err = -ENOMEM;

	w.ls = calloc(t->n_threads + 1, sizeof(*w.ls));
	if (!w.ls)
		return -ENOMEM;
	walk_all(&w);
	for (size_t p = 0; p < t->n_threads; p++) {
		t->threads[p].n_trace = w.ls[p].count;
		n_lines += w.ls[p].count != 0;
	}

	hk_buf_zero(&head, 0x20);
	hk_file_header(head.p, "trce");
	sec = hk_buf_zero(&head, sec_size);
	th_arr = hk_buf_zero(&head, HK_SZ_TRACE * n_lines);
	hk_buf_set_u64(&head, 0x10, head.len - sec);
	hk_buf_set_u64(&head, 0x18, sec);
	hk_buf_set_u64(&head, sec, n_lines ? th_arr : 0);
	hk_buf_set_u32(&head, sec + 8, n_lines);
	hk_buf_set_u8(&head, sec + 0x0c, HK_SZ_TRACE);
	if (!t->draft) {
		hk_buf_set_u64(&head, sec + 0x10, n_lines ? w.min_ts : 0);
		hk_buf_set_u64(&head, sec + 0x18, n_lines ? w.max_ts : 0);
	}
	pos = head.len;
	for (size_t p = 0, k = 0; p < t->n_threads; p++) {
		struct hk_thread *th = &t->threads[p];
		size_t o = th_arr + k * HK_SZ_TRACE;

		if (!th->n_trace)
			continue;
		pos = (pos + 7) & ~(uint64_t)7;
		th->trace_off = pos;
		pos += th->n_trace * ELEM;
		hk_buf_set_u32(&head, o, p + 1);
		hk_buf_set_u64(&head, o + 0x08, th->trace_off);
		hk_buf_set_u64(&head, o + 0x10, pos);
		k++;
	}
	pos = (pos + 7) & ~(uint64_t)7;
	if (head.err)
		goto out;

	for (size_t p = 0; p < t->n_threads; p++) {
		uint64_t n = w.ls[p].count;

		memset(&w.ls[p], 0, sizeof(w.ls[p]));
		if (!n)
			continue;
		w.ls[p].buf = malloc((n < BUF_ELEMS ? n : BUF_ELEMS) * ELEM);
		if (!w.ls[p].buf)
			goto out;
	}
	err = outfile_open(&f, opts, relpath);
	if (err)
		goto out;
	w.fp = f.fp;
	w.emit = true;
	err = outfile_write(&f, head.p, head.len);
	if (!err) {
		walk_all(&w);
		for (size_t p = 0; p < t->n_threads; p++)
			flush_line(&w, &t->threads[p], &w.ls[p]);
		err = w.err;
	}
	for (size_t p = 0; p < t->n_threads && !err; p++)
		if (w.ls[p].count != t->threads[p].n_trace)
			err = -EIO; /* the model changed between the walks */
	if (!err && fseeko(f.fp, pos, SEEK_SET) != 0)
		err = -errno;
	if (!err)
		err = outfile_write(&f, "trace.db", 8);
	if (err) {
		outfile_abort(&f);
		goto out;
	}
	err = outfile_commit(&f);
out:
	for (size_t p = 0; p < t->n_threads; p++)
		free(w.ls[p].buf);
	free(w.ls);
	hk_buf_free(&head);
	return err;
}
