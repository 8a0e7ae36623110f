/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One code object read from a live process: its qualified name, file,
 * first line and location table, and the line of an instruction by that
 * table.  Private to runtimes/python/.
 */
#ifndef COLLECTOR_PYTHON_CODE_H
#define COLLECTOR_PYTHON_CODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "runtimes/python/python_layouts.h"

/* Strings longer than this are cut (a name or a path). */
#define PYTHON_MAX_STRING 1024
/* Location tables longer than this are cut: lines past them are 0. */
#define PYTHON_MAX_LINETABLE 65536

struct python_code {
	char *qualname, *filename;
	uint32_t first_line;
	uint8_t *linetable;
	size_t linetable_len;
	/* which code object it was: the addresses of its name, file and
	 * table objects and its first line, as read (python_code_same()) */
	uint64_t identity[4];
};

/* Reads code object `addr` of process pid.  0 or a negative errno
 * (-ESRCH, -EFAULT, -EINVAL for what is no code object, -ENOMEM). */
int python_code_read(pid_t pid, const struct python_layout *l, uint64_t addr,
		     struct python_code *out);
void python_code_free(struct python_code *c);
/* Whether code object `addr` of process pid is still the one c was read
 * from: the same name, file and table objects and first line.  A code
 * object freed and another made at its address (a string exec'd at start,
 * freed, and a function's code made where it was) names another function
 * under the same address.  1, 0, or a negative errno when it does not
 * read (its process gone: c is all there is). */
int python_code_same(pid_t pid, const struct python_layout *l, uint64_t addr,
		     const struct python_code *c);
/* The line of the instruction `units` code units into the code, by its
 * location table (3.11+'s format); 0 when it has none. */
uint32_t python_code_line(const uint8_t *table, size_t len, uint32_t first_line, uint32_t units);

#endif /* COLLECTOR_PYTHON_CODE_H */
