// SPDX-License-Identifier: GPL-2.0
/* The BPF side of a run: skeleton, perf events, ring buffer, kernel maps. */
#include "loader/bpf_session.h"

#include <errno.h>
#include <time.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/idmap.h"
#include "lib/proc.h"
#include "loader/bpf_session_internal.h"
#include "sample.skel.h"


/* A drain's end, checked every DEADLINE_CHECK records: a clock read costs
 * about 20 ns, a record 0.3-2 us. */
#define DEADLINE_CHECK 64
/* What the ring callback returns to stop a drain at its deadline: libbpf
 * moves past the record first, so nothing is read twice or lost. */
#define DRAIN_DEADLINE_REACHED (-EAGAIN)

uint64_t bpf_session_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool verbose_libbpf;

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose_libbpf)
		return 0;
	if (level == LIBBPF_INFO && !verbose_libbpf)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* The sampler keeps to the CPU share the kernel allows perf's handlers
 * (kernel.perf_cpu_time_max_percent, 25 by default; 0 or 100: no limit;
 * COLLECTOR_SAMPLER_SHARE, a percentage, overrides it for this run): after
 * t ns of sampling, t * (100 - share) / share ns without. */
static uint32_t idle_per_busy(const struct bpf_knobs *k)
{
	double share = k->sampler_share > 0 ? k->sampler_share
		: proc_sysctl_ulong("/proc/sys/kernel/perf_cpu_time_max_percent", 25);

	if (!(share > 0 && share < 100))
		return 0;
	return (uint32_t)((100 - share) / share + 0.5);
}

static int ring_callback(void *ctx, void *data, size_t size)
{
	struct bpf_session *s = ctx;
	int err = s->cfg.on_record(s->cfg.ctx, data, size);

	if (err)
		return err;
	if (s->drain_deadline_ns && ++s->drained % DEADLINE_CHECK == 0 &&
	    bpf_session_monotonic_ns() >= s->drain_deadline_ns)
		return DRAIN_DEADLINE_REACHED;
	return 0;
}

/*
 * COLLECTOR_VERIFIER_STATS=1: each program's verifier statistics on stderr
 * ("processed N insns ..."): what the unwinder costs to load, for the bench
 * and for changes to the BPF programs.
 */
#define VERIFIER_LOG_BYTES 4096
static char (*verifier_logs)[VERIFIER_LOG_BYTES];

void bpf_session_verifier_stats_begin(struct bpf_object *obj, bool on)
{
	struct bpf_program *prog;
	int n = 0, i = 0;

	if (!on)
		return;
	bpf_object__for_each_program(prog, obj)
		n++;
	verifier_logs = calloc(n, VERIFIER_LOG_BYTES);
	if (!verifier_logs)
		return;
	bpf_object__for_each_program(prog, obj) {
		bpf_program__set_log_buf(prog, verifier_logs[i++], VERIFIER_LOG_BYTES);
		bpf_program__set_log_level(prog, 4);
	}
}

void bpf_session_verifier_stats_end(struct bpf_object *obj)
{
	struct bpf_program *prog;
	int i = 0;

	if (!verifier_logs)
		return;
	bpf_object__for_each_program(prog, obj) {
		const char *log = verifier_logs[i++];

		if (bpf_program__autoload(prog))
			fprintf(stderr, "collector: verifier: %s: %s", bpf_program__name(prog),
				strstr(log, "processed") ? strstr(log, "processed") : "no statistics\n");
	}
	free(verifier_logs);
	verifier_logs = NULL;
}

/* Bytes of user stack copied for a cfi sample unwound in user space. */
#define CFI_FALLBACK_STACK_BYTES 32768

