// SPDX-License-Identifier: GPL-2.0
/* Function tracing through uprobes: load, attach, calibrate, read back. */
#include "loader/uprobes.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/procmaps.h"
#include "trace.skel.h"

/* Not in Debian's uapi headers (6.1) nor libbpf 1.1; the kernel has them. */
#define ATTACH_TYPE_UPROBE_MULTI 48
#define UPROBE_MULTI_RETURN 1
#define CALIBRATION_CALLS 20000

/* The layout of union bpf_attr for BPF_LINK_CREATE of a multi-uprobe. */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;
	uint32_t pid;
	uint8_t pad[92]; /* the rest of union bpf_attr, zero */
};

struct uprobes {
	struct trace_bpf *skel;
	struct bpf_session *session;
	struct uprobes_config cfg;
	bool multi;
	int *link_fds;          /* multi links */
	size_t n_link_fds;
	struct bpf_link **links; /* single uprobes */
	size_t n_links, cap_links;
	struct bpf_link *exit_link; /* merges a thread's aggregates as it exits */
	double attach_seconds;
	size_t n_functions;     /* functions of the files given to the attach */
	size_t skipped;         /* functions the kernel cannot probe */
	int pid_index;          /* the target being attached */
};

/*
 * Calibration target: it starts with push %rbp, like most traced functions
 * built with frame pointers, so the probe takes the same path (uprobes
 * emulate push; an instruction they must single-step costs ten times
 * more).  Written in assembly: compilers give a leaf no frame.
 */
__asm__(".text\n"
	".globl collector_calibration_target\n"
	".type collector_calibration_target, @function\n"
	"collector_calibration_target:\n"
	"\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tlea 1(%rdi), %eax\n"
	"\tpop %rbp\n"
	"\tret\n"
	".size collector_calibration_target, .-collector_calibration_target\n");
int collector_calibration_target(int x);

static int own_offset(uint64_t *offset);

/* ---- loading and attaching --------------------------------------------- */

/* The functions a thread keeps in its own storage: fewer with
 * COLLECTOR_TRACE_SLOTS (loader/knobs.h), so that the tests reach the
 * func_stats path with a couple of functions. */
static uint32_t thread_slots(const struct uprobes *u)
{
	uint32_t n = bpf_session_knobs(u->session)->trace_slots;

	return n ? n : COLLECTOR_TRACE_SLOTS;
}

static int load(struct uprobes *u, bool multi, struct trace_bpf **out)
{
	struct trace_bpf *skel = trace_bpf__open();
	int err;

	if (!skel)
		return -errno;
	/* The probes are attached in the targets' address spaces only (or
	 * everywhere with -a): the targets map need not be read per call. */
	skel->rodata->filter_tgids = false;
	skel->rodata->stream_events = u->cfg.stream_events;
	skel->rodata->n_args = u->cfg.n_args;
	skel->rodata->wakeup_bytes = bpf_session_ring_bytes(u->session) / 4;
	skel->rodata->slot_mask = thread_slots(u) - 1;
	if (u->cfg.py_name_glob) {
		const char *fg = u->cfg.py_file_glob ? u->cfg.py_file_glob : "";

		skel->rodata->py_first_id = u->cfg.py_first_id;
		snprintf(skel->bss->py_name_glob, COLLECTOR_PY_GLOB_LEN, "%s", u->cfg.py_name_glob);
		skel->bss->py_name_glob_len = (uint32_t)strnlen(u->cfg.py_name_glob,
								 COLLECTOR_PY_GLOB_LEN - 1);
		snprintf(skel->bss->py_file_glob, COLLECTOR_PY_GLOB_LEN, "%s", fg);
		skel->bss->py_file_glob_len = (uint32_t)strnlen(fg, COLLECTOR_PY_GLOB_LEN - 1);
		skel->bss->py_file_glob_base = !strchr(fg, '/');
	} else {
		bpf_program__set_autoload(skel->progs.py_entry, false);
		bpf_program__set_autoload(skel->progs.py_return, false);
	}
	err = bpf_map__reuse_fd(skel->maps.targets, bpf_session_map_fd(u->session, "targets"));
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.events, bpf_session_map_fd(u->session, "events"));
	if (err)
		goto fail;
	if (multi) {
		bpf_program__set_expected_attach_type(skel->progs.trace_entry,
						      ATTACH_TYPE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.trace_exit,
						      ATTACH_TYPE_UPROBE_MULTI);
	}
	err = trace_bpf__load(skel);
	if (err)
		goto fail;
	*out = skel;
	return 0;
