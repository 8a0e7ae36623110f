// SPDX-License-Identifier: GPL-2.0
/*
 * runtimes/python/python_layouts.c: the hard-coded layouts (3.11, 3.12)
 * are consistent with the sizes of the structs they point into, as the
 * compiler laid those out from CPython's own headers (offsetof/sizeof of a
 * program built with -DPy_BUILD_CORE against the v3.11.7 and v3.12.0
 * headers), and with what their readers can read: every frame field inside
 * the PY_FRAME_BYTES the BPF walker reads of a frame (bpf/python.bpf.h),
 * every code object field before co_code_adaptive (python_code_read reads
 * up to it, at most 512 bytes), no two fields of one struct overlapping.
 * 3.11 marks entries with is_entry, 3.12 with FRAME_OWNED_BY_CSTACK (3)
 * shim frames; both reach the current frame through the cframe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "runtimes/python/python_layouts.h"

/* bpf/python.bpf.h: the bytes of a frame read at once */
#define PY_FRAME_BYTES 80
/* runtimes/python/python_code.c: the most of a code object read at once */
#define CODE_HEAD_MAX 512

struct sizes {
	uint32_t minor;
	uint32_t runtime, interp, tstate, cframe, frame, code, ascii, compact;
};

/* sizeof() of _PyRuntimeState, PyInterpreterState, PyThreadState, _PyCFrame,
 * _PyInterpreterFrame, PyCodeObject, PyASCIIObject, PyCompactUnicodeObject */
static const struct sizes sizes[] = {
	{ 11, 0x28b20, 0x1a4e8, 0x168, 0x18, 0x50, 0xc0, 0x30, 0x48 },
	{ 12, 0x70470, 0x5da20, 0x120, 0x10, 0x50, 0xc8, 0x28, 0x38 },
};

/* [off, off + len) and [off2, off2 + len2) share no byte */
static void apart(uint32_t off, uint32_t len, uint32_t off2, uint32_t len2)
{
	assert_true(off + len <= off2 || off2 + len2 <= off);
}

static void check_layout(const struct sizes *s)
{
	const struct python_layout *l = python_layout_of(s->minor);
	const struct collector_python_proc *w;
	uint32_t frame_end;

	assert_non_null(l);
	w = &l->walk;
	assert_int_equal(l->minor, s->minor);

	/* the runtime, the interpreter, the thread state, the cframe */
	assert_true(w->interp_head + 8 <= s->runtime);
	assert_true(w->threads_head + 8u <= s->interp);
	assert_true(w->tstate_next + 8u <= s->tstate);
	assert_true(w->tstate_thread_id + 8u <= s->tstate);
	assert_true(w->tstate_frame + 8u <= s->tstate);
	apart(w->tstate_next, 8, w->tstate_thread_id, 8);
	apart(w->tstate_next, 8, w->tstate_frame, 8);
	apart(w->tstate_thread_id, 8, w->tstate_frame, 8);
	assert_true(w->flags & COLLECTOR_PY_VIA_CFRAME);
	assert_true(w->cframe_frame + 8u <= s->cframe);

	/* the frame: before localsplus (its last word) and inside what the
	 * walker reads */
	frame_end = s->frame - 8 < PY_FRAME_BYTES ? s->frame - 8 : PY_FRAME_BYTES;
	assert_true(w->frame_code + 8u <= frame_end);
	assert_true(w->frame_previous + 8u <= frame_end);
	assert_true(w->frame_instr + 8u <= frame_end);
	assert_true(w->frame_owner + 1u <= frame_end);
	apart(w->frame_code, 8, w->frame_previous, 8);
	apart(w->frame_code, 8, w->frame_instr, 8);
	apart(w->frame_previous, 8, w->frame_instr, 8);
	apart(w->frame_owner, 1, w->frame_code, 8);
	apart(w->frame_owner, 1, w->frame_previous, 8);
	apart(w->frame_owner, 1, w->frame_instr, 8);
	if (w->flags & COLLECTOR_PY_IS_ENTRY_BYTE) {
		assert_true(w->frame_entry + 1u <= frame_end);
		assert_int_not_equal(w->frame_entry, w->frame_owner);
		apart(w->frame_entry, 1, w->frame_instr, 8);
	}
	assert_int_equal(w->instr_next, 0); /* prev_instr in both */

	/* the code object: co_code_adaptive its last member, the rest before */
	assert_int_equal(w->code_units, s->code - 8);
	assert_true(w->code_units <= CODE_HEAD_MAX);
	assert_true(l->co_filename + 8u <= w->code_units);
	assert_true(l->co_qualname + 8u <= w->code_units);
	assert_true(l->co_linetable + 8u <= w->code_units);
	assert_true(l->co_firstlineno + 4u <= w->code_units);
	apart(l->co_filename, 8, l->co_qualname, 8);
	apart(l->co_filename, 8, l->co_linetable, 8);
	apart(l->co_qualname, 8, l->co_linetable, 8);
	apart(l->co_firstlineno, 4, l->co_filename, 8);
	apart(l->co_firstlineno, 4, l->co_qualname, 8);
	apart(l->co_firstlineno, 4, l->co_linetable, 8);

	/* str: a compact string's characters follow its header */
	assert_int_equal(l->str_ascii_data, s->ascii);
	assert_int_equal(l->str_compact_data, s->compact);
	assert_true(l->str_state + 4u <= s->ascii);
	assert_true(l->str_length + 8u <= s->ascii);
	apart(l->str_state, 4, l->str_length, 8);
	/* bytes: ob_size of the PyVarObject head, ob_sval after ob_shash */
	assert_int_equal(l->bytes_size, 0x10);
	assert_int_equal(l->bytes_data, 0x20);
}

static void test_layout_311(void **state)
{
	const struct python_layout *l = python_layout_of(11);

	(void)state;
	check_layout(&sizes[0]);
	/* entries by the is_entry byte; no shim frames */
	assert_int_equal(l->walk.flags, COLLECTOR_PY_VIA_CFRAME | COLLECTOR_PY_IS_ENTRY_BYTE);
	assert_int_equal(l->walk.owner_cstack, 0);
}

static void test_layout_312(void **state)
{
	const struct python_layout *l = python_layout_of(12);

	(void)state;
	check_layout(&sizes[1]);
	/* no is_entry: entries by FRAME_OWNED_BY_CSTACK shim frames; the
	 * owners below it (thread 0, generator 1, frame object 2) are
	 * Python frames */
	assert_int_equal(l->walk.flags, COLLECTOR_PY_VIA_CFRAME);
	assert_int_equal(l->walk.owner_cstack, 3);
	/* f_code and previous lead the frame, as from 3.12 on */
	assert_int_equal(l->walk.frame_code, 0);
	assert_int_equal(l->walk.frame_previous, 8);
}

static void test_other_versions(void **state)
{
	(void)state;
	/* before 3.11: other frames; from 3.13: _Py_DebugOffsets */
	assert_null(python_layout_of(10));
	assert_null(python_layout_of(13));
	assert_null(python_layout_of(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_311),
		cmocka_unit_test(test_layout_312),
		cmocka_unit_test(test_other_versions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
