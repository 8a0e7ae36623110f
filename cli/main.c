// SPDX-License-Identifier: GPL-2.0
/*
 * collector: a Linux profiler that samples and traces programs with
 * perf_event and eBPF, and writes what it sees in the formats of
 * established performance tools.
 *
 *   collector [OPTION...] [-- COMMAND [ARG...]]   profile
 *   collector stacks -p PID [OPTION...]           every thread's stack now
 *   collector dump [--check] FILE|DIR...          read what it wrote
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/dump.h"
#include "cli/front.h"
#include "session/event_options.h"
#include "formats/registry.h"
#include "session/options.h"
#include "session/policy.h"
#include "session/session.h"
#include "cli/stacks.h"
#include "lib/proc.h"

/* The administrator's policy (session/policy.h), where the build put it:
 * `make install SYSCONFDIR=DIR` compiles this file with another DIR. */
#ifndef COLLECTOR_SYSCONFDIR
#define COLLECTOR_SYSCONFDIR "/etc"
#endif
const char collector_conf_path[] = COLLECTOR_SYSCONFDIR "/collector.conf";

const char *argp_program_version = "collector " COLLECTOR_VERSION;
const char *argp_program_bug_address = "the project's issue tracker";

/* The formats are added to the first part by help_filter(). */
static const char doc[] =
	"Profile programs with perf_event and eBPF and write the profile in the "
	"formats of established tools\v"
	"Examples:\n"
	"  sudo collector -- ./app arg        profile a command (run as you, not root)\n"
	"  sudo collector -p 1234 -d 10       sample a running process for 10 s\n"
	"  sudo collector -a -F 99            sample the whole system until Ctrl-C\n"
	"  sudo collector stacks -p 1234      print every thread's stack now\n"
	"  collector dump collector-*/callgrind.out.*   print what was written\n"
	"\n"
	"Exit codes: 0 ok, 1 collection or writing failed, 2 bad command line, "
	"3 not enough privileges, 4 target cannot be profiled, 5 output directory "
	"unusable, 6 BPF programs failed to load or attach, 7 (dump) malformed or "
	"unknown file.";

static const char args_doc[] = "[-- COMMAND [ARG...]]";

enum {
	OPT_RUN_AS_ROOT = 1000,
	OPT_SAMPLER_LAYOUT,
	OPT_HPCTOOLKIT_LAYOUT,
	OPT_RING_SIZE,
	OPT_NO_SWITCHES,
	OPT_ARGS,
	OPT_CALL_GRAPH,
	OPT_STACK_SIZE,
	OPT_INTERVAL,
	OPT_NO_DEMANGLE,
	OPT_OFF_CPU,
	OPT_OFF_CPU_MIN,
	OPT_NO_AGGREGATE,
	OPT_NO_JVM_ATTACH,
	OPT_NO_JVM_WALK,
	OPT_OTLP,
	OPT_OTLP_SPOOL,
	OPT_OTLP_SPOOL_SIZE,
};

