/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tests/unwind/chain writes on stdout for the unwinder's unit test:
 * records, each a struct capture_record and `len` bytes:
 *   CAPTURE_STACK: the registers and a copy of the stack from sp,
 *   CAPTURE_MAPS:  the text of /proc/self/maps (last record).
 */
#ifndef COLLECTOR_TEST_CAPTURE_H
#define COLLECTOR_TEST_CAPTURE_H

#include <stdint.h>

#define CAPTURE_STACK 0x4b43415453ULL /* "STACK" */
#define CAPTURE_MAPS 0x5350414dULL    /* "MAPS" */
#define CAPTURE_STACK_MAX 8192        /* the sampler's default copy */
#define CAPTURE_DEPTH 16              /* f1 .. f16 below main */

struct capture_record {
	uint64_t kind;
	/* CAPTURE_STACK: rip, rsp, rbp, rbx, r12, r13, r14, r15 */
	uint64_t regs[8];
	uint64_t len;        /* bytes that follow */
};

#endif /* COLLECTOR_TEST_CAPTURE_H */
