// SPDX-License-Identifier: GPL-2.0
/* The HotSpot JVMs walked, and their frames named (runtimes/jvm/jvm_procs.h). */
#include "runtimes/jvm/jvm_procs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/grow.h"
#include "lib/idmap.h"
#include "lib/procmem.h"
#include "runtimes/jvm/hotspot_names.h"
#include "runtimes/jvm/hotspot_walk.h"

/* A layout that does not read (but for a version before 17) is read again
 * for this long after its first failure, 3 times at least, before the JVM
 * is taken for one the walk does not know. */
#define LAYOUT_GRACE_NS 500000000ULL
#define LAYOUT_TRIES 3

/* A frame named once: its functions at frames[first .. first + n), or err. */
struct frame_entry {
	int32_t err;
	uint32_t n;
	uint32_t first;
};

struct jvm_proc {
	pid_t pid;
	bool walked;              /* its record is in the BPF side's map */
	bool known;               /* walked, or was until it exited */
	bool waiting;             /* libjvm.so met before its code cache */
	bool unsupported;         /* its layout does not read: told once */
	bool not_hotspot;         /* its libjvm.so exports no vmStructs */
	bool has_layout;
	uint8_t layout_tries;     /* layout reads failed so far */
	uint64_t layout_failed_ns; /* the first failure's CLOCK_MONOTONIC */
	struct hotspot_layout layout;
	struct collector_hotspot_proc rec;
	struct hotspot_names *names;
	struct idmap frame_index; /* frame -> entries index */
	struct frame_entry *entries;
	size_t n_entries, cap_entries;
	struct runtime_frame *frames;
	size_t n_frames, cap_frames;
};

/* A libjvm.so file's vmStructs symbols, read once for every process that
 * maps it (the file's record holds its index plus one). */
struct jvm_image {
	int err;                  /* 0, or why it has none: -ENOENT */
	struct hotspot_vm_symbols syms;
	char why[160];
};

struct jvm_procs {
	struct runtime_bpf bpf;
	bool has_bpf;
	struct jvm_image *images;
	size_t n_images, cap_images;
	struct proc_entries procs; /* struct jvm_proc, by the records' words */
	/* the names of processes gone whose pid another took: their strings
	 * stay as long as the table (runtime_frame's contract) */
	struct hotspot_names **retired;
	size_t n_retired, cap_retired;
	/* stubs' names (name_stub()), kept as long as the table */
	char **stub_names;
	size_t n_stub_names, cap_stub_names;
	pid_t again_pid;          /* the last process met waiting (maps_later) */
	size_t live;
	struct jvm_procs_stats stats;
};

struct jvm_procs *jvm_procs_new(const struct runtime_bpf *bpf)
{
	struct jvm_procs *jp = calloc(1, sizeof(*jp));

	if (jp && bpf) {
		jp->bpf = *bpf;
		jp->has_bpf = true;
	}
	return jp;
}

static void drop_frames(struct jvm_proc *p)
{
	free(p->entries);
	free(p->frames);
	idmap_free(&p->frame_index);
	p->entries = NULL;
	p->frames = NULL;
	p->n_entries = p->cap_entries = p->n_frames = p->cap_frames = 0;
}

void jvm_procs_free(struct jvm_procs *jp)
{
	if (!jp)
		return;
	for (size_t i = 1; i <= jp->procs.n; i++) {
		struct jvm_proc *p = proc_entry(&jp->procs, sizeof(*p), (uint32_t)i);

		drop_frames(p);
		hotspot_names_free(p->names);
	}
	proc_entries_free(&jp->procs);
	free(jp->images);
	for (size_t i = 0; i < jp->n_retired; i++)
		hotspot_names_free(jp->retired[i]);
	free(jp->retired);
	for (size_t i = 0; i < jp->n_stub_names; i++)
		free(jp->stub_names[i]);
	free(jp->stub_names);
	free(jp);
}

/* The process's entry: the runtime's word in the process's record holds
 * its index plus one. */
static struct jvm_proc *proc_of(const struct jvm_procs *jp, const struct proc_ref *rp)
{
	return proc_entry(&jp->procs, sizeof(struct jvm_proc), *rp->slot);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

bool jvm_procs_is_libjvm(const char *path)
{
	return path && path[0] == '/' && !strcmp(base_name(path), "libjvm.so");
}

/* Process pid's entry, made, or made anew when the pid is another
 * process's now (the old one forgotten: exited or exec'd). */
static struct jvm_proc *proc_for(struct jvm_procs *jp, const struct proc_ref *rp)
{
	struct jvm_proc *p = proc_of(jp, rp);

