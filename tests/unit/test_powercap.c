// SPDX-License-Identifier: GPL-2.0
/* RAPL energy counters read from a powercap tree made in the test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "lib/powercap.h"

static char root[64];

static void put(const char *zone, const char *file, unsigned long long v)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, zone);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", root, zone, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%llu\n", v);
	fclose(f);
}

static void test_packages_summed_and_wraps_undone(void **state)
{
	struct powercap pc;
	uint64_t total;
	char cmd[128];

	(void)state;
	strcpy(root, "/tmp/test_powercap.XXXXXX");
	assert_non_null(mkdtemp(root));
	put("intel-rapl:0", "max_energy_range_uj", 1000);
	put("intel-rapl:0", "energy_uj", 900);
	put("intel-rapl:1", "max_energy_range_uj", 1000000);
	put("intel-rapl:1", "energy_uj", 10);
	/* a subzone (a package's cores) is part of its package: not added */
	put("intel-rapl:0:0", "max_energy_range_uj", 1000);
	put("intel-rapl:0:0", "energy_uj", 5);

	assert_int_equal(powercap_open(&pc, root), 2);
	assert_int_equal(powercap_read(&pc, &total), 0);
	assert_int_equal(total, 0);
	/* package 0 wraps at 1000: 900 -> 50 is 150 µJ; package 1 +30 */
	put("intel-rapl:0", "energy_uj", 50);
	put("intel-rapl:1", "energy_uj", 40);
	put("intel-rapl:0:0", "energy_uj", 999);
	assert_int_equal(powercap_read(&pc, &total), 0);
	assert_int_equal(total, 180);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void test_no_rapl(void **state)
{
	struct powercap pc;

	(void)state;
	assert_int_equal(powercap_open(&pc, "/nonexistent-powercap"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_packages_summed_and_wraps_undone),
		cmocka_unit_test(test_no_rapl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