int bpf_session_open(struct bpf_session **out, const struct bpf_session_config *cfg)
{
	struct bpf_session *s;
	uint64_t t0 = bpf_session_monotonic_ns(), t_open, t_load;
	int err;

	verbose_libbpf = cfg->verbose;
	libbpf_set_print(print_libbpf);
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cfg = *cfg;
	s->stats_fd = -1;
	s->n_cpus = libbpf_num_possible_cpus();
	if (s->n_cpus <= 0) {
		err = s->n_cpus ? s->n_cpus : -EINVAL;
		goto fail;
	}
	s->skel = sample_bpf__open();
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "collector: cannot open the sampling BPF object: %s\n",
			strerror(errno));
		goto fail;
	}
	s->skel->rodata->filter_tgids = !cfg->system_wide;
	s->skel->rodata->trace_switches = cfg->trace_switches;
	s->skel->rodata->wakeup_bytes = (uint64_t)cfg->ring_bytes / 4;
	s->skel->rodata->dwarf_mode = cfg->dwarf;
	/* cfi copies the stack of a sample before its image's table only:
	 * 32 KiB, which an interpreter's start (python3's imports, 8 KiB
	 * short of its deepest) needs; a copy stops at the stack's top */
	s->skel->rodata->stack_bytes = cfg->cfi ? CFI_FALLBACK_STACK_BYTES : cfg->stack_bytes;
	s->skel->rodata->cfi_mode = cfg->cfi;
	/* the runtimes' walks (of samples, of switch-outs) are programs
	 * loaded when their first process is met (loader/runtime_procs.c) */
	s->skel->rodata->hand_off_java = cfg->walk_kinds & 1u << COLLECTOR_FRAME_JAVA;
	s->skel->rodata->walk_python = cfg->walk_kinds & 1u << COLLECTOR_FRAME_PYTHON;
	bpf_program__set_autoload(s->skel->progs.sample_java, false);
	bpf_program__set_autoload(s->skel->progs.sample_python, false);
	bpf_program__set_autoload(s->skel->progs.offcpu_java, false);
	bpf_program__set_autoload(s->skel->progs.offcpu_python, false);
	/* the JVM's walks' cache is theirs (runtime_procs.c) */
	bpf_map__set_max_entries(s->skel->maps.hotspot_blob_facts, 1);
	/* the program finds the mappings of a process without a table in
	 * its VMAs (bpf/unwind_learn.bpf.h); off for the tests and
	 * benchmarks that compare with the copies for user space */
	s->skel->rodata->unwind_learn = cfg->cfi && !cfg->knobs.unwind_no_learn;
	/* the kernel's own frame-pointer walker instead of the program's,
	 * for the tests that compare the two */
	s->skel->rodata->kernel_fp_walk = cfg->knobs.kernel_fp_walk;
	s->skel->rodata->idle_per_busy = idle_per_busy(&cfg->knobs);
	for (int i = 0; i < cfg->n_events && i < 32; i++)
		if (cfg->events[i].clock)
			s->skel->rodata->budgeted_events |= 1u << i;
	bpf_map__set_max_entries(s->skel->maps.events, cfg->ring_bytes);
	s->skel->rodata->off_cpu_min_ns = cfg->off_cpu_min_ns;
	s->skel->rodata->off_cpu_event = cfg->off_cpu_event;
	bpf_program__set_autoload(s->skel->progs.on_switch_offcpu, cfg->off_cpu);
	bpf_program__set_autoload(s->skel->progs.offcpu_window, cfg->off_cpu);
	bpf_program__set_autoload(s->skel->progs.find_sched_text, cfg->off_cpu);
	/* an LRU map is preallocated whatever its flags: 3.9 MiB, 1 ms */
	if (!cfg->off_cpu)
		bpf_map__set_max_entries(s->skel->maps.offcpu_states, 1);
	/* attached, a program runs at every context switch of the machine,
	 * even one that returns at once: at 999 Hz it was half the BPF time
	 * of a run (5.4 of 11.7 ms, make bench-cfi) */
	bpf_program__set_autoload(s->skel->progs.on_switch, cfg->trace_switches);
	if (!cfg->off_cpu) { /* the aggregation maps unused: one entry each */
		bpf_map__set_max_entries(s->skel->maps.agg_stacks, 1);
		bpf_map__set_max_entries(s->skel->maps.agg_counts, 1);
		/* and the window's pieces, a preallocated hash of 32 768
		 * (3.6 MiB) */
		bpf_map__set_max_entries(s->skel->maps.window_pieces, 1);
	}
	bpf_session_size_aggregates(s);
	/* dwarf mode builds records in a slot per CPU, and so does cfi for
	 * samples before their image's table; 1 entry when unused */
	bpf_map__set_max_entries(s->skel->maps.scratch, cfg->dwarf || cfg->cfi ? s->n_cpus : 1);
	bpf_session_verifier_stats_begin(s->skel->obj, cfg->knobs.verifier_stats);
	t_open = bpf_session_monotonic_ns();
	err = sample_bpf__load(s->skel);
	t_load = bpf_session_monotonic_ns();
	bpf_session_verifier_stats_end(s->skel->obj);
	if (err) {
		fprintf(stderr, "collector: cannot load the sampling BPF programs: %s "
			"(run with -v for the verifier's log)\n", strerror(-err));
		goto fail;
	}
	if (cfg->off_cpu)
		bpf_session_find_sched_text(s);
	err = sample_bpf__attach(s->skel);
	if (err) {
		fprintf(stderr, "collector: cannot attach the task tracepoints "
			"(tp_btf/sched_process_*, sched_switch): %s\n", strerror(-err));
		goto fail;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), ring_callback, s, NULL);
	if (!s->rb) {
		err = -errno;
		fprintf(stderr, "collector: cannot open the ring buffer: %s\n", strerror(errno));
		goto fail;
	}
	/* Program run time for the profiler's own cost; optional. */
	s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	/* where a short run's start goes (the verifier, in the load) */
	if (cfg->verbose)
		fprintf(stderr, "collector: BPF: opened and sized in %.1f ms, loaded (verified) in "
			"%.1f ms, attached in %.1f ms\n", (t_open - t0) / 1e6, (t_load - t_open) / 1e6,
			(bpf_session_monotonic_ns() - t_load) / 1e6);
	*out = s;
	return 0;
