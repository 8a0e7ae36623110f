// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the /proc/PID/maps parser, then lookups and the
 * open-path builder on what it parsed.
 */
#include <stdint.h>
#include <unistd.h>

#include "lib/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procmaps maps = { 0 };
	size_t bad_line = 0;
	char small[24], big[4096];

	if (procmaps_parse((const char *)data, size, &maps, &bad_line) != 0)
		return 0;
	for (size_t i = 0; i < maps.n; i++) {
		const struct procmap_entry *e = &maps.entries[i];

		procmaps_find(&maps, e->start);
		procmaps_find(&maps, e->end - 1);
		procmaps_find(&maps, e->end);
		if (procmap_is_file(e)) {
			procmaps_open_path(getpid(), e, small, sizeof(small), NULL);
			procmaps_open_path(getpid(), e, big, sizeof(big), NULL);
		}
		(void)procmap_dev(e);
	}
	procmaps_find(&maps, 0);
	procmaps_find(&maps, UINT64_MAX);
	procmaps_free(&maps);
	return 0;
}