fail:
	trace_bpf__destroy(skel);
	return err;
}

int uprobes_open(struct uprobes **out, struct bpf_session *session,
		 const struct uprobes_config *cfg)
{
	struct uprobes *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	u->session = session;
	u->cfg = *cfg;
	/* COLLECTOR_SINGLE_UPROBES=1 takes the path of kernels without the
	 * multi-uprobe link (before 6.6), so that it stays tested. */
	u->multi = !bpf_session_knobs(session)->single_uprobes;
	err = load(u, u->multi, &u->skel);
	if (err) {
		fprintf(stderr, "collector: cannot load the tracing BPF programs: %s "
			"(run with -v for the verifier's log)\n", strerror(-err));
		uprobes_close(u);
		return err;
	}
	*out = u;
	return 0;
}

/* A multi-uprobe link on functions [first, first + n) of f; the link's fd
 * or a negative errno. */
static int create_multi(struct bpf_program *prog, const char *path, const uint64_t *offsets,
			const uint64_t *cookies, size_t n, bool ret, pid_t pid)
{
	struct link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = bpf_program__fd(prog);
	attr.attach_type = ATTACH_TYPE_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = n;
	attr.multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	attr.pid = pid; /* 0: every process */
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

static int keep_fd(struct uprobes *u, int fd)
{
	int *grown = realloc(u->link_fds, (u->n_link_fds + 1) * sizeof(*grown));

	if (!grown) {
		close(fd);
		return -ENOMEM;
	}
	u->link_fds = grown;
	u->link_fds[u->n_link_fds++] = fd;
	return 0;
}

static void skip_function(struct uprobes *u, const struct uprobe_file *f, size_t k, int err)
{
	const char *name = f->names[k];

	if (u->pid_index > 0)
		return; /* listed for the first target already */
	u->skipped++;
	/* 524 is the kernel's ENOTSUPP: an instruction uprobes cannot handle */
	if (u->cfg.verbose || u->skipped <= 10)
		fprintf(stderr, "collector: skipping %s in %s: the kernel cannot probe it (%s)\n",
			name, f->path, err == -524 ? "its first instruction cannot be probed"
						   : strerror(-err));
	else if (u->skipped == 11)
		fprintf(stderr, "collector: skipping more functions that cannot be probed "
			"(-v lists them)\n");
}

static bool fatal(int err)
{
	return err == -ENOMEM || err == -EMFILE || err == -ENFILE || err == -EPERM;
}

/*
 * Entry and return probes on functions [first, first + n) of f through two
 * multi-uprobe links.  The kernel refuses a whole link when one function
 * cannot be probed (an instruction it cannot step over): the range is
 * split in halves until the refused functions stand alone, and those are
 * skipped and listed.  Returns 0 or a fatal negative errno.
 */
static int attach_multi_range(struct uprobes *u, const struct uprobe_file *f, size_t first, size_t n,
			      pid_t pid)
{
	int entry, ret, err;

	/* return probes first: in a running target, a call entered between
	 * the two attaches would have no exit */
	ret = create_multi(u->skel->progs.trace_exit, f->path, f->offsets + first,
			   f->cookies + first, n, true, pid);
	entry = ret < 0 ? ret : create_multi(u->skel->progs.trace_entry, f->path,
					     f->offsets + first, f->cookies + first, n, false,
					     pid);
	if (entry >= 0) {
		err = keep_fd(u, ret);
		if (err)
			close(entry);
		return err ? err : keep_fd(u, entry);
	}
	if (ret >= 0)
		close(ret);
	if (fatal(entry))
		return entry;
	if (n == 1) {
		skip_function(u, f, first, entry);
		return 0;
	}
	err = attach_multi_range(u, f, first, n / 2, pid);
	return err ? err : attach_multi_range(u, f, first + n / 2, n - n / 2, pid);
}

/* Whether this kernel has the multi-uprobe link (6.6 and later): a link on
 * the collector's own calibration function tells. */
static bool multi_supported(struct uprobes *u)
{
	uint64_t offset = 0, cookie = COLLECTOR_CALIBRATION_COOKIE;
	int fd;

	if (own_offset(&offset) != 0)
		return true; /* cannot tell: try, and fail loudly */
	fd = create_multi(u->skel->progs.trace_entry, "/proc/self/exe", &offset, &cookie, 1,
			  false, getpid());
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return !(fd == -EINVAL || fd == -EOPNOTSUPP || fd == -ENOSYS);
}

static int keep_link(struct uprobes *u, struct bpf_link *link);

static int link_single(struct uprobes *u, struct bpf_program *prog, const char *path,
		       uint64_t offset, uint64_t cookie, bool ret, pid_t pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = ret);
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(prog, pid ? pid : -1, path, offset, &opts);
	if (!link)
		return -errno;
	return keep_link(u, link);
}

