// SPDX-License-Identifier: GPL-2.0
/*
 * hotspot_probe: the HotSpot walker's development and test tool.
 *
 *   hotspot_probe dump PID              every vmStructs entry of the JVM
 *   hotspot_probe layout PID            the layout and the walker's record
 *   hotspot_probe stacks PID [-n N] [-i MS] [-t TID]
 *                                       N rounds (1), MS apart (100): each
 *                                       thread stopped (ptrace seize +
 *                                       interrupt), its registers walked by
 *                                       the reference walker, detached; the
 *                                       Java frames printed, named
 *   hotspot_probe names PID [MAP]       every nmethod of the code cache named
 *                                       and compared with the perf map MAP
 *                                       (default: asked of the JVM, as
 *                                       `jcmd PID Compiler.perfmap`)
 *   hotspot_probe ops PID [-n N] [-i MS] [-t TID]
 *                                       the JVM runtime's operations
 *                                       (runtimes/jvm/jvm_ops.c) as decode
 *                                       calls them: mapped() on the JVM's
 *                                       libjvm.so with a BPF side that
 *                                       records the set(), the record
 *                                       checked; then as stacks, each Java
 *                                       frame named by frame_name() ("J"
 *                                       lines), and again with another
 *                                       compile id (stale: -ESTALE)
 *   hotspot_probe early JAVA ARGS...    runs JAVA ARGS and calls mapped() on
 *                                       its libjvm.so from the moment it is
 *                                       mapped, every ms, until it is
 *                                       walked: how long a JVM waits
 *
 * A thread stopped outside the code cache (in libjvm.so, libc) is walked
 * from its last Java frame (JavaThread's frame anchor) when it has one.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf/collector.h"
#include "lib/proc.h"
#include "lib/procmaps.h"
#include "lib/procmem.h"
#include "runtimes/jvm/hotspot_names.h"
#include "runtimes/jvm/hotspot_structs.h"
#include "runtimes/jvm/hotspot_walk.h"
#include "runtimes/jvm/jvm_attach.h"
#include "runtimes/jvm/jvm_ops.h"

struct probe {
	pid_t pid;
	char libjvm[512];
	uint64_t bias;
	struct hotspot_vm_symbols syms;
	struct hotspot_layout l;
	struct collector_hotspot_proc p;
	struct hotspot_names *names;
	struct procmaps maps;
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t size)
{
	return proc_mem_read(*(pid_t *)ctx, addr, buf, size);
}

static int probe_open(struct probe *pr, pid_t pid, bool need_proc)
{
	char err[256];
	int rc;

	memset(pr, 0, sizeof(*pr));
	pr->pid = pid;
	rc = hotspot_find_libjvm(pid, pr->libjvm, sizeof(pr->libjvm), &pr->bias, &pr->syms);
	if (rc) {
		fprintf(stderr, "pid %d: no libjvm.so: %s\n", pid, strerror(-rc));
		return rc;
	}
	rc = hotspot_layout_read(pid, &pr->syms, pr->bias, &pr->l, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "pid %d: %s\n", pid, err);
		return rc;
	}
	if (need_proc && (rc = hotspot_proc_fill(pid, &pr->l, &pr->p))) {
		fprintf(stderr, "pid %d: code cache: %s\n", pid, strerror(-rc));
		return rc;
	}
	pr->names = hotspot_names_new(pid, &pr->l);
	procmaps_read(pid, &pr->maps);
	return pr->names ? 0 : -ENOMEM;
}

static void probe_close(struct probe *pr)
{
	hotspot_names_free(pr->names);
	procmaps_free(&pr->maps);
}

static void print_layout(const struct probe *pr)
{
	const struct hotspot_layout *l = &pr->l;
	const struct collector_hotspot_proc *p = &pr->p;

	printf("JDK %u (%s), libjvm %s bias 0x%" PRIx64 "\n", l->major, l->release, pr->libjvm,
	       pr->bias);
	printf("blob: name %u frame_size %u frame_complete %u/%u code %u..%u%s kind %d\n",
	       l->blob_name, l->blob_frame_size, l->blob_frame_complete,
	       l->blob_frame_complete_width, l->blob_code_begin, l->blob_code_end,
	       l->blob_offsets ? " (offsets)" : "", (int)l->blob_kind);
	printf("nmethod: method %u compile_id %u orig_pc %u deopt %u pcs %u data %u end %d "
	       "metadata %d immutable %d\n",
	       l->nm_method, l->nm_compile_id, l->nm_orig_pc_offset, l->nm_deopt_handler,
	       l->nm_scopes_pcs, l->nm_scopes_data, (int)l->nm_scopes_end, (int)l->nm_metadata,
	       (int)l->nm_immutable_data);
	printf("method: constMethod %u; ConstMethod size %u flags %u lines 0x%x; stream "
	       "exclude %u\n",
	       l->method_constmethod, l->cmethod_size, l->cmethod_flags, l->cmethod_has_lines,
	       l->stream_exclude);
	printf("code cache 0x%llx-0x%llx, %u heaps, segment 2^%u, HeapBlock %u, interpreter "
	       "0x%llx-0x%llx\n",
	       (unsigned long long)p->codecache_low, (unsigned long long)p->codecache_high,
	       p->n_heaps, p->segment_shift, p->heapblock_size,
	       (unsigned long long)p->interp_begin, (unsigned long long)p->interp_end);
	for (uint32_t i = 0; i < p->n_heaps; i++)
		printf("  heap %u: 0x%llx-0x%llx segmap 0x%llx\n", i,
		       (unsigned long long)p->heaps[i].low, (unsigned long long)p->heaps[i].high,
		       (unsigned long long)p->heaps[i].segmap);
}

/* ---- stacks ---------------------------------------------------------------- */

