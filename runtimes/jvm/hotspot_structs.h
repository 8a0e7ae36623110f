/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A HotSpot JVM's layout, read from the live process: the offsets, sizes
 * and constants that the stack walker (bpf/hotspot.h, the reference walker
 * runtimes/jvm/hotspot_walk.h) and the namer (runtimes/jvm/hotspot_names.h)
 * need, taken from the JVM's own vmStructs tables, so that one code path
 * serves JDK 17, 21 and 25 with no table per release.
 *
 * libjvm.so exports the tables (gHotSpotVMStructs, gHotSpotVMTypes,
 * gHotSpotVMIntConstants, gHotSpotVMLongConstants: each a pointer to an
 * array of entries ended by an entry of NULL type name) and the shape of
 * their entries (gHotSpotVMStructEntryTypeNameOffset, ...ArrayStride, ...).
 * The symbols are found in the file (symbols/elfinfo.h); their values, and
 * the tables, are read from the process (lib/procmem.h), after the loader
 * relocated them.  Every field is looked up by (type name, field name).
 *
 * What the tables do not hold, and where it comes from instead:
 * - the interpreter's frame on x86_64 (frame::interpreter_frame_*_offset,
 *   an enum in src/hotspot/cpu/x86/frame_x86.hpp, the same in 17, 21 and
 *   25: sender sp at fp-1 word, Method* at fp-3, locals at fp-7, bcp at
 *   fp-8; return address fp+1, caller's fp at fp+0; the interpreter keeps
 *   the live bcp in r13 between calls, src/hotspot/cpu/x86/
 *   templateInterpreterGenerator_x86.cpp, and stores it to its slot only
 *   at calls): HOTSPOT_X86_* below;
 * - ConstMethod's flag "has line number table": bit 0 in 17 (ConstMethod::
 *   _has_linenumber_table) and in 21+ (ConstMethodFlags' first flag);
 *   taken from the int constants when they name it, else 1;
 * - the compressed streams' encoding (UNSIGNED5 of Pack200, the line
 *   number tables and the nmethods' debug info): JDK 20 and later exclude
 *   the byte 0 from it (stream_exclude 1: every byte is the digit + 1),
 *   17 does not (0): by the JVM's major version (the tables say nothing);
 * - the nmethod's inner layout changed in 23 (scopes in a separate
 *   "immutable data" block, CodeBlob's pointers became int offsets from the
 *   blob) and 25 (metadata in the blob's "mutable data"): told apart by
 *   which fields exist (nmethod::_immutable_data, CodeBlob::_mutable_data);
 *   other moves are absorbed by looking a field up under its old and new
 *   names: ConstMethod::_flags (17) / _flags._flags (21+),
 *   CompiledMethod (17, 21) / nmethod (25) for _method and the rest,
 *   JavaThread (17, 21) / Thread (25) for _osthread, CodeBlob::_code_begin
 *   (17, 21) / _code_offset (25), CodeBlob::_frame_complete_offset int
 *   (17, 21) / int16_t (25), HeapBlock 16 bytes (17, 21) / 8 (25).
 *
 * Errors are negative errnos with a reason in hotspot_layout_error: -ENOENT
 * when libjvm.so does not export the tables, -EPROTO when a needed field is
 * missing (the reason names it), -ESRCH when the process is gone, -EFAULT
 * when its memory does not read.
 */
#ifndef COLLECTOR_HOTSPOT_STRUCTS_H
#define COLLECTOR_HOTSPOT_STRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/hotspot.h"
#include "symbols/elfinfo.h"

/* An optional field the JVM does not have. */
#define HOTSPOT_ABSENT UINT32_MAX

/* x86_64 interpreter frame slots, in words from fp (frame_x86.hpp). */
#define HOTSPOT_X86_SENDER_SP (-1)
#define HOTSPOT_X86_LAST_SP (-2)
#define HOTSPOT_X86_METHOD (-3)
#define HOTSPOT_X86_LOCALS (-7)
#define HOTSPOT_X86_BCP (-8)
#define HOTSPOT_X86_LINK 0
#define HOTSPOT_X86_RETURN 1

struct hotspot_layout {
	uint32_t major;              /* JDK feature release: 17, 21, 25 */
	char release[64];            /* Abstract_VM_Version::_s_vm_release */
	uint64_t bias;               /* libjvm.so's load bias */

	/* Symbol: u2 length, bytes (modified UTF-8) */
	uint32_t symbol_length, symbol_body;
	/* Klass::_name (Symbol*) */
	uint32_t klass_name;
	/* ConstantPool: holder (InstanceKlass*); its slots follow the object
	 * (sizeof), a Symbol* each for the UTF-8 entries */
	uint32_t cpool_holder, cpool_size, cpool_source_file_index;
	/* ConstMethod: its bytecodes follow the object (sizeof), the
	 * compressed line number table follows them when flagged */
	uint32_t cmethod_constants, cmethod_name_index, cmethod_signature_index;
	uint32_t cmethod_code_size, cmethod_flags, cmethod_size;
	uint32_t cmethod_has_lines;  /* the flag's bit */
	/* Method */
	uint32_t method_constmethod;

	/* CodeBlob */
	uint32_t blob_name, blob_size, blob_header_size, blob_frame_complete, blob_frame_size;
	uint32_t blob_frame_complete_width; /* bytes: 4, 2 in 25 (int16_t) */
	uint32_t blob_code_begin, blob_code_end; /* pointers; int offsets when blob_offsets */
	bool blob_offsets;           /* 23+: _code_offset, _data_offset */
	uint32_t blob_kind;          /* 23+: CodeBlobKind (u1), else ABSENT */
	uint32_t blob_mutable_data, blob_relocation_size; /* 25+, else ABSENT */
	/* nmethod (CompiledMethod's fields in 17-22 too) */
	uint32_t nm_method, nm_compile_id, nm_entry_bci, nm_orig_pc_offset;
	uint32_t nm_deopt_handler;   /* pointer (17-22) or int offset (23+) */
	uint32_t nm_scopes_pcs;      /* int offset: from the blob (17-22) or
				      * from the immutable data (23+) */
	uint32_t nm_scopes_data;     /* pointer (17-22), int offset (23+) */
	uint32_t nm_scopes_end;      /* 17-22: _dependencies_offset (pcs end) */
	uint32_t nm_metadata;        /* 17-24: int/u2 offset, ABSENT in 25 */
	uint32_t nm_metadata_width;  /* its bytes */
	uint32_t nm_immutable_data, nm_immutable_size; /* 23+, else ABSENT */
	uint32_t nm_comp_level;
	/* PcDesc: int pc offset (from code begin), int scope decode offset */
	uint32_t pcdesc_size, pcdesc_pc_offset, pcdesc_scope_offset;
	uint8_t stream_exclude;      /* UNSIGNED5: 0 (17), 1 (20+) */

	/* the code cache: addresses of the statics (runtime, bias added) */
	uint64_t codecache_heaps, codecache_low, codecache_high;
	uint32_t garray_len, garray_data;
	uint32_t codeheap_memory, codeheap_segmap, codeheap_log2_segment;
	uint32_t vspace_low_boundary, vspace_high_boundary;
	uint32_t heapblock_size;
	uint32_t heapblock_length, heapblock_length_width, heapblock_used; /* HeapBlock::Header */
	/* the interpreter's code: AbstractInterpreter::_code (StubQueue*) */
	uint64_t interpreter_code;
	uint32_t stubqueue_buffer, stubqueue_limit;

	/* threads: ThreadsSMRSupport::_java_thread_list (ThreadsList*) */
	uint64_t java_thread_list;
	uint32_t tlist_length, tlist_threads;
	uint32_t jthread_osthread, osthread_tid, jthread_anchor, jthread_state;
	uint32_t anchor_sp, anchor_pc, anchor_fp;
};

/* Where libjvm.so's vmStructs tables are: the link-time addresses of the
 * symbols it exports for them (gHotSpotVMStructs and its strides and
 * offsets, the same of the types and the constants), a file's facts read
 * once for every process that maps it. */
#define HOTSPOT_VM_SYMBOLS 20
struct hotspot_vm_symbols {
	uint64_t at[HOTSPOT_VM_SYMBOLS];
};

/* The vmStructs symbols of f, the file of a libjvm.so named path (for the
 * reason).  0, or -ENOENT when it exports none (another JVM's libjvm.so)
 * with a reason in why[]. */
int hotspot_vm_symbols(const struct elf_file *f, const char *path, struct hotspot_vm_symbols *out,
		       char *why, size_t why_size);

/* Reads the layout of process pid from the vmStructs tables of its
 * libjvm.so, whose symbols are syms, mapped with load bias `bias`.  0 or a
 * negative errno, with a reason in err[]. */
int hotspot_layout_read(pid_t pid, const struct hotspot_vm_symbols *syms, uint64_t bias,
			struct hotspot_layout *out, char *err, size_t err_size);

/* The process's libjvm.so among its mappings, for a tool that reads a JVM
 * without the engine (tests/jvm/hotspot_probe.c; the engine is told of
 * the image and its record, runtimes/runtime.h): its open path, load bias
 * and vmStructs symbols.  0, -ENOENT when it maps none (or it exports no
 * vmStructs), or a negative errno. */
int hotspot_find_libjvm(pid_t pid, char *path, size_t size, uint64_t *bias,
			struct hotspot_vm_symbols *syms);

/* The walker's record of process pid (bpf/hotspot.h): the code heaps,
 * read now (the heaps exist once the JVM started).  0, -EAGAIN when the
 * code cache is not set up yet, or a negative errno. */
int hotspot_proc_fill(pid_t pid, const struct hotspot_layout *l, struct collector_hotspot_proc *out);

/* Every entry of the tables, one a line ("struct TYPE FIELD offset|@addr",
 * "type TYPE size", "int NAME value", "long NAME value"), for looking at a
 * new release.  0 or a negative errno. */
int hotspot_tables_dump(pid_t pid, const struct hotspot_vm_symbols *syms, uint64_t bias,
			void *file);

#endif /* COLLECTOR_HOTSPOT_STRUCTS_H */
