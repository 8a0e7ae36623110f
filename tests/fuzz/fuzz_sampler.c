// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the sampler profile reader in both layouts (AUTO tries
 * the reference layout, then the spec's; SPEC alone reaches the spec
 * layout's code also for files the reference layout accepts), the cputime
 * check and the printer.
 */
#include <stdint.h>

#include "fuzz_common.h"
#include "formats/sampler/sampler_reader.h"

static void one(const uint8_t *data, size_t size, enum sampler_layout layout)
{
	struct sampler_profile p;
	struct format_error err;

	if (sampler_parse(data, size, layout, &p, &err) == 0) {
		sampler_check_cputime(&p, &err);
		sampler_print(&p, fuzz_devnull());
		sampler_profile_free(&p);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size, SAMPLER_LAYOUT_AUTO);
	one(data, size, SAMPLER_LAYOUT_SPEC);
	return 0;
}