/* The JavaThread of tid's frame anchor: last Java sp, fp, pc (0 when none). */
static int thread_anchor(const struct probe *pr, pid_t tid, struct hotspot_regs *r)
{
	const struct hotspot_layout *l = &pr->l;
	uint64_t list, threads, jt, os;
	uint32_t len;
	int32_t id;

	if (!l->java_thread_list || l->tlist_threads == HOTSPOT_ABSENT ||
	    l->osthread_tid == HOTSPOT_ABSENT || l->anchor_sp == HOTSPOT_ABSENT)
		return -ENOTSUP;
	if (proc_mem_read(pr->pid, l->java_thread_list, &list, 8) ||
	    proc_mem_read(pr->pid, list + l->tlist_length, &len, 4) ||
	    proc_mem_read(pr->pid, list + l->tlist_threads, &threads, 8))
		return -EFAULT;
	for (uint32_t i = 0; i < len && i < 4096; i++) {
		uint64_t a;

		if (proc_mem_read(pr->pid, threads + 8 * (uint64_t)i, &jt, 8) ||
		    proc_mem_read(pr->pid, jt + l->jthread_osthread, &os, 8) ||
		    proc_mem_read(pr->pid, os + l->osthread_tid, &id, 4) || id != tid)
			continue;
		a = jt + l->jthread_anchor;
		memset(r, 0, sizeof(*r));
		if (proc_mem_read(pr->pid, a + l->anchor_sp, &r->sp, 8) ||
		    proc_mem_read(pr->pid, a + l->anchor_fp, &r->fp, 8) ||
		    proc_mem_read(pr->pid, a + l->anchor_pc, &r->pc, 8))
			return -EFAULT;
		if (!r->sp)
			return -ENOENT;
		/* no pc saved: the return address below the last Java sp */
		if (!r->pc && proc_mem_read(pr->pid, r->sp - 8, &r->pc, 8))
			return -EFAULT;
		return 0;
	}
	return -ESRCH;
}

static void print_where(const struct probe *pr, uint64_t pc)
{
	const struct procmap_entry *e = procmaps_find(&pr->maps, pc);
	const char *base = e && e->path[0] ? strrchr(e->path, '/') : NULL;

	if (e && e->path[0])
		printf("%s+0x%" PRIx64, base ? base + 1 : e->path, pc - e->start + e->pgoff);
	else
		printf("0x%" PRIx64, pc);
}

static void print_method(struct probe *pr, const char *kind, uint64_t method, int32_t bci)
{
	const struct hotspot_method *m;
	int err = hotspot_method_get(pr->names, method, &m);

	if (err) {
		printf("  F %s ? Method 0x%" PRIx64 " (%s)\n", kind, method, strerror(-err));
		return;
	}
	printf("  F %s %s @ %s:%u bci %d\n", kind, m->name, m->source ? m->source : "?",
	       hotspot_method_line(m, bci), bci);
}

