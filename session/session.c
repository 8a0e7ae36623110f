// SPDX-License-Identifier: GPL-2.0
/*
 * One profiling run (session/session.h).
 *
 * This file only orders the steps: the loader talks to the kernel, decode
 * writes what comes back into the model, the formats write the model out,
 * the push sends it, and the front end (cli/) shows what it says.
 */
#include "session/session.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/continuous.h"
#include "session/event_options.h"
#include "session/outdir.h"
#include "session/phases.h"
#include "session/policy.h"
#include "session/push.h"
#include "session/runtimes_wiring.h"
#include "session/record_unwind.h"
#include "session/save_records.h"
#include "session/session_config.h"
#include "session/targets.h"
#include "decode/kernel_counters.h"
#include "decode/run.h"
#include "decode/trace_specs.h"
#include "decode/tracker.h"
#include "formats/registry.h"
#include "lib/path.h"
#include "lib/powercap.h"
#include "loader/bpf_session.h"
#include "loader/kernel_names.h"
#include "loader/launch.h"
#include "loader/runtime_procs.h"
#include "loader/privileges.h"
#include "loader/uprobes.h"
#include "loader/waiter.h"
#include "model/model.h"
#include "symbols/symbolize.h"
#include "unwind/table_service.h"

/* How long one drain may take before the loop looks at the clock, the
 * targets and the signals again: a ring filled as fast as it is read
 * (hundreds of new processes a second, each read from /proc) would
 * otherwise keep the loop in one drain past -d and every --interval. */
#define DRAIN_SLICE_NS 200000000ULL

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t writing;

/* Everything one run holds; cleaned up in one place. */
struct record {
	const struct collector_options *opts;
	struct invoking_user user;
	char outdir[4096];
	struct model m;
	bool model_ready;
	bool spilling;          /* the model's events go to files in outdir */
	struct continuous cont; /* --interval */
	struct symbolizer *sym;
	struct kernel_names *knames; /* names the kernel's addresses */
	struct tracker *tracker;
	struct bpf_session *bpf;
	struct record_unwind unw;   /* --call-graph cfi's tables, maps and records */
	struct runtimes runtimes;   /* the language runtimes (runtimes/runtime.h) */
	struct uprobes *uprobes;
	struct trace_files trace_files;
	struct launch launch;
	struct waiter waiter;
	struct powercap powercap;
	const struct run_front *front; /* never NULL */
	struct summary_figures fig;
	unsigned int formats;   /* what -f asked for, 0: every one that applies */
	uint64_t cpu0;          /* the collector's own CPU time at start */
	struct save_records *save;  /* COLLECTOR_SAVE_RECORDS, NULL when unset */
	struct push *push;          /* --otlp, or NULL */
	struct phases phases;       /* -v: the steps' times */
};

static void on_signal(int sig)
{
	static const char msg[] = "\ncollector: finishing: writing the outputs, please wait\n";

	(void)sig;
	if (writing) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			return;
	}
	stop_requested = 1;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: a signal must end the poll at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Privileges, targets and the output directory, before anything is loaded.
 * Returns 0 or the exit code. */
static int check_and_prepare_output(struct record *r)
{
	const struct collector_options *opts = r->opts;
	int rc;

	if (invoking_user_get(&r->user) != 0)
		return EXIT_USAGE;
	if (privileges_check() != 0) {
		fprintf(stderr, "collector: loading BPF programs needs root or CAP_BPF and "
			"CAP_PERFMON: run it as 'sudo collector ...'\n");
		return EXIT_NO_PRIVILEGE;
	}
	/* the paths the user names are his (lib/userfs.h); the policy is root's */
	if (invoking_user_fs_setup(&r->user) != 0 ||
	    policy_enforce(opts, invoking_user_uid(&r->user)) != 0)
		return EXIT_NO_PRIVILEGE;
	rc = targets_check(opts);
	if (rc)
		return rc;
	if (opts->otlp && (rc = push_open(&r->push, opts)) != 0)
		return rc;
	if (opts->output)
		snprintf(r->outdir, sizeof(r->outdir), "%s", opts->output);
	else if (opts->push_only)
		/* no file to write: the events spill (unnamed files) beside
		 * the spool, and no directory is left behind */
		snprintf(r->outdir, sizeof(r->outdir), "%s", push_spool_dir(r->push));
	else
		outdir_default_name(r->outdir, sizeof(r->outdir));
	/* (stacks print, and write files only with -f) */
	if ((opts->output || !(opts->push_only || (opts->stacks && !opts->formats))) &&
	    outdir_make(r->outdir) != 0)
		return EXIT_OUTPUT;
	if (save_records_open(&r->save) != 0)
		return EXIT_OUTPUT;
	return 0;
}

