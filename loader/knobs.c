// SPDX-License-Identifier: GPL-2.0
/* The loader's knobs, from the environment (loader/knobs.h). */
#include "loader/knobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/collector.h"

/* Set at all (even empty): the knob's way to say yes. */
static bool present(const char *name)
{
	return getenv(name) != NULL;
}

/* A whole number from lo to hi, else 0 (said when set but malformed). */
static uint32_t number(const char *name, unsigned long lo, unsigned long hi)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return 0;
	n = strtoul(v, &end, 10);
	if (*end || n < lo || n > hi) {
		fprintf(stderr, "collector: %s=%s ignored: a number from %lu to %lu\n", name, v,
			lo, hi);
		return 0;
	}
	return (uint32_t)n;
}

void bpf_knobs_from_env(struct bpf_knobs *k)
{
	const char *share = getenv("COLLECTOR_SAMPLER_SHARE");

	memset(k, 0, sizeof(*k));
	k->sampler_share = share && *share ? strtod(share, NULL) : 0;
	k->verifier_stats = present("COLLECTOR_VERIFIER_STATS");
	k->unwind_no_learn = present("COLLECTOR_UNWIND_NO_LEARN");
	k->kernel_fp_walk = present("COLLECTOR_KERNEL_FP_WALK");
	k->agg_keys = number("COLLECTOR_AGG_KEYS", 1, 1ul << 30);
	k->agg_stacks = number("COLLECTOR_AGG_STACKS", 1, 1ul << 30);
	k->count_by_ip = present("COLLECTOR_COUNT_BY_IP");
	k->agg_no_batch = present("COLLECTOR_AGG_NO_BATCH");
	k->unwind_rows = number("COLLECTOR_CFI_TABLE_ROWS", 16, 1ul << 26);
	k->trace_slots = number("COLLECTOR_TRACE_SLOTS", 1, COLLECTOR_TRACE_SLOTS);
	if (k->trace_slots & (k->trace_slots - 1))
		k->trace_slots = 0; /* a power of two, else the default */
	k->single_uprobes = present("COLLECTOR_SINGLE_UPROBES");
}
