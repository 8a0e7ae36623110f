// SPDX-License-Identifier: GPL-2.0
/* Reader and `collector dump` support for XRay FDR traces (xray_reader.h). */
#include "formats/xray/xray_reader.h"
#include "formats/xray/xray.h"
#include "formats/format.h"
#include "lib/bytes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const metadata_names[XRAY_MD_KIND_COUNT] = {
	"NewBuffer", "EndOfBuffer", "NewCPUId", "TSCWrap", "WallTimeMarker",
	"CustomEventMarker", "CallArgument", "BufferExtents", "TypedEventMarker", "PID",
};

const char *xray_record_name(unsigned type)
{
	if (type < XRAY_MD_KIND_COUNT)
		return metadata_names[type];
	return type == XRAY_REC_FUNCTION ? "Function" : "?";
}

struct parse_state {
	bool in_buffer;       /* a NewBuffer opened the current buffer */
	bool ignoring;        /* v1: after EndOfBuffer, until the next NewBuffer */
	bool have_cpu;
	bool extent_active;   /* v3+: inside the bytes a BufferExtents announced */
	uint64_t extent_left;
	uint64_t buf_start;
	uint64_t base_tsc;
	uint16_t cpu;
	int32_t tid, pid;
	int prev;             /* previous record's type, -1 at a buffer start */
	uint8_t prev_action;
};

static int parse_header(const unsigned char *data, size_t n, struct xray_file_header *h,
			struct format_error *err)
{
	if (n < XRAY_HEADER_SIZE)
		return format_fail(err, 0, "file of %zu bytes is shorter than the %d-byte header", n,
				   XRAY_HEADER_SIZE);
	h->version = le16_get(data);
	h->type = le16_get(data + 2);
	h->bitfield = le32_get(data + 4);
	h->cycle_frequency = le64_get(data + 8);
	h->buffer_size = le64_get(data + 16);
	h->reserved = le64_get(data + 24);
	if (h->version < XRAY_MIN_VERSION || h->version > XRAY_MAX_VERSION)
		return format_fail(err, 0, "version %u is not an FDR version (1 to 5)", h->version);
	if (h->type != XRAY_TYPE_FDR)
		return format_fail(err, 2, "trace type %u is not FDR (1)", h->type);
	return 0;
}

/* Reads the metadata record at data[off] into r (16 bytes are there). */
static int parse_metadata(const unsigned char *data, size_t n, uint64_t off,
			  const struct xray_file_header *h, struct parse_state *s,
			  struct xray_record *r, uint64_t *size, struct format_error *err)
{
	const unsigned char *p = data + off + 1;
	unsigned kind = data[off] >> 1;

	*size = XRAY_METADATA_RECORD_SIZE;
	r->type = (uint8_t)kind;
	switch (kind) {
	case XRAY_MD_NEW_BUFFER:
		r->value32 = (int32_t)le32_get(p);
		break;
	case XRAY_MD_END_OF_BUFFER:
		if (h->version >= 2)
			return format_fail(err, off, "EndOfBuffer record in a version %u trace "
					   "(only version 1 has them)", h->version);
		break;
	case XRAY_MD_NEW_CPU_ID:
		r->cpu = le16_get(p);
		r->value = le64_get(p + 2);
		break;
	case XRAY_MD_TSC_WRAP:
	case XRAY_MD_CALL_ARGUMENT:
	case XRAY_MD_BUFFER_EXTENTS:
		r->value = le64_get(p);
		break;
	case XRAY_MD_WALLTIME:
		r->value = le64_get(p);
		r->micros = le32_get(p + 8);
		break;
	case XRAY_MD_PID:
		r->value32 = (int32_t)le32_get(p);
		break;
	case XRAY_MD_CUSTOM_EVENT:
	case XRAY_MD_TYPED_EVENT:
		r->value32 = (int32_t)le32_get(p);
		if (kind == XRAY_MD_TYPED_EVENT || h->version >= 5) {
			r->delta = le32_get(p + 4);
			if (kind == XRAY_MD_TYPED_EVENT)
				r->event_type = le16_get(p + 8);
		} else {
			r->value = le64_get(p + 4);
			if (h->version >= 4)
				r->cpu = le16_get(p + 12);
		}
		if (r->value32 < 0)
			return format_fail(err, off + 1, "%s with negative size %d",
					   xray_record_name(kind), r->value32);
		if ((uint64_t)r->value32 > n - off - XRAY_METADATA_RECORD_SIZE)
			return format_fail(err, off + 1, "%s payload of %d bytes runs past the end of "
					   "the file", xray_record_name(kind), r->value32);
		r->data_offset = off + XRAY_METADATA_RECORD_SIZE;
		*size += (uint64_t)r->value32;
		break;
	default:
		return format_fail(err, off, "unknown metadata record kind %u", kind);
	}
	(void)s;
	return 0;
}

