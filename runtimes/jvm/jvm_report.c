// SPDX-License-Identifier: GPL-2.0
/*
 * The summary's Java part (jvm_report.h): how the walks of the JVMs fared,
 * a JVM the walk does not know, and the Java methods by self samples (the
 * innermost Java method of a sample, inlined or not) and total samples.
 */
#include "runtimes/jvm/jvm_report.h"

#include <stdbool.h>
#include <string.h>

#include "runtimes/runtime_report.h"

static void print_releases(FILE *out, const struct jvm_procs_stats *st)
{
	if (!st || !st->n_releases)
		return;
	fprintf(out, " (JDK ");
	for (uint32_t i = 0; i < st->n_releases; i++)
		fprintf(out, "%s%s", i ? ", " : "", st->releases[i]);
	fprintf(out, ")");
}

void jvm_report_walks(FILE *out, const struct model *m, const struct jvm_procs_stats *st)
{
	uint64_t walked = model_named_stat_value(m, JVM_STAT_WALKED);
	uint64_t unsupported = model_named_stat_value(m, JVM_STAT_UNSUPPORTED);
	uint64_t unwalked = model_named_stat_value(m, JVM_STAT_UNWALKED);
	uint64_t no_blob = model_named_stat_value(m, JVM_STAT_NO_BLOB);
	uint64_t bad = model_named_stat_value(m, JVM_STAT_BAD_FRAME);
	uint64_t limit = model_named_stat_value(m, JVM_STAT_LIMIT);
	struct runtime_counts c;
	bool other_graph;

	if (walked) {
		if (runtime_counts_of(m, jvm_runtime.image, &c))
			return;
		fprintf(out, "  java            %llu JVM%s walked", (unsigned long long)walked,
			walked == 1 ? "" : "s");
		print_releases(out, st);
		fprintf(out, "; %llu of %llu samples (%.1f%%) with Java frames; %llu walks, %llu "
			"stopped early (%llu no code blob at the pc, %llu a bad frame or a read "
			"failed, %llu at the frame limit); %llu frames unnamed (code freed or "
			"reused before it was named); %llu frames' code blobs from the cache "
			"(%llu found freed)\n",
			(unsigned long long)c.with_frames, (unsigned long long)c.samples,
			c.samples ? 100.0 * c.with_frames / c.samples : 0.0,
			(unsigned long long)model_named_stat_value(m, JVM_STAT_WALKS),
			(unsigned long long)(no_blob + bad + limit), (unsigned long long)no_blob,
			(unsigned long long)bad, (unsigned long long)limit,
			(unsigned long long)model_named_stat_value(m, JVM_STAT_FRAMES_UNNAMED),
			(unsigned long long)model_named_stat_value(m, JVM_STAT_FACTS_HIT),
			(unsigned long long)model_named_stat_value(m, JVM_STAT_FACTS_STALE));
		runtime_counts_free(&c);
	}
	if (unsupported)
		fprintf(out, "  java            %llu JVM%s the walk does not know%s%s: %s JIT code "
			"is named by perf map, %s interpreted frames stay native\n",
			(unsigned long long)unsupported, unsupported == 1 ? "" : "s",
			st && st->last_reason[0] ? (unsupported == 1 ? ": " : ", the last: ") : "",
			st ? st->last_reason : "", unsupported == 1 ? "its" : "their",
			unsupported == 1 ? "its" : "their");
	/* (its walk starts from the cfi walk: with another call graph, not
	 * walked either) */
	other_graph = *m->run.call_graph && strcmp(m->run.call_graph, "cfi");
	if (unwalked)
		fprintf(out, "  java            %llu JVM%s not walked (%s%s): %s stacks end "
			"at their first Java frame, %s JIT code named by perf map when asked\n",
			(unsigned long long)unwalked, unwalked == 1 ? "" : "s",
			other_graph ? "--call-graph " : "--no-jvm-walk",
			other_graph ? m->run.call_graph : "",
			unwalked == 1 ? "its" : "their", unwalked == 1 ? "its" : "their");
}

void jvm_report_tables(FILE *out, const struct model *m)
{
	struct runtime_counts c;

	if (!model_named_stat_value(m, JVM_STAT_WALKED) ||
	    runtime_counts_of(m, jvm_runtime.image, &c))
		return;
	runtime_counts_print(out, m, &c, jvm_runtime.image,
			     "Top Java methods (self: the innermost Java method, inlined or not):",
			     "method", 50);
	runtime_counts_free(&c);
}
