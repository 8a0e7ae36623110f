// SPDX-License-Identifier: GPL-2.0
/* Function tracing through uprobes. */
#include "tracing.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "launch.h"
#include "trace.skel.h"

/* Not in Debian's uapi headers (6.1) nor libbpf 1.1; the kernel has them. */
#define ATTACH_TYPE_UPROBE_MULTI 48
#define UPROBE_MULTI_RETURN 1
#define CALIBRATION_CALLS 20000
#define CALIBRATION_COOKIE 0xfffffff0u

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

/* One traced file and the functions in it. */
struct traced_file {
	char *path;
	uint64_t *offsets;
	uint64_t *cookies;
	size_t n, cap;
};

struct tracing {
	struct trace_bpf *skel;
	struct bpf_session *session;
	struct model *m;
	struct tracing_config cfg;
	bool multi;
	struct traced_file *files;
	size_t n_files;
	int *link_fds;          /* multi links */
	size_t n_link_fds;
	struct bpf_link **links; /* single uprobes */
	size_t n_links, cap_links;
	struct bpf_link *exit_link; /* merges a thread's aggregates as it exits */
	double attach_seconds;
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

/* ---- resolving specs --------------------------------------------------- */

static bool regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* "libc" matches libc.so.6, libc-2.36.so, libc.so */
static bool library_name_matches(const char *base, const char *name)
{
	size_t n = strlen(name);

	if (strcmp(base, name) == 0)
		return true;
	if (strncmp(base, name, n) != 0)
		return false;
	return strncmp(base + n, ".so", 3) == 0 || base[n] == '-';
}

static bool find_in_maps(pid_t pid, const char *name, char *out, size_t size)
{
	char path[64], line[4608];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *base;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		base = strrchr(file, '/') + 1;
		if (library_name_matches(base, name)) {
			snprintf(out, size, "%s", file);
			found = regular_file(out);
		}
	}
	fclose(f);
	return found;
}

static const char *const library_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/lib", "/usr/lib", "/usr/local/lib",
};