/* Structure checks and TSC reconstruction for a record about to be reported. */
static int apply(const struct xray_file_header *h, struct parse_state *s, struct xray_record *r,
		 struct format_error *err)
{
	bool needs_buffer = r->type != XRAY_MD_NEW_BUFFER && r->type != XRAY_MD_BUFFER_EXTENTS;

	if (needs_buffer && !s->in_buffer)
		return format_fail(err, r->offset, "%s record outside a buffer (no NewBuffer before it)",
				   xray_record_name(r->type));
	switch (r->type) {
	case XRAY_MD_BUFFER_EXTENTS:
		s->in_buffer = false;
		break;
	case XRAY_MD_NEW_BUFFER:
		s->in_buffer = true;
		s->have_cpu = false;
		s->tid = r->value32;
		s->pid = 0;
		s->buf_start = r->offset;
		s->prev = -1;
		break;
	case XRAY_MD_PID:
		s->pid = r->value32;
		break;
	case XRAY_MD_NEW_CPU_ID:
		s->cpu = r->cpu;
		s->have_cpu = true;
		s->base_tsc = r->tsc = r->value;
		break;
	case XRAY_MD_TSC_WRAP:
		s->base_tsc = r->tsc = r->value;
		break;
	case XRAY_MD_CALL_ARGUMENT:
		if (s->prev != XRAY_MD_CALL_ARGUMENT && s->prev != XRAY_REC_FUNCTION)
			return format_fail(err, r->offset, "CallArgument record not after a function "
					   "record");
		break;
	case XRAY_MD_CUSTOM_EVENT:
	case XRAY_MD_TYPED_EVENT:
		if (r->type == XRAY_MD_TYPED_EVENT || h->version >= 5) {
			if (!s->have_cpu)
				return format_fail(err, r->offset, "%s before any NewCPUId record in its "
						   "buffer", xray_record_name(r->type));
			s->base_tsc += r->delta;
			r->tsc = s->base_tsc;
			r->cpu = s->cpu;
		} else {
			r->tsc = r->value;
		}
		break;
	case XRAY_REC_FUNCTION:
		if (!s->have_cpu)
			return format_fail(err, r->offset, "function record before any NewCPUId record "
					   "in its buffer");
		s->base_tsc += r->delta;
		r->tsc = s->base_tsc;
		r->cpu = s->cpu;
		break;
	default:
		break;
	}
	r->tid = s->tid;
	r->pid = s->pid;
	s->prev = r->type;
	if (r->type == XRAY_MD_END_OF_BUFFER)
		s->in_buffer = false;
	return 0;
}

/* The record at data[off] into r and its size (a metadata record's
 * payload included). */
static int read_record(const unsigned char *data, size_t n, uint64_t off,
		       const struct xray_file_header *h, struct parse_state *s,
		       struct xray_record *r, uint64_t *size, struct format_error *err)
{
	uint32_t word;

	if (data[off] & 1) {
		if (n - off < XRAY_METADATA_RECORD_SIZE)
			return format_fail(err, off, "metadata record truncated by the end of the "
					   "file (%llu bytes left)", (unsigned long long)(n - off));
		return parse_metadata(data, n, off, h, s, r, size, err);
	}
	if (n - off < XRAY_FUNCTION_RECORD_SIZE)
		return format_fail(err, off, "function record truncated by the end of the "
				   "file (%llu bytes left)", (unsigned long long)(n - off));
	word = le32_get(data + off);
	r->type = XRAY_REC_FUNCTION;
	r->action = (word >> 1) & 7;
	r->func_id = word >> 4;
	r->delta = le32_get(data + off + 4);
	*size = XRAY_FUNCTION_RECORD_SIZE;
	if (r->action > XRAY_FN_ENTER_ARGS && !s->ignoring)
		return format_fail(err, off, "function record with unknown action %u", r->action);
	return 0;
}

/* Version 3 and later: a BufferExtents announces its buffer's bytes, and
 * every other record must fit in what is left of them. */
static int count_extents(size_t n, uint64_t off, struct parse_state *s,
			 const struct xray_record *r, uint64_t size, struct format_error *err)
{
	if (r->type == XRAY_MD_BUFFER_EXTENTS) {
		s->extent_left = r->value;
		s->extent_active = r->value > 0;
		if (r->value > n - off - size)
			return format_fail(err, off + 1, "BufferExtents of %llu bytes runs past the "
					   "end of the file", (unsigned long long)r->value);
		return 0;
	}
	if (size > s->extent_left)
		return format_fail(err, off, "%s record crosses the end of its buffer (%llu bytes "
				   "left by BufferExtents)", xray_record_name(r->type),
				   (unsigned long long)s->extent_left);
	s->extent_left -= size;
	s->extent_active = s->extent_left > 0;
	return 0;
}