/* The model, with the run's facts, spilling its events to the output
 * directory; and the symbolizer that fills it. */
static int open_model(struct record *r)
{
	const struct collector_options *opts = r->opts;
	struct run_setup setup = {
		.system_wide = opts->all_cpus,
		.freq_hz = opts->freq,
		.events = opts->events,
		.n_events = opts->n_events,
		.off_cpu = opts->off_cpu,
		.off_cpu_min_ns = opts->off_cpu_min_ns,
		.trace_nargs = opts->trace_args,
		.attributes = opts->resource_attrs,
		.n_attributes = opts->n_resource_attrs,
	};
	char *cmd = targets_command_line(opts);
	int err;

	model_init(&r->m);
	r->model_ready = true;
	/* events go to disk as they come, so memory stays flat however long
	 * the run; where the directory cannot hold such files, they stay in
	 * memory */
	err = model_spill_events(&r->m, r->outdir);
	r->spilling = !err;
	if (err && opts->verbose)
		fprintf(stderr, "collector: keeping events in memory (no O_TMPFILE in %s: %s)\n",
			r->outdir, strerror(-err));
	install_signals();
	setup.command_line = cmd;
	decode_run_setup(&r->m, &setup);
	free(cmd);
	r->sym = symbolizer_new(&r->m);
	if (!r->sym) {
		fprintf(stderr, "collector: out of memory\n");
		return EXIT_FAILURE_RUN;
	}
	symbolizer_set_demangle(r->sym, !opts->no_demangle);
	symbolizer_set_image_crc(r->sym, formats_need_image_crc(opts->formats));
	/* a few kernel addresses named by the kernel, not by reading and
	 * sorting kallsyms whole (50 ms of a 1 s run's 190) */
	r->knames = kernel_names_new();
	if (r->knames)
		symbolizer_set_kernel_namer(r->sym, &(struct kernel_namer){
			kernel_names_lookup, kernel_names_text, r->knames });
	return 0;
}

/* --trace: the functions to probe, resolved before anything is loaded. */
static int resolve_tracing(struct record *r)
{
	const struct collector_options *opts = r->opts;
	struct trace_specs_config cfg = {
		.specs = opts->trace_specs,
		.n_specs = opts->n_trace_specs,
		.pids = opts->pids,
		.n_pids = opts->n_pids,
		.command = opts->command,
		.verbose = opts->verbose,
	};

	if (!opts->n_trace_specs)
		return 0;
	switch (trace_specs_resolve(&r->m, r->sym, &cfg, &r->trace_files)) {
	case 0:
		return 0;
	case -ENOTSUP: /* a Python interpreter without probes */
		return EXIT_USAGE;
	default:
		return EXIT_NO_TARGET;
	}
}

static void cut_interval(struct record *r, uint64_t now);

/*
 * --interval: a record taken after the interval's due end starts the next
 * interval, so that an interval holds what was taken in it however far
 * behind the drain is (the ASan build, -a on a loaded machine: the samples
 * of three 2 s intervals reached user space after the third cut, and went
 * to the fourth).  Only samples start one: the task records that follow
 * the run's end as it stops made intervals of no samples, and the sums
 * read from the kernel at a cut are not ring records.
 */
static void cut_if_past(struct record *r, const void *data, size_t size)
{
	const struct collector_event_header *h = data;

	if (r->cont.interval_ns && size >= sizeof(*h) &&
	    (h->kind == COLLECTOR_EV_SAMPLE || h->kind == COLLECTOR_EV_SAMPLE_STACK) &&
	    h->ktime_ns >= r->cont.end_ktime_ns)
		cut_interval(r, h->ktime_ns);
}