/* A library that COMMAND's binary needs, by its DT_NEEDED name. */
static bool find_needed(const char *binary, const char *name, char *out, size_t size)
{
	bool found = false;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	fd = open(binary, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && !found && i < sh.sh_size / sizeof(GElf_Dyn); i++) {
			GElf_Dyn dyn;
			const char *needed;

			if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			needed = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
			if (!needed || !library_name_matches(needed, name))
				continue;
			for (size_t d = 0; !found && d < sizeof(library_dirs) / sizeof(*library_dirs);
			     d++) {
				snprintf(out, size, "%s/%s", library_dirs[d], needed);
				found = regular_file(out);
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static bool find_in_library_dirs(const char *name, char *out, size_t size)
{
	static const char *const suffixes[] = { ".so.6", ".so.1", ".so.0", ".so" };

	for (size_t d = 0; d < sizeof(library_dirs) / sizeof(*library_dirs); d++)
		for (size_t s = 0; s < sizeof(suffixes) / sizeof(*suffixes); s++) {
			snprintf(out, size, "%s/%s%s", library_dirs[d], name, suffixes[s]);
			if (regular_file(out))
				return true;
		}
	return false;
}

/* COMMAND's executable as execvp finds it, resolved to a real path. */
static char *which(const char *cmd)
{
	char *found = launch_find_command(cmd), *real;

	if (!found)
		return NULL;
	real = realpath(found, NULL);
	free(found);
	return real;
}

/* BIN: a path, or a library name found in the targets' mappings, in
 * what COMMAND needs, or in the library directories. */
static int resolve_binary(const struct tracing_config *cfg, const char *bin, char *out,
			  size_t size)
{
	char *cmd_path = NULL, *real;

	if (strchr(bin, '/')) {
		if (!regular_file(bin)) {
			fprintf(stderr, "collector: --trace %s: no such file\n", bin);
			return -ENOENT;
		}
		real = realpath(bin, NULL);
		snprintf(out, size, "%s", real ? real : bin);
		free(real);
		return 0;
	}
	for (int i = 0; i < cfg->n_pids; i++)
		if (find_in_maps(cfg->pids[i], bin, out, size))
			return 0;
	if (cfg->command) {
		cmd_path = which(cfg->command[0]);
		if (cmd_path) {
			const char *base = strrchr(cmd_path, '/') + 1;

			if (strcmp(base, bin) == 0) {
				snprintf(out, size, "%s", cmd_path);
				free(cmd_path);
				return 0;
			}
			if (find_needed(cmd_path, bin, out, size)) {
				free(cmd_path);
				return 0;
			}
		}
		free(cmd_path);
	}
	if (find_in_library_dirs(bin, out, size))
		return 0;
	if (strncmp(bin, "lib", 3) != 0 && strlen(bin) < 200) {
		char lib[256];

		snprintf(lib, sizeof(lib), "lib%.200s", bin);
		if (find_in_library_dirs(lib, out, size))
			return 0;
	}
	fprintf(stderr, "collector: --trace %s: no such file, and no library of that name in "
		"the targets' mappings or the library directories; give a path\n", bin);
	return -ENOENT;
}

struct match_ctx {
	struct model *m;
	struct symbolizer *sym;
	uint32_t image;
	struct traced_file *file;
	size_t matched, skipped;
	uint64_t last_addr;
	bool verbose;
};

/* Traced files are kept in a static list until tracing_open takes them. */
static struct traced_file *pending_files;
static size_t n_pending_files;

static int on_match(void *vctx, const struct symbolizer_symbol *sym)
{
	struct match_ctx *c = vctx;
	struct traced_file *f = c->file;
	uint32_t fn, id;

	if (!sym->file_offset || !sym->addr) {
		c->skipped++;
		if (c->verbose)
			fprintf(stderr, "collector: skipping %s: not in a loaded segment\n", sym->name);
		return 0;
	}
	/* aliases share an address: one probe, one name */
	for (size_t i = 0; i < f->n; i++) {
		if (f->offsets[i] == sym->file_offset) {
			c->skipped++;
			return 0;
		}
	}
	/* The symbol names the function; its source file and line arrive when
	 * a sample resolves into it.  Reading DWARF here for each of 10 000
	 * matches made the attach take half a minute. */
	fn = model_intern_function(c->m, c->image, sym->name, sym->addr, sym->size, MODEL_NONE, 0);
	id = model_add_traced_function(c->m, c->image, sym->addr, fn);
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->offsets = realloc(f->offsets, f->cap * sizeof(*f->offsets));
		f->cookies = realloc(f->cookies, f->cap * sizeof(*f->cookies));
		if (!f->offsets || !f->cookies)
			return -ENOMEM;
	}
	f->offsets[f->n] = sym->file_offset;
	f->cookies[f->n] = id;
	f->n++;
	c->matched++;
	return 0;
}

static void free_files(struct traced_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(files[i].path);
		free(files[i].offsets);
		free(files[i].cookies);
	}
	free(files);
}

static int resolve_specs(struct model *m, struct symbolizer *sym,
			 const struct tracing_config *cfg);

int tracing_resolve(struct model *m, struct symbolizer *sym, const struct tracing_config *cfg)
{
	int err = resolve_specs(m, sym, cfg);

	if (err) {
		free_files(pending_files, n_pending_files);
		pending_files = NULL;
		n_pending_files = 0;
	}
	return err;
}

static int resolve_specs(struct model *m, struct symbolizer *sym,
			 const struct tracing_config *cfg)
{
	for (int i = 0; i < cfg->n_specs; i++) {
		const char *spec = cfg->specs[i], *colon = strchr(spec, ':');
		char bin[PATH_MAX], path[PATH_MAX];
		struct match_ctx c = { .m = m, .sym = sym, .verbose = cfg->verbose };
		struct traced_file *f = NULL;
		struct stat st;
		int n, err;

		if (!colon || colon == spec || !colon[1]) {
			fprintf(stderr, "collector: --trace '%s': expected BIN:PATTERN, e.g. "
				"--trace ./app:'*' or --trace libc:malloc\n", spec);
			return -EINVAL;
		}
		snprintf(bin, sizeof(bin), "%.*s", (int)(colon - spec), spec);
		err = resolve_binary(cfg, bin, path, sizeof(path));
		if (err)
			return err;
		for (size_t k = 0; k < n_pending_files; k++)
			if (strcmp(pending_files[k].path, path) == 0)
				f = &pending_files[k];
		if (!f) {
			struct traced_file *grown = realloc(pending_files,
							    (n_pending_files + 1) * sizeof(*grown));

			if (!grown)
				return -ENOMEM;
			pending_files = grown;
			f = &pending_files[n_pending_files++];
			memset(f, 0, sizeof(*f));
			f->path = strdup(path);
		}
		stat(path, &st);
		c.image = symbolizer_image(sym, path, NULL, st.st_dev, st.st_ino);
		c.file = f;
		n = symbolizer_match_functions(sym, c.image, colon + 1, on_match, &c);
		if (n < 0) {
			fprintf(stderr, "collector: --trace %s: cannot read its symbols: %s\n", path,
				strerror(-n));
			return n;
		}
		if (!m->images.items[c.image].has_symbols) {
			fprintf(stderr, "collector: --trace %s: the file has no symbols (stripped?) "
				"and no separate debug file was found\n", path);
			return -ENOENT;
		}
		if (!c.matched) {
			fprintf(stderr, "collector: --trace %s: no function matches '%s'%s\n", path,
				colon + 1, c.skipped ? " that can be probed" : "");
			return -ENOENT;
		}
		if (!cfg->verbose)
			continue;
		fprintf(stderr, "collector: tracing %zu functions of %s (%zu skipped)\n",
			c.matched, path, c.skipped);
	}
	return 0;
}

static int own_offset(uint64_t *offset);

/* ---- loading and attaching --------------------------------------------- */

/* COLLECTOR_TRACE_SLOTS=N (a power of two, at most COLLECTOR_TRACE_SLOTS)
 * makes threads keep fewer functions in their own storage, so that the
 * tests reach the func_stats path with a couple of functions. */
static uint32_t thread_slots(void)
{
	const char *env = getenv("COLLECTOR_TRACE_SLOTS");
	unsigned long n = env ? strtoul(env, NULL, 10) : 0;

	if (n && n <= COLLECTOR_TRACE_SLOTS && !(n & (n - 1)))
		return n;
	return COLLECTOR_TRACE_SLOTS;
}

static int load(struct tracing *t, bool multi, struct trace_bpf **out)
{
	struct trace_bpf *skel = trace_bpf__open();
	int err;

	if (!skel)
		return -errno;
	/* The probes are attached in the targets' address spaces only (or
	 * everywhere with -a): the targets map need not be read per call. */
	skel->rodata->filter_tgids = false;
	skel->rodata->stream_events = t->cfg.stream_events;
	skel->rodata->n_args = t->cfg.n_args;
	skel->rodata->wakeup_bytes = bpf_session_ring_bytes(t->session) / 4;
	skel->rodata->slot_mask = thread_slots() - 1;
	err = bpf_map__reuse_fd(skel->maps.targets, bpf_session_map_fd(t->session, "targets"));
	if (!err)
		err = bpf_map__reuse_fd(skel->maps.events, bpf_session_map_fd(t->session, "events"));
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

int tracing_open(struct tracing **out, struct bpf_session *session, struct model *m,
		 const struct tracing_config *cfg)
{
	struct tracing *t = calloc(1, sizeof(*t));
	int err;

	if (!t)
		return -ENOMEM;
	t->session = session;
	t->m = m;
	t->cfg = *cfg;
	t->files = pending_files;
	t->n_files = n_pending_files;
	pending_files = NULL;
	n_pending_files = 0;
	/* COLLECTOR_SINGLE_UPROBES=1 takes the path of kernels without the
	 * multi-uprobe link (before 6.6), so that it stays tested. */
	t->multi = !getenv("COLLECTOR_SINGLE_UPROBES");
	err = load(t, t->multi, &t->skel);
	if (err) {
		fprintf(stderr, "collector: cannot load the tracing BPF programs: %s "
			"(run with -v for the verifier's log)\n", strerror(-err));
		tracing_close(t);
		return err;
	}
	*out = t;
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

static int keep_fd(struct tracing *t, int fd)
{
	int *grown = realloc(t->link_fds, (t->n_link_fds + 1) * sizeof(*grown));

	if (!grown) {
		close(fd);
		return -ENOMEM;
	}
	t->link_fds = grown;
	t->link_fds[t->n_link_fds++] = fd;
	return 0;
}

static void skip_function(struct tracing *t, struct traced_file *f, size_t k, int err)
{
	const struct model_traced_function *tf = &t->m->traced.items[f->cookies[k]];
	const char *name = t->m->functions.items[tf->function].name;

	if (t->pid_index > 0)
		return; /* listed for the first target already */
	t->skipped++;
	model_count_stat(t->m, "traced_functions_skipped", 1);
	/* 524 is the kernel's ENOTSUPP: an instruction uprobes cannot handle */
	if (t->cfg.verbose || t->skipped <= 10)
		fprintf(stderr, "collector: skipping %s in %s: the kernel cannot probe it (%s)\n",
			name, f->path, err == -524 ? "its first instruction cannot be probed"
						   : strerror(-err));
	else if (t->skipped == 11)
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
static int attach_multi_range(struct tracing *t, struct traced_file *f, size_t first, size_t n,
			      pid_t pid)
{
	int entry, ret, err;

	/* return probes first: in a running target, a call entered between
	 * the two attaches would have no exit */
	ret = create_multi(t->skel->progs.trace_exit, f->path, f->offsets + first,
			   f->cookies + first, n, true, pid);
	entry = ret < 0 ? ret : create_multi(t->skel->progs.trace_entry, f->path,
					     f->offsets + first, f->cookies + first, n, false,
					     pid);
	if (entry >= 0) {
		err = keep_fd(t, ret);
		if (err)
			close(entry);
		return err ? err : keep_fd(t, entry);
	}
	if (ret >= 0)
		close(ret);
	if (fatal(entry))
		return entry;
	if (n == 1) {
		skip_function(t, f, first, entry);
		return 0;
	}
	err = attach_multi_range(t, f, first, n / 2, pid);
	return err ? err : attach_multi_range(t, f, first + n / 2, n - n / 2, pid);
}

/* Whether this kernel has the multi-uprobe link (6.6 and later): a link on
 * the collector's own calibration function tells. */
static bool multi_supported(struct tracing *t)
{
	uint64_t offset = 0, cookie = CALIBRATION_COOKIE;
	int fd;

	if (own_offset(&offset) != 0)
		return true; /* cannot tell: try, and fail loudly */
	fd = create_multi(t->skel->progs.trace_entry, "/proc/self/exe", &offset, &cookie, 1,
			  false, getpid());
	if (fd >= 0) {
		close(fd);
		return true;
	}
	return !(fd == -EINVAL || fd == -EOPNOTSUPP || fd == -ENOSYS);
}

static int link_single(struct tracing *t, struct bpf_program *prog, const char *path,
		       uint64_t offset, uint64_t cookie, bool ret, pid_t pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = cookie, .retprobe = ret);
	struct bpf_link *link;

	link = bpf_program__attach_uprobe_opts(prog, pid ? pid : -1, path, offset, &opts);
	if (!link)
		return -errno;
	if (t->n_links == t->cap_links) {
		t->cap_links = t->cap_links ? t->cap_links * 2 : 64;
		t->links = realloc(t->links, t->cap_links * sizeof(*t->links));
		if (!t->links) {
			bpf_link__destroy(link);
			return -ENOMEM;
		}
	}
	t->links[t->n_links++] = link;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int tracing_attach(struct tracing *t, const pid_t *pids, int n_pids)
{
	static const pid_t everyone = 0;
	double t0 = now_s();
	int err = 0;

	if (!n_pids) {
		pids = &everyone;
		n_pids = 1;
	}
	if (t->multi && !multi_supported(t)) {
		/* no multi-uprobe link in this kernel: single uprobes */
		trace_bpf__destroy(t->skel);
		t->skel = NULL;
		t->multi = false;
		err = load(t, false, &t->skel);
		if (err)
			return err;
		if (t->cfg.verbose)
			fprintf(stderr, "collector: no multi-uprobe link; attaching single uprobes\n");
	}
	/* before the probes: no thread may exit with unmerged aggregates */
	t->exit_link = bpf_program__attach(t->skel->progs.trace_thread_exit);
	if (!t->exit_link) {
		err = -errno;
		fprintf(stderr, "collector: cannot attach to thread exits: %s\n", strerror(-err));
		return err;
	}
	/* Probes go only into the targets' address spaces (the processes
	 * themselves, not children they fork later), as bpftrace and perf do:
	 * a breakpoint in a shared library traps every process that maps it. */
	for (int p = 0; p < n_pids; p++) {
		pid_t pid = pids[p];

		t->pid_index = p;
		for (size_t i = 0; i < t->n_files && t->multi; i++) {
			err = attach_multi_range(t, &t->files[i], 0, t->files[i].n, pid);
			if (err) {
				fprintf(stderr, "collector: cannot attach uprobes to %s: %s\n",
					t->files[i].path, strerror(-err));
				return err;
			}
		}
		for (size_t i = 0; i < t->n_files && !t->multi; i++) {
			struct traced_file *f = &t->files[i];

			for (size_t k = 0; k < f->n; k++) {
				size_t before = t->n_links;

				/* the return probe first, as above */
				err = link_single(t, t->skel->progs.trace_exit, f->path,
						  f->offsets[k], f->cookies[k], true, pid);
				if (!err)
					err = link_single(t, t->skel->progs.trace_entry, f->path,
							  f->offsets[k], f->cookies[k], false, pid);
				if (err && fatal(err)) {
					fprintf(stderr, "collector: cannot attach uprobes to %s: %s\n",
						f->path, strerror(-err));
					return err;
				}
				if (err) {
					while (t->n_links > before)
						bpf_link__destroy(t->links[--t->n_links]);
					skip_function(t, f, k, err);
				}
			}
		}
	}
	if (t->skipped && t->skipped == t->m->traced.len) {
		fprintf(stderr, "collector: no traced function could be probed\n");
		return -ENOTSUP;
	}
	if (t->skipped && !t->cfg.verbose)
		fprintf(stderr, "collector: %zu of %zu functions skipped: they cannot be probed\n",
			t->skipped, t->m->traced.len);
	t->attach_seconds = now_s() - t0;
	return 0;
}

double tracing_attach_seconds(const struct tracing *t)
{
	return t->attach_seconds;
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

static int own_offset(uint64_t *offset)
{
	struct symbolizer_symbol found = { 0 };
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, err = -ENOENT;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *name;

			if (!gelf_getsym(data, i, &s))
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (name && strcmp(name, "collector_calibration_target") == 0)
				found.addr = s.st_value;
		}
	}
	/* file offset = address - segment vaddr + segment offset */
	for (size_t i = 0, n = 0; found.addr && elf && elf_getphdrnum(elf, &n) == 0 && i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && found.addr >= ph.p_vaddr &&
		    found.addr < ph.p_vaddr + ph.p_filesz) {
			*offset = found.addr - ph.p_vaddr + ph.p_offset;
			err = 0;
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

/*
 * The same programs, loaded once more for single uprobes on the collector's
 * own function: their records reach the ring with a cookie no traced
 * function has, and the tracker leaves them out.
 */
double tracing_calibrate(struct tracing *t)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .bpf_cookie = CALIBRATION_COOKIE);
	struct bpf_link *entry = NULL, *ret = NULL;
	struct trace_bpf *skel = NULL;
	uint32_t self = getpid();
	double base, probed = 0;
	uint64_t offset = 0;
	int err;

	err = own_offset(&offset);
	if (!err)
		err = load(t, false, &skel);
	if (err)
		return err;
	base = time_calls();
	base = base < time_calls() ? base : time_calls();
	entry = bpf_program__attach_uprobe_opts(skel->progs.trace_entry, self,
						"/proc/self/exe", offset, &opts);
	opts.retprobe = true;
	ret = bpf_program__attach_uprobe_opts(skel->progs.trace_exit, self,
					      "/proc/self/exe", offset, &opts);
	if (entry && ret) {
		bpf_session_add_target(t->session, self);
		probed = time_calls();
		bpf_session_remove_target(t->session, self);
	} else {
		err = -errno;
	}
	bpf_link__destroy(entry);
	bpf_link__destroy(ret);
	trace_bpf__destroy(skel);
	if (err)
		return err;
	return probed > base ? probed - base : 0;
}

/* ---- results ------------------------------------------------------------- */

static const char *const trace_lost_names[COLLECTOR_TCNT_MAX] = {
	[COLLECTOR_TCNT_RB_FULL_ENTRY] = "ring buffer full (traced entries)",
	[COLLECTOR_TCNT_RB_FULL_EXIT] = "ring buffer full (traced exits)",
	[COLLECTOR_TCNT_DEPTH_OVERFLOW] = "traced calls nested too deep",
	[COLLECTOR_TCNT_STATS_FULL] = "per-function map full",
	[COLLECTOR_TCNT_SHADOW_FULL] = "per-thread call stack map full",
	[COLLECTOR_TCNT_CLAIM_FULL] = "per-thread call aggregates not merged (claim map full)",
};

static const char *const trace_stat_names[COLLECTOR_TCNT_MAX] = {
	[COLLECTOR_TCNT_EXIT_NO_ENTRY] = "traced_exits_without_entry",
	[COLLECTOR_TCNT_FRAMES_DROPPED] = "traced_entries_without_exit",
	[COLLECTOR_TCNT_WAKEUPS] = "trace_ring_wakeups",
	[COLLECTOR_TCNT_SLOT_TAKEN] = "traced_calls_past_thread_slots",
};

/* model thread of (tgid, tid): the newest thread entry with that tid */
static uint32_t find_thread(const struct model *m, uint32_t tgid, uint32_t tid)
{
	for (size_t i = m->threads.len; i-- > 0;) {
		const struct model_thread *th = &m->threads.items[i];

		if ((uint32_t)th->tid == tid &&
		    (uint32_t)m->processes.items[th->process].pid == tgid)
			return i;
	}
	return MODEL_NONE;
}

static void add_stats(struct tracing *t, const struct collector_func_key *key,
		      const struct collector_func_stats *fs)
{
	struct model_func_stats *ms;
	uint32_t thread;

	if (key->tgid == (uint32_t)getpid() || key->func >= t->m->traced.len)
		return; /* the calibration's calls */
	thread = find_thread(t->m, key->tgid, key->tid);
	if (thread == MODEL_NONE) {
		model_count_stat(t->m, "traced_stats_unknown_thread", 1);
		return;
	}
	ms = model_add_func_stats(t->m);
	ms->func = key->func;
	ms->thread = thread;
	ms->process = t->m->threads.items[thread].process;
	ms->calls = fs->calls;
	ms->total_ns = fs->total_ns;
	ms->self_ns = fs->self_ns;
	memcpy(ms->hist, fs->hist, sizeof(ms->hist));
}

/*
 * The threads still alive keep most of their aggregates in their own
 * storage: a task iterator reports them as (key, stats) records.  Run
 * before func_stats is read: a thread exiting meanwhile is either
 * reported here or merged into func_stats, never both (see claim()).
 */
static int report_live_threads(struct tracing *t)
{
	struct {
		struct collector_func_key key;
		struct collector_func_stats fs;
	} rec;
	struct bpf_link *link;
	size_t have = 0;
	ssize_t n;
	int fd, err = 0;

	link = bpf_program__attach_iter(t->skel->progs.trace_report_slots, NULL);
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
		add_stats(t, &rec.key, &rec.fs);
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

int tracing_collect(struct tracing *t)
{
	int ncpu = libbpf_num_possible_cpus();
	struct collector_func_key key, next, *prev = NULL;
	struct collector_func_stats fs;
	uint64_t *vals;
	int err;

	err = report_live_threads(t);
	if (err)
		fprintf(stderr, "collector: cannot read the call aggregates of the threads still "
			"running; their calls are missing from the summary: %s\n", strerror(-err));
	vals = calloc(ncpu > 0 ? ncpu : 1, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < COLLECTOR_TCNT_MAX; k++) {
		uint64_t sum = 0;

		if (bpf_map__lookup_elem(t->skel->maps.trace_counters, &k, sizeof(k), vals,
					 ncpu * sizeof(*vals), 0) == 0)
			for (int c = 0; c < ncpu; c++)
				sum += vals[c];
		if (trace_lost_names[k])
			model_count_lost(t->m, trace_lost_names[k], sum);
		else if (trace_stat_names[k])
			model_count_stat(t->m, trace_stat_names[k], sum);
	}
	free(vals);
	while (bpf_map__get_next_key(t->skel->maps.func_stats, prev, &next, sizeof(next)) == 0) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(t->skel->maps.func_stats, &key, sizeof(key), &fs,
					 sizeof(fs), 0) == 0)
			add_stats(t, &key, &fs);
	}
	return 0;
}

void tracing_stop(struct tracing *t)
{
	if (t && t->skel)
		t->skel->bss->stopped = true;
}

void tracing_close(struct tracing *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_link_fds; i++)
		close(t->link_fds[i]);
	for (size_t i = 0; i < t->n_links; i++)
		bpf_link__destroy(t->links[i]);
	bpf_link__destroy(t->exit_link);
	free(t->link_fds);
	free(t->links);
	trace_bpf__destroy(t->skel);
	free_files(t->files, t->n_files);
	free(t);
}
