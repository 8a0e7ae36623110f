// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the OTLP profiles reader on the input's exact bytes
 * (the protobuf itself, as written and pushed, or gzip'd, as a spooled
 * interval is), then its printer on what it accepts.
 */
#include <stdint.h>

#include "formats/otlp/otlp_reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct otlp_request r;
	struct format_error err;

	if (otlp_parse(data, size, &r, &err) == 0) {
		otlp_print(&r, fuzz_devnull());
		otlp_request_free(&r);
	}
	return 0;
}
