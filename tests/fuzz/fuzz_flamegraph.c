// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness: the flame graph page reader (json-c and the tree checks) and its printer. */
#include <stdint.h>

#include "formats/flamegraph/flamegraph_reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flamegraph_page p;
	struct format_error err;

	if (flamegraph_parse((const char *)data, size, &p, &err) == 0) {
		flamegraph_print(&p, fuzz_devnull());
		flamegraph_page_free(&p);
	}
	return 0;
}
