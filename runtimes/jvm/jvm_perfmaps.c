// SPDX-License-Identifier: GPL-2.0
/* A run's JVMs asked for perf maps, and what they answered (jvm_attach.h). */
#include "runtimes/jvm/jvm_attach.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/proc.h"

static struct jvm_seen *find_or_add(struct jvm_perfmaps *jp, pid_t pid)
{
	for (size_t i = 0; i < jp->len; i++)
		if (jp->items[i].pid == pid)
			return &jp->items[i];
	if (jp->len == jp->cap) {
		size_t cap = jp->cap ? jp->cap * 2 : 8;
		struct jvm_seen *p = realloc(jp->items, cap * sizeof(*p));

		if (!p)
			return NULL;
		jp->items = p;
		jp->cap = cap;
	}
	jp->items[jp->len] = (struct jvm_seen){ .pid = pid };
	return &jp->items[jp->len++];
}

/*
 * The JVM keeps a perf map that something else writes as it goes (a
 * perf-map agent), which a request would overwrite under its writer.  A
 * map HotSpot wrote itself (-XX:+DumpPerfMapAtExit at exit,
 * Compiler.perfmap when asked: an earlier run's request, now stale) is a
 * whole dump, rewritten at each request, and is asked again.  HotSpot's
 * lines are "0x%016lx 0x%016lx NAME" (perf-map-agent's "%lx %x NAME").
 * A map older than the process is an earlier process's of the same pid
 * (a node's, say): the JVM is asked, and its map replaces it.
 */
static bool has_agent_perfmap(pid_t pid)
{
	char path[96], line[40];
	struct stat st;
	FILE *f;
	bool hotspot;

	snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", (int)pid,
		 (int)proc_namespace_pid(pid));
	f = fopen(path, "re");
	if (!f)
		return false;
	/* left by an earlier process of this pid: no agent of this JVM's */
	if (fstat(fileno(f), &st) == 0 && proc_file_predates(pid, &st)) {
		fclose(f);
		return false;
	}
	hotspot = fgets(line, sizeof(line), f) && strlen(line) >= 38 && line[0] == '0' &&
		  line[1] == 'x' && line[18] == ' ' && line[19] == '0' && line[20] == 'x' &&
		  line[37] == ' ';
	fclose(f);
	return !hotspot;
}

int jvm_perfmaps_refresh(struct jvm_perfmaps *jp, const pid_t *pids, size_t n)
{
	pid_t *ask = calloc(n ? n : 1, sizeof(*ask));
	struct jvm_attach_result *res = calloc(n ? n : 1, sizeof(*res));
	size_t m = 0;
	int err = 0;

	if (!ask || !res) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		struct jvm_seen *s = find_or_add(jp, pids[i]);

		if (!s) {
			err = -ENOMEM;
			goto cleanup;
		}
		/* not a JVM, or asked and not answered: left alone from then on */
		if (s->last.status == JVM_NOT_A_JVM ||
		    (s->asked && s->last.status != JVM_PERFMAP_WRITTEN))
			continue;
		if (!s->asked && !jvm_is_hotspot(pids[i])) {
			s->last.status = JVM_NOT_A_JVM;
			continue;
		}
		if (!s->asked && has_agent_perfmap(pids[i]))
			continue;
		ask[m++] = pids[i];
	}
	jvm_request_perfmaps(ask, m, JVM_ATTACH_TIMEOUT_MS, res);
	for (size_t i = 0; i < m; i++) {
		struct jvm_seen *s = find_or_add(jp, ask[i]);

		s->asked = true;
		s->last = res[i];
	}
cleanup:
	free(ask);
	free(res);
	return err;
}

void jvm_perfmaps_print(FILE *out, const struct jvm_perfmaps *jp)
{
	size_t others = 0;
	bool first = true;

	for (size_t i = 0; jp && i < jp->len; i++) {
		const struct jvm_seen *s = &jp->items[i];
		const char *label = first ? "  JVMs          " : "                ";

		if (s->last.status == JVM_NOT_A_JVM) {
			others++;
			continue;
		}
		if (!s->asked)
			continue;
		first = false;
		switch (s->last.status) {
		case JVM_PERFMAP_WRITTEN:
			fprintf(out, "%s PID %d: its perf map written on request (Compiler.perfmap "
				"through the attach listener, %.2f s)\n", label, (int)s->pid,
				s->last.waited_ms / 1e3);
			break;
		case JVM_NO_ANSWER:
			fprintf(out, "%s PID %d: did not answer the attach within %d s (waited "
				"%.2f s): left alone, its JIT code unnamed\n", label, (int)s->pid,
				JVM_ATTACH_TIMEOUT_MS / 1000, s->last.waited_ms / 1e3);
			break;
		case JVM_GONE:
			fprintf(out, "%s PID %d: exited before it was asked for its perf map\n", label,
				(int)s->pid);
			break;
		default:
			fprintf(out, "%s PID %d: not asked for its perf map: %s\n", label, (int)s->pid,
				s->last.detail[0] ? s->last.detail : "unknown");
			break;
		}
	}
	if (!others)
		return;
	fprintf(out, "  JIT code        unnamed in %zu process%s that wrote no perf map and %s "
		"not a JVM (left alone):", others, others == 1 ? "" : "es", others == 1 ? "is" : "are");
	for (size_t i = 0, shown = 0; i < jp->len && shown < 8; i++)
		if (jp->items[i].last.status == JVM_NOT_A_JVM)
			fprintf(out, " %d", (int)jp->items[i].pid), shown++;
	fprintf(out, "%s\n", others > 8 ? " ..." : "");
}

void jvm_perfmaps_free(struct jvm_perfmaps *jp)
{
	free(jp->items);
	jp->items = NULL;
	jp->len = jp->cap = 0;
}
