// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit writer: profile.db (values by thread) and cct.db (the same
 * values by context).
 *
 * The offsets of every value block are computed from the counts first, so
 * the headers are written first and the blocks streamed after them.
 */
#include "formats/hpctoolkit/hpctoolkit_internal.h"
#include "lib/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A file written front to back, tracking its offset. */
struct stream {
	struct outfile f;
	uint64_t pos;
	int err;
};

static void s_write(struct stream *s, const void *p, size_t n)
{
	if (!s->err)
		s->err = outfile_write(&s->f, p, n);
	s->pos += n;
}

static void s_pad(struct stream *s, uint64_t align)
{
	static const uint8_t zero[8];
	size_t pad = (align - s->pos % align) % align;

	s_write(s, zero, pad);
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* ---- profile.db ----------------------------------------------------------- */

#define PVAL 10 /* {Val}: u16 metricId, f64 value */
#define PIDX 12 /* {Idx}: u32 ctxId, u64 startIndex */

struct block {
	uint64_t n_values, n_idx;
	uint64_t p_values, p_idx;
};

static uint64_t place_block(struct block *bl, uint64_t pos, size_t val_sz, size_t idx_sz,
			    size_t idx_align)
{
	pos = align_up(pos, 8);
	bl->p_values = bl->n_values ? pos : 0;
	pos += bl->n_values * val_sz;
	pos = align_up(pos, idx_align);
	bl->p_idx = bl->n_idx ? pos : 0;
	return pos + bl->n_idx * idx_sz;
}

/*
 * Places n value blocks one after the other from the end of the headers,
 * and fills their info records (arr + i * stride): u64 nValues, u64
 * pValues, nIdx (u32 when the indices are 4-aligned as in profile.db, u16
 * in cct.db), u64 pIdx.
 */
static void place_blocks(struct hk_buf *head, struct block *bl, size_t n, size_t arr,
			 size_t stride, size_t val_sz, size_t idx_sz, size_t idx_align)
{
	uint64_t pos = head->len;

	for (size_t i = 0; i < n; i++) {
		size_t o = arr + i * stride;

		pos = place_block(&bl[i], pos, val_sz, idx_sz, idx_align);
		hk_buf_set_u64(head, o, bl[i].n_values);
		hk_buf_set_u64(head, o + 0x08, bl[i].p_values);
		if (idx_align == 4)
			hk_buf_set_u32(head, o + 0x10, bl[i].n_idx);
		else
			hk_buf_set_u16(head, o + 0x10, bl[i].n_idx);
		hk_buf_set_u64(head, o + 0x18, bl[i].p_idx);
	}
}

/* The footer after 8-alignment, then commit, or abort after an error. */
static int finish_stream(struct stream *s, const char *footer)
{
	s_pad(s, 8);
	s_write(s, footer, 8);
	if (s->err) {
		outfile_abort(&s->f);
		return s->err;
	}
	return outfile_commit(&s->f);
}

static void summary_counts(const struct hk_tree *t, struct block *bl)
{
	for (size_t c = 0; c < t->n_nodes; c++) {
		uint64_t n = 0;

		for (unsigned mi = 0; mi < t->n_metrics; mi++) {
			struct hk_stat st;

			hk_ctx_stat(t, c, mi, &st);
			for (int k = 0; k < HK_N_COMBINES; k++)
				for (int s = 0; s < HK_N_SCOPES; s++)
					n += st.ns[k][s] != 0;
		}
		bl->n_values += n;
		bl->n_idx += n != 0;
	}
}

static void thread_counts(const struct hk_tree *t, const struct hk_thread *th,
			  struct block *bl)
{
	for (size_t i = th->first_value; i < th->first_value + th->n_values; i++) {
		uint64_t n = 0;

		for (unsigned mi = 0; mi < t->n_metrics; mi++)
			for (int s = 0; s < HK_N_SCOPES; s++)
				n += hk_value_ns(t, i, mi, s) != 0;
		bl->n_values += n;
		bl->n_idx += n != 0;
	}
}

static void put_pval(struct hk_buf *b, uint16_t metric, double v)
{
	uint8_t rec[PVAL];

	le16_put(rec, metric);
	memcpy(rec + 2, &v, 8);
	hk_buf_put(b, rec, PVAL);
}

static void put_pidx(struct hk_buf *b, uint32_t ctx, uint64_t start)
{
	uint8_t rec[PIDX];

	le32_put(rec, ctx);
	le64_put(rec + 4, start);
	hk_buf_put(b, rec, PIDX);
}

/* Streams one block: values then indices; `vals`/`idx` are scratch. */
static void write_pblock(struct stream *s, const struct block *bl, struct hk_buf *vals,
			 struct hk_buf *idx)
{
	if (vals->err || idx->err) {
		s->err = s->err ? s->err : -ENOMEM;
		return;
	}
	s_pad(s, 8);
	s_write(s, vals->p, vals->len);
	s_pad(s, 4);
	s_write(s, idx->p, idx->len);
	(void)bl;
	vals->len = 0;
	idx->len = 0;
}

int hk_write_profile(const struct hk_tree *t, const struct export_options *opts,
		     const char *relpath)
{
	size_t np = t->n_threads + 1, sz_pi = t->draft ? HK_DRAFT_SZ_PROFILE : HK_SZ_PROFILE;
	struct block *bl = calloc(np, sizeof(*bl));
	struct hk_buf head = { 0 }, vals = { 0 }, idx = { 0 };
	struct stream s = { 0 };
	size_t pi, tup_sec, tup, tup_size = 8 + 16 * 3;
	int err = -ENOMEM;

	if (!bl)
		return -ENOMEM;
	summary_counts(t, &bl[0]);
	for (size_t i = 1; i < np; i++)
		thread_counts(t, &t->threads[i - 1], &bl[i]);

	/* header, profile infos, identifier tuples */
	pi = hk_buf_start_file(&head, "prof", 0x30, np, sz_pi);
	hk_buf_align(&head, 8);
	tup_sec = head.len;
	if (t->draft) {
		/* the draft wants every pIdTuple inside the section: the
		 * summary gets an empty tuple */
		tup = hk_buf_zero(&head, 8);
		hk_buf_set_u64(&head, pi + 0x20, tup);
	}
	for (size_t i = 1; i < np; i++) {
		const struct hk_thread *th = &t->threads[i - 1];
		const uint8_t kinds[3] = { HK_KIND_NODE, HK_KIND_RANK, HK_KIND_THREAD };
		const uint32_t logical[3] = { 0, th->rank, th->index };

		tup = hk_buf_zero(&head, tup_size);
		hk_buf_set_u64(&head, pi + i * sz_pi + 0x20, tup);
		hk_buf_set_u16(&head, tup, 3);
		for (int k = 0; k < 3; k++) {
			size_t o = tup + 8 + 16 * k;

			hk_buf_set_u8(&head, o, kinds[k]);
			/* NODE is physical (the host id); RANK and THREAD are
			 * logical, physicalId = logicalId */
			hk_buf_set_u16(&head, o + 2, k == 0);
			hk_buf_set_u32(&head, o + 4, logical[k]);
			hk_buf_set_u64(&head, o + 8, k == 0 ? t->m->run.host_id : logical[k]);
		}
	}
	hk_buf_set_u64(&head, 0x20, head.len - tup_sec);
	hk_buf_set_u64(&head, 0x28, head.len > tup_sec ? tup_sec : 0);
	if (!t->draft)
		hk_buf_set_u32(&head, pi + 0x28, 1); /* isSummary */

	place_blocks(&head, bl, np, pi, sz_pi, PVAL, PIDX, 4);
	if (head.err)
		goto out;

	err = outfile_open(&s.f, opts, relpath);
	if (err)
		goto out;
	s_write(&s, head.p, head.len);

	/* summary profile: statistics by context, statMetricId order */
	for (size_t c = 0; c < t->n_nodes; c++) {
		uint64_t start = vals.len / PVAL;

		for (unsigned mi = 0; mi < t->n_metrics; mi++) {
			struct hk_stat st;

			hk_ctx_stat(t, c, mi, &st);
			for (int k = 0; k < HK_N_COMBINES; k++)
				for (int sc = 0; sc < HK_N_SCOPES; sc++)
					if (st.ns[k][sc])
						put_pval(&vals, hk_stat_id(mi, k, sc),
							 hk_metric_value(t, mi, st.ns[k][sc]));
		}
		if (vals.len / PVAL > start)
			put_pidx(&idx, c, start);
	}
	write_pblock(&s, &bl[0], &vals, &idx);
	for (size_t i = 1; i < np && !s.err; i++) {
		const struct hk_thread *th = &t->threads[i - 1];

		for (size_t v = th->first_value; v < th->first_value + th->n_values; v++) {
			uint64_t start = vals.len / PVAL;

			for (unsigned mi = 0; mi < t->n_metrics; mi++)
				for (int sc = 0; sc < HK_N_SCOPES; sc++)
					if (hk_value_ns(t, v, mi, sc))
						put_pval(&vals, hk_prop_id(mi, sc),
							 hk_metric_value(t, mi, hk_value_ns(t, v, mi, sc)));
			if (vals.len / PVAL > start)
				put_pidx(&idx, t->values[v].ctx, start);
		}
		write_pblock(&s, &bl[i], &vals, &idx);
	}
	err = finish_stream(&s, "_prof.db");
out:
	free(bl);
	hk_buf_free(&head);
	hk_buf_free(&vals);
	hk_buf_free(&idx);
	return err;
}

/* ---- cct.db ----------------------------------------------------------------- */

#define CVAL 12 /* {Val}: u32 profIndex, f64 value */
#define CIDX 10 /* {Idx}: u16 metricId, u64 startIndex */

int hk_write_cct(const struct hk_tree *t, const struct export_options *opts,
		 const char *relpath)
{
	size_t nn = t->n_nodes;
	const uint32_t *first = t->ctx_first, *order = t->ctx_values;
	struct block *bl = calloc(nn, sizeof(*bl));
	struct hk_buf head = { 0 }, vals = { 0 }, idx = { 0 };
	struct stream s = { 0 };
	size_t ci;
	int err = -ENOMEM;

	if (!bl)
		goto out;
	for (size_t c = 0; c < nn; c++) {
		for (unsigned id = 0; id < t->n_metrics * HK_N_SCOPES; id++) {
			uint64_t n = 0;

			for (uint32_t k = first[c]; k < first[c + 1]; k++)
				n += hk_value_ns(t, order[k], id / HK_N_SCOPES, id % HK_N_SCOPES) != 0;
			bl[c].n_values += n;
			bl[c].n_idx += n != 0;
		}
	}

	ci = hk_buf_start_file(&head, "ctxt", 0x20, nn, HK_SZ_CTXINFO);
	place_blocks(&head, bl, nn, ci, HK_SZ_CTXINFO, CVAL, CIDX, 2);
	if (head.err)
		goto out;
	err = outfile_open(&s.f, opts, relpath);
	if (err)
		goto out;
	s_write(&s, head.p, head.len);
	for (size_t c = 0; c < nn && !s.err; c++) {
		uint64_t start = 0;

		if (!bl[c].n_values)
			continue;
		/* propMetricIds in increasing order: metric, then scope */
		for (unsigned id = 0; id < t->n_metrics * HK_N_SCOPES; id++) {
			unsigned mi = id / HK_N_SCOPES, sc = id % HK_N_SCOPES;
			uint64_t before = start;

			for (uint32_t k = first[c]; k < first[c + 1]; k++) {
				uint64_t ns = hk_value_ns(t, order[k], mi, sc);
				double v = hk_metric_value(t, mi, ns);
				uint8_t rec[CVAL];

				if (!ns)
					continue;
				le32_put(rec, t->values[order[k]].prof);
				memcpy(rec + 4, &v, 8);
				hk_buf_put(&vals, rec, CVAL);
				start++;
			}
			if (start > before) {
				uint8_t rec[CIDX];

				le16_put(rec, id);
				le64_put(rec + 2, before);
				hk_buf_put(&idx, rec, CIDX);
			}
		}
		if (vals.err || idx.err) {
			s.err = -ENOMEM;
			break;
		}
		s_pad(&s, 8);
		s_write(&s, vals.p, vals.len);
		s_pad(&s, 2);
		s_write(&s, idx.p, idx.len);
		vals.len = idx.len = 0;
	}
	err = finish_stream(&s, "__ctx.db");
out:
	free(bl);
	hk_buf_free(&head);
	hk_buf_free(&vals);
	hk_buf_free(&idx);
	return err;
}