/* ops mode: the runtime instance whose frame_name() names the frames */
static void *ops_rt;
/* the probed process as the engine tells of it, its record's word, and the
 * word of libjvm.so's record */
static uint32_t ops_word, ops_image_word;
static struct proc_ref ops_proc = { 0, &ops_word };
static unsigned ops_frames, ops_named, ops_failed, ops_not_stale;

static void print_ops_frame(struct probe *pr, uint64_t frame)
{
	struct runtime_frame out[RUNTIME_FRAME_MAX_INLINED];
	uint64_t other = frame ^ (1ULL << COLLECTOR_HS_ID_SHIFT);
	int n = jvm_runtime.frame_name(ops_rt, &ops_proc, frame, out, RUNTIME_FRAME_MAX_INLINED);

	(void)pr; /* ops_proc is pr's process */
	ops_frames++;
	if (n <= 0) {
		ops_failed++;
		printf("  J ? 0x%016" PRIx64 " (%s)\n", frame, strerror(-n));
		return;
	}
	ops_named++;
	for (int i = 0; i < n; i++)
		printf("  J %s %s @ %s:%u first %u\n",
		       COLLECTOR_HS_IS_INTERP(frame) ? "interpreted"
		       : i + 1 < n		     ? "inlined"
						     : "compiled",
		       out[i].function, out[i].file ? out[i].file : "?", out[i].line,
		       out[i].first_line);
	/* the same pc under another compile id: code freed and reused */
	if (!COLLECTOR_HS_IS_INTERP(frame) &&
	    jvm_runtime.frame_name(ops_rt, &ops_proc, other, out, RUNTIME_FRAME_MAX_INLINED) !=
		    -ESTALE)
		ops_not_stale++;
}

static void print_frame(struct probe *pr, const struct hotspot_walk_frame *f)
{
	struct hotspot_scope s[HOTSPOT_MAX_SCOPES];
	size_t n = 0;
	char name[64];

	if (ops_rt && COLLECTOR_FRAME_KIND(f->frame) == COLLECTOR_FRAME_JAVA) {
		print_ops_frame(pr, f->frame);
		return;
	}
	if (COLLECTOR_FRAME_KIND(f->frame) != COLLECTOR_FRAME_JAVA) {
		memcpy(name, &f->name8, 8);
		name[8] = 0;
		hotspot_blob_read(pr->names, f->blob, name, sizeof(name), &(struct hotspot_nmethod){ 0 });
		printf("  F stub [%s] 0x%" PRIx64 "\n", name, (uint64_t)f->frame);
		return;
	}
	if (COLLECTOR_HS_IS_INTERP(f->frame)) {
		uint64_t bci = COLLECTOR_HS_BCI(f->frame);

		print_method(pr, "interpreted", COLLECTOR_HS_METHOD(f->frame),
			     bci == COLLECTOR_HS_BCI_MAX ? -1 : (int32_t)bci);
		return;
	}
	int err = hotspot_nmethod_scopes(pr->names, f->blob, COLLECTOR_HS_PC(f->frame),
					 COLLECTOR_HS_IS_TOP(f->frame), s, HOTSPOT_MAX_SCOPES, &n);
	if (err || !n) {
		printf("  F compiled ? pc 0x%llx (%s)\n", (unsigned long long)COLLECTOR_HS_PC(f->frame),
		       strerror(err ? -err : ENOENT));
		return;
	}
	for (size_t i = 0; i < n; i++)
		print_method(pr, i + 1 < n ? "inlined" : "compiled", s[i].method, s[i].bci);
}

static void walk_regs(struct probe *pr, struct hotspot_regs *r, bool first)
{
	struct hotspot_walk_frame f[COLLECTOR_HOTSPOT_MAX_FRAMES];
	size_t n = 0;

	/* hand-overs: after the walk leaves, frames below a native call
	 * (call_stub) are not reached without a native walk */
	enum hotspot_walk_end end = hotspot_walk(&pr->p, r, first, rd, &pr->pid, f,
						 COLLECTOR_HOTSPOT_MAX_FRAMES, &n);
	for (size_t i = 0; i < n; i++)
		print_frame(pr, &f[i]);
	printf("  end: %s at ", hotspot_walk_end_name(end));
	print_where(pr, r->pc);
	printf("\n");
}