static const struct argp_option options[] = {
	{ "pid", 'p', "PID[,PID...]", 0, "Sample these running processes (all threads)", 0 },
	{ "all-cpus", 'a', NULL, 0, "Sample the whole system", 0 },
	{ "freq", 'F', "HZ", 0, "Sampling frequency per CPU (default 999)", 0 },
	{ "event", 'e', "EVENT[/PERIOD|@FREQ][,...]", 0,
	  "Sample these events (repeatable; default cpu-clock at -F): each every PERIOD of its "
	  "unit or FREQ times a second (default -F); '-e list' lists this machine's", 0 },
	{ "off-cpu", OPT_OFF_CPU, NULL, 0,
	  "Also measure the time each target thread spends switched out, by the stack where it "
	  "left the CPU (event off-cpu, in ns; summed in the kernel)", 0 },
	{ "off-cpu-min", OPT_OFF_CPU_MIN, "TIME", 0,
	  "With --off-cpu: shorter switches are counted, not attributed (default 1us; ns, us, ms "
	  "or s)", 0 },
	{ "duration", 'd', "SEC", 0,
	  "Stop after SEC seconds (default: Ctrl-C, or when the command or every target exits)", 0 },
	{ "output", 'o', "DIR", 0, "Output directory (default collector-YYYYMMDD-HHMMSS)", 0 },
	{ "format", 'f', "LIST", 0, "Formats to write (listed by help_filter())", 0 },
	{ "interval", OPT_INTERVAL, "SEC", 0,
	  "Continuous profiling: every SEC seconds (at least 1), write the interval's sampled "
	  "profiles into DIR/<UTC start of the interval>/", 0 },
	{ "otlp", OPT_OTLP, "URL", OPTION_ARG_OPTIONAL,
	  "Push every interval (or the whole run, at its end) as OTLP profiles over HTTP to "
	  "URL/v1development/profiles (default: OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT, "
	  "OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318); no file is written unless "
	  "-f asks", 0 },
	{ "otlp-spool", OPT_OTLP_SPOOL, "DIR", 0,
	  "With --otlp: where intervals wait until the endpoint accepts them, also across "
	  "restarts (default /var/spool/collector/otlp; only root may write it)", 0 },
	{ "otlp-spool-size", OPT_OTLP_SPOOL_SIZE, "MIB", 0,
	  "With --otlp: the spool's cap; past it the oldest intervals are dropped (default 256)",
	  0 },
	{ "quiet", 'q', NULL, 0, "No status line and no summary", 0 },
	{ "verbose", 'v', NULL, 0, "More messages, libbpf's included", 0 },
	{ "no-demangle", OPT_NO_DEMANGLE, NULL, 0,
	  "Function names as the symbols spell them (C++ and Rust names are demangled by "
	  "default)", 0 },
	{ "run-as-root", OPT_RUN_AS_ROOT, NULL, 0,
	  "Under sudo, run COMMAND as root instead of the invoking user", 0 },
	{ "sampler-layout", OPT_SAMPLER_LAYOUT, "tool|spec", 0,
	  "sampler files: the reference tool's layout (default) or the spec's literal one", 0 },
	{ "hpctoolkit-layout", OPT_HPCTOOLKIT_LAYOUT, "released|draft", 0,
	  "HPCToolkit database: the released v4.0 layout (default) or the draft", 0 },
	{ "ring-size", OPT_RING_SIZE, "SIZE", 0,
	  "Ring buffer size, a power of two with K, M or G (default 16M; 2M when the samples are summed in the kernel and no switch or trace record streams)", 0 },
	{ "trace", 't', "BIN:PATTERN", 0,
	  "Trace entry and exit of the functions of BIN (a path, or a library name such as "
	  "libc) whose names match the glob PATTERN, through uprobes (repeatable)", 0 },
	{ "args", OPT_ARGS, "N", 0, "With --trace: record the first N integer arguments (0-6)", 0 },
	{ "call-graph", OPT_CALL_GRAPH, "cfi|fp|dwarf|auto", 0,
	  "How user stacks are walked (default cfi): cfi unwinds in the BPF program with tables "
	  "built from .eh_frame and .debug_frame; fp follows frame pointers; dwarf copies the "
	  "stack and unwinds in user space; auto is dwarf for targets built without frame "
	  "pointers, else fp", 0 },
	{ "stack-size", OPT_STACK_SIZE, "BYTES", 0,
	  "With --call-graph dwarf: user stack bytes copied per sample (default 8192, at most "
	  "65536)", 0 },
	{ "no-switches", OPT_NO_SWITCHES, NULL, 0,
	  "Do not record context switches (off-CPU times in sampler and HPCToolkit traces)", 0 },
	{ "no-aggregate", OPT_NO_AGGREGATE, NULL, 0,
	  "Send every sample through the ring buffer, even when no format written needs them "
	  "in time order (by default such runs sum the samples by stack in the kernel)", 0 },
	{ "no-jvm-attach", OPT_NO_JVM_ATTACH, NULL, 0,
	  "With -p or -a: do not ask JVMs that wrote no perf map for one through their attach "
	  "listener (their JIT-compiled methods then stay unnamed)", 0 },
	{ "no-jvm-walk", OPT_NO_JVM_WALK, NULL, 0,
	  "Do not walk HotSpot JVMs' Java frames (interpreted and compiled, read from the JVM as "
	  "it runs): their JIT code is named by the perf map they are asked for, as for a JVM the "
	  "walk does not know", 0 },
	{ 0 },
};