	if (p) {
		if (p->walked || p->waiting)
			return p;
		/* a new image of the pid: what was cached is another's */
		if (p->names) {
			if (array_grow((void **)&jp->retired, &jp->cap_retired, jp->n_retired,
				       sizeof(*jp->retired), 16))
				return NULL;
			jp->retired[jp->n_retired++] = p->names;
			p->names = NULL;
		}
		drop_frames(p);
		p->has_layout = false;
		return p;
	}
	p = proc_entry_new(&jp->procs, sizeof(*p), rp);
	if (!p)
		return NULL;
	p->pid = rp->pid;
	return p;
}

/* "17.0.15" of "17.0.15+6-Debian-1deb12u1", kept once. */
static void note_release(struct jvm_procs *jp, const char *release, uint32_t major)
{
	struct jvm_procs_stats *st = &jp->stats;
	char r[24];

	if (release[0])
		snprintf(r, sizeof(r), "%.*s", (int)strcspn(release, "+-"), release);
	else
		snprintf(r, sizeof(r), "%u", major);
	for (uint32_t i = 0; i < st->n_releases; i++)
		if (!strcmp(st->releases[i], r))
			return;
	if (st->n_releases < JVM_PROCS_RELEASES)
		memcpy(st->releases[st->n_releases++], r, sizeof(r));
}

static int unsupported(struct jvm_procs *jp, struct jvm_proc *p, const char *why)
{
	p->unsupported = true;
	p->waiting = false;
	jp->stats.unsupported++;
	snprintf(jp->stats.last_reason, sizeof(jp->stats.last_reason), "%s", why);
	return -ENOTSUP;
}

int jvm_procs_add(struct jvm_procs *jp, const struct proc_ref *rp, const struct hotspot_layout *l,
		  const struct collector_hotspot_proc *rec)
{
	pid_t pid = rp->pid;
	struct jvm_proc *p = proc_for(jp, rp);
	int err;

	if (!p)
		return -ENOMEM;
	if (p->walked)
		return 0;
	if (!p->names && !(p->names = hotspot_names_new(pid, l)))
		return -ENOMEM;
	p->layout = *l;
	p->has_layout = true;
	p->rec = *rec;
	if (jp->has_bpf) {
		err = jp->bpf.set(jp->bpf.ctx, COLLECTOR_FRAME_JAVA, (uint32_t)pid, rec, sizeof(*rec));
		if (err)
			return err;
	}
	p->walked = p->known = true;
	p->waiting = false;
	jp->live++;
	jp->stats.walked++;
	note_release(jp, l->release, l->major);
	return 1;
}

/* The vmStructs symbols of img's file, read at its first process (a
 * record of it here, its index plus one in the file's record), or NULL
 * with *err and why[] saying why: -ENOENT, it exports none; -EACCES, the
 * file did not read; -ENOMEM. */
static const struct jvm_image *vm_symbols_of(struct jvm_procs *jp, const struct runtime_image *img,
					     int *err, char *why, size_t why_size)
{
	struct jvm_image *ji;

	if (img->slot && *img->slot)
		ji = &jp->images[*img->slot - 1];
	else if (!img->file) {
		snprintf(why, why_size, "cannot read %s", img->path);
		*err = -EACCES;
		return NULL;
	} else {
		if (array_grow((void **)&jp->images, &jp->cap_images, jp->n_images, sizeof(*ji),
			       4)) {
			*err = -ENOMEM;
			return NULL;
		}
		ji = &jp->images[jp->n_images++];
		ji->err = hotspot_vm_symbols(img->file, img->path, &ji->syms, ji->why,
					     sizeof(ji->why));
		jp->stats.images_read++;
		if (img->slot)
			*img->slot = (uint32_t)jp->n_images;
	}
	if (ji->err) {
		snprintf(why, why_size, "%s", ji->why);
		*err = ji->err;
		return NULL;
	}
	return ji;
}

int jvm_procs_image(struct jvm_procs *jp, const struct proc_ref *rp,
		    const struct runtime_image *img)
{
	pid_t pid = rp->pid;
	struct jvm_proc *p = proc_of(jp, rp);
	const struct jvm_image *ji;
	struct collector_hotspot_proc rec;
	char why[160];
	int err;

	if (jp->again_pid != pid)
		jp->again_pid = 0;
	if (p && (p->walked || p->unsupported || p->not_hotspot))
		return 0;
	if (!jvm_procs_is_libjvm(img->path))
		return 0;
	if (!(p = proc_for(jp, rp)))
		return -ENOMEM;
	if (!p->has_layout) {
		ji = vm_symbols_of(jp, img, &err, why, sizeof(why));
		if (ji)
			err = hotspot_layout_read(pid, &ji->syms, img->bias, &p->layout, why,
						  sizeof(why));
		if (err == -ENOENT) { /* another JVM's libjvm.so (no vmStructs) */
			p->not_hotspot = true;
			return 0;
		}
		if (err == -ENOTSUP) /* before 17 */
			return unsupported(jp, p, why);
		if (err == -ESRCH || err == -ENOMEM)
			return err;
		/* met in the middle of its dlopen, before ld.so relocated it,
		 * the tables do not read (a pointer still 0, names unreadable):
		 * read again with the process's mappings, for a while */
		if (err) {
			if (!p->layout_tries)
				p->layout_failed_ns = now_ns();
			if (p->layout_tries < UINT8_MAX)
				p->layout_tries++;
			if (p->layout_tries < LAYOUT_TRIES ||
			    now_ns() < p->layout_failed_ns + LAYOUT_GRACE_NS) {
				p->waiting = true;
				jp->again_pid = pid;
				return 0;
			}
			return unsupported(jp, p, why);
		}
		p->has_layout = true;
	}
	err = hotspot_proc_fill(pid, &p->layout, &rec);
	/* the interpreter is generated after the code heaps are all added:
	 * without it the heaps may be read half made */
	if (!err && !rec.interp_begin)
		err = -EAGAIN;
	if (err == -EAGAIN) {
		p->waiting = true;
		jp->again_pid = pid;
		return 0;
	}
	if (err == -E2BIG) {
		snprintf(why, sizeof(why), "JDK %u (%s): more code heaps than %d, or a field past "
			 "the %d bytes the walker reads of a code blob", p->layout.major,
			 p->layout.release, COLLECTOR_HOTSPOT_MAX_HEAPS, COLLECTOR_HOTSPOT_BLOB_READ);
		return unsupported(jp, p, why);
	}
	if (err)
		return err;
	return jvm_procs_add(jp, rp, &p->layout, &rec);
}

bool jvm_procs_is_launcher(const char *path)
{
	const char *base = base_name(path);

	return base && (!strcmp(base, "java") || !strncmp(base, "ld-linux", 8) ||
			!strncmp(base, "ld.so", 5));
}

bool jvm_procs_maps_later(struct jvm_procs *jp, const char *path)
{
	bool again = jp->again_pid != 0;

	jp->again_pid = 0;
	return again || jvm_procs_is_launcher(path);
}

bool jvm_procs_waiting(const struct jvm_procs *jp, const struct proc_ref *rp)
{
	const struct jvm_proc *p = proc_of(jp, rp);

	return p && p->waiting && !p->walked;
}

bool jvm_procs_known(const struct jvm_procs *jp, const struct proc_ref *rp)
{
	const struct jvm_proc *p = proc_of(jp, rp);

	return p && p->known;
}

bool jvm_procs_has(const struct jvm_procs *jp, const struct proc_ref *rp)
{
	const struct jvm_proc *p = proc_of(jp, rp);

	return p && p->walked;
}

bool jvm_procs_owns_pc(const struct jvm_procs *jp, const struct proc_ref *rp, uint64_t pc)
{
	const struct jvm_proc *p = proc_of(jp, rp);

	return p && p->known && pc >= p->rec.codecache_low && pc < p->rec.codecache_high;
}

/* What a copy's walk reads: the copy where it holds the bytes, else the
 * live process (a thread found blocked keeps its frames while the run
 * lasts; the code cache is never in a copy). */
struct copy_reader {
	pid_t pid;
	const uint8_t *stack;
	uint64_t sp;
	size_t len;
};

static int copy_read(void *ctx, uint64_t addr, void *buf, size_t size)
{
	const struct copy_reader *c = ctx;

	if (addr >= c->sp && size <= c->len && addr - c->sp <= c->len - size) {
		memcpy(buf, c->stack + (addr - c->sp), size);
		return 0;
	}
	return proc_mem_read(c->pid, addr, buf, size);
}

int jvm_procs_walk_copy(const struct jvm_procs *jp, const struct proc_ref *rp,
			struct runtime_regs *regs,
			bool first, const uint8_t *stack, uint64_t stack_sp, size_t stack_len,
			uint64_t *frames, uint32_t max, bool *left)
{
	pid_t pid = rp->pid;
	const struct jvm_proc *p = proc_of(jp, rp);
	struct hotspot_walk_frame out[COLLECTOR_HOTSPOT_MAX_FRAMES];
	struct copy_reader c = { pid, stack, stack_sp, stack_len };
	struct hotspot_regs r = { regs->ip, regs->sp, regs->bp, 0 };
	enum hotspot_walk_end end;
	size_t n = 0;

	*left = false;
	if (!p || !p->known || !max)
		return 0;
	end = hotspot_walk(&p->rec, &r, first, copy_read, &c, out,
			   max < COLLECTOR_HOTSPOT_MAX_FRAMES ? max : COLLECTOR_HOTSPOT_MAX_FRAMES, &n);
	for (size_t i = 0; i < n; i++)
		frames[i] = out[i].frame;
	if (end == HOTSPOT_WALK_LEFT) {
		*left = true;
		regs->ip = r.pc;
		regs->sp = r.sp;
		regs->bp = r.fp;
	}
	return (int)n;
}

bool jvm_procs_in_bpf(const struct jvm_procs *jp, const struct proc_ref *rp)
{
	return jp->has_bpf && jvm_procs_has(jp, rp);
}

size_t jvm_procs_live(const struct jvm_procs *jp)
{
	return jp->live;
}

void jvm_procs_forget(struct jvm_procs *jp, const struct proc_ref *rp)
{
	pid_t pid = rp->pid;
	struct jvm_proc *p = proc_of(jp, rp);

	if (!p)
		return;
	/* its next image is looked at anew */
	p->unsupported = p->not_hotspot = p->waiting = false;
	p->has_layout = false;
	p->layout_tries = 0;
	if (!p->walked)
		return;
	if (jp->has_bpf)
		jp->bpf.forget(jp->bpf.ctx, COLLECTOR_FRAME_JAVA, (uint32_t)pid);
	p->walked = false;
	jp->live--;
}

void jvm_procs_drop(struct jvm_procs *jp, uint32_t word)
{
	struct jvm_proc *p = proc_entry(&jp->procs, sizeof(*p), word);

	if (!p)
		return;
	if (p->walked) { /* not told of its exit: it is gone all the same */
		if (jp->has_bpf)
			jp->bpf.forget(jp->bpf.ctx, COLLECTOR_FRAME_JAVA, (uint32_t)p->pid);
		p->walked = false;
		jp->live--;
	}
	drop_frames(p);
	hotspot_names_free(p->names);
	proc_entry_drop(&jp->procs, sizeof(*p), word);
}

/* ---- naming ------------------------------------------------------------------------ */

static int rd(void *ctx, uint64_t addr, void *buf, size_t size)
{
	return proc_mem_read(*(const pid_t *)ctx, addr, buf, size);
}

/* Method m at bci (-1: its entry, COLLECTOR_HS_BCI_MAX: unknown). */
static int name_method(struct jvm_proc *p, uint64_t method, int32_t bci, struct runtime_frame *f)
{
	const struct hotspot_method *m;
	int err = hotspot_method_get(p->names, method, &m);

	if (err)
		return err;
	f->function = m->name;
	f->file = m->source;
	/* the line of its first bytecode: the class file keeps no other */
	f->first_line = hotspot_method_line(m, 0);
	f->line = bci == (int32_t)COLLECTOR_HS_BCI_MAX ? 0
		  : bci < 0			       ? f->first_line
							       : hotspot_method_line(m, bci);
	return 0;
}

/* A compiled frame's methods, innermost first, into out[max] (max >= 1):
 * deeper inlining than max keeps the innermost max - 1 and the method
 * compiled. */
static int name_compiled(struct jvm_proc *p, uint64_t frame, struct runtime_frame *out,
			 uint32_t max, uint32_t *n)
{
	struct hotspot_scope s[HOTSPOT_MAX_SCOPES];
	struct hotspot_nmethod nm;
	struct runtime_frame outer;
	uint64_t pc = COLLECTOR_HS_PC(frame), blob;
	size_t count = 0;
	char name[32];
	int err;

	err = hotspot_find_blob(&p->rec, pc, rd, &p->pid, &blob);
	if (err)
		return err == -ENOENT ? -ESTALE : err;
	err = hotspot_blob_read(p->names, blob, name, sizeof(name), &nm);
	if (err < 0)
		return err;
	/* not an nmethod, or another one: the code was freed and reused */
	if (err == 0 || (nm.compile_id & COLLECTOR_HS_ID_MASK) != COLLECTOR_HS_ID(frame))
		return -ESTALE;
	err = hotspot_nmethod_scopes(p->names, blob, pc, COLLECTOR_HS_IS_TOP(frame), s,
				     HOTSPOT_MAX_SCOPES, &count);
	if (err)
		return err;
	if (!count)
		return -ENOENT;
	/* the method compiled must read; an inlined one that does not is left out */
	err = name_method(p, s[count - 1].method, s[count - 1].bci, &outer);
	if (err)
		return err;
	*n = 0;
	for (size_t k = 0; k + 1 < count && *n + 1 < max; k++)
		if (!name_method(p, s[k].method, s[k].bci, &out[*n]))
			(*n)++;
	out[(*n)++] = outer;
	return 0;
}

/* A native pc in the code cache (a stub, an adapter, the interpreter the
 * walk could not step): its blob's name, as HotSpot's perf map gives it
 * ("StubRoutines (1)", "Interpreter"), with no file. */
static int name_stub(struct jvm_procs *jp, struct jvm_proc *p, uint64_t pc,
		     struct runtime_frame *out)
{
	struct hotspot_nmethod nm;
	char name[128], *s;
	uint64_t blob;
	int err = hotspot_find_blob(&p->rec, pc, rd, &p->pid, &blob);