static int on_record(void *ctx, const void *data, size_t size)
{
	struct record *r = ctx;

	cut_if_past(r, data, size);
	if (r->save)
		save_records_put(r->save, SAVE_RECORD, data, size);
	return tracker_handle_record(r->tracker, data, size);
}

/* The sampling programs and the tracker their records go to. */
static int open_sampling(struct record *r)
{
	const struct collector_options *opts = r->opts;
	struct bpf_session_config cfg;
	uint64_t sched_text[4];
	int err;

	session_config_of(opts, &cfg);
	cfg.on_record = on_record;
	r->fig.aggregated = cfg.aggregate_samples;
	decode_run_call_graph(&r->m, cfg.dwarf ? "dwarf" : cfg.cfi ? "cfi" : "fp");
	/* a hardware event without a PMU: one clear line, not libbpf's */
	if (events_check(opts))
		return EXIT_BPF;
	if (bpf_session_open(&r->bpf, &cfg))
		return EXIT_BPF;
	r->tracker = tracker_new(&r->m, r->sym);
	/* the JVMs' attach asks for perf maps with -p and -a only */
	/* a runtime whose walk was left out (a -p run on no JVM, which forks
	 * one) is not walked: a JVM is named by attach, as with --no-jvm-walk */
	err = session_runtimes_open(&r->runtimes, r->bpf, &r->m,
				    opts->command || opts->no_jvm_attach, cfg.walk_kinds);
	r->fig.runtimes = &r->runtimes;
	/* -p targets that run a runtime now: its walk loaded before sampling */
	if (!err)
		runtime_walks_preload(r->bpf, cfg.ahead_walk_kinds);
	/* --off-cpu unwinds the stacks of threads blocked before the run */
	if (!r->tracker || err || (cfg.dwarf && tracker_enable_unwinding(r->tracker) != 0) ||
	    ((cfg.cfi || cfg.off_cpu) && tracker_enable_fallback_unwinding(r->tracker) != 0)) {
		fprintf(stderr, "collector: out of memory\n");
		return EXIT_FAILURE_RUN;
	}
	bpf_session_sched_text(r->bpf, sched_text);
	tracker_set_sched_text(r->tracker, sched_text);
	if (cfg.cfi && record_unwind_open(&r->unw, r->bpf, cfg.cfi_rows, r->tracker) != 0)
		return EXIT_BPF;
	tracker_set_runtimes(r->tracker, &r->runtimes);
	if (!opts->all_cpus)
		tracker_ignore_process(r->tracker, getpid());
	/* the ring callback needs the tracker: set it before any record */
	bpf_session_set_context(r->bpf, r);
	return 0;
}

/* The -p processes, or the command forked and held before its exec. */
static int add_targets(struct record *r)
{
	const struct collector_options *opts = r->opts;
	char *exe;
	int err;

	for (int i = 0; i < opts->n_pids; i++) {
		struct save_target st = { .pid = opts->pids[i], .ktime_ns = run_clock_ns(true) };

		bpf_session_add_target(r->bpf, opts->pids[i]);
		/* its tables first, as sampling starts; before it for one
		 * look (collector stacks) */
		if (r->unw.service && opts->stacks)
			unwind_service_prepare_process(r->unw.service, opts->pids[i]);
		if (r->unw.service)
			unwind_service_add_process(r->unw.service, opts->pids[i]);
		if (tracker_add_process(r->tracker, opts->pids[i], st.ktime_ns) != 0) {
			fprintf(stderr, "collector: PID %d exited during start-up\n", opts->pids[i]);
			return EXIT_NO_TARGET;
		}
		if (r->save)
			save_records_put(r->save, SAVE_TARGET, &st, sizeof(st));
	}
	if (!opts->command)
		return 0;
	err = launch_prepare(&r->launch, opts->command,
			     r->user.set && !opts->run_as_root ? &r->user : NULL);
	if (err) {
		fprintf(stderr, "collector: cannot start '%s': %s\n", opts->command[0],
			strerror(-err));
		return EXIT_NO_TARGET;
	}
	exe = path_find_command(opts->command[0]);
	/* held until the tables of what it maps at once are loaded */
	if (exe && r->unw.service)
		unwind_service_prepare_command(r->unw.service, exe);
	/* a runtime's command (python3, java): its walk loaded while the
	 * command is held, not at its first process, whose first 100 ms or
	 * so would go without it (test_python_short) */
	if (exe)
		runtime_walks_preload(r->bpf, runtimes_kinds_of_exe(&r->runtimes, exe));
	free(exe);
	tracker_expect_exec(r->tracker, r->launch.pid);
	if (r->save)
		save_records_put(r->save, SAVE_EXPECT_EXEC, &(int32_t){ r->launch.pid },
				 sizeof(int32_t));
	bpf_session_hold_target(r->bpf, r->launch.pid);
	bpf_session_add_target(r->bpf, r->launch.pid);
	return 0;
}