fail:
	bpf_session_close(s);
	return err;
}

void bpf_session_set_context(struct bpf_session *s, void *ctx)
{
	s->cfg.ctx = ctx;
}

int bpf_session_add_target(struct bpf_session *s, pid_t tgid)
{
	uint32_t key = tgid;
	uint8_t one = 1;

	if (bpf_map__update_elem(s->skel->maps.targets, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY) != 0)
		return -errno;
	if (!s->skel->bss->main_tgid)
		s->skel->bss->main_tgid = tgid;
	return 0;
}

void bpf_session_hold_target(struct bpf_session *s, pid_t tgid)
{
	s->skel->bss->held_tgid = tgid;
}

int bpf_session_remove_target(struct bpf_session *s, pid_t tgid)
{
	uint32_t key = tgid;

	if (bpf_map__delete_elem(s->skel->maps.targets, &key, sizeof(key), 0) != 0)
		return -errno;
	if (s->skel->bss->main_tgid == (uint32_t)tgid)
		s->skel->bss->main_tgid = 0;
	return 0;
}

int bpf_session_map_fd(struct bpf_session *s, const char *name)
{
	struct bpf_map *map = bpf_object__find_map_by_name(s->skel->obj, name);

	return map ? bpf_map__fd(map) : -ENOENT;
}

void bpf_session_next_unwind_epoch(struct bpf_session *s)
{
	__atomic_fetch_add(&s->skel->bss->unwind_epoch, 1, __ATOMIC_SEQ_CST);
}

const struct bpf_knobs *bpf_session_knobs(const struct bpf_session *s)
{
	return &s->cfg.knobs;
}

size_t bpf_session_ring_bytes(struct bpf_session *s)
{
	return s->cfg.ring_bytes;
}

static bool cpu_online(int cpu)
{
	char path[64];
	FILE *f;
	int c = '1';

	if (cpu == 0)
		return true; /* cpu0 often has no "online" file */
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "r");
	if (!f)
		return access(path, F_OK) != 0; /* no file: cannot go offline */
	c = fgetc(f);
	fclose(f);
	return c == '1';
}

/* A process with thousands of threads takes an event (an fd) per thread,
 * past the usual soft limit of 1024 open files: the soft limit goes up to
 * the hard one, as perf does.  True when it went up. */
static bool raise_open_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max)
		return false;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) == 0;
}

static void event_attr(struct perf_event_attr *attr, const struct perf_event_request *e)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = e->type;
	attr->size = sizeof(*attr);
	attr->config = e->config;
	attr->freq = e->use_freq;
	if (e->use_freq)
		attr->sample_freq = e->freq;
	else
		attr->sample_period = e->period;
}

