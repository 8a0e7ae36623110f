/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LLVM XRay Flight Data Recorder (FDR) trace and instrumentation map: the
 * on-disk constants shared by the writer (xray.c, xray_map.c) and the reader
 * (xray_reader.c).  See shared/specs/xray-fdr-format.rst and the XRay section
 * of shared/specs/README.md (what llvm-xray really reads).
 *
 * All fields are little-endian: read and write them with lib/bytes.h.
 */
#ifndef COLLECTOR_XRAY_FORMAT_H
#define COLLECTOR_XRAY_FORMAT_H

#include <stdint.h>

/* File header: u16 version, u16 type, u32 bitfield, u64 cycle_frequency,
 * then 16 free-form bytes whose first u64 is the thread buffer size. */
#define XRAY_HEADER_SIZE 32
#define XRAY_TYPE_FDR 1
#define XRAY_BIT_CONSTANT_TSC 0x1
#define XRAY_BIT_NONSTOP_TSC 0x2
#define XRAY_MIN_VERSION 1
#define XRAY_MAX_VERSION 5

#define XRAY_FUNCTION_RECORD_SIZE 8
#define XRAY_METADATA_RECORD_SIZE 16

/* Metadata record kinds: byte 0 of the record is (kind << 1) | 1. */
enum xray_metadata_kind {
	XRAY_MD_NEW_BUFFER = 0,     /* i32 thread id */
	XRAY_MD_END_OF_BUFFER = 1,  /* version 1 only */
	XRAY_MD_NEW_CPU_ID = 2,     /* u16 cpu, u64 absolute tsc */
	XRAY_MD_TSC_WRAP = 3,       /* u64 absolute tsc */
	XRAY_MD_WALLTIME = 4,       /* u64 seconds, u32 microseconds */
	XRAY_MD_CUSTOM_EVENT = 5,   /* i32 size, u64 tsc [, u16 cpu v4]; v5: i32 size, i32 delta */
	XRAY_MD_CALL_ARGUMENT = 6,  /* u64 argument */
	XRAY_MD_BUFFER_EXTENTS = 7, /* u64 bytes of the buffer after this record (v2+) */
	XRAY_MD_TYPED_EVENT = 8,    /* i32 size, i32 delta, u16 type (v5) */
	XRAY_MD_PID = 9,            /* i32 process id (v3+) */
	XRAY_MD_KIND_COUNT = 10,
};

/* Function record: u32 {bit 0 = 0, bits 1-3 action, bits 4-31 id}, u32 tsc delta. */
enum xray_function_action {
	XRAY_FN_ENTER = 0,
	XRAY_FN_EXIT = 1,
	XRAY_FN_TAIL_EXIT = 2,
	XRAY_FN_ENTER_ARGS = 3,
};
#define XRAY_MAX_FUNCTION_ID 0x0fffffffu

/* Instrumentation map (section xray_instr_map): 32-byte sled entries
 * {u64 address, u64 function, u8 kind, u8 always_instrument, u8 version,
 * 13 zero bytes}.  Version 0: absolute addresses, no relocation needed. */
#define XRAY_SLED_ENTRY_SIZE 32
#define XRAY_INSTR_MAP_SECTION "xray_instr_map"
enum xray_sled_kind {
	XRAY_SLED_ENTRY = 0,
	XRAY_SLED_EXIT = 1,
	XRAY_SLED_TAIL = 2,
	XRAY_SLED_LOG_ARGS_ENTER = 3,
};

#endif /* COLLECTOR_XRAY_FORMAT_H */
