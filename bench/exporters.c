// SPDX-License-Identifier: GPL-2.0
/*
 * Exporter bench: builds a synthetic model and times one writer on it.
 *
 *   exporters-bench FORMAT N IMAGE DIR
 *
 * FORMAT is dcpi, sampler, callgrind, hpctoolkit, xray, pprof, folded,
 * flamegraph or speedscope (speedscope-trace: its evented profiles, on
 * trace events); N the number of
 * samples (or, for xray and speedscope-trace, trace events); IMAGE a real ELF file the model's
 * code addresses point into (the XRay map and the HPCToolkit database read
 * it); DIR an existing empty directory to write into.  One format per
 * process, so that the peak RSS printed is this writer's own:
 *
 *   format=F n=N build_s=S write_s=S write_cpu_s=S bytes=B mb_per_s=X model_rss_kb=K
 *   peak_rss_kb=K
 *
 * write_cpu_s is the writer's CPU time (user + system): on a shared machine
 * it moves far less than the wall-clock write_s that MB/s is computed from.
 *
 * The model has what a long real run has: 4 threads of one process, 2 000
 * functions, 20 000 code locations, 100 000 unique stacks of 8 to 40 frames
 * (the contract's "10^5 contexts") that share prefixes like real ones,
 * samples spread over them with a skew (a few hot stacks, a long tail), or
 * nested entry/exit events of 16 traced functions.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbols/elfinfo.h"
#include "formats/format.h"
#include "formats/xray/xray.h"
#include "formats/hpctoolkit/hpctoolkit.h"
#include "formats/sampler/sampler.h"
#include "formats/dcpi/dcpi.h"
#include "formats/callgrind/callgrind.h"
#include "formats/pprof/pprof.h"
#include "formats/folded/folded.h"
#include "formats/flamegraph/flamegraph.h"
#include "formats/speedscope/speedscope.h"
#include "model/model.h"

#define N_THREADS 4
#define N_FUNCTIONS 2000
#define N_LOCATIONS 20000
#define N_STACKS 100000
#define N_TRACED 16
#define PID 4242

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* xorshift: reproducible and cheap */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long pages = 0, resident = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
		resident = 0;
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static uint64_t dir_bytes(const char *path)
{
	uint64_t total = 0;
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char sub[4096];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		if (lstat(sub, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			total += dir_bytes(sub);
		else if (S_ISREG(st.st_mode))
			total += (uint64_t)st.st_size;
	}
	closedir(d);
	return total;
}

static int build_common(struct model *m, const char *image_path, uint32_t *img_out,
			uint32_t *proc_out, uint32_t *threads, uint64_t *text_start,
			uint64_t *text_size)
{
	struct model_image img = { 0 };
	struct elf_file ef;
	struct stat st;
	char build_id[2 * ELFINFO_MAX_BUILD_ID + 1];
	int err;

	err = elf_file_open(&ef, image_path);
	if (err) {
		fprintf(stderr, "exporters-bench: %s: %s\n", image_path, strerror(-err));
		return err;
	}
	if (!elf_file_text_segment(&ef, text_start, text_size)) {
		fprintf(stderr, "exporters-bench: %s: no text segment\n", image_path);
		elf_file_close(&ef);
		return -ENOEXEC;
	}
	elf_file_build_id_hex(&ef, build_id, sizeof(build_id));
	img.path = (char *)image_path;
	img.kind = MODEL_IMAGE_ELF;
	img.is_et_exec = ef.type == 2; /* ET_EXEC */
	img.has_symbols = true;
	memcpy(img.build_id, build_id, sizeof(img.build_id) - 1); /* 40 hex digits at most */
	img.build_id[sizeof(img.build_id) - 1] = '\0';
	img.dev = ef.dev;
	img.inode = ef.inode;
	img.mtime = ef.mtime;
	img.crc32 = elf_file_crc32(&ef);
	img.text_start = *text_start;
	img.text_size = *text_size;
	if (stat(image_path, &st) == 0)
		img.file_size = (uint64_t)st.st_size;
	elf_file_close(&ef);

	m->run.event = strdup("cpu-clock");
	m->run.freq_hz = 999;
	m->run.period_ns = 1001001;
	m->run.start_ns = 1700000000000000000ull;
	m->run.start_ktime_ns = 1000000000ull;
	m->run.ktime_to_epoch_ns = (int64_t)(m->run.start_ns - m->run.start_ktime_ns);
	snprintf(m->run.hostname, sizeof(m->run.hostname), "bench");
	m->run.ncpus = 2;
	snprintf(m->run.call_graph, sizeof(m->run.call_graph), "fp");
	model_set_command_line(m, "bench-workload --synthetic");

	*img_out = model_add_image(m, &img);
	*proc_out = model_add_process(m, PID, 1, 0, "bench", "bench-workload --synthetic",
				      image_path);
	{
		struct model_mapping map = {
			.start = 0x555555554000ull + *text_start,
			.end = 0x555555554000ull + *text_start + *text_size,
			.bias = 0x555555554000ull,
			.image = *img_out,
			.exec = true,
			.since_ns = m->run.start_ns,
		};
		model_add_mapping(m, *proc_out, &map);
	}
	m->processes.items[*proc_out].exe_image = *img_out;
	m->processes.items[*proc_out].start_ns = m->run.start_ns;
	for (int t = 0; t < N_THREADS; t++) {
		threads[t] = model_add_thread(m, *proc_out, PID + t, "bench");
		m->threads.items[threads[t]].start_ns = m->run.start_ns;
	}
	return 0;
}

/* Samples: N spread over N_STACKS stacks; stack k drawn with a skew so
 * that a few stacks are hot and the tail is long. */
static int build_samples(struct model *m, const char *image_path, uint64_t n)
{
	uint32_t img, proc, threads[N_THREADS], files[8], funcs[N_FUNCTIONS];
	uint32_t *locs = NULL, frames[40];
	uint64_t text_start, text_size, seed = 0x9e3779b97f4a7c15ull, t_ns, cputime[N_THREADS];
	uint32_t *stacks = NULL;
	int err;

	err = build_common(m, image_path, &img, &proc, threads, &text_start, &text_size);
	if (err)
		return err;
	locs = calloc(N_LOCATIONS, sizeof(*locs));
	stacks = calloc(N_STACKS, sizeof(*stacks));
	if (!locs || !stacks) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < 8; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/src/bench/file%d.c", i);
		files[i] = model_intern_file(m, path);
	}
	/* functions tile the text segment; locations fall inside them */
	uint64_t fsize = text_size / N_FUNCTIONS;

	if (fsize < 16) {
		fprintf(stderr, "exporters-bench: %s: text segment too small\n", image_path);
		err = -EINVAL;
		goto out;
	}
	for (int i = 0; i < N_FUNCTIONS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "bench_fn_%04d", i);
		funcs[i] = model_intern_function(m, img, name, text_start + (uint64_t)i * fsize,
						 fsize, files[i % 8], (uint32_t)(10 + i * 20));
	}
	for (int i = 0; i < N_LOCATIONS; i++) {
		int f = i % N_FUNCTIONS;
		uint64_t addr = text_start + (uint64_t)f * fsize + 1 + (uint64_t)(i / N_FUNCTIONS) %
			(fsize - 1);

		locs[i] = model_intern_location(m, img, addr, funcs[f], files[f % 8],
						(uint32_t)(10 + f * 20 + i / N_FUNCTIONS), NULL, 0);
	}
	/* Stacks share prefixes, as real ones do: each new stack takes a
	 * prefix of an earlier one (root first) and adds 1 to 4 frames, so
	 * the calling-context tree has a few hundred thousand nodes, not one
	 * per frame of every stack. */
	uint32_t (*paths)[40] = calloc(N_STACKS, sizeof(*paths));
	uint8_t *depths = calloc(N_STACKS, 1);

	if (!paths || !depths) {
		free(paths);
		free(depths);
		err = -ENOMEM;
		goto out;
	}
	for (int s = 0; s < N_STACKS; s++) {
		uint32_t depth = 0, add = 1 + (uint32_t)(rnd(&seed) % 4);

		if (s == 0) {
			paths[0][0] = locs[0]; /* main */
			depth = 1;
		} else {
			int from = (int)(rnd(&seed) % (uint64_t)s);
			uint32_t keep = 1 + (uint32_t)(rnd(&seed) % depths[from]);

			memcpy(paths[s], paths[from], keep * sizeof(uint32_t));
			depth = keep;
		}
		if (depth < 8)
			add = 8 - depth;
		for (uint32_t d = 0; d < add && depth < 40; d++)
			paths[s][depth++] = locs[rnd(&seed) % N_LOCATIONS];
		depths[s] = (uint8_t)depth;
		for (uint32_t d = 0; d < depth; d++)
			frames[d] = paths[s][depth - 1 - d]; /* leaf first */
		stacks[s] = model_intern_stack(m, frames, depth, 0, false);
	}
	free(paths);
	free(depths);
	t_ns = m->run.start_ns;
	memset(cputime, 0, sizeof(cputime));
	for (uint64_t i = 0; i < n; i++) {
		struct model_sample *smp = model_add_sample(m);
		uint64_t r = rnd(&seed);
		/* skew: half of the samples on 1% of the stacks */
		uint32_t k = (r & 1) ? (uint32_t)((r >> 1) % (N_STACKS / 100)) :
				       (uint32_t)((r >> 1) % N_STACKS);
		int t = (int)(i % N_THREADS);

		t_ns += 1001001 / 2; /* two CPUs at 999 Hz */
		cputime[t] += 1001001;
		smp->time_ns = t_ns;
		smp->ktime_ns = t_ns - (uint64_t)m->run.ktime_to_epoch_ns;
		smp->weight = 1001001;
		smp->cputime_ns = cputime[t];
		smp->user_pc = 0x555555554000ull + text_start + 1;
		smp->process = proc;
		smp->thread = threads[t];
		smp->stack = stacks[k];
		smp->cpu = (uint16_t)(t & 1);
		smp->kernel_mode = false;
	}
	m->run.end_ns = t_ns + 1;
	m->run.end_ktime_ns = t_ns + 1 - (uint64_t)m->run.ktime_to_epoch_ns;
	for (int t = 0; t < N_THREADS; t++) {
		m->threads.items[threads[t]].end_ns = t_ns + 1;
		m->threads.items[threads[t]].cputime_ns = cputime[t];
	}
	m->processes.items[proc].end_ns = t_ns + 1;