/* Where reading goes on after a record at off..off+size: after an
 * EndOfBuffer, the rest of the buffer_size bytes is unused. */
static uint64_t after_record(const struct xray_file_header *h, struct parse_state *s,
			     const struct xray_record *r, uint64_t off, uint64_t size, size_t n,
			     struct xray_read_summary *summary)
{
	uint64_t end = s->buf_start + h->buffer_size;

	off += size;
	if (r->type != XRAY_MD_END_OF_BUFFER)
		return off;
	if (h->buffer_size && end >= off && end <= n) {
		summary->skipped_bytes += end - off;
		return end;
	}
	s->ignoring = true;
	return off;
}

int xray_parse(const unsigned char *data, size_t n, struct xray_file_header *h,
	       xray_record_fn fn, void *ctx, struct xray_read_summary *summary,
	       struct format_error *err)
{
	struct xray_read_summary local;
	struct parse_state s = { .prev = -1 };
	uint64_t off = XRAY_HEADER_SIZE;
	int ret;

	if (!summary)
		summary = &local;
	memset(summary, 0, sizeof(*summary));
	ret = parse_header(data, n, h, err);
	while (!ret && off < n) {
		struct xray_record r = { .offset = off };
		uint64_t size = 0;

		if (h->version >= 3 && !s.extent_active) {
			/* as llvm-xray: skip to the next BufferExtents introducer */
			const unsigned char *p = memchr(data + off, (XRAY_MD_BUFFER_EXTENTS << 1) | 1,
							n - off);
			uint64_t next = p ? (uint64_t)(p - data) : n;

			summary->skipped_bytes += next - off;
			off = next;
			if (off >= n)
				break;
			r.offset = off;
		}
		ret = read_record(data, n, off, h, &s, &r, &size, err);
		if (!ret && h->version >= 3)
			ret = count_extents(n, off, &s, &r, size, err);
		if (ret)
			break;
		if (s.ignoring && r.type != XRAY_MD_NEW_BUFFER) {
			summary->skipped_bytes += size;
			off += size;
			continue;
		}
		s.ignoring = false;
		ret = apply(h, &s, &r, err);
		if (ret)
			break;
		summary->records++;
		summary->function_records += r.type == XRAY_REC_FUNCTION;
		summary->buffers += r.type == XRAY_MD_NEW_BUFFER;
		if (fn)
			ret = fn(ctx, h, &r);
		off = after_record(h, &s, &r, off, size, n, summary);
	}
	return ret;
}

struct collect_ctx {
	struct xray_trace *t;
	size_t cap;
};