static int stop_thread(pid_t tid, struct user_regs_struct *regs)
{
	int status, err = 0;

	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return -errno;
	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) || waitpid(tid, &status, __WALL) < 0)
		err = -errno;
	else if (ptrace(PTRACE_GETREGS, tid, 0, regs))
		err = -errno;
	return err;
}

static void sample_thread(struct probe *pr, pid_t tid)
{
	struct user_regs_struct u;
	struct hotspot_regs r;
	char comm[16];
	int err = stop_thread(tid, &u);

	/* the walk reads memory while the thread stays stopped */
	proc_comm(pr->pid, tid, comm);
	printf("thread %d (%s): ", tid, comm);
	if (err) {
		printf("not stopped: %s\n", strerror(-err));
		ptrace(PTRACE_DETACH, tid, 0, 0);
		return;
	}
	r = (struct hotspot_regs){ .pc = u.rip, .sp = u.rsp, .fp = u.rbp, .r13 = u.r13 };
	if (r.pc >= pr->p.codecache_low && r.pc < pr->p.codecache_high) {
		printf("in the code cache\n");
		walk_regs(pr, &r, true);
	} else {
		printf("at ");
		print_where(pr, r.pc);
		if (thread_anchor(pr, tid, &r) == 0) {
			printf(", last Java frame sp 0x%" PRIx64 "\n", (uint64_t)r.sp);
			walk_regs(pr, &r, false);
		} else {
			printf(", no last Java frame\n");
		}
	}
	ptrace(PTRACE_DETACH, tid, 0, 0);
}

static int cmd_stacks(struct probe *pr, int rounds, int interval_ms, pid_t only)
{
	for (int k = 0; k < rounds; k++) {
		pid_t *tids = NULL;
		size_t n = 0;

		if (k)
			usleep((useconds_t)interval_ms * 1000);
		if (proc_threads(pr->pid, &tids, &n))
			return -ESRCH;
		printf("round %d\n", k);
		for (size_t i = 0; i < n; i++)
			if (!only || tids[i] == only)
				sample_thread(pr, tids[i]);
		free(tids);
		fflush(stdout);
	}
	return 0;
}

/* ---- names against the perf map ---------------------------------------------- */

struct map_line {
	uint64_t addr;
	char *name;
};

static int cmp_line(const void *a, const void *b)
{
	const struct map_line *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int read_map(const char *path, struct map_line **out, size_t *n)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *end, *name;
		uint64_t addr = strtoull(line, &end, 16);

		strtoull(end, &name, 16);
		if (*name != ' ')
			continue;
		name[strcspn(name, "\n")] = 0;
		if (*n == cap) {
			struct map_line *p = realloc(*out, (cap = cap ? 2 * cap : 1024) * sizeof(*p));

			if (!p)
				break;
			*out = p;
		}
		(*out)[(*n)++] = (struct map_line){ addr, strdup(name + 1) };
	}
	fclose(f);
	qsort(*out, *n, sizeof(**out), cmp_line);
	return 0;
}

static const char *map_name(const struct map_line *m, size_t n, uint64_t addr)
{
	struct map_line key = { addr, NULL }, *hit = bsearch(&key, m, n, sizeof(*m), cmp_line);

	return hit ? hit->name : NULL;
}

struct tally {
	unsigned nmethods, in_map, agree, unnamed, stubs, stubs_in_map, stubs_agree;
	unsigned shown;
};

static void check_blob(struct probe *pr, uint64_t blob, const struct map_line *m, size_t nm,
		       struct tally *t, bool verbose)
{
	struct hotspot_nmethod n;
	const struct hotspot_method *meth;
	char name[128];
	const char *theirs;
	int kind = hotspot_blob_read(pr->names, blob, name, sizeof(name), &n);

	if (kind < 0)
		return;
	if (kind == 0) {
		t->stubs++;
		return; /* stubs: the map lists them by code begin, unknown here */
	}
	t->nmethods++;
	if (hotspot_method_get(pr->names, n.method, &meth)) {
		t->unnamed++;
		return;
	}
	theirs = map_name(m, nm, n.code_begin);
	if (!theirs)
		return;
	t->in_map++;
	if (!strcmp(theirs, meth->name)) {
		t->agree++;
	} else if (verbose || t->shown++ < 10) {
		printf("differ at 0x%" PRIx64 ": mine \"%s\", the map's \"%s\"\n", n.code_begin,
		       meth->name, theirs);
	}
}

