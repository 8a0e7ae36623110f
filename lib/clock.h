/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CLOCK_MONOTONIC in nanoseconds: the kernel's ktime, the clock of
 * bpf_ktime_get_ns() and of the records' times, so that a time taken here
 * compares with theirs.
 */
#ifndef COLLECTOR_LIB_CLOCK_H
#define COLLECTOR_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#endif /* COLLECTOR_LIB_CLOCK_H */
