// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: what the collector reads of a CPython process, which
 * may change under the read or lie (runtimes/python/python_code.c): the
 * location table of a code object, at every code unit, and a code object
 * whose fields (pointers into the input, a str's state and length, a
 * bytes object's size) all come from the input, laid out as 3.11's or
 * 3.12's, read through process_vm_readv as a target's would be.
 */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "runtimes/python/python_code.h"

static uint8_t arena[8192] __attribute__((aligned(16)));

/* Word i of the input as a pointer into the arena (or a wild one). */
static uint64_t pointer_from(const uint8_t *data, size_t size, size_t i)
{
	uint16_t v = 0;

	if (i * 2 + 2 <= size)
		memcpy(&v, data + i * 2, 2);
	return v == 0xffff ? 8 : (uintptr_t)arena + (v % (sizeof(arena) - 256));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* 3.11's layout or 3.12's (str data at 48/72 or 40/56), by the
	 * input's last byte */
	const struct python_layout *l = python_layout_of(size && data[size - 1] & 1 ? 12 : 11);
	struct python_code c;
	uint64_t p;
	uint32_t units;

	/* the table alone, at every unit it may cover and past it */
	for (units = 0; units < 8 * size + 2 && units < 4096; units++)
		(void)python_code_line(data, size, 1, units);

	/* a code object in an arena the input fills */
	memset(arena, 0, sizeof(arena));
	memcpy(arena, data, size < sizeof(arena) ? size : sizeof(arena));
	p = pointer_from(data, size, 0);
	memcpy(arena + l->co_qualname, &p, 8);
	p = pointer_from(data, size, 1);
	memcpy(arena + l->co_filename, &p, 8);
	p = pointer_from(data, size, 2);
	memcpy(arena + l->co_linetable, &p, 8);
	if (python_code_read(getpid(), l, (uintptr_t)arena, &c) == 0) {
		(void)python_code_line(c.linetable, c.linetable_len, c.first_line, 3);
		python_code_free(&c);
	}
	return 0;
}