/* Every block of heap h: its HeapBlock header gives its length in
 * segments, used or free; blocks follow each other to the heap's end. */
static void scan_heap(struct probe *pr, const struct collector_hotspot_heap *h,
		      const struct map_line *m, size_t nm, struct tally *t, bool verbose)
{
	const struct hotspot_layout *l = &pr->l;
	uint64_t seg = 0, segs = (h->high - h->low) >> pr->p.segment_shift;

	while (seg < segs) {
		uint64_t block = h->low + (seg << pr->p.segment_shift), len = 0;
		uint8_t used = 0;

		if (proc_mem_read(pr->pid, block + l->heapblock_length, &len,
				  l->heapblock_length_width) ||
		    proc_mem_read(pr->pid, block + l->heapblock_used, &used, 1) || !len)
			break; /* past what is committed or allocated */
		if (used)
			check_blob(pr, block + l->heapblock_size, m, nm, t, verbose);
		seg += len;
	}
}

static int cmd_names(struct probe *pr, const char *map_path, bool verbose)
{
	struct map_line *m = NULL;
	size_t nm = 0;
	char path[128];
	struct tally t = { 0 };
	int err;

	if (!map_path) {
		struct jvm_attach_result res;

		jvm_request_perfmaps(&pr->pid, 1, JVM_ATTACH_TIMEOUT_MS, &res);
		if (res.status != JVM_PERFMAP_WRITTEN) {
			fprintf(stderr, "the JVM wrote no perf map (%d %s)\n", res.status, res.detail);
			return -EIO;
		}
		snprintf(path, sizeof(path), "/proc/%d/root/tmp/perf-%d.map", pr->pid,
			 proc_namespace_pid(pr->pid));
		map_path = path;
	}
	if ((err = read_map(map_path, &m, &nm))) {
		fprintf(stderr, "%s: %s\n", map_path, strerror(-err));
		return err;
	}
	for (uint32_t i = 0; i < pr->p.n_heaps; i++)
		scan_heap(pr, &pr->p.heaps[i], m, nm, &t, verbose);
	printf("nmethods %u, unnamed %u, in the perf map %u, agree %u (%.1f%%); other blobs %u; "
	       "map lines %zu\n",
	       t.nmethods, t.unnamed, t.in_map, t.agree, t.in_map ? 100.0 * t.agree / t.in_map : 0.0,
	       t.stubs, nm);
	printf("summary in_map=%u agree_pct=%.1f\n", t.in_map,
	       t.in_map ? 100.0 * t.agree / t.in_map : 0.0);
	for (size_t i = 0; i < nm; i++)
		free(m[i].name);
	free(m);
	return t.in_map ? 0 : -ENOENT;
}

/* ---- the runtime's operations -------------------------------------------------- */

struct rec_bpf {
	int sets;
	unsigned int kind;
	uint32_t tgid;
	size_t size;
	struct collector_hotspot_proc rec;
};

static int rec_set(void *ctx, unsigned int kind, uint32_t tgid, const void *entry, size_t size)
{
	struct rec_bpf *b = ctx;

	b->sets++;
	b->kind = kind;
	b->tgid = tgid;
	b->size = size;
	memcpy(&b->rec, entry, size < sizeof(b->rec) ? size : sizeof(b->rec));
	return 0;
}

static void rec_forget(void *ctx, unsigned int kind, uint32_t tgid)
{
	(void)ctx;
	(void)kind;
	(void)tgid;
}

/* libjvm.so's path as the process's mappings show it (decode's image path;
 * hotspot_find_libjvm() gives a /proc/PID/map_files one). */
static const char *maps_path(const struct procmaps *maps, const char *fallback)
{
	for (size_t i = 0; i < maps->n; i++) {
		const char *p = maps->entries[i].path;
		size_t n = p ? strlen(p) : 0;

		if (n >= 10 && !strcmp(p + n - 10, "/libjvm.so"))
			return p;
	}
	return fallback;
}

