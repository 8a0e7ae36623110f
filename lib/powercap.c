// SPDX-License-Identifier: GPL-2.0
/* RAPL energy counters, for the sampler format's power readings. */
#include "lib/powercap.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	unsigned long long x;
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*v = x;
	return 0;
}

/* intel-rapl:0 is a package; intel-rapl:0:0 is one of its subzones */
static int is_package_zone(const char *name)
{
	const char *colon = strchr(name, ':');

	return !strncmp(name, "intel-rapl:", 11) && colon && !strchr(colon + 1, ':');
}

int powercap_open(struct powercap *pc, const char *root)
{
	struct dirent **names;
	char path[320];
	int n;

	memset(pc, 0, sizeof(*pc));
	if (!root)
		root = getenv("COLLECTOR_POWERCAP_ROOT");
	if (!root)
		root = "/sys/class/powercap";
	n = scandir(root, &names, NULL, alphasort);
	if (n < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		uint64_t range, now;

		if (is_package_zone(names[i]->d_name) && pc->n < POWERCAP_MAX_ZONES) {
			snprintf(path, sizeof(path), "%s/%s/max_energy_range_uj", root,
				 names[i]->d_name);
			if (read_u64(path, &range) == 0) {
				snprintf(pc->path[pc->n], sizeof(pc->path[pc->n]), "%s/%s/energy_uj",
					 root, names[i]->d_name);
				/* energy_uj is readable by root only on recent kernels */
				if (read_u64(pc->path[pc->n], &now) == 0) {
					pc->max_range[pc->n] = range;
					pc->n++;
				}
			}
		}
		free(names[i]);
	}
	free(names);
	return pc->n;
}

int powercap_read(struct powercap *pc, uint64_t *total_uj)
{
	for (int i = 0; i < pc->n; i++) {
		uint64_t now;
		int err = read_u64(pc->path[i], &now);

		if (err)
			return err;
		if (pc->reads) {
			/* the counter wraps at max_energy_range_uj */
			if (now >= pc->last[i])
				pc->total += now - pc->last[i];
			else
				pc->total += pc->max_range[i] - pc->last[i] + now;
		}
		pc->last[i] = now;
	}
	pc->reads++;
	*total_uj = pc->total;
	return 0;
}
