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
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample.skel.h"

struct bpf_session {
	struct sample_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	int *event_fds;
	int n_events;
	int n_cpus;          /* possible CPUs */
	int stats_fd;        /* BPF_ENABLE_STATS, -1 if unavailable */
	struct bpf_session_config cfg;
	uint64_t drain_deadline_ns;  /* CLOCK_MONOTONIC; 0: drain until empty */
	uint32_t drained;            /* records in this drain */
};

/* A drain's end, checked every DEADLINE_CHECK records: a clock read costs
 * about 20 ns, a record 0.3-2 us. */
#define DEADLINE_CHECK 64
/* What the ring callback returns to stop a drain at its deadline: libbpf
 * moves past the record first, so nothing is read twice or lost. */
#define DRAIN_DEADLINE_REACHED (-EAGAIN)

static uint64_t monotonic_ns(void)
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

static int ring_callback(void *ctx, void *data, size_t size)
{
	struct bpf_session *s = ctx;
	int err = s->cfg.on_record(s->cfg.ctx, data, size);

	if (err)
		return err;
	if (s->drain_deadline_ns && ++s->drained % DEADLINE_CHECK == 0 &&
	    monotonic_ns() >= s->drain_deadline_ns)
		return DRAIN_DEADLINE_REACHED;
	return 0;
}

int bpf_session_open(struct bpf_session **out, const struct bpf_session_config *cfg)
{
	struct bpf_session *s;
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
	s->skel->rodata->stack_bytes = cfg->stack_bytes;
	s->skel->rodata->cfi_mode = cfg->cfi;
	/* the unwind tables: 1 entry each when unused */
	bpf_map__set_max_entries(s->skel->maps.unwind_rows, cfg->cfi ? cfg->cfi_rows : 1);
	bpf_map__set_max_entries(s->skel->maps.unwind_pages, cfg->cfi ? cfg->cfi_pages : 1);
	/* the kernel's own frame-pointer walker instead of the program's,
	 * for the tests that compare the two */
	s->skel->rodata->kernel_fp_walk = getenv("COLLECTOR_KERNEL_FP_WALK") != NULL;
	bpf_map__set_max_entries(s->skel->maps.events, cfg->ring_bytes);
	/* dwarf mode builds records in a slot per CPU; 1 entry when unused */
	bpf_map__set_max_entries(s->skel->maps.scratch, cfg->dwarf ? s->n_cpus : 1);
	err = sample_bpf__load(s->skel);
	if (err) {
		fprintf(stderr, "collector: cannot load the sampling BPF programs: %s "
			"(run with -v for the verifier's log)\n", strerror(-err));
		goto fail;
	}
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

int bpf_session_start_sampling(struct bpf_session *s)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = s->cfg.freq,
	};
	int cpu, err = 0;

	s->links = calloc(s->n_cpus, sizeof(*s->links));
	s->event_fds = calloc(s->n_cpus, sizeof(*s->event_fds));
	if (!s->links || !s->event_fds)
		return -ENOMEM;
	for (cpu = 0; cpu < s->n_cpus; cpu++) {
		int fd;

		s->event_fds[cpu] = -1;
		if (!cpu_online(cpu))
			continue;
		fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* went offline */
			err = -errno;
			fprintf(stderr, "collector: cannot open a cpu-clock perf event on CPU %d: %s\n",
				cpu, strerror(errno));
			return err;
		}
		s->event_fds[cpu] = fd;
		s->links[cpu] = bpf_program__attach_perf_event(s->skel->progs.on_sample, fd);
		if (!s->links[cpu]) {
			err = -errno;
			fprintf(stderr, "collector: cannot attach the sampling program on CPU %d: %s\n",
				cpu, strerror(errno));
			return err;
		}
		s->n_events++;
	}
	return s->n_events ? 0 : -ENODEV;
}

void bpf_session_stop_sampling(struct bpf_session *s)
{
	for (int cpu = 0; s->links && cpu < s->n_cpus; cpu++) {
		bpf_link__destroy(s->links[cpu]);
		s->links[cpu] = NULL;
		if (s->event_fds[cpu] >= 0)
			close(s->event_fds[cpu]);
		s->event_fds[cpu] = -1;
	}
}

int bpf_session_epoll_fd(struct bpf_session *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

int bpf_session_drain(struct bpf_session *s, uint64_t max_ns)
{
	int n;

	s->drain_deadline_ns = max_ns ? monotonic_ns() + max_ns : 0;
	s->drained = 0;
	n = ring_buffer__consume(s->rb);
	s->drain_deadline_ns = 0;
	if (n == DRAIN_DEADLINE_REACHED)
		return s->drained; /* more may be waiting */
	return n == -EINTR ? 0 : n;
}

int bpf_session_counters(struct bpf_session *s, uint64_t out[COLLECTOR_CNT_MAX])
{
	uint64_t *vals = calloc(s->n_cpus, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < COLLECTOR_CNT_MAX; k++) {
		out[k] = 0;
		if (bpf_map__lookup_elem(s->skel->maps.counters, &k, sizeof(k), vals,
					 s->n_cpus * sizeof(*vals), 0) != 0)
			continue;
		for (int c = 0; c < s->n_cpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
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

static uint64_t prog_run_time(struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	int fd = bpf_program__fd(prog);

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0)
		return 0;
	return info.run_time_ns;
}

uint64_t bpf_session_run_time_ns(struct bpf_session *s)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	if (s->stats_fd < 0)
		return 0;
	bpf_object__for_each_program(prog, s->skel->obj)
		sum += prog_run_time(prog);
	return sum;
}

int bpf_session_online_cpus(struct bpf_session *s)
{
	return s->n_events;
}

void bpf_session_close(struct bpf_session *s)
{
	if (!s)
		return;
	bpf_session_stop_sampling(s);
	free(s->links);
	free(s->event_fds);
	ring_buffer__free(s->rb);
	sample_bpf__destroy(s->skel);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	free(s);
}
