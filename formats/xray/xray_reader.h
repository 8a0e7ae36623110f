/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of LLVM XRay FDR traces, versions 1 to 5: the files collector
 * writes (version 1) and those LLVM's own runtime writes (version 5 in
 * LLVM 14: BufferExtents and PID records, no EndOfBuffer).
 *
 * The reader follows llvm-xray's rules (shared/specs/README.md): version 1
 * buffers end with EndOfBuffer and their remaining bytes up to buffer_size
 * are skipped; from version 3 on, a BufferExtents record gives the bytes of
 * its buffer, and the bytes after a spent buffer are skipped up to the next
 * BufferExtents record.  It rebuilds each function record's absolute TSC
 * (base += delta; NewCPUId and TSCWrap reset the base) and checks the
 * structure: records inside a buffer, a CPU record before any function
 * record, arguments after an Entry_Args record, lengths inside the file.
 */
#ifndef COLLECTOR_XRAY_READER_H
#define COLLECTOR_XRAY_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "formats/infile.h"
#include "formats/xray/xray_format.h"

struct xray_file_header {
	uint16_t version;
	uint16_t type;
	uint32_t bitfield;
	uint64_t cycle_frequency;
	uint64_t buffer_size;  /* the first u64 of the free-form bytes */
	uint64_t reserved;     /* the second */
};

/* record types beyond the metadata kinds (enum xray_metadata_kind) */
#define XRAY_REC_FUNCTION 16

struct xray_record {
	uint64_t offset;      /* of the record in the file */
	uint8_t type;         /* enum xray_metadata_kind or XRAY_REC_FUNCTION */
	uint8_t action;       /* function: enum xray_function_action */
	uint16_t cpu;         /* NewCPUId, CustomEvent (v4); the current CPU for functions */
	uint16_t event_type;  /* TypedEvent */
	uint32_t func_id;     /* function */
	uint32_t delta;       /* function, CustomEvent v5, TypedEvent */
	int32_t value32;      /* NewBuffer: tid, PID: pid, events: payload size */
	uint64_t value;       /* NewCPUId/TSCWrap/CustomEvent<v5: tsc, WallTime: seconds,
			       * CallArgument: argument, BufferExtents: size */
	uint32_t micros;      /* WallTime */
	uint64_t tsc;         /* absolute TSC: functions, events, NewCPUId, TSCWrap */
	int32_t tid, pid;     /* of the buffer the record is in (pid 0 before v3) */
	uint64_t data_offset; /* payload of custom and typed events */
};

struct xray_read_summary {
	uint64_t records, function_records, buffers;
	uint64_t skipped_bytes;  /* padding and unused buffer bytes */
};

/* Called for every record in file order; a non-zero return stops the read
 * and is returned by xray_parse. */
typedef int (*xray_record_fn)(void *ctx, const struct xray_file_header *h,
			      const struct xray_record *r);

/*
 * Parses data[0..n).  Returns 0, the callback's non-zero value, or -EINVAL
 * with *err filled for malformed input.  summary may be NULL.
 */
int xray_parse(const unsigned char *data, size_t n, struct xray_file_header *h,
	       xray_record_fn fn, void *ctx, struct xray_read_summary *summary,
	       struct format_error *err);

/* The whole file as an array (for tests and small files). */
struct xray_trace {
	struct xray_file_header header;
	struct xray_record *records;
	size_t n_records;
	struct xray_read_summary summary;
};

/* Returns 0, -EINVAL (malformed, *err filled) or another negative errno
 * (err->reason says what failed). */
int xray_read_file(const char *path, struct xray_trace *t, struct format_error *err);
int xray_read_memory(const unsigned char *data, size_t n, struct xray_trace *t,
		     struct format_error *err);
void xray_trace_free(struct xray_trace *t);

/* Name of a metadata kind or "Function". */
const char *xray_record_name(unsigned type);

#endif /* COLLECTOR_XRAY_READER_H */