static void add_python_function(void *ctx, uint32_t k, const struct collector_py_key *key)
{
	struct record *r = ctx;

	trace_python_add_function(&r->m, &r->trace_files.python, k, key);
}

/* Entry and return probes, after the targets exist: they go into the
 * targets' address spaces. */
static int attach_tracing(struct record *r)
{
	const struct collector_options *opts = r->opts;
	struct uprobes_config cfg = {
		/* the event stream feeds XRay traces and Callgrind's exact calls */
		.stream_events = !r->formats || formats_need(r->formats, FORMAT_NEEDS_TRACE_EVENTS),
		.n_args = opts->trace_args,
		.verbose = opts->verbose,
	};
	const struct trace_python *py = &r->trace_files.python;
	struct uprobe_file *files;
	size_t skipped = 0;
	double overhead;
	int err;

	if (!opts->n_trace_specs)
		return 0;
	if (py->on) {
		cfg.py_name_glob = py->name_glob;
		cfg.py_file_glob = py->file_glob;
		cfg.py_first_id = py->first_id;
	}
	if (uprobes_open(&r->uprobes, r->bpf, &cfg) != 0)
		return EXIT_BPF;
	overhead = uprobes_calibrate(r->uprobes);
	if (overhead < 0 && opts->verbose)
		fprintf(stderr, "collector: probe cost calibration failed: %s\n",
			strerror((int)-overhead));
	files = calloc(r->trace_files.len + 1, sizeof(*files));
	if (!files)
		return EXIT_FAILURE_RUN;
	for (size_t i = 0; i < r->trace_files.len; i++) {
		const struct trace_file *tf = &r->trace_files.items[i];

		files[i] = (struct uprobe_file){ tf->path, tf->offsets, tf->cookies, tf->names, tf->n };
	}
	if (!r->trace_files.len)
		err = 0; /* py: only */
	else if (opts->command)
		err = uprobes_attach(r->uprobes, files, r->trace_files.len, &r->launch.pid, 1,
				     &skipped);
	else
		err = uprobes_attach(r->uprobes, files, r->trace_files.len, opts->pids,
				     opts->n_pids, &skipped);
	free(files);
	if (!err && py->on)
		err = opts->command ? uprobes_attach_python(r->uprobes, py->interpreter,
							    &r->launch.pid, 1)
				    : uprobes_attach_python(r->uprobes, py->interpreter, opts->pids,
							    opts->n_pids);
	if (err)
		return EXIT_BPF;
	decode_trace_attach(&r->m, skipped, uprobes_attach_seconds(r->uprobes), overhead);
	if (r->save)
		save_records_put(r->save, SAVE_TRACE_ATTACH, &(struct save_trace_attach){
					 skipped, uprobes_attach_seconds(r->uprobes), overhead },
				 sizeof(struct save_trace_attach));
	if (!opts->quiet && r->trace_files.len)
		fprintf(stderr, "collector: tracing %zu functions (attached in %.3f s)\n",
			r->m.traced.len, uprobes_attach_seconds(r->uprobes));
	if (!opts->quiet && py->on)
		fprintf(stderr, "collector: tracing the Python functions %s%s%s of %s\n",
			py->file_glob, py->file_glob[0] ? ":" : "", py->name_glob, py->interpreter);
	return 0;
}

