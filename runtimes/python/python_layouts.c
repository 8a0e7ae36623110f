// SPDX-License-Identifier: GPL-2.0
/*
 * CPython layouts by minor version (runtimes/python/python_layouts.h).
 *
 * 3.11: from CPython's v3.11 headers (Include/internal/pycore_runtime.h,
 * pycore_interp.h, pycore_frame.h, Include/cpython/pystate.h, code.h,
 * unicodeobject.h), checked against the debug information of a 3.11.7
 * libpython (gdb: `p &((PyThreadState *)0)->cframe` and so on).  The
 * layouts do not change within a minor version: Debian's 3.11.2 and the
 * 3.11.7 build have the same _PyRuntime (0x28b20 bytes).
 *
 * 3.12 (in no Debian suite): offsetof() and sizeof() printed by a program
 * compiled with -DPy_BUILD_CORE against CPython's v3.12.0 headers
 * (Include/, Include/internal/ and the pyconfig.h of a plain ./configure
 * on x86-64: scripts/python_offsets.c); the same program on the 3.11.7
 * headers prints every 3.11 number below.  Checked against a live 3.12.0
 * built from those sources: gdb on its debug information gives the same
 * offsets, its _PyRuntime is 0x70470 bytes as the program says, and the
 * shares test (test_python_versions.sh with PYTHON312 naming it) passes.
 * The OpenTelemetry profiler uses the same frame offsets for every 3.12.x
 * (layouts do not change within a minor version).  3.12 still reaches the
 * current frame through tstate->cframe, but has no is_entry:
 * _PyEval_EvalFrameDefault pushes a shim frame of owner
 * FRAME_OWNED_BY_CSTACK (3) before its first frame.
 */
#include "runtimes/python/python_layouts.h"

#include "lib/procmem.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

static const struct python_layout layouts[] = {
	{
		.minor = 11,
		.walk = {
			.interp_head = 0x28,     /* _PyRuntimeState.interpreters.head */
			.flags = COLLECTOR_PY_VIA_CFRAME | COLLECTOR_PY_IS_ENTRY_BYTE,
			.threads_head = 0x10,    /* PyInterpreterState.threads.head */
			.tstate_next = 0x08,
			.tstate_thread_id = 0x98,
			.tstate_frame = 0x38,    /* cframe */
			.cframe_frame = 0x08,    /* _PyCFrame.current_frame */
			.frame_code = 0x20,      /* f_code */
			.frame_previous = 0x30,
			.frame_instr = 0x38,     /* prev_instr: the current instruction */
			.frame_entry = 0x44,     /* is_entry */
			.frame_owner = 0x45,
			.code_units = 0xb8,      /* co_code_adaptive */
			.owner_cstack = 0,       /* no shim frames before 3.12 */
			.instr_next = 0,
		},
		.co_filename = 0x70, .co_qualname = 0x80, .co_linetable = 0x88,
		.co_firstlineno = 0x48,
		/* PyASCIIObject still has wstr: 48 bytes; PyCompactUnicodeObject 72 */
		.str_state = 0x20, .str_length = 0x10, .str_ascii_data = 48, .str_compact_data = 72,
		.bytes_size = 0x10, .bytes_data = 0x20,
	},
	{
		.minor = 12,
		.walk = {
			.interp_head = 0x28,     /* _PyRuntimeState.interpreters.head */
			.flags = COLLECTOR_PY_VIA_CFRAME,
			.threads_head = 0x48,    /* PyInterpreterState.threads.head */
			.tstate_next = 0x08,
			.tstate_thread_id = 0x88,
			.tstate_frame = 0x38,    /* cframe */
			.cframe_frame = 0x00,    /* _PyCFrame.current_frame */
			.frame_code = 0x00,      /* f_code */
			.frame_previous = 0x08,
			.frame_instr = 0x38,     /* prev_instr */
			.frame_entry = 0,        /* no is_entry: the shim frames tell */
			.frame_owner = 0x46,
			.code_units = 0xc0,      /* co_code_adaptive */
			.owner_cstack = 3,       /* FRAME_OWNED_BY_CSTACK */
			.instr_next = 0,
		},
		.co_filename = 0x70, .co_qualname = 0x80, .co_linetable = 0x88,
		.co_firstlineno = 0x44,
		/* PyASCIIObject lost wstr: 40 bytes; PyCompactUnicodeObject 56 */
		.str_state = 0x20, .str_length = 0x10, .str_ascii_data = 40, .str_compact_data = 56,
		.bytes_size = 0x10, .bytes_data = 0x20,
	},
};

