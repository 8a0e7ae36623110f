// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: one HPCToolkit database file parser, chosen at build
 * time by HKR_TAG ("meta", "prof", "ctxt" or "trce"): the input's format
 * tag (bytes 10-13) is overwritten with it, so that every input reaches that
 * parser.  The parsed database is then searched (hkr_find_context,
 * hkr_profile_value) and printed through `collector dump`.
 */
#include <stdint.h>
#include <string.h>

#include "formats/format.h"
#include "formats/hpctoolkit/hpctoolkit.h"
#include "fuzz_common.h"
#include "formats/hpctoolkit/hpctoolkit_reader.h"

#ifndef HKR_TAG
#error "build with -DHKR_TAG='\"meta\"' (or prof, ctxt, trce)"
#endif

static void lookups(const struct hkr_db *db)
{
	for (size_t i = 0; i < db->n_contexts; i++)
		hkr_find_context(db, db->contexts[i].id);
	hkr_find_context(db, UINT32_MAX);
	for (size_t i = 0; i < db->n_profiles; i++) {
		const struct hkr_profile *p = &db->profiles[i];

		for (size_t v = 0; v < p->n_values; v++)
			hkr_profile_value(p, p->values[v].ctx, p->values[v].metric);
		hkr_profile_value(p, UINT32_MAX, 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hkr_db db = { 0 };
	uint8_t *copy;

	/* an exact-size copy, so that ASan sees reads past the end */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= 14)
		memcpy(copy + 10, HKR_TAG, 4);
	if (hkr_read_mem("fuzz", copy, size, &db, NULL) == 0)
		lookups(&db);
	hkr_free(&db);

	{
		const char *path = fuzz_input_path(copy, size);

		hpctoolkit_recognize(path, copy, size);
		hpctoolkit_dump(path, fuzz_devnull(), false);
	}
	free(copy);
	return 0;
}