	if (err)
		return err == -ENOENT ? -ESTALE : err;
	err = hotspot_blob_read(p->names, blob, name, sizeof(name), &nm);
	if (err < 0)
		return err;
	if (array_grow((void **)&jp->stub_names, &jp->cap_stub_names, jp->n_stub_names,
		       sizeof(*jp->stub_names), 16))
		return -ENOMEM;
	s = strdup(name);
	if (!s)
		return -ENOMEM;
	jp->stub_names[jp->n_stub_names++] = s;
	*out = (struct runtime_frame){ .function = s };
	return 0;
}

static int name_frame(struct jvm_procs *jp, struct jvm_proc *p, uint64_t frame,
		      struct runtime_frame *out, uint32_t max, uint32_t *n)
{
	if (COLLECTOR_FRAME_KIND(frame) == COLLECTOR_FRAME_NATIVE &&
	    frame >= p->rec.codecache_low && frame < p->rec.codecache_high) {
		*n = 1;
		return name_stub(jp, p, frame, out);
	}
	if (COLLECTOR_FRAME_KIND(frame) != COLLECTOR_FRAME_JAVA)
		return -EINVAL;
	if (!COLLECTOR_HS_IS_INTERP(frame))
		return name_compiled(p, frame, out, max, n);
	*n = 1;
	return name_method(p, COLLECTOR_HS_METHOD(frame), (int32_t)COLLECTOR_HS_BCI(frame), out);
}

/* The frame's entry, named now when it is new. */
static const struct frame_entry *entry_of(struct jvm_procs *jp, struct jvm_proc *p,
					  uint64_t frame)
{
	struct runtime_frame f[RUNTIME_FRAME_MAX_INLINED];
	uint32_t i = idmap_get(&p->frame_index, frame), n = 0;
	struct frame_entry *e;

	if (i != UINT32_MAX)
		return &p->entries[i];
	if (array_grow((void **)&p->entries, &p->cap_entries, p->n_entries, sizeof(*e), 16))
		return NULL;
	e = &p->entries[p->n_entries];
	e->err = name_frame(jp, p, frame, f, RUNTIME_FRAME_MAX_INLINED, &n);
	e->n = 0;
	e->first = (uint32_t)p->n_frames;
	if (!e->err) {
		while (p->n_frames + n > p->cap_frames)
			if (array_grow((void **)&p->frames, &p->cap_frames, p->cap_frames,
				       sizeof(*p->frames), 16))
				return NULL;
		memcpy(p->frames + p->n_frames, f, n * sizeof(*f));
		p->n_frames += n;
		e->n = n;
		jp->stats.frames_named++;
	} else {
		jp->stats.frames_failed++;
	}
	if (idmap_put(&p->frame_index, frame, (uint32_t)p->n_entries))
		return NULL;
	p->n_entries++;
	return e;
}

int jvm_procs_frame(struct jvm_procs *jp, const struct proc_ref *rp, uint64_t frame,
		    struct runtime_frame *out,
		    uint32_t max)
{
	struct jvm_proc *p = proc_of(jp, rp);
	const struct frame_entry *e;
	uint32_t n;

	if (!max)
		return -EINVAL;
	if (!p || !p->names)
		return -ESRCH;
	e = entry_of(jp, p, frame);
	if (!e)
		return -ENOMEM;
	if (e->err)
		return e->err;
	n = e->n;
	if (n <= max) {
		memcpy(out, p->frames + e->first, n * sizeof(*out));
		return (int)n;
	}
	/* room for fewer: the innermost, and the method compiled last */
	memcpy(out, p->frames + e->first, (max - 1) * sizeof(*out));
	out[max - 1] = p->frames[e->first + n - 1];
	return (int)max;
}

const struct jvm_procs_stats *jvm_procs_stats(const struct jvm_procs *jp)
{
	return &jp->stats;
}
