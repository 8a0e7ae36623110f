// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the pprof reader on the input's exact bytes (gzip, or
 * the protobuf itself, which the seeds hold too, so that mutations reach
 * protobuf-c and the checks without going through inflate), then its
 * printer on what it accepts.
 */
#include <stdint.h>

#include "formats/pprof/pprof_reader.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_profile p;
	struct format_error err;

	if (pprof_parse(data, size, &p, &err) == 0) {
		pprof_print(&p, fuzz_devnull());
		pprof_profile_free(&p);
	}
	return 0;
}
