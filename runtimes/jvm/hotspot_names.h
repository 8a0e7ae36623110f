/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Naming HotSpot frames in user space, from the live process's memory
 * (lib/procmem.h), by the layout its vmStructs gave (hotspot_structs.h):
 *
 * - a Method* becomes "ret Class.method(args)" as HotSpot's perf map spells
 *   it (Method::external_name(): return type, holder class with dots, a
 *   hidden class's last '+' shown as '/', parameters ", "-separated, arrays
 *   as "int[]"), from the holder Klass's name Symbol and the method's
 *   name and signature Symbols, found through ConstMethod's indexes into
 *   its ConstantPool; with the class's source file name;
 * - a bci becomes a line through the method's compressed line number table
 *   (after its bytecodes; Method::line_number_from_bci()'s rule: the exact
 *   bci, else the line of the greatest start bci below it);
 * - an nmethod and a pc become the (Method*, bci) frames of its inlining
 *   scopes at that pc, innermost first: the PcDesc for the pc (exact for a
 *   return address, else the first at or after it, as HotSpot's
 *   pc_desc_near()), then the scope records of the debug info stream from
 *   its decode offset, each giving its sender's offset, until 0.
 *
 * Methods are cached per process by Method* (as runtimes/python/ caches
 * code objects), scopes by (nmethod, pc) while the nmethod there keeps its
 * compile id (code flushed and its space reused is read anew).  The pure parts (signature
 * conversion, UNSIGNED5 and the line table and scope records) take bytes
 * and are tested on their own (tests/unit/test_hotspot.c).
 */
#ifndef COLLECTOR_HOTSPOT_NAMES_H
#define COLLECTOR_HOTSPOT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/jvm/hotspot_structs.h"

/* Inlining depth kept of one pc (deeper scopes are cut, outermost kept). */
#define HOTSPOT_MAX_SCOPES 32
#define HOTSPOT_MAX_NAME 1024

/* ---- pure parts ------------------------------------------------------------ */

/* One UNSIGNED5 number (Pack200's, HotSpot's CompressedStream) at *pos of
 * buf[len]: bytes >= 192 continue it, each worth (byte - exclude) << 6i
 * (exclude: 0 before JDK 20, 1 from it, where the byte 0 is never
 * written).  false when it runs past len or meets an excluded byte. */
bool hotspot_u5_read(const uint8_t *buf, size_t len, size_t *pos, uint8_t exclude, uint32_t *out);
/* The same, zigzag-signed ((v >> 1) ^ -(v & 1)). */
bool hotspot_u5_read_signed(const uint8_t *buf, size_t len, size_t *pos, uint8_t exclude,
			    int32_t *out);

/* The line of bytecode index bci by a compressed line number table:
 * pairs of (bci delta, line delta), one byte (bci << 3 | line) each, or
 * 0xff and two signed UNSIGNED5 numbers; 0 ends it.  -1 when none fits.
 * *table_len, when not NULL, is set to the bytes the table took through
 * its end marker (0 when buf ends first). */
int32_t hotspot_line_for_bci(const uint8_t *buf, size_t len, uint8_t exclude, uint32_t bci,
			     size_t *table_len);

/* "ret name(args)" pieces of a JVM method signature "(J[JLjava/lang/String;)V":
 * params "long, long[], java.lang.String", ret "void".  0, or -EINVAL for
 * a malformed signature, -ENAMETOOLONG when out of room. */
int hotspot_signature_external(const char *sig, size_t len, char *params, size_t params_size,
			       char *ret, size_t ret_size);

/* A class name Symbol's bytes "java/lang/String" as the perf map shows
 * it: "java.lang.String"; a hidden class "Foo$$Lambda+0x0800c03000"
 * becomes "Foo$$Lambda/0x0800c03000" (Klass::external_name()). */
void hotspot_class_external(const char *name, size_t len, char *out, size_t size);

/* One scope record of the debug info stream at buf[pos]: its sender's
 * decode offset (0: none), the metadata index of its Method (1-based),
 * and its bci (-1: the method's entry).  false when malformed. */
bool hotspot_scope_decode(const uint8_t *buf, size_t len, size_t pos, uint8_t exclude,
			  uint32_t *sender, uint32_t *method_index, int32_t *bci);

/* ---- the live process ---------------------------------------------------------- */

struct hotspot_method {
	char *name;            /* "long Kestrel.hotMix(long[], int)" */
	char *source;          /* "Kestrel.java", or NULL */
	uint8_t *lines;        /* the compressed line number table, or NULL */
	size_t lines_len;
	uint32_t code_size;    /* bytes of bytecode */
	uint8_t stream_exclude; /* the table's UNSIGNED5 (hotspot_layout) */
};

struct hotspot_scope {
	uint64_t method;       /* Method* */
	int32_t bci;           /* -1: at the method's entry */
};

/* What an nmethod holds that naming needs. */
struct hotspot_nmethod {
	uint64_t blob;         /* the nmethod (CodeBlob*) */
	uint64_t method;       /* its Method* (the outermost of its scopes) */
	uint64_t code_begin, code_end;
	uint32_t compile_id;
	int32_t entry_bci;     /* -1 unless an on-stack-replacement compile */
	uint32_t comp_level;
};

struct hotspot_names;

struct hotspot_names *hotspot_names_new(pid_t pid, const struct hotspot_layout *l);
void hotspot_names_free(struct hotspot_names *n);

/* Method m of the process, read once and cached (*out lives as long as n).
 * 0, or a negative errno (-EFAULT: unreadable, -EINVAL: not a Method). */
int hotspot_method_get(struct hotspot_names *n, uint64_t m, const struct hotspot_method **out);
/* The line of bci in m; 0 when unknown. */
uint32_t hotspot_method_line(const struct hotspot_method *m, int32_t bci);

/* The blob's head: its name (copied into name[size]), and its nmethod
 * facts when it is one ("nmethod", or "native nmethod": a native method's
 * wrapper) (returns 1), else 0; a negative errno when it does not read. */
int hotspot_blob_read(struct hotspot_names *n, uint64_t blob, char *name, size_t size,
		      struct hotspot_nmethod *nm);

/* The scopes of nmethod blob at pc, innermost first, into out[max]; top:
 * pc was interrupted there (not a return address).  No PcDesc at or after
 * pc (a native method's wrapper has none): the nmethod's method at bci -1.
 * 0 and *count, or a negative errno. */
int hotspot_nmethod_scopes(struct hotspot_names *n, uint64_t blob, uint64_t pc, bool top,
			   struct hotspot_scope *out, size_t max, size_t *count);

#endif /* COLLECTOR_HOTSPOT_NAMES_H */