int bpf_session_probe_event(const struct perf_event_request *e)
{
	struct perf_event_attr attr;
	int fd;

	event_attr(&attr, e);
	attr.disabled = 1;
	attr.exclude_kernel = 1; /* what an unprivileged caller may open */
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Event ev, kept with its link: on CPU cpu (pid -1) for -a, or following
 * thread pid and the tasks it creates from now on (cpu -1).  The link's
 * cookie tells the program which event fired. */
static int open_sampling_event(struct bpf_session *s, int ev, pid_t pid, int cpu)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = ev);
	struct perf_event_attr attr;
	struct bpf_link *link;
	int fd;

	if (s->n_events == s->cap_events) {
		int cap = s->cap_events ? 2 * s->cap_events : 16;
		struct bpf_link **links = realloc(s->links, cap * sizeof(*links));
		int *fds;

		if (!links)
			return -ENOMEM;
		s->links = links;
		fds = realloc(s->event_fds, cap * sizeof(*fds));
		if (!fds)
			return -ENOMEM;
		s->event_fds = fds;
		s->cap_events = cap;
	}
	event_attr(&attr, &s->cfg.events[ev]);
	attr.inherit = pid >= 0;
	fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EMFILE && raise_open_files())
		fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	link = bpf_program__attach_perf_event_opts(s->skel->progs.on_sample, fd, &opts);
	if (!link) {
		int err = -errno;

		close(fd);
		fprintf(stderr, "collector: cannot attach the sampling program to %s: %s\n",
			s->cfg.events[ev].name, strerror(-err));
		return err;
	}
	s->event_fds[s->n_events] = fd;
	s->links[s->n_events++] = link;
	return 0;
}

static int sample_every_cpu(struct bpf_session *s)
{
	for (int cpu = 0; cpu < s->n_cpus; cpu++) {
		if (!cpu_online(cpu))
			continue;
		for (int ev = 0; ev < s->cfg.n_events; ev++) {
			int err = open_sampling_event(s, ev, -1, cpu);

			if (err == -ENODEV)
				break; /* went offline */
			if (err) {
				fprintf(stderr, "collector: cannot open a %s perf event on CPU %d: %s\n",
					s->cfg.events[ev].name, cpu, strerror(-err));
				return err;
			}
		}
	}
	return s->n_events ? 0 : -ENODEV;
}

/* Every thread of tgid gets each event, which its future tasks inherit.  A
 * thread created while the list is read has no event yet and its creator
 * may have none to pass on: the list is read again until it brings no new
 * thread. */
static int sample_process(struct bpf_session *s, pid_t tgid)
{
	struct idmap followed = { 0 };
	bool again = true;
	int err = 0, ev = 0;

	for (int pass = 0; again && pass < 8 && !err; pass++) {
		pid_t *tids = NULL;
		size_t n = 0;

		again = false;
		if (proc_threads(tgid, &tids, &n) != 0)
			break; /* gone: its exit is seen by the tracker */
		for (size_t i = 0; i < n && !err; i++) {
			if (idmap_get(&followed, tids[i]) != UINT32_MAX)
				continue;
			for (ev = 0; ev < s->cfg.n_events && !err; ev++)
				err = open_sampling_event(s, ev, tids[i], -1);
			if (err == -ESRCH) {
				err = 0; /* the thread ended meanwhile */
				continue;
			}
			if (!err)
				err = idmap_put(&followed, tids[i], 1);
			again = true;
		}
		free(tids);
	}
	idmap_free(&followed);
	if (err)
		fprintf(stderr, "collector: cannot open a %s perf event for process %d: %s%s\n",
			s->cfg.events[ev > 0 ? ev - 1 : 0].name, tgid, strerror(-err),
			err == -EMFILE ?
			" (one per thread: raise the hard limit, ulimit -Hn, or use -a)" : "");
	return err;
}

void bpf_session_offcpu_since(struct bpf_session *s, uint64_t ktime_ns)
{
	s->skel->bss->offcpu_since_ns = ktime_ns;
}

/*
 * System-wide runs sample every CPU.  Runs on given processes follow their
 * threads instead (inherit), as perf record does: a per-CPU timer fires at
 * the frequency on every CPU, idle or not, target or not, so at -F 100000
 * two CPUs took 200 000 interrupts a second, and the VM this was measured
 * on stopped responding (a 1 ms command ran for 8 min); a per-thread timer
 * only runs while the thread does.
 */
int bpf_session_start_sampling(struct bpf_session *s, const pid_t *tgids, int n_tgids)
{
	bpf_session_offcpu_since(s, bpf_session_monotonic_ns());
	s->n_online = 0;
	for (int cpu = 0; cpu < s->n_cpus; cpu++)
		s->n_online += cpu_online(cpu);
	if (s->cfg.system_wide || n_tgids == 0)
		return sample_every_cpu(s);
	for (int i = 0; i < n_tgids; i++) {
		int err = sample_process(s, tgids[i]);

		if (err)
			return err;
	}
	return 0;
}

void bpf_session_stop_sampling(struct bpf_session *s)
{
	for (int i = 0; i < s->n_events; i++) {
		bpf_link__destroy(s->links[i]);
		close(s->event_fds[i]);
	}
	s->n_events = 0;
}