/* Sampling starts, then the command is let go to exec. */
static int start(struct record *r)
{
	const struct collector_options *opts = r->opts;
	int err;

	/* Nothing is read ahead (kallsyms, the targets' symbols and lines):
	 * each is read when a sample first needs it, and only then.  Reading
	 * them all first cost 115-130 ms of a 1 s `-p` run's 200 (kallsyms
	 * 50, libc's compressed DWARF 60 when no sample was in libc). */
	decode_window_start(&r->m);
	if (r->save)
		save_records_facts(r->save, &r->m, opts->trace_specs, opts->n_trace_specs);
	tracker_begin_window(r->tracker);
	/* the tables processes ask for, from now on built by a thread of
	 * their own: a long drain does not delay them */
	if (r->unw.service && unwind_service_start(r->unw.service) != 0)
		return EXIT_FAILURE_RUN;
	if (opts->command ? bpf_session_start_sampling(r->bpf, &r->launch.pid, 1)
			  : bpf_session_start_sampling(r->bpf, opts->pids, opts->n_pids))
		return EXIT_BPF;
	/* --off-cpu: the targets' threads blocked since before the run,
	 * counted from the window's start (not from the attach after it) */
	if (!opts->command)
		bpf_session_offcpu_since(r->bpf, r->m.run.start_ktime_ns);
	if (!opts->command && bpf_session_window_start(r->bpf) != 0)
		return EXIT_BPF;
	/* -a: the mappings of every process exec'd from now on from the
	 * kernel's records, not from /proc at each exec (opened once sampling
	 * runs: a perf event among the collector's files says it does) */
	if (opts->all_cpus && r->unw.service)
		record_unwind_follow_mmaps(&r->unw, r->tracker);
	powercap_open(&r->powercap, NULL);
	decode_energy(&r->m, &r->powercap, true);
	if (opts->command && stop_requested) {
		/* interrupted while attaching: the command never starts */
		fprintf(stderr, "collector: interrupted before '%s' started\n", opts->command[0]);
		launch_abort(&r->launch);
		r->launch.pid = -1;
	} else if (opts->command) {
		uint64_t now = run_clock_ns(true);

		tracker_exec_allowed(r->tracker, now);
		/* its wait for the go is not the command's off-CPU time */
		bpf_session_offcpu_since(r->bpf, now);
		if (r->save)
			save_records_put(r->save, SAVE_EXEC_ALLOWED, &now, sizeof(now));
		err = launch_start(&r->launch);
		if (err) {
			fprintf(stderr, "collector: cannot run '%s': %s\n", opts->command[0],
				strerror(-err));
			r->launch.pid = -1;
			return EXIT_NO_TARGET;
		}
	}
	err = opts->command ? waiter_open(&r->waiter, bpf_session_epoll_fd(r->bpf),
					  &r->launch.pid, 1)
			    : waiter_open(&r->waiter, bpf_session_epoll_fd(r->bpf), opts->pids,
					  opts->n_pids);
	if (err) {
		fprintf(stderr, "collector: cannot wait for the ring buffer: %s\n", strerror(-err));
		return EXIT_FAILURE_RUN; /* the command, if any, is stopped by the caller */
	}
	if (r->front->started)
		r->front->started(r->front->ctx, r->m.run.start_ktime_ns);
	if (opts->interval > 0) {
		continuous_start(&r->cont, opts->interval, r->m.run.start_ktime_ns);
		r->cont.push = r->push;
	}
	return 0;
}

/*
 * How long the loop sleeps when nothing wakes it.  Samples reach user space
 * only then, and a process's samples are best resolved while it is alive
 * (a library it mapped since it started is read from its /proc maps): short
 * while processes come and go, longer once the targets have settled, where
 * each wakeup would cost more than the samples it drains.
 */
static int drain_interval_ms(const struct record *r)
{
	/* a Python process's code objects are named while it lives: its
	 * samples are read soon, a 0.3 s script's too */
	if (runtimes_live(&r->runtimes) || tracker_runtimes_pending(r->tracker))
		return 30;
	if (r->opts->all_cpus ||
	    run_clock_ns(true) < tracker_last_task_ktime(r->tracker) + 1000000000ULL)
		return 100;
	return 500;
}