static int parse_uint(const char *what, const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || !*s || *end || s[0] == '-' || *out > max) {
		fprintf(stderr, "collector: %s '%s' is not a whole number from 1 to %lu\n", what, s,
			max);
		return -EINVAL;
	}
	if (*out == 0) {
		fprintf(stderr, "collector: %s must be at least 1\n", what);
		return -EINVAL;
	}
	return 0;
}

static unsigned long max_sample_rate(void)
{
	return proc_sysctl_ulong("/proc/sys/kernel/perf_event_max_sample_rate", 100000);
}

static int parse_pids(struct collector_options *o, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	unsigned long v;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint("PID", tok, INT_MAX, &v)) {
			err = -EINVAL;
			break;
		}
		if (o->n_pids == COLLECTOR_MAX_PIDS) {
			fprintf(stderr, "collector: at most %d PIDs\n", COLLECTOR_MAX_PIDS);
			err = -EINVAL;
			break;
		}
		o->pids[o->n_pids++] = v;
	}
	free(copy);
	if (!err && !o->n_pids) {
		fprintf(stderr, "collector: -p needs a PID\n");
		err = -EINVAL;
	}
	return err;
}

/* Each option group's parser: 0, EINVAL after a message, or
 * ARGP_ERR_UNKNOWN for a key of another group. */