static int keep_link(struct uprobes *u, struct bpf_link *link)
{
	if (u->n_links == u->cap_links) {
		u->cap_links = u->cap_links ? u->cap_links * 2 : 64;
		u->links = realloc(u->links, u->cap_links * sizeof(*u->links));
		if (!u->links) {
			bpf_link__destroy(link);
			return -ENOMEM;
		}
	}
	u->links[u->n_links++] = link;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int uprobes_attach(struct uprobes *u, const struct uprobe_file *files, size_t n_files,
		   const pid_t *pids, int n_pids, size_t *skipped)
{
	static const pid_t everyone = 0;
	double t0 = now_s();
	int err = 0;

	if (!n_pids) {
		pids = &everyone;
		n_pids = 1;
	}
	for (size_t i = 0; i < n_files; i++)
		u->n_functions += files[i].n;
	if (u->multi && !multi_supported(u)) {
		/* no multi-uprobe link in this kernel: single uprobes */
		trace_bpf__destroy(u->skel);
		u->skel = NULL;
		u->multi = false;
		err = load(u, false, &u->skel);
		if (err)
			return err;
		if (u->cfg.verbose)
			fprintf(stderr, "collector: no multi-uprobe link; attaching single uprobes\n");
	}
	/* before the probes: no thread may exit with unmerged aggregates */
	u->exit_link = bpf_program__attach(u->skel->progs.trace_thread_exit);
	if (!u->exit_link) {
		err = -errno;
		fprintf(stderr, "collector: cannot attach to thread exits: %s\n", strerror(-err));
		return err;
	}
	/* Probes go only into the targets' address spaces (the processes
	 * themselves, not children they fork later), as bpftrace and perf do:
	 * a breakpoint in a shared library traps every process that maps it. */
	for (int p = 0; p < n_pids; p++) {
		pid_t pid = pids[p];

		u->pid_index = p;
		for (size_t i = 0; i < n_files && u->multi; i++) {
			err = attach_multi_range(u, &files[i], 0, files[i].n, pid);
			if (err) {
				fprintf(stderr, "collector: cannot attach uprobes to %s: %s\n",
					files[i].path, strerror(-err));
				return err;
			}
		}
		for (size_t i = 0; i < n_files && !u->multi; i++) {
			const struct uprobe_file *f = &files[i];

			for (size_t k = 0; k < f->n; k++) {
				size_t before = u->n_links;

				/* the return probe first, as above */
				err = link_single(u, u->skel->progs.trace_exit, f->path,
						  f->offsets[k], f->cookies[k], true, pid);
				if (!err)
					err = link_single(u, u->skel->progs.trace_entry, f->path,
							  f->offsets[k], f->cookies[k], false, pid);
				if (err && fatal(err)) {
					fprintf(stderr, "collector: cannot attach uprobes to %s: %s\n",
						f->path, strerror(-err));
					return err;
				}
				if (err) {
					while (u->n_links > before)
						bpf_link__destroy(u->links[--u->n_links]);
					skip_function(u, f, k, err);
				}
			}
		}
	}
	*skipped = u->skipped;
	if (u->skipped && u->skipped == u->n_functions) {
		fprintf(stderr, "collector: no traced function could be probed\n");
		return -ENOTSUP;
	}
	if (u->skipped && !u->cfg.verbose)
		fprintf(stderr, "collector: %zu of %zu functions skipped: they cannot be probed\n",
			u->skipped, u->n_functions);
	u->attach_seconds = now_s() - t0;
	return 0;
}

double uprobes_attach_seconds(const struct uprobes *u)
{
	return u->attach_seconds;
}

/* ---- calibration --------------------------------------------------------- */

static double time_calls(void)
{
	volatile int x = 0;
	double t0 = now_s();

	for (int i = 0; i < CALIBRATION_CALLS; i++)
		x = collector_calibration_target(x);
	return (now_s() - t0) / CALIBRATION_CALLS * 1e9;
}

/* The calibration target's offset in the collector's own file, from the
 * mapping that holds it. */
static int own_offset(uint64_t *offset)
{
	uint64_t addr = (uint64_t)(uintptr_t)collector_calibration_target;
	const struct procmap_entry *e;
	struct procmaps maps;
	int err;

	err = procmaps_read(getpid(), &maps);
	if (err)
		return err;
	e = procmaps_find(&maps, addr);
	if (e)
		*offset = addr - e->start + e->pgoff;
	procmaps_free(&maps);
	return e ? 0 : -ENOENT;
}

/* Entry and return probes on the calibration target: two multi-uprobe
 * links (fds), or two single uprobes (libbpf links on perf events; they
 * need CAP_SYS_ADMIN, the multi-uprobe links only CAP_BPF and CAP_PERFMON). */
struct calibration_probes {
	int fds[2];
	struct bpf_link *links[2];
};

static void calibration_probes_release(struct calibration_probes *c)
{
	for (int i = 0; i < 2; i++) {
		if (c->fds[i] >= 0)
			close(c->fds[i]);
		bpf_link__destroy(c->links[i]);
		c->fds[i] = -1;
		c->links[i] = NULL;
	}
}

/* 0, or a negative errno with nothing attached. */
static int calibration_probes(struct trace_bpf *skel, bool multi, uint64_t offset,
			      struct calibration_probes *c)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = COLLECTOR_CALIBRATION_COOKIE);
	uint64_t cookie = COLLECTOR_CALIBRATION_COOKIE;
	pid_t self = getpid();
	int err;

	*c = (struct calibration_probes){ .fds = { -1, -1 } };
	if (multi) {
		c->fds[0] = create_multi(skel->progs.trace_entry, "/proc/self/exe", &offset,
					 &cookie, 1, false, self);
		c->fds[1] = c->fds[0] < 0 ? c->fds[0]
					  : create_multi(skel->progs.trace_exit, "/proc/self/exe",
							 &offset, &cookie, 1, true, self);
		err = c->fds[0] < 0 ? c->fds[0] : c->fds[1] < 0 ? c->fds[1] : 0;
	} else {
		c->links[0] = bpf_program__attach_uprobe_opts(skel->progs.trace_entry, self,
							      "/proc/self/exe", offset, &opts);
		opts.retprobe = true;
		c->links[1] = c->links[0] ? bpf_program__attach_uprobe_opts(
						    skel->progs.trace_exit, self, "/proc/self/exe",
						    offset, &opts)
					  : NULL;
		err = c->links[0] && c->links[1] ? 0 : -errno;
	}
	if (err)
		calibration_probes_release(c);
	return err;
}

