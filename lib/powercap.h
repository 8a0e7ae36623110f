/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Energy from the RAPL counters under /sys/class/powercap: the sum of the
 * top-level package zones (intel-rapl:N, or amd-rapl... named the same by the
 * intel_rapl driver), in microjoules, with counter wraps undone.
 */
#ifndef COLLECTOR_POWERCAP_H
#define COLLECTOR_POWERCAP_H

#include <stdint.h>

#define POWERCAP_MAX_ZONES 16

struct powercap {
	int n;
	char path[POWERCAP_MAX_ZONES][320];
	uint64_t max_range[POWERCAP_MAX_ZONES]; /* max_energy_range_uj */
	uint64_t last[POWERCAP_MAX_ZONES];
	uint64_t total;                          /* µJ since the first read */
	int reads;
};

/* Finds the package zones under root (NULL: $COLLECTOR_POWERCAP_ROOT, else
 * /sys/class/powercap).  Returns the number of zones (0: no RAPL here). */
int powercap_open(struct powercap *pc, const char *root);
/* Reads every zone; *total_uj is the energy used since the first read.
 * Returns 0 or a negative errno. */
int powercap_read(struct powercap *pc, uint64_t *total_uj);

#endif /* COLLECTOR_POWERCAP_H */
