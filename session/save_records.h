/* SPDX-License-Identifier: GPL-2.0 */
/*
 * COLLECTOR_SAVE_RECORDS=FILE, a testing aid: the run also writes to FILE
 * everything the decode stage receives (the run's facts, every ring-buffer
 * record as the loader hands it to the tracker, the kernel's counters and
 * aggregates), so that tests/compare/replay.c can rebuild the model from it
 * with this revision or another one, and two revisions' outputs can be
 * compared byte for byte on one real run (tests/compare/README.md).
 *
 * The file is a log of items in the order the run met them: each is a
 * struct save_item_head and `len` bytes, in the byte order of the machine
 * that wrote it (the file is replayed there, while the targets still
 * exist).  The first item is SAVE_MAGIC.  Text items hold "key=value"
 * strings, each ended by a NUL.
 *
 * This header needs nothing but <stdint.h>: the replay driver includes it
 * when it is built against an older tree, too.
 */
#ifndef COLLECTOR_SAVE_RECORDS_H
#define COLLECTOR_SAVE_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#define SAVE_RECORDS_ENV "COLLECTOR_SAVE_RECORDS"
#define SAVE_RECORDS_MAGIC "collector-records-1"

enum save_tag {
	SAVE_MAGIC = 1,         /* SAVE_RECORDS_MAGIC, without its NUL */
	SAVE_FACTS,             /* text, when the window opens: pid (the collector's),
				 * system_wide, freq_hz, period_ns, ktime_to_epoch_ns,
				 * event (one a line: name, unit, clock, aggregated,
				 * freq_hz, period, description, tab-separated),
				 * start_ktime_ns, hostname, host_id, ncpus, cpu_mhz,
				 * trace_nargs, call_graph, command (if any), trace
				 * (one per --trace spec) */
	SAVE_TARGET,            /* struct save_target: a -p process was added */
	SAVE_EXPECT_EXEC,       /* int32_t: the command's pid, held before its exec */
	SAVE_EXEC_ALLOWED,      /* uint64_t: ktime the command was let go to exec */
	SAVE_TRACE_ATTACH,      /* struct save_trace_attach */
	SAVE_RECORD,            /* one ring-buffer record, byte for byte */
	SAVE_WINDOW_END,        /* uint64_t: end_ktime_ns; tracker_end_window() ran
				 * here, between two records */
	SAVE_COUNTERS,          /* uint64_t[COLLECTOR_CNT_MAX], summed over CPUs */
	SAVE_KERNEL_SAMPLES,    /* uint64_t: samples counted by instruction (by_ip) */
	SAVE_FUNC_STATS,        /* struct collector_func_key, struct collector_func_stats */
	SAVE_TRACE_COUNTERS,    /* uint64_t[COLLECTOR_TCNT_MAX], summed over CPUs */
	SAVE_ENERGY,            /* uint64_t time_ns, energy_uj: one RAPL reading */
	SAVE_END,               /* text, at the end: collector_cpu_ns, bpf_run_ns,
				 * cpus (CPUs sampled), event_lost (one per
				 * event, in event order: its samples lost) */
};

struct save_item_head {
	uint32_t tag;           /* enum save_tag */
	uint32_t len;           /* bytes that follow */
};

struct save_target {
	int32_t pid;
	uint32_t pad;
	uint64_t ktime_ns;      /* the `now` tracker_add_process() was given */
};

struct save_trace_attach {
	uint64_t skipped;       /* functions the kernel could not probe */
	double attach_seconds;
	double probe_overhead_ns;   /* negative: not measured */
};

/*
 * The writer, used by session/session.c only when the variable is set: each call
 * below is one branch in the run when it is not.  Write errors do not stop
 * the run; they are reported once, at the close.
 */
struct model;
struct save_records;

/* Opens the file COLLECTOR_SAVE_RECORDS names.  Returns 0 with *out NULL
 * when the variable is unset or empty, 0 with *out set, or a negative
 * errno after a message. */
int save_records_open(struct save_records **out);
/* One item. */
void save_records_put(struct save_records *s, enum save_tag tag, const void *data, size_t len);
/* SAVE_FACTS: the run's facts in the model as the window opens, the
 * collector's pid and the --trace specs. */
void save_records_facts(struct save_records *s, const struct model *m, char *const *trace_specs,
			int n_trace_specs);
/* What the end of the run read from the kernel (SAVE_COUNTERS: the
 * COLLECTOR_CNT_MAX counters,
 * SAVE_KERNEL_SAMPLES, SAVE_TRACE_COUNTERS unless tcounters is NULL),
 * SAVE_ENERGY for each reading, then SAVE_END. */
void save_records_end(struct save_records *s, const struct model *m, int cpus,
		      const uint64_t *counters, uint64_t by_ip,
		      const uint64_t *tcounters);
/* COLLECTOR_SAVE_RECORDS with --trace: each traced function's aggregate
 * saved (SAVE_FUNC_STATS) as it goes to the model (decode_func_stats()):
 * uprobes_read_stats()'s callback, its ctx a struct save_func_stats. */
struct collector_func_key;
struct collector_func_stats;
struct model;
struct save_func_stats {
	struct save_records *save;
	struct model *m;
};
void save_records_func_stats(void *ctx, const struct collector_func_key *key,
			     const struct collector_func_stats *fs);
/* Flushes and closes; NULL is fine. */
void save_records_close(struct save_records *s);

#endif /* COLLECTOR_SAVE_RECORDS_H */