/*
 * The same programs, loaded once more for probes on the collector's own
 * function, through the link the attach will take (the multi-uprobe link
 * where the kernel has it): their records reach the ring with a cookie no
 * traced function has, and the tracker leaves them out.
 */
double uprobes_calibrate(struct uprobes *u)
{
	struct trace_bpf *skel = NULL;
	uint32_t self = getpid();
	double base, probed = 0;
	uint64_t offset = 0;
	struct calibration_probes probes;
	bool multi = u->multi;
	int err;

	err = own_offset(&offset);
	if (!err)
		err = load(u, multi, &skel);
	if (err)
		return err;
	base = time_calls();
	base = base < time_calls() ? base : time_calls();
	err = calibration_probes(skel, multi, offset, &probes);
	if (multi && (err == -EINVAL || err == -EOPNOTSUPP || err == -ENOSYS)) {
		/* no multi-uprobe link in this kernel */
		trace_bpf__destroy(skel);
		skel = NULL;
		err = load(u, false, &skel);
		if (err)
			return err;
		err = calibration_probes(skel, false, offset, &probes);
	}
	if (!err) {
		bpf_session_add_target(u->session, self);
		probed = time_calls();
		bpf_session_remove_target(u->session, self);
		calibration_probes_release(&probes);
	}
	trace_bpf__destroy(skel);
	if (err)
		return err;
	return probed > base ? probed - base : 0;
}

/*
 * The threads still alive keep most of their aggregates in their own
 * storage: a task iterator reports them as (key, stats) records.  Run
 * before func_stats is read: a thread exiting meanwhile is either
 * reported here or merged into func_stats, never both (see claim()).
 */
