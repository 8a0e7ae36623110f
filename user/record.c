// SPDX-License-Identifier: GPL-2.0
/*
 * `collector [OPTION...] [-- COMMAND]`: one profiling run.
 *
 * Check everything that can be checked before loading BPF (privileges,
 * targets, output directory), load and attach, start or find the targets,
 * drain the ring buffer until told to stop, then drain what is left, read
 * the kernel's counters, write every output and print the summary.
 */
#include "record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf_session.h"
#include "export.h"
#include "framepointers.h"
#include "launch.h"
#include "model.h"
#include "powercap.h"
#include "privileges.h"
#include "summary.h"
#include "symbolize.h"
#include "tracker.h"
#include "tracing.h"

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t writing;

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

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Epoch = ktime + offset, measured with the tightest of a few brackets. */
static int64_t measure_ktime_offset(void)
{
	uint64_t best_gap = UINT64_MAX;
	int64_t offset = 0;

	for (int i = 0; i < 5; i++) {
		uint64_t r1 = clock_ns(CLOCK_REALTIME), m = clock_ns(CLOCK_MONOTONIC);
		uint64_t r2 = clock_ns(CLOCK_REALTIME);

		if (r2 - r1 < best_gap) {
			best_gap = r2 - r1;
			offset = (int64_t)(r1 + (r2 - r1) / 2) - (int64_t)m;
		}
	}
	return offset;
}

static uint64_t own_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

/* A process we may profile: alive, not a zombie, not a kernel thread. */
static int check_pid(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	FILE *f;
	char state;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "collector: no process with PID %d\n", pid);
		return -ESRCH;
	}
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		fprintf(stderr, "collector: no process with PID %d\n", pid);
		return -ESRCH;
	}
	fclose(f);
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2) {
		fprintf(stderr, "collector: cannot read the state of PID %d\n", pid);
		return -EINVAL;
	}
	if (state == 'Z' || state == 'X') {
		fprintf(stderr, "collector: PID %d is a zombie (it has exited); "
			"profile a running process\n", pid);
		return -ESRCH;
	}
	if (flags & 0x00200000) { /* PF_KTHREAD */
		fprintf(stderr, "collector: PID %d is a kernel thread; use -a to sample "
			"the kernel\n", pid);
		return -EINVAL;
	}
	return 0;
}

/* A -p target that has exited (a zombie counts as gone). */
static bool pid_gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return true;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return !p || p[2] == 'Z' || p[2] == 'X';
}

/*
 * What the drain loop sleeps on: the ring buffer (its epoll fd wakes only
 * when the ring fills past a threshold: samples are submitted without
 * wakeups) and a pidfd per target process, which turns readable when the
 * process exits, so the run ends at once rather than at the next tick, and
 * nothing reads /proc/PID/stat on every tick.
 */
struct waiter {
	int epfd;
	const pid_t *pids;
	int *pidfds;        /* -1: no pidfd (an old kernel): /proc is read */
	bool *gone;
	int n;
};

#define WAITER_RING UINT32_MAX

static int waiter_open(struct waiter *w, int ring_epfd, const pid_t *pids, int n)
{
	struct epoll_event ev = { .events = EPOLLIN };

	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->pids = pids;
	w->n = n;
	w->pidfds = calloc(n + 1, sizeof(*w->pidfds));
	w->gone = calloc(n + 1, sizeof(*w->gone));
	if (w->epfd < 0 || !w->pidfds || !w->gone)
		return -ENOMEM;
	ev.data.u32 = WAITER_RING;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, ring_epfd, &ev) != 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		w->pidfds[i] = syscall(SYS_pidfd_open, pids[i], 0);
		ev.data.u32 = i;
		if (w->pidfds[i] >= 0 && epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->pidfds[i], &ev) != 0) {
			close(w->pidfds[i]);
			w->pidfds[i] = -1;
		}
	}
	return 0;
}

/* Sleeps until the ring asks to be drained, a target exits, a signal
 * comes or timeout_ms pass. */
static void waiter_wait(struct waiter *w, int timeout_ms)
{
	struct epoll_event evs[8];
	int n = epoll_wait(w->epfd, evs, 8, timeout_ms);

	for (int i = 0; i < n; i++) {
		uint32_t k = evs[i].data.u32;

		if (k == WAITER_RING || (int)k >= w->n)
			continue;
		/* level-triggered and readable for good: stop watching it */
		w->gone[k] = true;
		epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->pidfds[k], NULL);
	}
}

