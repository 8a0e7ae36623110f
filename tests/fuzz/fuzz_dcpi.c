// SPDX-License-Identifier: GPL-2.0
/* libFuzzer harness: the DCPI profile reader and its printer. */
#include <stdint.h>

#include "formats/dcpi/dcpi_reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dcpi_profile p;
	struct format_error err;

	if (dcpi_parse(data, size, &p, &err) == 0) {
		dcpi_print(&p, fuzz_devnull());
		dcpi_profile_free(&p);
	}
	return 0;
}
