// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit reader: profile.db (the values by profile), cct.db (by
 * context) and trace.db (each thread's timeline); every sparse value block
 * checked for order and bounds.
 */
#include "formats/hpctoolkit/hpctoolkit_read.h"

#include <inttypes.h>
#include <stdlib.h>

/* ---- profile.db ----------------------------------------------------------- */

static bool read_tuple(struct rd *r, uint64_t p, const struct sec *s, struct hkr_profile *pr)
{
	if (!hkr_need(r, p, 8, s, 8, "identifier tuple"))
		return false;
	pr->n_ids = u16(r, p);
	if (!hkr_need_array(r, p + 8, pr->n_ids, 16, s, 8, "identifier tuple"))
		return false;
	pr->ids = hkr_alloc_array(r, pr->n_ids, sizeof(*pr->ids));
	if (!pr->ids)
		return false;
	for (uint16_t k = 0; k < pr->n_ids; k++) {
		uint64_t o = p + 8 + 16 * (uint64_t)k;

		pr->ids[k].kind = u8(r, o);
		pr->ids[k].flags = u16(r, o + 2);
		pr->ids[k].logical = u32(r, o + 4);
		pr->ids[k].physical = u64(r, o + 8);
		if (!(pr->ids[k].flags & 1) && pr->ids[k].physical != pr->ids[k].logical)
			return hkr_fail(r, o + 8, "logical identifier with physicalId != logicalId");
	}
	pr->has_tuple = true;
	return true;
}

/* A sparse value block: values (vsz bytes, key of ksz bytes first) and
 * indices (isz bytes: key, u64 start).  Calls back per element. */
static bool read_block(struct rd *r, uint64_t at, uint64_t n_values, uint64_t p_values,
		       uint64_t n_idx, uint64_t p_idx, unsigned vkey, unsigned ikey,
		       const char *what)
{
	struct sec file = { 0, r->n };
	unsigned vsz = vkey + 8, isz = ikey + 8;

	if (!n_values && !n_idx)
		return true;
	if (!hkr_need_array(r, p_values, n_values, vsz, &file, vkey, what) ||
	    !hkr_need_array(r, p_idx, n_idx, isz, &file, ikey, what))
		return false;
	if (n_idx && n_values && p_values + n_values * vsz > p_idx)
		return hkr_fail(r, at, "%s: values overlap or follow the indices", what);
	return true;
}

static bool read_profile_block(struct rd *r, uint64_t o, struct hkr_profile *pr)
{
	uint64_t nv = u64(r, o), pv = u64(r, o + 8), pi = u64(r, o + 0x18);
	uint32_t nc = u32(r, o + 0x10);
	uint64_t prev_start = 0;

	if (!read_block(r, o, nv, pv, nc, pi, 2, 4, "profile values"))
		return false;
	if (nc && !nv)
		return hkr_fail(r, o, "context indices without values");
	pr->n_ctxs = nc;
	pr->n_values = nv;
	pr->values = hkr_alloc_array(r, nv, sizeof(*pr->values));
	if (!pr->values)
		return false;
	for (uint32_t k = 0; k < nc; k++) {
		uint64_t io = pi + 12 * (uint64_t)k;
		uint32_t ctx = u32(r, io);
		uint64_t start = u64(r, io + 4), end = k + 1 < nc ? u64(r, io + 16) : nv;

		if (k && ctx <= u32(r, io - 12))
			return hkr_fail(r, io, "context indices not sorted by ctxId");
		if (start < prev_start || start > end || end > nv || (k == 0 && start))
			return hkr_fail(r, io + 4, "bad startIndex %" PRIu64, start);
		prev_start = start;
		for (uint64_t v = start; v < end; v++) {
			uint64_t vo = pv + 10 * v;

			pr->values[v].ctx = ctx;
			pr->values[v].metric = u16(r, vo);
			pr->values[v].value = f64(r, vo + 2);
			if (v > start && pr->values[v].metric <= pr->values[v - 1].metric)
				return hkr_fail(r, vo, "values not sorted by metricId");
		}
	}
	return true;
}

int hkr_parse_profile(struct rd *r, struct hkr_db *db)
{
	struct sec secs[2];
	const struct sec *pis = &secs[0], *tus = &secs[1];
	uint64_t pp;
	uint32_t n;
	uint8_t sz;
	bool draft;

	if (!hkr_read_header(r, "prof", "_prof.db", 2, secs, 0))
		return -EINVAL;
	if (!hkr_need(r, pis->off, 0x0d, pis, 8, "profile info header"))
		return -EINVAL;
	pp = u64(r, pis->off);
	n = u32(r, pis->off + 8);
	sz = u8(r, pis->off + 0x0c);
	/* released {PI} is 0x30 (with flags), the draft's 0x28 */
	draft = sz < HK_SZ_PROFILE;
	if (sz < HK_DRAFT_SZ_PROFILE)
		return hkr_fail(r, pis->off + 0x0c, "szProfile %u too small", sz), -EINVAL;
	if (db->has_meta && draft != db->draft)
		return hkr_fail(r, pis->off + 0x0c, "szProfile %u does not match meta.db's layout",
				sz), -EINVAL;
	db->draft = draft;
	if (!n)
		return hkr_fail(r, pis->off + 8, "no profiles (the summary must be first)"), -EINVAL;
	if (!hkr_need_array(r, pp, n, sz, pis, 8, "profile array"))
		return -EINVAL;
	db->profiles = hkr_alloc_array(r, n, sizeof(*db->profiles));
	if (!db->profiles)
		return -EINVAL;
	db->n_profiles = n;
	db->has_profile = true;
	for (uint32_t i = 0; i < n && !r->failed; i++) {
		uint64_t o = pp + (uint64_t)i * sz, tup = u64(r, o + 0x20);
		struct hkr_profile *pr = &db->profiles[i];

		if (!draft) {
			pr->flags = u32(r, o + 0x28);
			if ((i == 0) != (pr->flags & 1))
				hkr_fail(r, o + 0x28, i ? "summary profile after the first"
					 : "first profile is not the summary");
		}
		if (tup)
			read_tuple(r, tup, tus, pr);
		else if (draft || i)
			hkr_fail(r, o + 0x20, "profile without identifier tuple");
		if (!r->failed)
			read_profile_block(r, o, pr);
	}
	return hkr_finish(r);
}

/* ---- cct.db --------------------------------------------------------------- */

int hkr_parse_cct(struct rd *r, struct hkr_db *db)
{
	struct sec secs[1];
	uint64_t pc;
	uint32_t n;
	uint8_t sz;

	if (!hkr_read_header(r, "ctxt", "__ctx.db", 1, secs, 0))
		return -EINVAL;
	if (!hkr_need(r, secs[0].off, 0x0d, &secs[0], 8, "context info header"))
		return -EINVAL;
	pc = u64(r, secs[0].off);
	n = u32(r, secs[0].off + 8);
	sz = u8(r, secs[0].off + 0x0c);
	if (sz < HK_SZ_CTXINFO)
		return hkr_fail(r, secs[0].off + 0x0c, "szCtx %u < %u", sz, HK_SZ_CTXINFO), -EINVAL;
	if (!hkr_need_array(r, pc, n, sz, &secs[0], 8, "context info array"))
		return -EINVAL;
	db->cct = hkr_alloc_array(r, n, sizeof(*db->cct));
	if (!db->cct)
		return -EINVAL;
	db->n_cct = n;
	db->has_cct = true;
	for (uint32_t c = 0; c < n && !r->failed; c++) {
		uint64_t o = pc + (uint64_t)c * sz;
		uint64_t nv = u64(r, o), pv = u64(r, o + 8), pi = u64(r, o + 0x18);
		uint16_t nm = u16(r, o + 0x10);
		struct hkr_ctx_values *cv = &db->cct[c];
		uint64_t prev_start = 0;

		if (!read_block(r, o, nv, pv, nm, pi, 4, 2, "context values"))
			break;
		if (nm && !nv) {
			hkr_fail(r, o, "metric indices without values");
			break;
		}
		cv->n_metrics = nm;
		cv->n_values = nv;
		cv->values = hkr_alloc_array(r, nv, sizeof(*cv->values));
		if (!cv->values)
			break;
		for (uint16_t k = 0; k < nm && !r->failed; k++) {
			uint64_t io = pi + 10 * (uint64_t)k;
			uint16_t metric = u16(r, io);
			uint64_t start = u64(r, io + 2), end = k + 1 < nm ? u64(r, io + 12) : nv;

			if (k && metric <= u16(r, io - 10)) {
				hkr_fail(r, io, "metric indices not sorted by metricId");
				break;
			}
			if (start < prev_start || start > end || end > nv || (k == 0 && start)) {
				hkr_fail(r, io + 2, "bad startIndex %" PRIu64, start);
				break;
			}
			prev_start = start;
			for (uint64_t v = start; v < end; v++) {
				uint64_t vo = pv + 12 * v;

				cv->values[v].metric = metric;
				cv->values[v].prof = u32(r, vo);
				cv->values[v].value = f64(r, vo + 4);
				if (v > start && cv->values[v].prof <= cv->values[v - 1].prof) {
					hkr_fail(r, vo, "values not sorted by profIndex");
					break;
				}
			}
		}
	}
	return hkr_finish(r);
}

/* ---- trace.db -------------------------------------------------------------- */

int hkr_parse_trace(struct rd *r, struct hkr_db *db)
{
	struct sec secs[1], file;
	const struct sec *s = &secs[0];
	uint64_t pt;
	uint32_t n;
	uint8_t sz;

	if (!hkr_read_header(r, "trce", "trace.db", 1, secs, 0))
		return -EINVAL;
	file = (struct sec){ 0, r->n };
	if (!hkr_need(r, s->off, 0x0d, s, 8, "trace header"))
		return -EINVAL;
	pt = u64(r, s->off);
	n = u32(r, s->off + 8);
	sz = u8(r, s->off + 0x0c);
	/* the released header has min/max timestamps (0x20 bytes), the
	 * draft's ends at 0x0d: known from meta.db, else from where the
	 * trace headers start */
	db->has_range = db->has_meta ? !db->draft : pt >= s->off + 0x20;
	if (db->has_range) {
		if (!hkr_need(r, s->off, 0x20, s, 8, "trace header"))
			return -EINVAL;
		db->min_ts = u64(r, s->off + 0x10);
		db->max_ts = u64(r, s->off + 0x18);
	}
	if (sz < HK_SZ_TRACE)
		return hkr_fail(r, s->off + 0x0c, "szTrace %u < %u", sz, HK_SZ_TRACE), -EINVAL;
	if (!hkr_need_array(r, pt, n, sz, s, 8, "trace headers"))
		return -EINVAL;
	db->traces = hkr_alloc_array(r, n, sizeof(*db->traces));
	if (!db->traces)
		return -EINVAL;
	db->n_traces = n;
	db->has_trace = true;
	for (uint32_t i = 0; i < n && !r->failed; i++) {
		uint64_t o = pt + (uint64_t)i * sz, ps = u64(r, o + 8), pe = u64(r, o + 0x10);
		struct hkr_trace *tr = &db->traces[i];

		tr->prof = u32(r, o);
		if (pe < ps || (pe - ps) % 12) {
			hkr_fail(r, o + 0x10, "pEnd does not end whole elements after pStart");
			break;
		}
		tr->n = (pe - ps) / 12;
		if (!hkr_need_array(r, ps, tr->n, 12, &file, 4, "trace line"))
			break;
		tr->elems = hkr_alloc_array(r, tr->n, sizeof(*tr->elems));
		if (!tr->elems)
			break;
		for (size_t k = 0; k < tr->n; k++) {
			uint64_t eo = ps + 12 * k;

			tr->elems[k].timestamp = u64(r, eo);
			tr->elems[k].ctx = u32(r, eo + 8);
			if (k && tr->elems[k].timestamp < tr->elems[k - 1].timestamp) {
				hkr_fail(r, eo, "trace line not sorted by timestamp");
				break;
			}
			if (k && !tr->elems[k].ctx && !tr->elems[k - 1].ctx) {
				hkr_fail(r, eo, "two consecutive ctxId 0 elements");
				break;
			}
			if (db->has_range && (tr->elems[k].timestamp < db->min_ts ||
					      tr->elems[k].timestamp > db->max_ts)) {
				hkr_fail(r, eo, "timestamp outside [minTimestamp, maxTimestamp]");
				break;
			}
		}
	}
	return hkr_finish(r);
}
