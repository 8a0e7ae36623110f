// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness: the speedscope reader (json-c, the schema's checks and the ones beyond it) and its printer. */
#include <stdint.h>

#include "formats/speedscope/speedscope_reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct speedscope_file s;
	struct format_error err;

	if (speedscope_parse((const char *)data, size, &s, &err) == 0) {
		speedscope_print(&s, fuzz_devnull());
		speedscope_file_free(&s);
	}
	return 0;
}
