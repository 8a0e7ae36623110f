// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the XRay FDR reader, from memory (the whole trace as
 * an array) and through `collector dump` (recognize, and dump: a callback
 * parse that prints every record, event payloads included; dump runs even
 * when recognize says no, to reach its header checks).
 */
#include <stdint.h>

#include "formats/format.h"
#include "formats/xray/xray.h"
#include "fuzz_common.h"
#include "formats/xray/xray_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct format_error err;
	struct xray_trace t;
	const char *path;

	if (xray_read_memory(data, size, &t, &err) == 0) {
		for (size_t i = 0; i < t.n_records; i++)
			fputs(xray_record_name(t.records[i].type), fuzz_devnull());
		xray_trace_free(&t);
	}
	path = fuzz_input_path(data, size);
	xray_recognize(path, data, size);
	xray_dump(path, fuzz_devnull(), false);
	return 0;
}