/* How the formats are to write: under sudo, files go to the invoking user. */
static struct export_options export_options_of(const struct record *r)
{
	const struct collector_options *opts = r->opts;
	struct export_options eo = {
		.dir = r->outdir,
		.sampler_layout_spec = opts->sampler_layout_spec,
		.hpctoolkit_draft = opts->hpctoolkit_draft,
		.quiet = opts->quiet,
	};

	return eo;
}

/* --interval: what every interval writes, -f or every sampled format;
 * none when the run only pushes. */
static unsigned int interval_formats(const struct record *r)
{
	if (r->opts->push_only)
		return 0;
	return r->formats ? r->formats : formats_needing(FORMAT_NEEDS_SAMPLES);
}

/* The processes whose JIT code is still unnamed given to the runtimes
 * that ask them for names (the JVMs' attach, for their perf maps), before
 * the maps are read. */
static void ask_names(struct record *r)
{
	pid_t pids[COLLECTOR_MAX_PIDS];
	size_t n;

	n = tracker_jit_waiting(r->tracker, pids, COLLECTOR_MAX_PIDS);
	runtimes_ask_names(&r->runtimes, pids, n);
}

/* --interval: the interval just ended, written and dropped. */
static void cut_interval(struct record *r, uint64_t now)
{
	struct export_options eo = export_options_of(r);

	/* the interval's off-CPU sums, with the blocks still going on up to
	 * now, taken out of the kernel's maps */
	bpf_session_window_cut(r->bpf, now, false);
	bpf_session_read_aggregates(r->bpf);
	ask_names(r);
	tracker_name_jit_code(r->tracker);
	continuous_write(&r->cont, &r->m, interval_formats(r), &eo, now,
			 r->spilling ? r->outdir : NULL, false);
	if (tracker_forget_ended(r->tracker) != 0) {
		fprintf(stderr, "collector: out of memory\n");
		stop_requested = 1;
	}
	/* what the interval freed goes back to the system: glibc keeps freed
	 * heap for reuse, and the next interval's tables are laid out anew */
	malloc_trim(0);
}

/* The front end's status line, after a drain. */
static void show_progress(struct record *r)
{
	uint64_t c[COLLECTOR_CNT_MAX] = { 0 };

	if (!r->front->progress)
		return;
	bpf_session_counters(r->bpf, c);
	r->front->progress(r->front->ctx, tracker_sample_count(r->tracker),
			   c[COLLECTOR_CNT_RB_FULL_SAMPLE] + c[COLLECTOR_CNT_RB_FULL_TASK] +
				   c[COLLECTOR_CNT_RB_FULL_SWITCH],
			   model_trace_event_count(&r->m));
}

/* Drains the ring until a signal, the duration, or the targets' exit. */
static void drain_until_stopped(struct record *r)
{
	const struct collector_options *opts = r->opts;

	while (!stop_requested) {
		uint64_t now;
		int err;

		waiter_wait(&r->waiter, continuous_wait_ms(&r->cont, run_clock_ns(true),
							   drain_interval_ms(r)));
		err = bpf_session_drain(r->bpf, DRAIN_SLICE_NS);
		if (err < 0) {
			fprintf(stderr, "collector: reading the ring buffer failed: %s\n",
				strerror(-err));
			break;
		}
		decode_energy(&r->m, &r->powercap, false);
		record_unwind_refresh(&r->unw);
		now = run_clock_ns(true);
		tracker_settle_maps(r->tracker, now, false);
		tracker_runtimes_poll(r->tracker, now);
		if (opts->duration > 0 && now - r->m.run.start_ktime_ns >= opts->duration * 1e9)
			break;
		/* (the last interval is written once the run has ended; with
		 * records still waiting, the first past the end cuts) */
		if (continuous_due(&r->cont, now) && !bpf_session_backlog(r->bpf))
			cut_interval(r, now);
		if (opts->command && waitpid(r->launch.pid, NULL, WNOHANG) == r->launch.pid)
			break;
		if (!opts->command && waiter_targets_gone(&r->waiter))
			break;
		show_progress(r);
	}
}