const struct python_layout *python_layout_of(uint32_t minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

/*
 * _Py_DebugOffsets (3.13 on) is a cookie, the version, then sections of
 * u64 offsets, each section starting with the size of its struct.  The
 * sections grow between versions (3.14 added fields to the interpreter
 * state, 3.15 to the thread state), so where each field sits is known per
 * minor version: these are word indexes from the start, taken from
 * CPython's Include/internal/pycore_debug_offsets.h and checked against
 * the _PyRuntime of Debian's 3.13.5, 3.14.10 and 3.15.2 (3.15's thread_id:
 * read in a live process, where it equals threading.get_ident()).
 */
struct debug_words {
	uint32_t minor;
	uint8_t interpreters_head, threads_head;
	uint8_t tstate, tstate_next, tstate_frame, tstate_thread_id;
	uint8_t frame, frame_previous, frame_executable, frame_instr, frame_owner;
	uint8_t code, code_filename, code_qualname, code_linetable, code_firstlineno, code_units;
};

static const struct debug_words debug_words[] = {
	{ 13, 5, 9, 19, 21, 23, 24, 28, 29, 30, 31, 33, 34, 35, 37, 38, 39, 43 },
	{ 14, 5, 9, 22, 24, 26, 27, 31, 32, 33, 34, 36, 39, 40, 42, 43, 44, 48 },
	{ 15, 5, 9, 22, 24, 26, 30, 39, 40, 41, 42, 44, 47, 48, 50, 51, 52, 56 },
};

#define DEBUG_WORDS 64

/* An offset of the section starting at word `section`: below its size,
 * and small enough for the 16 bits the walker keeps. */
static bool field_ok(const uint64_t *w, uint8_t section, uint8_t field, uint64_t max_size)
{
	return w[section] && w[section] <= max_size && w[field] < w[section] && w[field] < 0x10000;
}

int python_layout_from_debug_offsets(pid_t pid, uint64_t runtime, uint32_t minor,
				     struct python_layout *out)
{
	const struct debug_words *d = NULL;
	uint64_t w[DEBUG_WORDS];
	int err;

	for (size_t i = 0; i < sizeof(debug_words) / sizeof(debug_words[0]); i++)
		if (debug_words[i].minor == minor)
			d = &debug_words[i];
	if (!d)
		return -ENOTSUP;
	err = proc_mem_read(pid, runtime, w, sizeof(w));
	if (err)
		return err;
	if (memcmp(w, "xdebugpy", 8) != 0)
		return -ENOENT;
	if ((w[1] >> 16 & 0xffff) != (0x0300 | minor) || w[2] /* free-threaded */)
		return -ENOTSUP;
	if (!field_ok(w, d->interpreters_head - 2, d->interpreters_head, 1 << 24) ||
	    !field_ok(w, d->interpreters_head + 1, d->threads_head, 1 << 24) ||
	    !field_ok(w, d->tstate, d->tstate_next, 1 << 16) ||
	    !field_ok(w, d->tstate, d->tstate_frame, 1 << 16) ||
	    !field_ok(w, d->tstate, d->tstate_thread_id, 1 << 16) ||
	    !field_ok(w, d->frame, d->frame_previous, 128) ||
	    !field_ok(w, d->frame, d->frame_executable, 128) ||
	    !field_ok(w, d->frame, d->frame_instr, 128) ||
	    !field_ok(w, d->frame, d->frame_owner, 128) ||
	    !field_ok(w, d->code, d->code_filename, 512) ||
	    !field_ok(w, d->code, d->code_qualname, 512) ||
	    !field_ok(w, d->code, d->code_linetable, 512) ||
	    !field_ok(w, d->code, d->code_firstlineno, 512) ||
	    w[d->code_units] > 512)
		return -ENOTSUP;
	memset(out, 0, sizeof(*out));
	out->minor = minor;
	out->walk = (struct collector_python_proc){
		.interp_head = w[d->interpreters_head],
		.flags = 0,
		.threads_head = (uint16_t)w[d->threads_head],
		.tstate_next = (uint16_t)w[d->tstate_next],
		.tstate_thread_id = (uint16_t)w[d->tstate_thread_id],
		.tstate_frame = (uint16_t)w[d->tstate_frame],
		.frame_code = (uint16_t)w[d->frame_executable],
		.frame_previous = (uint16_t)w[d->frame_previous],
		.frame_instr = (uint16_t)w[d->frame_instr],
		.frame_owner = (uint16_t)w[d->frame_owner],
		.code_units = (uint16_t)w[d->code_units],
		/* 3.13: FRAME_OWNED_BY_CSTACK; 3.14 on: FRAME_OWNED_BY_INTERPRETER
		 * (and CSTACK, 4, in 3.14): no Python frame of its own */
		.owner_cstack = 3,
	};
	out->co_filename = (uint16_t)w[d->code_filename];
	out->co_qualname = (uint16_t)w[d->code_qualname];
	out->co_linetable = (uint16_t)w[d->code_linetable];
	out->co_firstlineno = (uint16_t)w[d->code_firstlineno];
	/* str and bytes as in 3.12 on (PyASCIIObject lost wstr: 40 bytes) */
	out->str_state = 0x20;
	out->str_length = 0x10;
	out->str_ascii_data = 40;
	out->str_compact_data = 56;
	out->bytes_size = 0x10;
	out->bytes_data = 0x20;
	return 0;
}