/* Every target has exited (a zombie counts as gone). */
static bool waiter_targets_gone(struct waiter *w)
{
	if (!w->n)
		return false;
	for (int i = 0; i < w->n; i++) {
		if (!w->gone[i] && w->pidfds[i] < 0)
			w->gone[i] = pid_gone(w->pids[i]);
		if (!w->gone[i])
			return false;
	}
	return true;
}

static void waiter_close(struct waiter *w)
{
	for (int i = 0; w->pidfds && i < w->n; i++)
		if (w->pidfds[i] >= 0)
			close(w->pidfds[i]);
	if (w->epfd > 0)
		close(w->epfd);
	free(w->pidfds);
	free(w->gone);
	memset(w, 0, sizeof(*w));
}

/* A fresh output directory: created here, or an existing empty one that is
 * a real directory (never a symlink), given to the invoking user. */
static int make_output_dir(const char *dir, const struct invoking_user *user)
{
	struct dirent *d;
	DIR *dp;
	int fd, err;

	if (mkdir(dir, 0755) == 0) {
		chmod(dir, 0755);
		if (user->set && chown(dir, user->uid, user->gid) != 0) {
			err = -errno;
			fprintf(stderr, "collector: cannot give %s to uid %u: %s\n", dir,
				(unsigned)user->uid, strerror(errno));
			return err;
		}
		return 0;
	}
	if (errno != EEXIST) {
		err = -errno;
		fprintf(stderr, "collector: cannot create the output directory %s: %s; "
			"choose another with -o\n", dir, strerror(errno));
		return err;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "collector: %s exists and is not a directory; "
			"choose another output with -o\n", dir);
		return -EEXIST;
	}
	dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	/* never mix two runs in one directory */
	while ((d = readdir(dp)) != NULL) {
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..")) {
			closedir(dp);
			fprintf(stderr, "collector: the output directory %s is not empty; "
				"remove it or choose another with -o\n", dir);
			return -ENOTEMPTY;
		}
	}
	closedir(dp);
	if (access(dir, W_OK) != 0) {
		err = -errno;
		fprintf(stderr, "collector: cannot write into %s: %s\n", dir, strerror(errno));
		return err;
	}
	return 0;
}

/* --call-graph auto: dwarf when a target's executable lacks frame
 * pointers.  System-wide runs keep the kernel's frame-pointer walk: copying
 * every process's stack costs too much to be a default. */
static bool want_dwarf(const struct collector_options *opts)
{
	char path[64];
	char *exe;

	if (opts->call_graph != CALL_GRAPH_AUTO)
		return opts->call_graph == CALL_GRAPH_DWARF;
	if (opts->all_cpus)
		return false;
	if (opts->command) {
		exe = launch_find_command(opts->command[0]);
		if (exe) {
			int fp = elf_uses_frame_pointers(exe);

			free(exe);
			return fp == 0;
		}
		return false;
	}
	for (int i = 0; i < opts->n_pids; i++) {
		snprintf(path, sizeof(path), "/proc/%d/exe", opts->pids[i]);
		if (elf_uses_frame_pointers(path) == 0)
			return true;
	}
	return false;
}

/* Reads the symbols and line tables of an image now rather than on its
 * first sample, inside the targets' time. */
static void warm_image(struct symbolizer *sym, struct model *m, const char *path)
{
	struct stat st;
	uint32_t img;

	if (stat(path, &st) != 0)
		return;
	img = symbolizer_image(sym, path, NULL, st.st_dev, st.st_ino);
	symbolizer_location(sym, img, m->images.items[img].text_start);
}

/*
 * One-off work before sampling starts: the kernel's symbols, the images the
 * targets map (for a command not started yet: its executable, and the C
 * library, which the collector maps too).
 */
