// SPDX-License-Identifier: GPL-2.0
/*
 * XRay FDR trace writer (see xray.h for the choices made).
 *
 * The trace is written one process at a time, one thread at a time, so that
 * only one file is open and one thread buffer is in memory.  To visit a
 * thread's events without rescanning the whole trace for every thread, the
 * writer keeps one 32-bit event index per trace event (a counting sort by
 * thread; far smaller than the events themselves).
 */
#include "formats/xray/xray.h"
#include "formats/xray/xray_format.h"
#include "lib/bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One thread's output state. */
struct thread_writer {
	struct outfile *f;
	unsigned char *buf;
	size_t size, used;
	bool open;            /* a buffer has been started */
	pid_t tid;
	uint16_t cpu;
	uint64_t last_tsc;
	uint32_t *stack;      /* open function ids, innermost last */
	size_t depth, cap;
	struct xray_write_stats *st;
};

static void put_metadata(struct thread_writer *w, enum xray_metadata_kind kind,
			 const void *data, size_t n)
{
	unsigned char *p = w->buf + w->used;

	memset(p, 0, XRAY_METADATA_RECORD_SIZE);
	p[0] = (unsigned char)((kind << 1) | 1);
	if (n)
		memcpy(p + 1, data, n);
	w->used += XRAY_METADATA_RECORD_SIZE;
}

static void put_u64_metadata(struct thread_writer *w, enum xray_metadata_kind kind, uint64_t v)
{
	unsigned char d[8];

	le64_put(d, v);
	put_metadata(w, kind, d, sizeof(d));
}

static void put_cpu(struct thread_writer *w, uint16_t cpu, uint64_t tsc)
{
	unsigned char d[10];

	le16_put(d, cpu);
	le64_put(d + 2, tsc);
	put_metadata(w, XRAY_MD_NEW_CPU_ID, d, sizeof(d));
	w->cpu = cpu;
	w->last_tsc = tsc;
}

/* Pads the current buffer with zeros after an EndOfBuffer and writes it. */
static int flush_buffer(struct thread_writer *w)
{
	int err;

	if (!w->open)
		return 0;
	put_metadata(w, XRAY_MD_END_OF_BUFFER, NULL, 0);
	memset(w->buf + w->used, 0, w->size - w->used);
	err = outfile_write(w->f, w->buf, w->size);
	w->used = 0;
	w->open = false;
	return err;
}

static int start_buffer(struct thread_writer *w, uint64_t epoch_ns, uint16_t cpu, uint64_t tsc)
{
	unsigned char d[12];
	uint64_t sec = epoch_ns / 1000000000u;
	uint32_t usec = (uint32_t)(epoch_ns % 1000000000u / 1000u);

	w->used = 0;
	w->open = true;
	w->st->buffers++;
	le32_put(d, (uint32_t)w->tid);
	put_metadata(w, XRAY_MD_NEW_BUFFER, d, 4);
	le64_put(d, sec);
	le32_put(d + 8, usec);
	put_metadata(w, XRAY_MD_WALLTIME, d, sizeof(d));
	put_cpu(w, cpu, tsc);
	return 0;
}

/*
 * Writes one function record (and its arguments) at `tsc` on `cpu`,
 * starting a new buffer when the record group does not fit, and a NewCPUId
 * or TSCWrap when the CPU changed or the delta needs more than 32 bits.
 */
static int put_function(struct thread_writer *w, const struct model_trace_event *e,
			enum xray_function_action action, uint32_t id, uint64_t tsc,
			const uint64_t *args, unsigned n_args)
{
	/* worst case: one metadata record before it, the EndOfBuffer after */
	size_t need = XRAY_METADATA_RECORD_SIZE + XRAY_FUNCTION_RECORD_SIZE +
		      (size_t)n_args * XRAY_METADATA_RECORD_SIZE + XRAY_METADATA_RECORD_SIZE;
	uint32_t word, delta;
	int err;

	if (tsc < w->last_tsc && w->open) {
		w->st->time_clamped++;
		tsc = w->last_tsc;
	}
	if (w->open && w->used + need > w->size) {
		err = flush_buffer(w);
		if (err)
			return err;
	}
	if (!w->open) {
		err = start_buffer(w, e->time_ns, e->cpu, tsc);
		if (err)
			return err;
	} else if (e->cpu != w->cpu) {
		put_cpu(w, e->cpu, tsc);
		w->st->cpu_changes++;
	} else if (tsc - w->last_tsc > UINT32_MAX) {
		put_u64_metadata(w, XRAY_MD_TSC_WRAP, tsc);
		w->last_tsc = tsc;
		w->st->tsc_wraps++;
	}
	delta = (uint32_t)(tsc - w->last_tsc);
	w->last_tsc = tsc;
	word = (id << 4) | ((uint32_t)action << 1);
	le32_put(w->buf + w->used, word);
	le32_put(w->buf + w->used + 4, delta);
	w->used += XRAY_FUNCTION_RECORD_SIZE;
	w->st->function_records++;
	for (unsigned i = 0; i < n_args; i++)
		put_u64_metadata(w, XRAY_MD_CALL_ARGUMENT, args[i]);
	return 0;
}