static int collect(void *vctx, const struct xray_file_header *h, const struct xray_record *r)
{
	struct collect_ctx *c = vctx;

	(void)h;
	if (c->t->n_records == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 256;
		struct xray_record *v = realloc(c->t->records, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->t->records = v;
		c->cap = cap;
	}
	c->t->records[c->t->n_records++] = *r;
	return 0;
}

int xray_read_memory(const unsigned char *data, size_t n, struct xray_trace *t,
		     struct format_error *err)
{
	struct collect_ctx c = { .t = t };
	int ret;

	memset(t, 0, sizeof(*t));
	ret = xray_parse(data, n, &t->header, collect, &c, &t->summary, err);
	if (ret == -ENOMEM && err)
		snprintf(err->reason, sizeof(err->reason), "out of memory");
	if (ret)
		xray_trace_free(t);
	return ret;
}

/* Maps a whole file read-only (*data is NULL for an empty file), with the
 * reason in err when it cannot. */
static int map_file(const char *path, const unsigned char **data, size_t *n,
		    struct format_error *err)
{
	int ret = format_map_file(path, data, n);

	if (ret && err) {
		err->offset = 0;
		snprintf(err->reason, sizeof(err->reason), "cannot read: %s",
			 ret == -EINVAL ? "not a regular file" : strerror(-ret));
	}
	return ret;
}

int xray_read_file(const char *path, struct xray_trace *t, struct format_error *err)
{
	const unsigned char *data;
	size_t n;
	int ret;

	memset(t, 0, sizeof(*t));
	ret = map_file(path, &data, &n, err);
	if (ret)
		return ret;
	ret = xray_read_memory(data ? data : (const unsigned char *)"", n, t, err);
	format_unmap_file(data, n);
	return ret;
}

void xray_trace_free(struct xray_trace *t)
{
	free(t->records);
	t->records = NULL;
	t->n_records = 0;
}

/* ---- collector dump ---------------------------------------------------- */

bool xray_recognize(const char *path, const unsigned char *head, size_t n)
{
	uint16_t version, type;

	(void)path;
	if (n < XRAY_HEADER_SIZE)
		return false;
	version = le16_get(head);
	type = le16_get(head + 2);
	/* the 30 reserved bits of the bitfield are zero in every known writer */
	return version >= XRAY_MIN_VERSION && version <= XRAY_MAX_VERSION &&
	       type == XRAY_TYPE_FDR && (le32_get(head + 4) & ~3u) == 0;
}

static const char *const action_names[] = { "Enter", "Exit", "TailExit", "EnterArgs" };

struct dump_ctx {
	FILE *out;
	const unsigned char *data;
};

static int dump_record(void *vctx, const struct xray_file_header *h, const struct xray_record *r)
{
	struct dump_ctx *d = vctx;
	FILE *o = d->out;

	(void)h;
	fprintf(o, "0x%08llx %s", (unsigned long long)r->offset, xray_record_name(r->type));
	switch (r->type) {
	case XRAY_REC_FUNCTION:
		fprintf(o, " %s id=%u delta=+%u tsc=%llu cpu=%u", action_names[r->action & 3],
			r->func_id, r->delta, (unsigned long long)r->tsc, r->cpu);
		break;
	case XRAY_MD_NEW_BUFFER:
		fprintf(o, " tid=%d", r->value32);
		break;
	case XRAY_MD_PID:
		fprintf(o, " pid=%d", r->value32);
		break;
	case XRAY_MD_WALLTIME:
		fprintf(o, " %llu.%06u", (unsigned long long)r->value, r->micros);
		break;
	case XRAY_MD_NEW_CPU_ID:
		fprintf(o, " cpu=%u tsc=%llu", r->cpu, (unsigned long long)r->value);
		break;
	case XRAY_MD_TSC_WRAP:
		fprintf(o, " tsc=%llu", (unsigned long long)r->value);
		break;
	case XRAY_MD_CALL_ARGUMENT:
		fprintf(o, " %llu (0x%llx)", (unsigned long long)r->value,
			(unsigned long long)r->value);
		break;
	case XRAY_MD_BUFFER_EXTENTS:
		fprintf(o, " size=%llu", (unsigned long long)r->value);
		break;
	case XRAY_MD_CUSTOM_EVENT:
	case XRAY_MD_TYPED_EVENT:
		if (r->type == XRAY_MD_TYPED_EVENT)
			fprintf(o, " type=%u", r->event_type);
		fprintf(o, " size=%d tsc=%llu cpu=%u data=", r->value32,
			(unsigned long long)r->tsc, r->cpu);
		for (int32_t i = 0; i < r->value32 && i < 64; i++)
			fprintf(o, "%02x", d->data[r->data_offset + (uint64_t)i]);
		if (r->value32 > 64)
			fprintf(o, "...");
		break;
	default:
		break;
	}
	fputc('\n', o);
	return 0;
}

int xray_dump(const char *path, FILE *out, bool check)
{
	struct format_error err = { 0 };
	struct xray_read_summary sum;
	struct xray_file_header h;
	struct dump_ctx d = { .out = out };
	const unsigned char *data;
	size_t n;
	int ret;

	ret = map_file(path, &data, &n, &err);
	if (!ret) {
		d.data = data;
		/* the header first, so that it is printed before the records */
		ret = parse_header(data ? data : (const unsigned char *)"", n, &h, &err);
	}
	if (!ret && !check)
		fprintf(out, "%s: XRay FDR trace version %u, type %u, constant_tsc %u, "
			"nonstop_tsc %u, cycle_frequency %llu, buffer_size %llu\n",
			path, h.version, h.type, h.bitfield & 1, (h.bitfield >> 1) & 1,
			(unsigned long long)h.cycle_frequency, (unsigned long long)h.buffer_size);
	if (!ret)
		ret = xray_parse(data, n, &h, check ? NULL : dump_record, &d, &sum, &err);
	if (!ret && !check)
		fprintf(out, "summary: %llu records, %llu function records, %llu buffers, "
			"%llu bytes skipped\n", (unsigned long long)sum.records,
			(unsigned long long)sum.function_records, (unsigned long long)sum.buffers,
			(unsigned long long)sum.skipped_bytes);
	format_unmap_file(data, n);
	return ret ? format_report(path, ret, &err) : 0;
}