int bpf_session_epoll_fd(struct bpf_session *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

int bpf_session_drain(struct bpf_session *s, uint64_t max_ns)
{
	int n;

	s->drain_deadline_ns = max_ns ? bpf_session_monotonic_ns() + max_ns : 0;
	s->drained = 0;
	n = ring_buffer__consume(s->rb);
	s->drain_deadline_ns = 0;
	s->backlog = n == DRAIN_DEADLINE_REACHED;
	if (s->backlog)
		n = s->drained; /* more may be waiting */
	else if (n == -EINTR)
		n = 0;
	if (n >= 0 && s->cfg.aggregate_samples) {
		int sums = bpf_session_read_aggregates_if_due(s);

		if (sums < 0)
			return sums;
	}
	return n;
}

bool bpf_session_backlog(const struct bpf_session *s)
{
	return s->backlog;
}

/* Sums each of a per-CPU u64 array's n entries over the CPUs. */
static int sum_percpu_array(struct bpf_session *s, struct bpf_map *map, uint32_t n,
			    uint64_t *out)
{
	uint64_t *vals = calloc(s->n_cpus, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < n; k++) {
		out[k] = 0;
		if (bpf_map__lookup_elem(map, &k, sizeof(k), vals, s->n_cpus * sizeof(*vals), 0))
			continue;
		for (int c = 0; c < s->n_cpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

int bpf_session_counters(struct bpf_session *s, uint64_t out[COLLECTOR_CNT_MAX])
{
	return sum_percpu_array(s, s->skel->maps.counters, COLLECTOR_CNT_MAX, out);
}

int bpf_session_lost_by_event(struct bpf_session *s, uint64_t out[COLLECTOR_MAX_EVENTS])
{
	return sum_percpu_array(s, s->skel->maps.lost_by_event, COLLECTOR_MAX_EVENTS, out);
}

/* Sums a hash map's u64 values, a batch of entries per system call: key by
 * key, a map of a million entries took seconds at the end of a run. */
static int sum_map(struct bpf_map *map, size_t key_size, uint64_t *total)
{
	enum { BATCH = 4096 };
	char key[32], next[32];
	uint32_t in = 0, out = 0;
	void *prev = NULL, *keys;
	uint64_t v, *vals;
	bool first = true;
	int err = 0;

	*total = 0;
	keys = malloc(BATCH * key_size);
	vals = malloc(BATCH * sizeof(*vals));
	while (keys && vals) {
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		uint32_t n = BATCH;

		err = bpf_map_lookup_batch(bpf_map__fd(map), first ? NULL : &in, &out, keys, vals,
					   &n, &opts);
		if (err && errno != ENOENT)
			break;
		for (uint32_t i = 0; i < n; i++)
			*total += vals[i];
		if (err) { /* ENOENT: that was the last batch */
			free(keys);
			free(vals);
			return 0;
		}
		in = out;
		first = false;
	}
	/* no batch operations (or no memory for them): key by key */
	free(keys);
	free(vals);
	*total = 0;
	while (bpf_map__get_next_key(map, prev, next, key_size) == 0) {
		if (bpf_map__lookup_elem(map, next, key_size, &v, sizeof(v), 0) == 0)
			*total += v;
		memcpy(key, next, key_size);
		prev = key;
	}
	return 0;
}

int bpf_session_aggregate_total(struct bpf_session *s, uint64_t *by_ip)
{
	return sum_map(s->skel->maps.ip_counts, sizeof(struct collector_ip_key), by_ip);
}

static struct bpf_prog_info prog_info(struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	int fd = bpf_program__fd(prog);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
		memset(&info, 0, sizeof(info));
	return info;
}

uint64_t bpf_session_run_time_ns(struct bpf_session *s)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	if (s->stats_fd < 0)
		return 0;
	bpf_object__for_each_program(prog, s->skel->obj)
		sum += prog_info(prog).run_time_ns;
	return sum;
}

uint64_t bpf_session_sampler_runs(struct bpf_session *s)
{
	return s->stats_fd < 0 ? 0 : prog_info(s->skel->progs.on_sample).run_cnt;
}

int bpf_session_online_cpus(struct bpf_session *s)
{
	return s->n_online;
}

void bpf_session_close(struct bpf_session *s)
{
	if (!s)
		return;
	bpf_session_report_aggregates(s);
	bpf_session_stop_sampling(s);
	free(s->links);
	free(s->event_fds);
	ring_buffer__free(s->rb);
	runtime_walks_close(s);
	sample_bpf__destroy(s->skel);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	free(s);
}