/* The runtime told of libjvm.so as the engine tells it (runtimes/runtime.h):
 * process p (its record's word), the image's maps path, its file opened
 * from open_path, and *slot as the runtime's word in the file's record. */
static int tell_mapped(void *rt, const struct proc_ref *p, const char *path,
		       const char *open_path, uint64_t bias, uint32_t *slot)
{
	struct elf_file f;
	bool opened = elf_file_open(&f, open_path) == 0;
	struct runtime_image img = { .id = 1, .path = path, .bias = bias,
				     .file = opened ? &f : NULL, .slot = slot };
	int rc = jvm_runtime.mapped(rt, p, &img);

	if (opened)
		elf_file_close(&f);
	return rc;
}

/* The record given to the BPF side: sane, and the one the probe reads. */
static int check_record(const struct probe *pr, const struct rec_bpf *b)
{
	const struct collector_hotspot_proc *r = &b->rec;
	int bad = 0;

	printf("record: set %d time(s), kind %u, tgid %u, %zu bytes; JDK %u, code cache "
	       "0x%llx-0x%llx, %u heaps, segment 2^%u, interpreter 0x%llx-0x%llx\n",
	       b->sets, b->kind, b->tgid, b->size, r->major,
	       (unsigned long long)r->codecache_low, (unsigned long long)r->codecache_high,
	       r->n_heaps, r->segment_shift, (unsigned long long)r->interp_begin,
	       (unsigned long long)r->interp_end);
	bad |= b->sets != 1 || b->kind != COLLECTOR_FRAME_JAVA || b->tgid != (uint32_t)pr->pid ||
	       b->size != sizeof(*r);
	bad |= r->major != pr->l.major || !r->n_heaps || r->n_heaps > COLLECTOR_HOTSPOT_MAX_HEAPS ||
	       r->codecache_low >= r->codecache_high || r->segment_shift < 4;
	bad |= r->interp_begin < r->codecache_low || r->interp_end > r->codecache_high ||
	       r->interp_begin >= r->interp_end;
	for (uint32_t i = 0; i < r->n_heaps && i < COLLECTOR_HOTSPOT_MAX_HEAPS; i++)
		bad |= r->heaps[i].low < r->codecache_low || r->heaps[i].high > r->codecache_high ||
		       !r->heaps[i].segmap;
	bad |= memcmp(r, &pr->p, sizeof(*r)) != 0;
	if (bad)
		printf("record: NOT SANE (or not the one the probe reads)\n");
	return bad ? -EINVAL : 0;
}