/*
 * Stop sampling and tracing first, then drain everything that was queued:
 * with the probes still counting, a target that runs on would fill the
 * ring as fast as the drain empties it.  Then the kernel's counters and
 * aggregates, and the events in time order.
 */
static void finish(struct record *r)
{
	uint64_t counters[COLLECTOR_CNT_MAX] = { 0 }, lost_by_event[COLLECTOR_MAX_EVENTS], by_ip;
	uint64_t tcounters[COLLECTOR_TCNT_MAX] = { 0 };

	writing = 1;
	if (r->front->stopping)
		r->front->stopping(r->front->ctx);
	decode_window_end(&r->m);
	bpf_session_stop_sampling(r->bpf);
	/* the blocks still going on, up to the window's end */
	bpf_session_window_cut(r->bpf, r->m.run.end_ktime_ns, true);
	uprobes_stop(r->uprobes);
	tracker_end_window(r->tracker);
	if (r->save)
		save_records_put(r->save, SAVE_WINDOW_END, &r->m.run.end_ktime_ns, sizeof(uint64_t));
	decode_energy(&r->m, &r->powercap, true);
	while (bpf_session_drain(r->bpf, 0) > 0)
		;
	/* the maps of processes exec'd just before: the sums below name them */
	tracker_settle_maps(r->tracker, run_clock_ns(true), true);
	/* the sums in the kernel's by-stack maps, as records after the ring's */
	if (bpf_session_read_aggregates(r->bpf) < 0)
		fprintf(stderr, "collector: cannot read the off-CPU sums: out of memory\n");
	bpf_session_counters(r->bpf, counters);
	decode_sampler_counters(&r->m, &r->runtimes, counters);
	if (bpf_session_lost_by_event(r->bpf, lost_by_event) == 0)
		decode_events_lost(&r->m, lost_by_event, COLLECTOR_MAX_EVENTS);
	record_unwind_finish(&r->unw, &r->m, r->opts->verbose);
	/* every sample the kernel took is in ip_counts (COLLECTOR_COUNT_BY_IP),
	 * or counted as not fitting there; else it counted them */
	if (bpf_session_aggregate_total(r->bpf, &by_ip) != 0)
		by_ip = 0;
	if (!by_ip)
		by_ip = counters[COLLECTOR_CNT_AGG_SAMPLES];
	r->fig.kernel_samples = decode_kernel_samples(&r->m, by_ip,
						      counters[COLLECTOR_CNT_AGG_FULL]);
	if (r->uprobes) {
		/* the Python functions met, as traced functions, before their
		 * aggregates are read */
		uprobes_python_functions(r->uprobes, add_python_function, r);
		struct save_func_stats saved = { r->save, &r->m };

		if (r->save)
			uprobes_read_stats(r->uprobes, save_records_func_stats, &saved);
		else
			uprobes_read_stats(r->uprobes, decode_func_stats, &r->m);
		uprobes_counters(r->uprobes, tcounters);
		decode_trace_counters(&r->m, tcounters);
	}
	ask_names(r);
	tracker_finish(r->tracker);
	decode_run_costs(&r->m, phases_cpu_ns() - r->cpu0, bpf_session_run_time_ns(r->bpf));
	model_seal_events(&r->m); /* an I/O error there is counted as lost events */
	model_sort_by_time(&r->m);
	model_events_tally(&r->m);
	r->fig.duration_s = (r->m.run.end_ktime_ns - r->m.run.start_ktime_ns) / 1e9;
	r->fig.target_cpu_ns = tracker_target_cpu_ns(r->tracker);
	r->fig.cpus = bpf_session_online_cpus(r->bpf);
	r->fig.sampler_runs = bpf_session_sampler_runs(r->bpf);
	if (r->save)
		save_records_end(r->save, &r->m, r->fig.cpus, counters, by_ip,
				 r->uprobes ? tcounters : NULL);
}

