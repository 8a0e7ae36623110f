/* SPDX-License-Identifier: GPL-2.0 */
/*
 * XRay FDR writer: one trace and one instrumentation map per traced process.
 *
 *   OUT/xray/<comm>.<pid>.xray      FDR trace, version 1 (llvm-xray fdr-dump,
 *                                    account, convert, stack read it)
 *   OUT/xray/<comm>.<pid>.map.elf   instrumentation map for `llvm-xray -m`
 *   OUT/xray/<comm>.<pid>.map.yaml  the same map in llvm-xray's YAML form
 *
 * (A process image after an exec, generation G > 0, is written as
 * <comm>.<pid>.<G>.*.)
 *
 * Time.  The TSC of every record is the event's CLOCK_MONOTONIC time in
 * nanoseconds (model_trace_event.ktime_ns), so cycle_frequency is 1e9 and
 * constant_tsc and nonstop_tsc are set.  WallTimeMarker records carry the
 * epoch time (time_ns) of the buffer's first event.
 *
 * Buffers.  Each thread's events are written as whole buffers of
 * buffer_size bytes (the size is in the header): NewBuffer (the thread id as
 * 32 bits), WallTimeMarker, NewCPUId, function records, EndOfBuffer, zero
 * padding.  A thread that outgrows one buffer continues in the next.  The
 * buffer size is the smallest power of two that holds the longest thread
 * (at least 4 KiB, at most 256 KiB), so that short threads waste little.
 *
 * Function ids.  Per process, the traced functions that have events in it,
 * ordered by (image id, file-relative address), are numbered 1..N; the map
 * lists their sleds in that order, which is how llvm-xray numbers them.
 *
 * Maps.  When all of a process's traced functions are in one ELF file and
 * that file is still readable and unchanged, map.elf is a copy of it with an
 * added allocated xray_instr_map section (sleds at the functions' real
 * file-relative addresses), so llvm-xray prints names and file:line from its
 * symbols and debug info.  Otherwise (functions of several files, e.g. the
 * program and libc, or a file that is gone) map.elf is a small synthetic ELF
 * whose symbol table names each function at a distinct made-up address:
 * names survive, source lines do not, and the YAML map says so.
 *
 * Lost events.  A thread's stream is resynchronized as it is written: an
 * exit whose entry is open deeper in the stack first closes the frames above
 * it (their exits were lost), an exit without any open entry is dropped.
 * Both are counted (xray_write_stats, YAML comments, stderr), so that
 * `llvm-xray account` needs no -k.  Frames still open when a thread's events
 * end are left open, as a real FDR trace leaves them.
 */
#ifndef COLLECTOR_XRAY_H
#define COLLECTOR_XRAY_H

#include <stdint.h>

#include "formats/format.h"

#define XRAY_MIN_BUFFER_SIZE 4096
#define XRAY_MAX_BUFFER_SIZE (256 * 1024)
/* llvm-xray keeps a thread's buffers in order only up to this many */
#define XRAY_MAX_BUFFERS_PER_THREAD 16
/* The smallest buffer that holds one complete record group: the header
 * records, a TSCWrap or NewCPUId, an Entry_Args with MODEL_MAX_ARGS
 * arguments, and the EndOfBuffer. */
#define XRAY_TINY_BUFFER_SIZE 256

struct xray_write_params {
	/* Bytes per thread buffer, a multiple of 8 and at least
	 * XRAY_TINY_BUFFER_SIZE; 0 chooses it from the trace. */
	uint64_t buffer_size;
};

struct xray_write_stats {
	uint64_t files;             /* .xray files written */
	uint64_t buffers;
	uint64_t function_records;
	uint64_t tsc_wraps;
	uint64_t cpu_changes;       /* NewCPUId records after a migration */
	uint64_t exits_synthesized; /* frames closed because their exit was lost */
	uint64_t exits_dropped;     /* exits without an open entry */
	uint64_t time_clamped;      /* events earlier than their predecessor */
	uint64_t bad_events;        /* events naming no thread or traced function */
	uint64_t synthetic_maps;    /* map.elf files that are not copies of the traced file */
};

extern const struct format xray_format;

int xray_write(const struct model *m, const struct export_options *opts);
/* `collector dump`'s hooks (xray_reader.c) */
bool xray_recognize(const char *path, const unsigned char *head, size_t n);
int xray_dump(const char *path, FILE *out, bool check);

/* xray_write with explicit parameters; stats may be NULL. */
int xray_write_ex(const struct model *m, const struct export_options *opts,
		  const struct xray_write_params *params, struct xray_write_stats *stats);

/* ---- instrumentation maps (xray_map.c) ---- */

struct xray_map_function {
	uint32_t image;
	uint64_t addr;        /* file-relative entry address in its image */
	uint64_t size;        /* 0 if unknown */
	const char *name;     /* never NULL */
	const char *image_path;
	uint64_t map_addr;    /* entry address in the written map */
	uint64_t map_size;
	bool log_args;        /* entries carry arguments: sled kind log-args-enter */
};

struct xray_map_info {
	const char *comm;
	pid_t pid;
	bool synthetic;       /* set by xray_write_maps */
	const char *why_synthetic;
};

/*
 * Writes <base>.map.elf and <base>.map.yaml (base relative to opts->dir) for
 * fns[0..n), already in function-id order (id = index + 1); fills map_addr
 * and map_size.  `comments` lines are added to the YAML header.
 */
int xray_write_maps(const struct model *m, const struct export_options *opts, const char *base,
		    struct xray_map_function *fns, size_t n, struct xray_map_info *info,
		    const char *comments);

#endif /* COLLECTOR_XRAY_H */