static int push_frame(struct thread_writer *w, uint32_t id)
{
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		uint32_t *s = realloc(w->stack, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		w->stack = s;
		w->cap = cap;
	}
	w->stack[w->depth++] = id;
	return 0;
}

/* Writes one model event of the thread, resynchronizing after lost ones. */
static int put_event(struct thread_writer *w, const struct model *m,
		     const struct model_trace_event *e, uint32_t id)
{
	size_t i;
	int err;

	if (e->kind == MODEL_TRACE_ENTRY) {
		err = push_frame(w, id);
		if (err)
			return err;
		if (e->n_args)
			return put_function(w, e, XRAY_FN_ENTER_ARGS, id, e->ktime_ns,
					    model_trace_event_args(m, e), e->n_args);
		return put_function(w, e, XRAY_FN_ENTER, id, e->ktime_ns, NULL, 0);
	}
	for (i = w->depth; i > 0 && w->stack[i - 1] != id; i--)
		;
	if (i == 0) {
		/* its entry was lost (or happened before tracing began) */
		w->st->exits_dropped++;
		return 0;
	}
	/* frames above it lost their exits: close them here */
	while (w->depth > i) {
		err = put_function(w, e, XRAY_FN_EXIT, w->stack[--w->depth], e->ktime_ns, NULL, 0);
		if (err)
			return err;
		w->st->exits_synthesized++;
	}
	w->depth--;
	return put_function(w, e, XRAY_FN_EXIT, id, e->ktime_ns, NULL, 0);
}

struct xray_ctx {
	const struct model *m;
	const struct export_options *opts;
	struct xray_write_stats *st;
	uint64_t buffer_size;
	/* events of thread t: idx[first[t] .. first[t + 1]) */
	uint32_t *idx;
	size_t *first;
	/* threads of process p: threads[tfirst[p] .. tfirst[p + 1]) */
	uint32_t *threads;
	size_t *tfirst;
	/* per process scratch, indexed by traced function id */
	uint32_t *fn_id;      /* xray id, 0 when not used by the process */
	bool *fn_args;
	uint32_t *order;      /* traced ids of the process, in id order */
};