/* What the run says, by the front end: 0 or an exit code. */
static int report(struct record *r, const struct export_options *eo)
{
	if (!r->front->report)
		return 0;
	return r->front->report(r->front->ctx, &r->m, &r->fig, r->push, eo);
}

/* Every format asked for (or that applies), the push, then the summary. */
static int write_outputs(struct record *r)
{
	const struct collector_options *opts = r->opts;
	struct export_options eo = export_options_of(r);
	unsigned int formats = opts->push_only ? 0 :
			       r->formats ? r->formats : formats_applicable(&r->m);
	int rc = EXIT_OK, said;

	if (opts->stacks) /* its listing and -f files are the front end's */
		return report(r, &eo);
	if (r->cont.interval_ns) {
		/* the last interval, to the end of the run: the summary's */
		formats = interval_formats(r);
		r->fig.window_start_ns = r->cont.start_ktime_ns + r->m.run.ktime_to_epoch_ns;
		continuous_write(&r->cont, &r->m, formats, &eo, r->m.run.end_ktime_ns, NULL, true);
		rc = r->cont.first_err ? EXIT_FAILURE_RUN : EXIT_OK;
		r->fig.intervals = r->cont.written;
		/* counted as decoded, not as written: a sample lost between
		 * intervals would show as a difference from the files' sum */
		r->fig.interval_samples = tracker_sample_count(r->tracker) - r->cont.sums;
	} else {
		if (formats)
			rc = formats_write(&r->m, formats, &eo) ? EXIT_FAILURE_RUN : EXIT_OK;
		if (r->push && model_sample_count(&r->m) + model_sum_records(&r->m))
			push_model(r->push, &r->m);
	}
	if (r->push)
		push_finish(r->push);
	said = report(r, &eo);
	if (!formats && !r->push && !opts->quiet)
		fprintf(stderr, "collector: nothing was collected, so no file was written\n");
	return rc ? rc : said;
}

static void cleanup(struct record *r, int rc)
{
	if (r->launch.pid > 0 && rc != EXIT_OK && !writing)
		launch_abort(&r->launch);
	waiter_close(&r->waiter);
	uprobes_close(r->uprobes);
	trace_files_free(&r->trace_files);
	tracker_free(r->tracker);
	record_unwind_close(&r->unw);
	runtimes_close(&r->runtimes);
	bpf_session_close(r->bpf);
	symbolizer_free(r->sym);
	kernel_names_free(r->knames);
	if (r->model_ready)
		model_free(&r->m);
	save_records_close(r->save);
	push_free(r->push);
}

int run_session(const struct collector_options *opts, const struct run_front *front)
{
	static const struct run_front none = { 0 };
	struct record r = {
		.opts = opts,
		.front = front ? front : &none,
		.formats = opts->formats,
		.launch = { .pid = -1, .go_fd = -1, .err_fd = -1 },
		.waiter = { .epfd = -1 },
		.cpu0 = phases_cpu_ns(),
	};
	static const struct {
		int (*run)(struct record *r);
		const char *name;
	} steps[] = {
		{ open_model, "start: model, symbolizer" },
		{ resolve_tracing, "start: --trace's functions" },
		{ open_sampling, "start: BPF load and attach" },
		{ add_targets, "start: targets" },
		{ attach_tracing, "start: uprobes" },
		{ start, "start: sampling" },
	};
	int rc;

	phases_start(&r.phases, opts->verbose);
	rc = check_and_prepare_output(&r);
	if (rc)
		return rc;
	phases_mark(&r.phases, "start: checks, output");
	/* from here on every exit goes through cleanup */
	for (size_t i = 0; !rc && i < sizeof(steps) / sizeof(steps[0]); i++) {
		rc = steps[i].run(&r);
		phases_mark(&r.phases, steps[i].name);
	}
	if (!rc) {
		drain_until_stopped(&r);
		phases_mark(&r.phases, "the run");
		finish(&r);
		phases_mark(&r.phases, "end: stop, drain, sums");
		rc = write_outputs(&r);
		phases_mark(&r.phases, "end: files, summary");
	}
	cleanup(&r, rc);
	phases_mark(&r.phases, "end: cleanup");
	phases_print(&r.phases, stderr);
	return rc;
}