static int report_live_threads(struct uprobes *u,
			       void (*fn)(void *ctx, const struct collector_func_key *key,
					  const struct collector_func_stats *fs),
			       void *ctx)
{
	struct {
		struct collector_func_key key;
		struct collector_func_stats fs;
	} rec;
	struct bpf_link *link;
	size_t have = 0;
	ssize_t n;
	int fd, err = 0;

	link = bpf_program__attach_iter(u->skel->progs.trace_report_slots, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	while ((n = read(fd, (char *)&rec + have, sizeof(rec) - have)) > 0) {
		have += n;
		if (have < sizeof(rec))
			continue;
		fn(ctx, &rec.key, &rec.fs);
		have = 0;
	}
	if (n < 0)
		err = -errno;
	else if (have)
		err = -EPROTO;
	close(fd);
cleanup:
	bpf_link__destroy(link);
	return err;
}


int uprobes_read_stats(struct uprobes *u,
		       void (*fn)(void *ctx, const struct collector_func_key *key,
				  const struct collector_func_stats *fs),
		       void *ctx)
{
	struct collector_func_key key, next, *prev = NULL;
	struct collector_func_stats fs;
	int err;

	err = report_live_threads(u, fn, ctx);
	if (err)
		fprintf(stderr, "collector: cannot read the call aggregates of the threads still "
			"running; their calls are missing from the summary: %s\n", strerror(-err));
	while (bpf_map__get_next_key(u->skel->maps.func_stats, prev, &next, sizeof(next)) == 0) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(u->skel->maps.func_stats, &key, sizeof(key), &fs,
					 sizeof(fs), 0) == 0)
			fn(ctx, &key, &fs);
	}
	return err;
}

int uprobes_counters(struct uprobes *u, uint64_t out[COLLECTOR_TCNT_MAX])
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;

	vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < COLLECTOR_TCNT_MAX; k++) {
		out[k] = 0;
		if (bpf_map__lookup_elem(u->skel->maps.trace_counters, &k, sizeof(k), vals,
					 ncpu * sizeof(*vals), 0) == 0)
			for (int c = 0; c < ncpu; c++)
				out[k] += vals[c];
	}
	free(vals);
	return 0;
}

int uprobes_attach_python(struct uprobes *u, const char *interpreter, const pid_t *pids,
			  int n_pids)
{
	int n = n_pids > 0 ? n_pids : 1;

	/* before the probes: no thread may exit with unmerged aggregates */
	if (!u->exit_link) {
		u->exit_link = bpf_program__attach(u->skel->progs.trace_thread_exit);
		if (!u->exit_link) {
			int err = -errno;

			fprintf(stderr, "collector: cannot attach to thread exits: %s\n",
				strerror(-err));
			return err;
		}
	}
	/* returns first, as for native functions: every entry counted then
	 * has its return probe in place */
	for (int i = 0; i < n; i++) {
		struct bpf_program *progs[2] = { u->skel->progs.py_return, u->skel->progs.py_entry };
		static const char *const probes[2] = { "function__return", "function__entry" };

		for (int k = 0; k < 2; k++) {
			struct bpf_link *link = bpf_program__attach_usdt(
				progs[k], n_pids > 0 ? pids[i] : -1, interpreter, "python", probes[k],
				NULL);
			int err;

			if (!link) {
				err = -errno;
				fprintf(stderr, "collector: --trace py: cannot attach to the probe "
					"python:%s of %s: %s\n", probes[k], interpreter, strerror(-err));
				return err;
			}
			err = keep_link(u, link);
			if (err)
				return err;
		}
	}
	return 0;
}

int uprobes_python_functions(struct uprobes *u,
			     void (*fn)(void *ctx, uint32_t k, const struct collector_py_key *key),
			     void *ctx)
{
	uint32_t n = u && u->skel && u->cfg.py_name_glob ? u->skel->bss->py_next : 0;
	int fd;

	if (!n)
		return 0;
	if (n > COLLECTOR_PY_MAX_FUNCS)
		n = COLLECTOR_PY_MAX_FUNCS;
	fd = bpf_map__fd(u->skel->maps.py_by_id);
	for (uint32_t k = 0; k < n; k++) {
		struct collector_py_key key;

		if (bpf_map_lookup_elem(fd, &k, &key) != 0)
			memset(&key, 0, sizeof(key));
		key.file[sizeof(key.file) - 1] = key.name[sizeof(key.name) - 1] = '\0';
		fn(ctx, k, &key);
	}
	return (int)n;
}

void uprobes_stop(struct uprobes *u)
{
	if (u && u->skel)
		u->skel->bss->stopped = true;
}

void uprobes_close(struct uprobes *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n_link_fds; i++)
		close(u->link_fds[i]);
	for (size_t i = 0; i < u->n_links; i++)
		bpf_link__destroy(u->links[i]);
	bpf_link__destroy(u->exit_link);
	free(u->link_fds);
	free(u->links);
	trace_bpf__destroy(u->skel);
	free(u);
}
