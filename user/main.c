// SPDX-License-Identifier: GPL-2.0
/* collector: placeholder entry point, replaced by the loader. */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "collector " COLLECTOR_VERSION "\n");
	return 0;
}