static void warm_symbols(struct symbolizer *sym, struct model *m, char *const *command)
{
	char line[4608], *exe;
	FILE *f;

	symbolizer_kernel_image(sym);
	for (size_t p = 0; p < m->processes.len; p++) {
		const struct model_process *proc = &m->processes.items[p];

		for (size_t i = 0; i < proc->maps.len; i++) {
			uint32_t img = proc->maps.items[i].image;

			symbolizer_location(sym, img, m->images.items[img].text_start);
			proc = &m->processes.items[p];
		}
	}
	if (!command)
		return;
	exe = launch_find_command(command[0]);
	if (exe)
		warm_image(sym, m, exe);
	free(exe);
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');

		if (!path || !strstr(path, "/libc.so"))
			continue;
		path[strcspn(path, "\n")] = 0;
		warm_image(sym, m, path);
		break;
	}
	if (f)
		fclose(f);
}

static void default_output(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(buf, size, "collector-%Y%m%d-%H%M%S", &tm);
}

static unsigned int read_cpu_mhz(void)
{
	char line[256];
	double mhz = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			break;
	fclose(f);
	return (unsigned int)(mhz + 0.5);
}

static char *join_argv(char *const argv[])
{
	size_t n = 1;
	char *s;

	for (int i = 0; argv[i]; i++)
		n += strlen(argv[i]) + 1;
	s = calloc(1, n);
	if (!s)
		return NULL;
	for (int i = 0; argv[i]; i++) {
		if (i)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

/* A reading of the RAPL energy counters into the model, at most every
 * 100 ms: the sampler format turns them into watts per period. */
static void read_energy(struct powercap *pc, struct model *m, bool force)
{
	uint64_t now = clock_ns(CLOCK_REALTIME), uj;
	struct model_energy *e;

	if (!pc->n)
		return;
	if (!force && m->energy.len &&
	    now < m->energy.items[m->energy.len - 1].time_ns + 100000000ULL)
		return;
	if (powercap_read(pc, &uj) != 0)
		return;
	e = MODEL_VEC_PUSH(m->energy);
	e->time_ns = now;
	e->energy_uj = uj;
}

/*
 * How long the loop sleeps when nothing wakes it.  Samples reach user space
 * only then, and a process's samples are best resolved while it is alive
 * (a library it mapped since it started is read from its /proc maps): short
 * while processes come and go, longer once the targets have settled, where
 * each wakeup would cost more than the samples it drains.
 */
static int drain_interval_ms(const struct collector_options *opts, const struct tracker *t)
{
	if (opts->all_cpus ||
	    clock_ns(CLOCK_MONOTONIC) < tracker_last_task_ktime(t) + 1000000000ULL)
		return 100;
	return 500;
}

static int on_record(void *ctx, const void *data, size_t size)
{
	return tracker_handle_record(ctx, data, size);
}

struct status {
	bool enabled;
	uint64_t start_ns, last_ns, last_samples;
};

static void status_update(struct status *st, uint64_t samples, uint64_t lost, uint64_t calls,
			  bool final)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (!st->enabled)
		return;
	if (!final && now - st->last_ns < 1000000000ULL)
		return;
	if (final) {
		fprintf(stderr, "\r\033[K");
		return;
	}
	fprintf(stderr, "\r\033[K  %6.1f s  %10llu samples  %7.0f samples/s  %llu lost",
		(now - st->start_ns) / 1e9, (unsigned long long)samples,
		st->last_ns ? (samples - st->last_samples) / ((now - st->last_ns) / 1e9) : 0.0,
		(unsigned long long)lost);
	if (calls)
		fprintf(stderr, "  %llu traced events", (unsigned long long)calls);
	st->last_ns = now;
	st->last_samples = samples;
}

static const char *const counter_names[COLLECTOR_CNT_MAX] = {
	[COLLECTOR_CNT_RB_FULL_SAMPLE] = "ring buffer full (samples)",
	[COLLECTOR_CNT_RB_FULL_TASK] = "ring buffer full (fork/exec/exit)",
	[COLLECTOR_CNT_RB_FULL_SWITCH] = "ring buffer full (switches)",
	[COLLECTOR_CNT_KSTACK_FAIL] = "kernel stack walk failed",
	[COLLECTOR_CNT_AGG_FULL] = "aggregation map full",
	[COLLECTOR_CNT_TARGETS_FULL] = "children not followed",
};

static void record_counters(struct model *m, const uint64_t c[COLLECTOR_CNT_MAX])
{
	for (int i = 0; i < COLLECTOR_CNT_MAX; i++)
		if (counter_names[i])
			model_count_lost(m, counter_names[i], c[i]);
	model_count_stat(m, "ring_wakeups", c[COLLECTOR_CNT_WAKEUPS]);
}

int record_run(const struct collector_options *opts)
{
	struct bpf_session_config cfg = { 0 };
	struct bpf_session *bpf = NULL;
	struct symbolizer *sym = NULL;
	struct tracker *tracker = NULL;
	struct tracing *tracing = NULL;
	struct tracing_config tcfg = { 0 };
	struct invoking_user user;
	struct launch launch = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct export_options eo = { 0 };
	struct summary_figures fig = { 0 };
	struct status status = { 0 };
	struct waiter waiter = { .epfd = -1 };
	struct powercap powercap;
	uint64_t counters[COLLECTOR_CNT_MAX] = { 0 }, by_ip, cpu0;
	unsigned int formats;
	char outdir[4096];
	struct model m;
	bool child_exited = false;
	int rc = EXIT_FAILURE_RUN, err, i;

	cpu0 = own_cpu_ns();
	if (invoking_user_get(&user) != 0)
		return EXIT_USAGE;
	if (privileges_check() != 0) {
		fprintf(stderr, "collector: loading BPF programs needs root or CAP_BPF and "
			"CAP_PERFMON: run it as 'sudo collector ...'\n");
		return EXIT_NO_PRIVILEGE;
	}
	for (i = 0; i < opts->n_pids; i++)
		if (check_pid(opts->pids[i]) != 0)
			return EXIT_NO_TARGET;
	if (opts->command && launch_check_command(opts->command[0]) != 0)
		return EXIT_NO_TARGET;

	if (opts->output)
		snprintf(outdir, sizeof(outdir), "%s", opts->output);
	else
		default_output(outdir, sizeof(outdir));
	if (make_output_dir(outdir, &user) != 0)
		return EXIT_OUTPUT;

	/* from here on every exit goes through cleanup */
	model_init(&m);
	/* events go to disk as they come, so memory stays flat however long
	 * the run; where the directory cannot hold such files, they stay in
	 * memory */
	err = model_spill_events(&m, outdir);
	if (err && opts->verbose)
		fprintf(stderr, "collector: keeping events in memory (no O_TMPFILE in %s: %s)\n",
			outdir, strerror(-err));

	install_signals();
	m.run.ktime_to_epoch_ns = measure_ktime_offset();
	m.run.system_wide = opts->all_cpus;
	m.run.freq_hz = opts->freq;
	m.run.period_ns = 1000000000ULL / opts->freq;
	m.run.ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	m.run.cpu_mhz = read_cpu_mhz();
	gethostname(m.run.hostname, sizeof(m.run.hostname) - 1);
	m.run.host_id = (uint32_t)gethostid();
	if (opts->command) {
		char *cmd = join_argv(opts->command);

		model_set_command_line(&m, cmd);
		free(cmd);
	}

	sym = symbolizer_new(&m);
	if (!sym) {
		fprintf(stderr, "collector: out of memory\n");
		goto cleanup;
	}
	formats = opts->formats;
	if (opts->n_trace_specs) {
		tcfg.specs = (char **)opts->trace_specs;
		tcfg.n_specs = opts->n_trace_specs;
		tcfg.pids = opts->pids;
		tcfg.n_pids = opts->n_pids;
		tcfg.command = opts->command;
		/* the event stream feeds XRay traces and Callgrind's exact calls */
		tcfg.stream_events = !formats || (formats & (FORMAT_XRAY | FORMAT_CALLGRIND));
		tcfg.n_args = opts->trace_args;
		tcfg.system_wide = opts->all_cpus;
		tcfg.verbose = opts->verbose;
		m.run.trace_nargs = opts->trace_args;
		if (tracing_resolve(&m, sym, &tcfg) != 0) {
			rc = EXIT_NO_TARGET;
			goto cleanup;
		}
	}
	cfg.system_wide = opts->all_cpus;
	cfg.trace_switches = !opts->no_switches;
	cfg.freq = opts->freq;
	cfg.ring_bytes = opts->ring_bytes;
	cfg.dwarf = want_dwarf(opts);
	cfg.stack_bytes = opts->stack_size;
	snprintf(m.run.call_graph, sizeof(m.run.call_graph), "%s", cfg.dwarf ? "dwarf" : "fp");
	cfg.verbose = opts->verbose;
	cfg.on_record = on_record;
	err = bpf_session_open(&bpf, &cfg);
	if (err) {
		rc = EXIT_BPF;
		goto cleanup;
	}
	tracker = tracker_new(&m, sym);
	if (!tracker) {
		fprintf(stderr, "collector: out of memory\n");
		goto cleanup;
	}
	if (!opts->all_cpus)
		tracker_ignore_process(tracker, getpid());
	if (cfg.dwarf && tracker_enable_unwinding(tracker) != 0) {
		fprintf(stderr, "collector: out of memory\n");
		goto cleanup;
	}
	/* the ring callback needs the tracker: set it before any record */
	bpf_session_set_context(bpf, tracker);
	for (i = 0; i < opts->n_pids; i++) {
		bpf_session_add_target(bpf, opts->pids[i]);
		if (tracker_add_process(tracker, opts->pids[i], clock_ns(CLOCK_MONOTONIC)) != 0) {
			fprintf(stderr, "collector: PID %d exited during start-up\n", opts->pids[i]);
			rc = EXIT_NO_TARGET;
			goto cleanup;
		}
	}
	if (opts->command) {
		err = launch_prepare(&launch, opts->command,
				     user.set && !opts->run_as_root ? &user : NULL);
		if (err) {
			fprintf(stderr, "collector: cannot start '%s': %s\n", opts->command[0],
				strerror(-err));
			rc = EXIT_NO_TARGET;
			goto cleanup;
		}
		tracker_expect_exec(tracker, launch.pid);
		bpf_session_add_target(bpf, launch.pid);
	}

	/* after the targets exist: probes go into their address spaces */
	if (opts->n_trace_specs) {
		double overhead;

		if (tracing_open(&tracing, bpf, &m, &tcfg) != 0) {
			rc = EXIT_BPF;
			goto cleanup;
		}
		overhead = tracing_calibrate(tracing);
		if (overhead >= 0)
			model_count_stat(&m, "probe_overhead_ns", (uint64_t)(overhead + 0.5));
		else if (opts->verbose)
			fprintf(stderr, "collector: probe cost calibration failed: %s\n",
				strerror((int)-overhead));
		if (opts->command)
			err = tracing_attach(tracing, &launch.pid, 1);
		else
			err = tracing_attach(tracing, opts->pids, opts->n_pids);
		if (err) {
			rc = EXIT_BPF;
			goto cleanup;
		}
		model_count_stat(&m, "attach_us", (uint64_t)(tracing_attach_seconds(tracing) * 1e6));
		if (!opts->quiet)
			fprintf(stderr, "collector: tracing %zu functions (attached in %.3f s)\n",
				m.traced.len, tracing_attach_seconds(tracing));
	}

	/* One-off work before the targets run, not in their window. */
	warm_symbols(sym, &m, opts->command);

	m.run.start_ktime_ns = clock_ns(CLOCK_MONOTONIC);
	m.run.start_ns = m.run.start_ktime_ns + m.run.ktime_to_epoch_ns;
	tracker_begin_window(tracker);
	err = bpf_session_start_sampling(bpf);
	if (err) {
		rc = EXIT_BPF;
		goto cleanup;
	}
	powercap_open(&powercap, NULL);
	read_energy(&powercap, &m, true);
	if (opts->command && stop_requested) {
		/* interrupted while attaching: the command never starts */
		fprintf(stderr, "collector: interrupted before '%s' started\n", opts->command[0]);
		launch_abort(&launch);
		launch.pid = -1;
	} else if (opts->command) {
		tracker_exec_allowed(tracker, clock_ns(CLOCK_MONOTONIC));
		err = launch_start(&launch);
		if (err) {
			fprintf(stderr, "collector: cannot run '%s': %s\n", opts->command[0],
				strerror(-err));
			launch.pid = -1;
			rc = EXIT_NO_TARGET;
			goto cleanup;
		}
	}

	err = opts->command ? waiter_open(&waiter, bpf_session_epoll_fd(bpf), &launch.pid, 1)
			    : waiter_open(&waiter, bpf_session_epoll_fd(bpf), opts->pids,
					  opts->n_pids);
	if (err) {
		fprintf(stderr, "collector: cannot wait for the ring buffer: %s\n", strerror(-err));
		goto cleanup; /* the command, if any, is stopped there */
	}
	status.enabled = !opts->quiet && isatty(STDERR_FILENO);
	status.start_ns = m.run.start_ktime_ns;
	while (!stop_requested) {
		uint64_t now;

		waiter_wait(&waiter, drain_interval_ms(opts, tracker));
		err = bpf_session_drain(bpf);
		if (err < 0) {
			fprintf(stderr, "collector: reading the ring buffer failed: %s\n",
				strerror(-err));
			break;
		}
		read_energy(&powercap, &m, false);
		now = clock_ns(CLOCK_MONOTONIC);
		if (opts->duration > 0 && now - m.run.start_ktime_ns >= opts->duration * 1e9)
			break;
		if (opts->command && waitpid(launch.pid, NULL, WNOHANG) == launch.pid) {
			child_exited = true;
			break;
		}
		if (!opts->command && waiter_targets_gone(&waiter))
			break;
		if (status.enabled) {
			bpf_session_counters(bpf, counters);
			status_update(&status, tracker_sample_count(tracker),
				      counters[COLLECTOR_CNT_RB_FULL_SAMPLE] +
				      counters[COLLECTOR_CNT_RB_FULL_TASK] +
				      counters[COLLECTOR_CNT_RB_FULL_SWITCH],
				      model_trace_event_count(&m), false);
		}
	}
	writing = 1;
	status_update(&status, 0, 0, 0, true);

	/* Stop sampling and tracing first, then drain everything that was
	 * queued: with the probes still counting, a target that runs on
	 * would fill the ring as fast as the drain empties it. */
	m.run.end_ktime_ns = clock_ns(CLOCK_MONOTONIC);
	m.run.end_ns = m.run.end_ktime_ns + m.run.ktime_to_epoch_ns;
	bpf_session_stop_sampling(bpf);
	tracing_stop(tracing);
	tracker_end_window(tracker);
	read_energy(&powercap, &m, true);
	while (bpf_session_drain(bpf) > 0)
		;
	bpf_session_counters(bpf, counters);
	record_counters(&m, counters);
	/* every sample the kernel saw is in ip_counts, or counted as not
	 * fitting there */
	if (bpf_session_aggregate_total(bpf, &by_ip) != 0)
		by_ip = 0;
	fig.kernel_samples = by_ip + counters[COLLECTOR_CNT_AGG_FULL];
	model_count_stat(&m, "kernel_samples", fig.kernel_samples);
	if (tracing)
		tracing_collect(tracing);
	tracker_finish(tracker, m.run.end_ktime_ns);
	m.run.bpf_run_ns = bpf_session_run_time_ns(bpf);
	m.run.collector_cpu_ns = own_cpu_ns() - cpu0;
	model_seal_events(&m); /* an I/O error there is counted as lost events */
	model_sort_by_time(&m);

	fig.duration_s = (m.run.end_ktime_ns - m.run.start_ktime_ns) / 1e9;
	fig.target_cpu_ns = tracker_target_cpu_ns(tracker);
	fig.cpus = bpf_session_online_cpus(bpf);

	if (!formats)
		formats = export_applicable_formats(&m);
	eo.dir = outdir;
	eo.chown_files = user.set;
	eo.uid = user.uid;
	eo.gid = user.gid;
	eo.sampler_layout_spec = opts->sampler_layout_spec;
	eo.hpctoolkit_draft = opts->hpctoolkit_draft;
	eo.quiet = opts->quiet;
	rc = export_all(&m, formats, &eo) ? EXIT_FAILURE_RUN : EXIT_OK;
	if (!opts->quiet)
		summary_print(stdout, &m, &fig);
	if (!formats && !opts->quiet)
		fprintf(stderr, "collector: nothing was collected, so no file was written\n");
	(void)child_exited;
cleanup:
	if (launch.pid > 0 && rc != EXIT_OK && !writing)
		launch_abort(&launch);
	waiter_close(&waiter);
	tracing_close(tracing);
	tracker_free(tracker);
	bpf_session_close(bpf);
	symbolizer_free(sym);
	model_free(&m);
	return rc;
}