/* What to profile: -p, -a, -d. */
static error_t parse_target_opt(struct collector_options *o, int key, char *arg)
{
	char *end;

	switch (key) {
	case 'p':
		return parse_pids(o, arg) ? EINVAL : 0;
	case 'a':
		o->all_cpus = true;
		return 0;
	case 'd':
		errno = 0;
		o->duration = strtod(arg, &end);
		if (errno || !*arg || *end || !(o->duration > 0) || o->duration > 1e7) {
			fprintf(stderr, "collector: duration '%s' is not a positive number of "
				"seconds\n", arg);
			return EINVAL;
		}
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* "16M": a power of two from 4K to 1G, with K, M or G. */
static int parse_ring_size(const char *arg, uint64_t *out)
{
	unsigned long long bytes;
	char *end;

	errno = 0;
	bytes = strtoull(arg, &end, 10);
	if (*end == 'K' || *end == 'k')
		bytes <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		bytes <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		bytes <<= 30, end++;
	if (errno || *end || arg[0] == '-' || bytes < 4096 || bytes > (1ULL << 30) ||
	    (bytes & (bytes - 1))) {
		fprintf(stderr, "collector: --ring-size '%s' is not a power of two from 4K to "
			"1G (a number with K, M or G)\n", arg);
		return -EINVAL;
	}
	*out = bytes;
	return 0;
}

/* "1us", "500ns", "2ms", "0.5s"; a bare number is in microseconds. */
static int parse_duration_ns(const char *what, const char *arg, uint64_t *out)
{
	static const struct { const char *suffix; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e3 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	for (size_t i = 0; !errno && end != arg && v >= 0 && i < sizeof(units) / sizeof(units[0]);
	     i++) {
		if (!strcmp(end, units[i].suffix) && v * units[i].ns < 1e15) {
			*out = (uint64_t)(v * units[i].ns + 0.5);
			return 0;
		}
	}
	fprintf(stderr, "collector: %s '%s' is not a time: a number with ns, us, ms or s "
		"(a bare number is in us)\n", what, arg);
	return -EINVAL;
}

/* -e EVENT[/PERIOD|@FREQ][,...], or -e list. */
static error_t parse_events(struct collector_options *o, const char *arg)
{
	char err[256];

	if (!strcmp(arg, "list")) {
		o->list_events = true;
		return 0;
	}
	if (perf_events_parse(arg, 0, o->events, &o->n_events, PERF_EVENTS_MAX, err,
			      sizeof(err)) != 0) {
		fprintf(stderr, "collector: %s\n", err);
		return EINVAL;
	}
	return 0;
}

/* How to sample: -e, -F, --call-graph, --stack-size, --ring-size,
 * --no-switches, --no-aggregate. */
static error_t parse_sampling_opt(struct collector_options *o, int key, char *arg)
{
	uint64_t bytes;
	unsigned long v;

	switch (key) {
	case 'e':
		return parse_events(o, arg);
	case OPT_OFF_CPU:
		o->off_cpu = true;
		return 0;
	case OPT_OFF_CPU_MIN:
		return parse_duration_ns("--off-cpu-min", arg, &o->off_cpu_min_ns) ? EINVAL : 0;
	case 'F':
		if (parse_uint("frequency", arg, ULONG_MAX, &v))
			return EINVAL;
		if (v > max_sample_rate()) {
			/* perf's model: the kernel lowers the limit when its sampling
			 * interrupts take too long; perf caps -F there and says so */
			fprintf(stderr, "collector: warning: maximum frequency rate (%lu Hz) "
				"exceeded, throttling from %lu Hz to %lu Hz.\n"
				"  The limit can be raised via "
				"/proc/sys/kernel/perf_event_max_sample_rate.\n"
				"  The kernel will lower it when its sampling interrupts take too "
				"long.\n", max_sample_rate(), v, max_sample_rate());
			v = max_sample_rate();
		}
		o->freq = v;
		return 0;
	case OPT_CALL_GRAPH:
		if (!strcmp(arg, "cfi"))
			o->call_graph = CALL_GRAPH_CFI;
		else if (!strcmp(arg, "fp"))
			o->call_graph = CALL_GRAPH_FP;
		else if (!strcmp(arg, "dwarf"))
			o->call_graph = CALL_GRAPH_DWARF;
		else if (!strcmp(arg, "auto"))
			o->call_graph = CALL_GRAPH_AUTO;
		else {
			fprintf(stderr, "collector: --call-graph takes cfi, fp, dwarf or auto\n");
			return EINVAL;
		}
		return 0;
	case OPT_STACK_SIZE:
		if (parse_uint("stack size", arg, 65536, &v))
			return EINVAL;
		if (v % 8 || v < 64) {
			fprintf(stderr, "collector: --stack-size must be a multiple of 8 from 64 to "
				"65536\n");
			return EINVAL;
		}
		o->stack_size = v;
		return 0;
	case OPT_RING_SIZE:
		if (parse_ring_size(arg, &bytes))
			return EINVAL;
		o->ring_bytes = bytes;
		return 0;
	case OPT_NO_SWITCHES:
		o->no_switches = true;
		return 0;
	case OPT_NO_AGGREGATE:
		o->no_aggregate = true;
		return 0;
	case OPT_NO_JVM_ATTACH:
		o->no_jvm_attach = true;
		return 0;
	case OPT_NO_JVM_WALK:
		o->no_jvm_walk = true;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* Which functions to trace: --trace, --args. */
static error_t parse_tracing_opt(struct collector_options *o, int key, char *arg)
{
	unsigned long v;
	char *end;

	switch (key) {
	case 't':
		if (o->n_trace_specs == COLLECTOR_MAX_TRACE_SPECS) {
			fprintf(stderr, "collector: at most %d --trace options\n",
				COLLECTOR_MAX_TRACE_SPECS);
			return EINVAL;
		}
		if (!strchr(arg, ':') || arg[0] == ':' || !strchr(arg, ':')[1]) {
			fprintf(stderr, "collector: --trace '%s': expected BIN:PATTERN, e.g. "
				"--trace ./app:'*' or --trace libc:malloc\n", arg);
			return EINVAL;
		}
		o->trace_specs[o->n_trace_specs++] = arg;
		return 0;
	case OPT_ARGS:
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || !*arg || *end || arg[0] == '-' || v > 6) {
			fprintf(stderr, "collector: --args takes a number from 0 to 6\n");
			return EINVAL;
		}
		o->trace_args = v;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* Where and what to write, and how loud: -o, -f, the layouts, -q, -v,
 * --run-as-root. */
static error_t parse_output_opt(struct collector_options *o, int key, char *arg)
{
	switch (key) {
	case 'o':
		if (!*arg) {
			fprintf(stderr, "collector: -o needs a directory name\n");
			return EINVAL;
		}
		o->output = arg;
		return 0;
	case 'f':
		return formats_parse(arg, &o->formats) ? EINVAL : 0;
	case OPT_OTLP:
		if (arg && !*arg) {
			fprintf(stderr, "collector: --otlp=URL needs a URL (or --otlp alone)\n");
			return EINVAL;
		}
		o->otlp = true;
		o->otlp_url = arg;
		return 0;
	case OPT_OTLP_SPOOL:
		if (arg[0] != '/') {
			fprintf(stderr, "collector: --otlp-spool '%s' is not an absolute path\n", arg);
			return EINVAL;
		}
		o->otlp_spool = arg;
		return 0;
	case OPT_OTLP_SPOOL_SIZE: {
		unsigned long mib;

		if (parse_uint("--otlp-spool-size (MiB)", arg, 1UL << 20, &mib))
			return EINVAL;
		o->otlp_spool_bytes = (uint64_t)mib << 20;
		return 0;
	}
	case OPT_INTERVAL: {
		char *end;

		errno = 0;
		o->interval = strtod(arg, &end);
		if (errno || !*arg || *end || !(o->interval >= 1) || o->interval > 1e7) {
			fprintf(stderr, "collector: --interval '%s' is not a number of seconds of at "
				"least 1\n", arg);
			return EINVAL;
		}
		return 0;
	}
	case OPT_SAMPLER_LAYOUT:
		if (strcmp(arg, "tool") && strcmp(arg, "spec")) {
			fprintf(stderr, "collector: --sampler-layout takes 'tool' or 'spec'\n");
			return EINVAL;
		}
		o->sampler_layout_spec = !strcmp(arg, "spec");
		return 0;
	case OPT_HPCTOOLKIT_LAYOUT:
		if (strcmp(arg, "released") && strcmp(arg, "draft")) {
			fprintf(stderr, "collector: --hpctoolkit-layout takes 'released' or 'draft'\n");
			return EINVAL;
		}
		o->hpctoolkit_draft = !strcmp(arg, "draft");
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	case OPT_RUN_AS_ROOT:
		o->run_as_root = true;
		return 0;
	case OPT_NO_DEMANGLE:
		o->no_demangle = true;
		return 0;
	}
	return ARGP_ERR_UNKNOWN;
}

/* --interval writes sampled profiles: traced calls are counted in the
 * kernel and read once, at the end of a run. */
static error_t check_interval(const struct collector_options *o)
{
	unsigned int unsampled = o->formats & ~formats_needing(FORMAT_NEEDS_SAMPLES);

	if (!o->interval)
		return 0;
	if (o->n_trace_specs) {
		fprintf(stderr, "collector: --interval writes sampled profiles; --trace counts "
			"calls over a whole run: use them in two runs\n");
		return EINVAL;
	}
	for (size_t i = 0; i < formats_count(); i++)
		if (unsampled & 1u << i) {
			fprintf(stderr, "collector: --interval writes sampled profiles; the %s "
				"format holds traced calls only\n", formats_get(i)->name);
			return EINVAL;
		}
	return 0;
}

/* The whole command line: one kind of target, --args only with --trace,
 * --interval without --trace. */
static error_t check_options(const struct collector_options *o, struct argp_state *state)
{
	int kinds = !!o->n_pids + o->all_cpus + !!o->command;

	if (kinds == 0) {
		fprintf(stderr, o->stacks ? "collector stacks: say whose threads: -p PID or -a\n"
					  : "collector: say what to profile: -p PID, -a, or -- COMMAND\n");
		argp_usage(state);
	}
	if (o->off_cpu && o->n_events >= PERF_EVENTS_MAX) {
		fprintf(stderr, "collector: --off-cpu makes one event more: at most %d with -e\n",
			PERF_EVENTS_MAX - 1);
		return EINVAL;
	}
	if (o->trace_args && !o->n_trace_specs) {
		fprintf(stderr, "collector: --args goes with --trace\n");
		return EINVAL;
	}
	if (kinds > 1) {
		fprintf(stderr, "collector: choose one of -p, -a and -- COMMAND\n");
		return EINVAL;
	}
	if ((o->otlp_spool || o->otlp_spool_bytes) && !o->otlp) {
		fprintf(stderr, "collector: --otlp-spool and --otlp-spool-size go with --otlp\n");
		return EINVAL;
	}
	if (o->otlp && (o->n_trace_specs || o->formats & ~formats_needing(FORMAT_NEEDS_SAMPLES))) {
		fprintf(stderr, "collector: --otlp pushes sampled profiles; ask for the traced "
			"calls' formats in a run of their own\n");
		return EINVAL;
	}
	return check_interval(o);
}

/*
 * OTEL_RESOURCE_ATTRIBUTES: what the collector is told of itself (a
 * deployment, a region, a host's name), for every process's resource and
 * pprof's labels.  Malformed: an error for a run that pushes, a warning
 * otherwise (nothing else reads them).
 */
static error_t read_resource_attributes(struct collector_options *o)
{
	char why[200];
	int err = kvlist_parse(getenv("OTEL_RESOURCE_ATTRIBUTES"), &o->resource_attrs,
			       &o->n_resource_attrs, why, sizeof(why));

	if (err == -EINVAL) {
		fprintf(stderr, "collector: OTEL_RESOURCE_ATTRIBUTES: %s%s\n", why,
			o->otlp ? "" : "; ignored");
		return o->otlp ? EINVAL : 0;
	}
	if (err)
		fprintf(stderr, "collector: out of memory\n");
	return err ? ENOMEM : 0;
}

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	static error_t (*const groups[])(struct collector_options *o, int key, char *arg) = {
		parse_target_opt, parse_sampling_opt, parse_tracing_opt, parse_output_opt,
	};
	struct collector_options *o = state->input;
	error_t err;

	if (key == ARGP_KEY_ARGS) {
		o->command = state->argv + state->next;
		return 0;
	}
	if (key == ARGP_KEY_END) {
		if (o->list_events)
			return 0; /* -e list: nothing to profile */
		events_fill_defaults(o);
		err = check_options(o, state);
		if (!err && o->stacks)
			err = stacks_options(o);
		if (!err)
			err = read_resource_attributes(o);
		if (!err && o->otlp && !o->formats) {
			/* the run is planned for what it pushes (summed in the
			 * kernel, no switches), and writes no file */
			o->push_only = true;
			formats_parse("otlp", &o->formats);
		}
		return err;
	}
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		error_t err = groups[i](o, key, arg);

		if (err != ARGP_ERR_UNKNOWN)
			return err;
	}
	return ARGP_ERR_UNKNOWN;
}

/* The formats in the registry's order, "xray, sampler, ...", for the help:
 * a new format needs no edit here. */
static const char *format_list(void)
{
	static char list[256];

	if (!list[0])
		for (size_t i = 0; i < formats_count(); i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", formats_get(i)->name);
	return list;
}

static char *help_filter(int key, const char *text, void *input)
{
	char *s = NULL;
	int n = -1;

	(void)input;
	if (key == ARGP_KEY_HELP_PRE_DOC)
		n = asprintf(&s, "%s (%s).", text, format_list());
	else if (key == 'f')
		n = asprintf(&s, "Formats to write, a comma-separated list of: %s (default: every "
			     "one that applies)", format_list());
	return n < 0 ? (char *)text : s;
}

int main(int argc, char **argv)
{
	struct collector_options opts = {
		.freq = 999,
		.ring_bytes = 0, /* --ring-size, else record.c sizes it */
		.stack_size = 8192,
		.off_cpu_min_ns = 1000,
	};
	const struct argp argp = { options, parse_opt, args_doc, doc, NULL, help_filter, NULL };
	struct front front;
	int rc;

	if (argc > 1 && strcmp(argv[1], "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "stacks") == 0) {
		/* the options of a run, which stacks_options() completes */
		opts.stacks = true;
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	/* argp exits with EX_USAGE (64) on a bad option: ours is 2 */
	argp_err_exit_status = EXIT_USAGE;
	if (argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, &opts))
		return EXIT_USAGE;
	if (opts.list_events)
		return events_list(stdout);
	front_init(&front, &opts);
	rc = run_session(&opts, &front.hooks);
	kvlist_free(opts.resource_attrs, opts.n_resource_attrs);
	return rc;
}
