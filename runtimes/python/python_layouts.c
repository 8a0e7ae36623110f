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
 */
#include "runtimes/python/python_layouts.h"

#include <errno.h>
#include <stddef.h>
#include <sys/uio.h>

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
};

const struct python_layout *python_layout_of(uint32_t minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

int python_read(pid_t pid, uint64_t addr, void *buf, size_t size)
{
	struct iovec local = { buf, size }, remote = { (void *)(uintptr_t)addr, size };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n == (ssize_t)size)
		return 0;
	if (n < 0 && errno == ESRCH)
		return -ESRCH;
	return -EFAULT;
}

int python_layout_from_debug_offsets(pid_t pid, uint64_t runtime, uint32_t minor,
				     struct python_layout *out)
{
	(void)pid;
	(void)runtime;
	(void)minor;
	(void)out;
	return -ENOENT;
}