out:
	free(locs);
	free(stacks);
	return err;
}

/* Trace events: N entry/exit events of N_TRACED functions, nested up to
 * 8 deep per thread, in time order. */
static int build_trace(struct model *m, const char *image_path, uint64_t n)
{
	uint32_t img, proc, threads[N_THREADS], traced[N_TRACED];
	uint32_t stack[N_THREADS][8], depth[N_THREADS] = { 0 };
	uint64_t text_start, text_size, seed = 0x2545f4914f6cdd1dull, t_ns;
	int err;

	err = build_common(m, image_path, &img, &proc, threads, &text_start, &text_size);
	if (err)
		return err;
	for (int i = 0; i < N_TRACED; i++) {
		char name[32];
		uint64_t entry = text_start + (uint64_t)i * (text_size / N_TRACED);
		uint32_t fn;

		snprintf(name, sizeof(name), "bench_traced_%02d", i);
		fn = model_intern_function(m, img, name, entry, 16, MODEL_NONE, 0);
		traced[i] = model_add_traced_function(m, img, entry, fn);
	}
	t_ns = m->run.start_ns;
	for (uint64_t i = 0; i < n; i++) {
		int t = (int)(rnd(&seed) % N_THREADS);
		uint64_t r = rnd(&seed);
		bool enter = depth[t] == 0 || (depth[t] < 8 && (r & 1));
		struct model_trace_event *e;
		uint64_t arg = i;

		/* the last events close every open call */
		if (n - i <= (uint64_t)(depth[0] + depth[1] + depth[2] + depth[3]))
			enter = false;
		if (!enter && depth[t] == 0) {
			for (t = 0; t < N_THREADS && depth[t] == 0; t++)
				;
			if (t == N_THREADS)
				enter = true, t = 0;
		}
		e = model_add_trace_event(m, enter ? &arg : NULL, enter ? 1 : 0);
		t_ns += 250; /* 4 M events/s */
		e->time_ns = t_ns;
		e->ktime_ns = t_ns - (uint64_t)m->run.ktime_to_epoch_ns;
		e->process = proc;
		e->thread = threads[t];
		e->cpu = (uint16_t)(t & 1);
		if (enter) {
			uint32_t f = traced[(r >> 1) % N_TRACED];

			stack[t][depth[t]++] = f;
			e->func = f;
			e->kind = MODEL_TRACE_ENTRY;
		} else {
			e->func = stack[t][--depth[t]];
			e->kind = MODEL_TRACE_EXIT;
		}
	}
	m->run.trace_nargs = 1;
	m->run.end_ns = t_ns + 1;
	m->run.end_ktime_ns = t_ns + 1 - (uint64_t)m->run.ktime_to_epoch_ns;
	return 0;
}