static int cmd_ops(struct probe *pr, int rounds, int interval_ms, pid_t only)
{
	static const struct runtime_ops *const list[] = { &jvm_runtime, NULL };
	struct rec_bpf b = { 0 };
	struct runtime_bpf bpf = { .ctx = &b, .set = rec_set, .forget = rec_forget };
	struct runtime_env env = { .bpf = &bpf, .no_ask = true };
	struct runtimes rs;
	int rc, err;

	if (runtimes_open(&rs, list, &env))
		return -ENOMEM;
	ops_rt = rs.items[0].rt;
	ops_proc.pid = pr->pid;
	rc = tell_mapped(ops_rt, &ops_proc, maps_path(&pr->maps, pr->libjvm), pr->libjvm, pr->bias,
			 &ops_image_word);
	printf("mapped(%s): %d; has %d, known %d, live %zu, owns_jit %d\n",
	       maps_path(&pr->maps, pr->libjvm), rc,
	       jvm_runtime.has(ops_rt, &ops_proc), jvm_runtime.known(ops_rt, &ops_proc),
	       jvm_runtime.live(ops_rt), jvm_runtime.owns_jit(ops_rt, &ops_proc));
	err = rc == 1 ? check_record(pr, &b) : -EPROTO;
	if (!err)
		err = cmd_stacks(pr, rounds, interval_ms, only);
	printf("summary frames=%u named=%u failed=%u not_stale=%u\n", ops_frames, ops_named,
	       ops_failed, ops_not_stale);
	runtimes_close(&rs);
	ops_rt = NULL;
	return err ? err : ops_not_stale ? -EINVAL : 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* A JVM started here, its libjvm.so given to mapped() from the moment it is
 * mapped, every ms, until the JVM is walked (5 s at most). */
static int cmd_early(char **argv)
{
	static const struct runtime_ops *const list[] = { &jvm_runtime, NULL };
	struct rec_bpf b = { 0 };
	struct runtime_bpf bpf = { .ctx = &b, .set = rec_set, .forget = rec_forget };
	struct runtime_env env = { .bpf = &bpf, .no_ask = true };
	uint64_t start = now_us(), met = 0, walked = 0;
	unsigned zeros = 0, waiting = 0, later = 0;
	struct runtimes rs;
	struct hotspot_vm_symbols syms;
	char path[512], open_path[512];
	uint64_t bias;
	uint32_t slot = 0, images_read, word = 0;
	struct proc_ref proc = { 0, &word };
	int rc = 0;
	pid_t pid;

	if (runtimes_open(&rs, list, &env))
		return -ENOMEM;
	pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	proc.pid = pid;
	while (pid > 0 && now_us() - start < 5000000 && !walked) {
		if (!met && hotspot_find_libjvm(pid, open_path, sizeof(open_path), &bias, &syms) == 0) {
			struct procmaps maps = { 0 };

			snprintf(path, sizeof(path), "%s", open_path);
			if (procmaps_read(pid, &maps) == 0)
				snprintf(path, sizeof(path), "%s", maps_path(&maps, open_path));
			procmaps_free(&maps);
			met = now_us();
		}
		if (met) {
			rc = tell_mapped(rs.items[0].rt, &proc, path, open_path, bias, &slot);
			if (rc == 1) {
				walked = now_us();
				break;
			}
			if (rc < 0)
				break;
			zeros++;
			waiting += jvm_procs_waiting(jvm_instance_procs(rs.items[0].rt), &proc);
			/* what decode asks next: whether to read the mappings again */
			later += jvm_runtime.maps_later(rs.items[0].rt, "/opt/some/launcher");
		}
		usleep(1000);
	}
	printf("early: libjvm.so mapped after %.1f ms; mapped() 0 %u times (waiting %u, "
	       "maps_later %u), then %d after %.1f ms more\n",
	       met ? (met - start) / 1e3 : -1.0, zeros, waiting, later, rc,
	       walked ? (walked - met) / 1e3 : -1.0);
	if (rc < 0)
		printf("early: %s\n", jvm_procs_stats(jvm_instance_procs(rs.items[0].rt))->last_reason);
	/* told zeros + 1 times of the same file: its vmStructs read once */
	images_read = jvm_procs_stats(jvm_instance_procs(rs.items[0].rt))->images_read;
	printf("summary early_zeros=%u walked=%d wait_ms=%.1f images_read=%u\n", zeros,
	       walked != 0, walked ? (walked - met) / 1e3 : -1.0, images_read);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	runtimes_close(&rs);
	return walked && zeros == waiting && zeros == later && images_read == 1 ? 0 : -EAGAIN;
}

static int usage(void)
{
	fprintf(stderr, "usage: hotspot_probe dump|layout|stacks|names|ops PID [options], "
		"hotspot_probe early JAVA ARGS...\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct probe pr;
	int rounds = 1, interval = 100, err;
	pid_t pid, only = 0;
	bool verbose = false;
	const char *map = NULL;

	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "early"))
		return cmd_early(argv + 2) ? 1 : 0;
	pid = atoi(argv[2]);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-i") && i + 1 < argc)
			interval = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			only = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-v"))
			verbose = true;
		else
			map = argv[i];
	}
	if (!strcmp(argv[1], "dump")) {
		struct hotspot_vm_symbols syms;
		char path[512];
		uint64_t bias;

		if ((err = hotspot_find_libjvm(pid, path, sizeof(path), &bias, &syms)))
			return 1;
		return hotspot_tables_dump(pid, &syms, bias, stdout) ? 1 : 0;
	}
	if ((err = probe_open(&pr, pid, true)))
		return 1;
	if (!strcmp(argv[1], "layout"))
		print_layout(&pr);
	else if (!strcmp(argv[1], "stacks"))
		err = cmd_stacks(&pr, rounds, interval, only);
	else if (!strcmp(argv[1], "names"))
		err = cmd_names(&pr, map, verbose);
	else if (!strcmp(argv[1], "ops"))
		err = cmd_ops(&pr, rounds, interval, only);
	else
		err = usage();
	probe_close(&pr);
	return err ? 1 : 0;
}
