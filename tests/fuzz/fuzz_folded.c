// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness: the folded stacks reader, its first-line check and its printer. */
#include <stdint.h>

#include "formats/folded/folded_reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded_profile p;
	struct format_error err;

	folded_first_line_ok((const char *)data, size);
	if (folded_parse((const char *)data, size, &p, &err) == 0) {
		folded_print(&p, fuzz_devnull());
		folded_profile_free(&p);
	}
	return 0;
}
