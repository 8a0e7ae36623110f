/* SPDX-License-Identifier: GPL-2.0 */
/* What the command line asks for. */
#ifndef COLLECTOR_OPTIONS_H
#define COLLECTOR_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/kvlist.h"
#include "lib/perf_events.h"

#define COLLECTOR_MAX_PIDS 256
#define COLLECTOR_MAX_TRACE_SPECS 64

/* Exit codes, documented in README.md. */
enum collector_exit {
	EXIT_OK = 0,
	EXIT_FAILURE_RUN = 1,   /* a failure while collecting or writing */
	EXIT_USAGE = 2,         /* bad command line */
	EXIT_NO_PRIVILEGE = 3,  /* neither root nor CAP_BPF+CAP_PERFMON */
	EXIT_NO_TARGET = 4,     /* a PID or command that cannot be profiled */
	EXIT_OUTPUT = 5,        /* the output directory cannot be written */
	EXIT_BPF = 6,           /* BPF programs failed to load or attach */
	EXIT_BAD_FILE = 7,      /* collector dump: malformed or unknown file */
};

enum collector_call_graph {
	CALL_GRAPH_CFI = 0,   /* unwind tables in the BPF program (the default) */
	CALL_GRAPH_AUTO,      /* dwarf for targets built without frame pointers, else fp */
	CALL_GRAPH_FP,
	CALL_GRAPH_DWARF,
};

struct collector_options {
	pid_t pids[COLLECTOR_MAX_PIDS];
	int n_pids;
	bool all_cpus;
	char **command;         /* argv of the command to launch, or NULL */
	unsigned int freq;      /* -F */
	struct perf_event_request events[PERF_EVENTS_MAX]; /* -e; none: cpu-clock at -F */
	int n_events;
	bool list_events;       /* -e list */
	bool off_cpu;           /* --off-cpu */
	uint64_t off_cpu_min_ns; /* --off-cpu-min */
	double duration;        /* -d seconds, 0: until stopped */
	double interval;        /* --interval seconds, 0: one set of files at the end */
	const char *output;     /* -o, NULL: collector-YYYYMMDD-HHMMSS */
	bool otlp;              /* --otlp: push every interval to an OTLP endpoint */
	bool stacks;            /* `collector stacks`: each thread's stack now (cli/stacks.h) */
	const char *otlp_url;   /* --otlp=URL, NULL: OTEL_EXPORTER_OTLP_* or the default */
	const char *otlp_spool; /* --otlp-spool DIR, NULL: transport/spool.h's default */
	uint64_t otlp_spool_bytes; /* --otlp-spool-size, 0: the default */
	struct kv *resource_attrs; /* OTEL_RESOURCE_ATTRIBUTES, parsed */
	size_t n_resource_attrs;
	bool push_only;         /* --otlp without -f: no profile file is written (formats
				 * is then otlp's bit, what the run is planned for) */
	unsigned int formats;   /* -f, a mask of formats/registry.h; 0: every one that applies */
	bool quiet;
	bool verbose;
	bool run_as_root;
	bool no_demangle;       /* --no-demangle: symbol names as they are */
	bool sampler_layout_spec;
	bool hpctoolkit_draft;
	unsigned int ring_bytes; /* ring buffer size; 0: sized to the run */
	bool no_switches;       /* do not record context switches */
	bool no_aggregate;      /* --no-aggregate: a ring record per sample, always */
	bool no_jvm_attach;     /* --no-jvm-attach: JVMs are not asked for perf maps */
	bool no_jvm_walk;       /* --no-jvm-walk: JVMs' Java frames are not walked */
	char *trace_specs[COLLECTOR_MAX_TRACE_SPECS]; /* --trace BIN:PATTERN */
	int n_trace_specs;
	unsigned int trace_args; /* --args */
	enum collector_call_graph call_graph;
	unsigned int stack_size; /* --stack-size bytes (dwarf) */
};

#endif /* COLLECTOR_OPTIONS_H */
