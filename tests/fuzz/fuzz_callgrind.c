// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the Callgrind reader, on the input's exact bytes (so
 * that ASan sees any read past the end) and through `collector dump`'s entry
 * points (recognize on the first bytes, then dump, which reads the file,
 * parses it and prints every record).
 */
#include <stdint.h>

#include "formats/callgrind/callgrind_reader.h"
#include "formats/format.h"
#include "formats/callgrind/callgrind.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct callgrind_profile p;
	struct format_error err;
	const char *path;

	if (callgrind_parse((const char *)data, size, &p, &err) == 0)
		callgrind_profile_free(&p);
	path = fuzz_input_path(data, size);
	callgrind_recognize(path, data, size);
	callgrind_dump(path, fuzz_devnull(), false);
	return 0;
}