static int cmp_traced(const void *a, const void *b, void *arg)
{
	const struct model *m = arg;
	const struct model_traced_function *x = &m->traced.items[*(const uint32_t *)a];
	const struct model_traced_function *y = &m->traced.items[*(const uint32_t *)b];

	if (x->image != y->image)
		return x->image < y->image ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static uint64_t thread_bytes_bound(const struct xray_ctx *c, uint32_t t)
{
	const struct model *m = c->m;
	uint64_t bytes = 3 * XRAY_METADATA_RECORD_SIZE + XRAY_METADATA_RECORD_SIZE;

	for (size_t k = c->first[t]; k < c->first[t + 1]; k++) {
		const struct model_trace_event *e = &m->trace.items[c->idx[k]];

		/* a function record, its arguments, maybe a NewCPUId/TSCWrap */
		bytes += XRAY_FUNCTION_RECORD_SIZE + (uint64_t)e->n_args * XRAY_METADATA_RECORD_SIZE;
		if (k > c->first[t]) {
			const struct model_trace_event *p = &m->trace.items[c->idx[k - 1]];

			if (p->cpu != e->cpu || e->ktime_ns - p->ktime_ns > UINT32_MAX)
				bytes += XRAY_METADATA_RECORD_SIZE;
		}
	}
	return bytes;
}

/* The traced functions process p used, and every other traced function of
 * the images it used (called or not: the map then describes all that was
 * traced in those files, and a function keeps its id across processes
 * tracing the same file), in c->order sorted by (image, address); returns
 * how many. */
static size_t select_functions(struct xray_ctx *c, uint32_t p)
{
	const struct model *m = c->m;
	size_t n_fns = 0;

	for (size_t ti = c->tfirst[p]; ti < c->tfirst[p + 1]; ti++) {
		uint32_t t = c->threads[ti];

		for (size_t k = c->first[t]; k < c->first[t + 1]; k++) {
			const struct model_trace_event *e = &m->trace.items[c->idx[k]];

			if (!c->fn_id[e->func]) {
				c->fn_id[e->func] = 1;
				c->order[n_fns++] = e->func;
			}
			if (e->n_args)
				c->fn_args[e->func] = true;
		}
	}
	if (n_fns == 0)
		return 0;
	for (size_t i = 0, used = n_fns; i < m->traced.len; i++) {
		bool same_image = false;

		if (c->fn_id[i])
			continue;
		for (size_t k = 0; k < used && !same_image; k++)
			same_image = m->traced.items[c->order[k]].image == m->traced.items[i].image;
		if (same_image) {
			c->fn_id[i] = 1;
			c->order[n_fns++] = i;
		}
	}
	qsort_r(c->order, n_fns, sizeof(*c->order), cmp_traced, (void *)m);
	return n_fns;
}

/* The map's functions, numbered 1..n in c->fn_id: traced entries at the
 * same address are one function to llvm-xray.  Returns how many. */
static size_t number_functions(struct xray_ctx *c, size_t n_fns, struct xray_map_function *fns)
{
	const struct model *m = c->m;
	size_t n_unique = 0;

	for (size_t i = 0; i < n_fns; i++) {
		const struct model_traced_function *tf = &m->traced.items[c->order[i]];
		const struct model_function *fn = tf->function < m->functions.len ?
						  &m->functions.items[tf->function] : NULL;
		struct xray_map_function *x;

		if (n_unique && fns[n_unique - 1].image == tf->image &&
		    fns[n_unique - 1].addr == tf->addr) {
			c->fn_id[c->order[i]] = (uint32_t)n_unique;
			fns[n_unique - 1].log_args |= c->fn_args[c->order[i]];
			continue;
		}
		x = &fns[n_unique++];
		c->fn_id[c->order[i]] = (uint32_t)n_unique;
		x->image = tf->image;
		x->addr = tf->addr;
		x->size = fn ? fn->size : 0;
		x->name = fn && fn->name ? fn->name : "";
		x->image_path = tf->image < m->images.len && m->images.items[tf->image].path ?
				m->images.items[tf->image].path : "";
		x->log_args = c->fn_args[c->order[i]];
	}
	return n_unique;
}

/* The file header: version 1, FDR, constant and nonstop TSC in ns. */
static int write_file_header(struct outfile *f, uint64_t buffer_size)
{
	unsigned char header[XRAY_HEADER_SIZE] = { 0 };

	le16_put(header, 1); /* version */
	le16_put(header + 2, XRAY_TYPE_FDR);
	le32_put(header + 4, XRAY_BIT_CONSTANT_TSC | XRAY_BIT_NONSTOP_TSC);
	le64_put(header + 8, 1000000000u); /* TSC ticks are nanoseconds */
	le64_put(header + 16, buffer_size);
	return outfile_write(f, header, sizeof(header));
}

/* The .xray file of process p: the header, then each thread's buffers. */
static int write_trace(struct xray_ctx *c, uint32_t p, const char *base)
{
	const struct model *m = c->m;
	struct thread_writer w = { .size = c->buffer_size, .st = c->st };
	struct outfile f = { 0 };
	char rel[128];
	int err;

	snprintf(rel, sizeof(rel), "%s.xray", base);
	err = outfile_open(&f, c->opts, rel);
	if (err)
		return err;
	w.f = &f;
	w.buf = malloc(w.size);
	err = w.buf ? write_file_header(&f, c->buffer_size) : -ENOMEM;
	for (size_t ti = c->tfirst[p]; ti < c->tfirst[p + 1] && !err; ti++) {
		uint32_t t = c->threads[ti];

		if (c->first[t] == c->first[t + 1])
			continue;
		w.tid = m->threads.items[t].tid;
		w.depth = 0;
		w.open = false;
		w.last_tsc = 0;
		for (size_t k = c->first[t]; k < c->first[t + 1] && !err; k++) {
			const struct model_trace_event *e = &m->trace.items[c->idx[k]];

			err = put_event(&w, m, e, c->fn_id[e->func]);
		}
		if (!err)
			err = flush_buffer(&w);
	}
	free(w.buf);
	free(w.stack);
	if (err) {
		outfile_abort(&f);
		return err;
	}
	err = outfile_commit(&f);
	if (!err)
		c->st->files++;
	return err;
}

static int write_process(struct xray_ctx *c, uint32_t p)
{
	const struct model *m = c->m;
	const struct model_process *proc = &m->processes.items[p];
	struct xray_write_stats before = *c->st;
	struct xray_map_function *fns = NULL;
	struct xray_map_info info = { 0 };
	char comm[32], base[96], comments[512];
	unsigned long long closed, dropped;
	size_t n_fns, n_unique;
	int err = 0;

	n_fns = select_functions(c, p);
	if (n_fns == 0)
		return 0;
	fns = calloc(n_fns, sizeof(*fns));
	if (!fns) {
		err = -ENOMEM;
		goto cleanup;
	}
	n_unique = number_functions(c, n_fns, fns);
	export_file_name(comm, sizeof(comm), proc->comm, sizeof(proc->comm), "unknown");
	if (proc->generation)
		snprintf(base, sizeof(base), "xray/%s.%d.%u", comm, (int)proc->pid,
			 proc->generation);
	else
		snprintf(base, sizeof(base), "xray/%s.%d", comm, (int)proc->pid);
	err = write_trace(c, p, base);
	if (err)
		goto cleanup;
	closed = c->st->exits_synthesized - before.exits_synthesized;
	dropped = c->st->exits_dropped - before.exits_dropped;
	snprintf(comments, sizeof(comments),
		 "trace: %s.xray (FDR version 1; TSC = CLOCK_MONOTONIC ns, cycle_frequency 1e9)\n"
		 "resynchronized after lost events: %llu exits closed whose exit was lost, "
		 "%llu exits without an entry dropped\n", base + 5, closed, dropped);
	info.comm = proc->comm;
	info.pid = proc->pid;
	err = xray_write_maps(m, c->opts, base, fns, n_unique, &info, comments);
	if (err)
		goto cleanup;
	if (info.synthetic)
		c->st->synthetic_maps++;
	if (!c->opts->quiet && (closed || dropped))
		fprintf(stderr,
			"collector: %s/%s.xray: lost trace events: closed %llu calls whose exit was "
			"lost, dropped %llu exits without entry\n", c->opts->dir, base, closed,
			dropped);
cleanup:
	for (size_t i = 0; i < n_fns; i++) {
		c->fn_id[c->order[i]] = 0;
		c->fn_args[c->order[i]] = false;
	}
	free(fns);
	return err;
}

static uint64_t longest_thread_bytes(const struct xray_ctx *c)
{
	uint64_t longest = 0;

	for (uint32_t t = 0; t < c->m->threads.len; t++) {
		uint64_t b = thread_bytes_bound(c, t);

		if (c->first[t] != c->first[t + 1] && b > longest)
			longest = b;
	}
	return longest;
}

/*
 * llvm-xray (up to at least LLVM 14) orders a thread's buffers with
 * std::sort and a comparator that is no strict weak ordering (wall time
 * seconds *and* nanoseconds both smaller).  Up to 16 buffers std::sort is
 * an insertion sort and keeps them in file order; past 16, introsort
 * shuffles them and `llvm-xray account` then sees exits before their
 * entries.  So no thread may need more than XRAY_MAX_BUFFERS_PER_THREAD
 * buffers: the buffer size grows with the longest thread instead.
 */
static uint64_t min_buffer_size(const struct xray_ctx *c)
{
	uint64_t need = longest_thread_bytes(c) / XRAY_MAX_BUFFERS_PER_THREAD + 1, size = 256;

	while (size < need)
		size *= 2;
	return size;
}

static uint64_t choose_buffer_size(const struct xray_ctx *c)
{
	uint64_t longest = longest_thread_bytes(c), size = XRAY_MIN_BUFFER_SIZE;

	while (size < longest && size < XRAY_MAX_BUFFER_SIZE)
		size *= 2;
	return size > min_buffer_size(c) ? size : min_buffer_size(c);
}

int xray_write_ex(const struct model *m, const struct export_options *opts,
		  const struct xray_write_params *params, struct xray_write_stats *stats)
{
	struct xray_write_stats local = { 0 };
	struct xray_ctx c = { .m = m, .opts = opts, .st = stats ? stats : &local };
	size_t n_threads = m->threads.len, n_traced = m->traced.len;
	bool any = false;
	int err = 0;

	memset(c.st, 0, sizeof(*c.st));
	if (m->trace.len > UINT32_MAX)
		return -E2BIG;
	if (params && params->buffer_size &&
	    (params->buffer_size % 8 || params->buffer_size < XRAY_TINY_BUFFER_SIZE))
		return -EINVAL;

	c.first = calloc(n_threads + 2, sizeof(*c.first));
	c.idx = malloc((m->trace.len ? m->trace.len : 1) * sizeof(*c.idx));
	c.fn_id = calloc(n_traced + 1, sizeof(*c.fn_id));
	c.fn_args = calloc(n_traced + 1, sizeof(*c.fn_args));
	c.order = calloc(n_traced + 1, sizeof(*c.order));
	if (!c.first || !c.idx || !c.fn_id || !c.fn_args || !c.order) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* counting sort of event indexes by thread, keeping time order */
	for (size_t i = 0; i < m->trace.len; i++) {
		const struct model_trace_event *e = &m->trace.items[i];

		if (e->thread >= n_threads || e->func >= n_traced ||
		    m->threads.items[e->thread].process >= m->processes.len ||
		    e->kind > MODEL_TRACE_EXIT) {
			c.st->bad_events++;
			continue;
		}
		c.first[e->thread + 2]++;
		any = true;
	}
	if (!any)
		goto cleanup;
	for (size_t t = 2; t < n_threads + 2; t++)
		c.first[t] += c.first[t - 1];
	for (size_t i = 0; i < m->trace.len; i++) {
		const struct model_trace_event *e = &m->trace.items[i];

		if (e->thread >= n_threads || e->func >= n_traced ||
		    m->threads.items[e->thread].process >= m->processes.len ||
		    e->kind > MODEL_TRACE_EXIT)
			continue;
		c.idx[c.first[e->thread + 1]++] = (uint32_t)i;
	}
	/* now first[t] .. first[t + 1] are thread t's events */

	/* the same for threads by process */
	c.tfirst = calloc(m->processes.len + 2, sizeof(*c.tfirst));
	c.threads = malloc((n_threads ? n_threads : 1) * sizeof(*c.threads));
	if (!c.tfirst || !c.threads) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t t = 0; t < n_threads; t++)
		if (m->threads.items[t].process < m->processes.len)
			c.tfirst[m->threads.items[t].process + 2]++;
	for (size_t p = 2; p < m->processes.len + 2; p++)
		c.tfirst[p] += c.tfirst[p - 1];
	for (size_t t = 0; t < n_threads; t++)
		if (m->threads.items[t].process < m->processes.len)
			c.threads[c.tfirst[m->threads.items[t].process + 1]++] = (uint32_t)t;

	c.buffer_size = params && params->buffer_size ? params->buffer_size
						       : choose_buffer_size(&c);
	if (c.buffer_size < min_buffer_size(&c))
		c.buffer_size = min_buffer_size(&c); /* see min_buffer_size() */
	err = export_mkdir(opts, "xray");
	if (err)
		goto cleanup;
	for (uint32_t p = 0; p < m->processes.len; p++) {
		err = write_process(&c, p);
		if (err)
			goto cleanup;
	}
cleanup:
	free(c.first);
	free(c.idx);
	free(c.fn_id);
	free(c.fn_args);
	free(c.order);
	free(c.tfirst);
	free(c.threads);
	return err;
}

int xray_write(const struct model *m, const struct export_options *opts)
{
	return xray_write_ex(m, opts, NULL, NULL);
}

const struct format xray_format = {
	.name = "xray",
	.needs = FORMAT_NEEDS_TRACE_EVENTS,
	.write = xray_write,
	.recognize = xray_recognize,
	.dump = xray_dump,
};