int main(int argc, char **argv)
{
	struct export_options opts = { .quiet = true };
	struct model m;
	struct rusage ru;
	const char *format;
	uint64_t n;
	double t0, t1, t2, c1, c2;
	long model_rss;
	int (*writer)(const struct model *, const struct export_options *);
	int err;

	if (argc != 5) {
		fprintf(stderr, "usage: exporters-bench FORMAT N IMAGE DIR\n");
		return 2;
	}
	format = argv[1];
	n = strtoull(argv[2], NULL, 10);
	opts.dir = argv[4];
	if (!strcmp(format, "dcpi"))
		writer = dcpi_write;
	else if (!strcmp(format, "sampler"))
		writer = sampler_write;
	else if (!strcmp(format, "callgrind"))
		writer = callgrind_write;
	else if (!strcmp(format, "hpctoolkit"))
		writer = hpctoolkit_write;
	else if (!strcmp(format, "xray"))
		writer = xray_write;
	else if (!strcmp(format, "pprof"))
		writer = pprof_write;
	else if (!strcmp(format, "folded"))
		writer = folded_write;
	else if (!strcmp(format, "flamegraph"))
		writer = flamegraph_write;
	else if (!strcmp(format, "speedscope") || !strcmp(format, "speedscope-trace"))
		writer = speedscope_write;
	else {
		fprintf(stderr, "exporters-bench: unknown format %s\n", format);
		return 2;
	}

	model_init(&m);
	t0 = now_s();
	if (writer == xray_write || !strcmp(format, "speedscope-trace"))
		err = build_trace(&m, argv[3], n);
	else
		err = build_samples(&m, argv[3], n);
	if (err)
		return 1;
	t1 = now_s();
	model_rss = rss_kb();
	c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	err = writer(&m, &opts);
	t2 = now_s();
	c2 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	if (err) {
		fprintf(stderr, "exporters-bench: %s writer: %s\n", format, strerror(-err));
		return 1;
	}
	getrusage(RUSAGE_SELF, &ru);
	{
		uint64_t bytes = dir_bytes(opts.dir);

		printf("format=%s n=%llu build_s=%.3f write_s=%.3f write_cpu_s=%.3f bytes=%llu "
		       "mb_per_s=%.1f model_rss_kb=%ld peak_rss_kb=%ld\n",
		       format, (unsigned long long)n, t1 - t0, t2 - t1, c2 - c1,
		       (unsigned long long)bytes, (double)bytes / 1e6 / (t2 - t1), model_rss,
		       ru.ru_maxrss);
	}
	model_free(&m);
	return 0;
}
