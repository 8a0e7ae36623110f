// SPDX-License-Identifier: GPL-2.0
/*
 * CPython interpreters found among the processes' images, given to the
 * BPF walker, and their frames named (runtimes/python/python.h).
 */
#include "runtimes/python/python.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/hashmix.h"
#include "lib/clock.h"
#include "lib/idmap.h"
#include "runtimes/python/python_code.h"
#include "runtimes/python/python_layouts.h"
#include "symbols/elfinfo.h"

/* What an image is, found once per path. */
struct py_image {
	char *path;
	int state;            /* 1: an interpreter, 0: not, -ENOTSUP: no layout */
	uint64_t runtime;     /* link-time address of _PyRuntime */
	uint32_t version;     /* Py_Version */
	bool links_libpython; /* DT_NEEDED names a libpython */
	uint64_t eval[PYTHON_EVAL_RANGES][2]; /* the evaluator's code, link-time */
	int n_eval;
};

struct py_code_entry {
	uint64_t addr;
	int err;              /* 0: read */
	uint64_t checked_ns;  /* when it was read or last looked at */
	struct python_code code;
};

/*
 * How long a code object read (or found unreadable) is taken to be the one
 * at its address without looking again.  Code objects are freed and others made in their
 * place: a string site.py exec'd at start (`<module>` of `<string>`) had
 * the address the workload's hot function got later, and 99% of a run's
 * samples were named `<module> <string>:1` (test_python's -p shell that
 * becomes python3, 1 run in 4, before this check); an address first read
 * while it held no code object kept failing when alpha's code was made
 * there (test_python: alpha's 46% all in one unnamed frame, 1 run in 12).
 * Looked at again after this long (the head of the code object, one read),
 * it is read anew when it is another, or was not read (look_again()): a
 * frame is named by the code object at its address within this time of
 * its naming, or by the last one there.
 */
#define CODE_RECHECK_NS 10000000ULL

struct py_proc {
	pid_t pid;
	bool walked;          /* its entry is in the BPF map */
	bool unsupported;     /* its interpreter has no layout: told once */
	bool known;           /* walked, or was until it exited */
	uint32_t version;
	struct python_layout layout;
	uint64_t eval[PYTHON_EVAL_RANGES][2]; /* the evaluator's code, runtime */
	int n_eval;
	struct idmap code_index; /* code object address -> codes index */
	struct py_code_entry *codes;
	size_t n_codes, cap_codes;
};

struct python_runtime {
	struct runtime_bpf maps;
	bool has_maps;
	struct idmap image_index; /* executables: hash of the path -> images index */
	struct py_image *images;
	size_t n_images, cap_images;
	struct proc_entries procs; /* struct py_proc, by the records' words */
	struct python_runtime_stats stats;
	size_t live;
};

struct python_runtime *python_runtime_new(const struct runtime_bpf *maps)
{
	struct python_runtime *rt = calloc(1, sizeof(*rt));

	if (rt && maps) {
		rt->maps = *maps;
		rt->has_maps = true;
	}
	return rt;
}

static void free_proc(struct py_proc *p)
{
	for (size_t i = 0; i < p->n_codes; i++)
		python_code_free(&p->codes[i].code);
	free(p->codes);
	idmap_free(&p->code_index);
	p->codes = NULL;
	p->n_codes = p->cap_codes = 0;
}

void python_runtime_free(struct python_runtime *rt)
{
	if (!rt)
		return;
	for (size_t i = 0; i < rt->n_images; i++)
		free(rt->images[i].path);
	free(rt->images);
	idmap_free(&rt->image_index);
	for (size_t i = 1; i <= rt->procs.n; i++)
		free_proc(proc_entry(&rt->procs, sizeof(struct py_proc), (uint32_t)i));
	proc_entries_free(&rt->procs);
	free(rt);
}

/* The value (and size) of symbol `name` of type `type` in symbol table
 * scn, or 0. */
static uint64_t find_symbol(const struct elf_file *f, Elf_Scn *scn, const char *name, int type,
			    uint64_t *size)
{
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	if (!data || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return 0;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		const char *s;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(sym.st_info) != type)
			continue;
		s = elf_strptr(f->elf, sh.sh_link, sym.st_name);
		if (s && !strcmp(s, name)) {
			if (size)
				*size = sym.st_size;
			return sym.st_value;
		}
	}
	return 0;
}

static int needs_libpython(void *ctx, const char *name)
{
	(void)ctx;
	return !strncmp(name, "libpython", 9);
}

static uint64_t object_symbol(const struct elf_file *f, Elf_Scn *scn, const char *name)
{
	return find_symbol(f, scn, name, STT_OBJECT, NULL);
}

/* Where the evaluator is: by its symbol, dynamic or not. */
static void find_evaluator(struct py_image *im, const struct elf_file *f)
{
	uint32_t types[2] = { SHT_DYNSYM, SHT_SYMTAB };
	uint64_t at = 0, size = 0;

	for (int k = 0; k < 2 && !at; k++) {
		Elf_Scn *scn = elf_file_symbols(f, types[k]);

		if (scn)
			at = find_symbol(f, scn, "_PyEval_EvalFrameDefault", STT_FUNC, &size);
	}
	im->n_eval = python_evaluator_ranges(f, at, size, im->eval, PYTHON_EVAL_RANGES);
}

/* Whether ELF file f exports _PyRuntime, and its Py_Version. */
static void inspect_image(struct python_runtime *rt, struct py_image *im,
			  const struct elf_file *f)
{
	uint64_t version_at, off;
	Elf_Scn *scn;
	uint32_t v;

	im->state = 0;
	scn = elf_file_symbols(f, SHT_DYNSYM);
	im->runtime = object_symbol(f, scn, "_PyRuntime");
	version_at = object_symbol(f, scn, "Py_Version");
	if (!im->runtime && (scn = elf_file_symbols(f, SHT_SYMTAB))) {
		im->runtime = object_symbol(f, scn, "_PyRuntime");
		version_at = object_symbol(f, scn, "Py_Version");
	}
	im->links_libpython = elf_file_for_each_needed(f, needs_libpython, NULL) == 1;
	if (im->runtime) {
		find_evaluator(im, f);
		im->state = -ENOTSUP; /* before 3.11: no Py_Version, no layout */
		if (version_at && elf_file_vaddr_to_offset(f, version_at, &off) &&
		    off + sizeof(v) <= f->size) {
			memcpy(&v, (const uint8_t *)f->map + off, sizeof(v));
			im->version = v;
			if (v >> 24 == 3)
				im->state = 1;
		}
	}
	rt->stats.images_read++;
}

/* A new entry of rt->images for path, inspected from f (NULL: not an
 * ELF file, or unreadable); its index, or -ENOMEM. */
static long new_image(struct python_runtime *rt, const char *path, const struct elf_file *f)
{
	struct py_image *im;

	if (array_grow((void **)&rt->images, &rt->cap_images, rt->n_images, sizeof(*im), 16))
		return -ENOMEM;
	im = &rt->images[rt->n_images];
	memset(im, 0, sizeof(*im));
	im->path = strdup(path);
	if (!im->path)
		return -ENOMEM;
	if (f)
		inspect_image(rt, im, f);
	return (long)rt->n_images++;
}

/*
 * An executable, by path, before any process of it has its mappings read
 * (may_be(), maps_later(): whether to read them at its exec): opened here,
 * once per path.  A mapped image is found through its record instead
 * (mapped_image()).
 */
static struct py_image *exe_image(struct python_runtime *rt, const char *path)
{
	uint64_t key = hash_string(path);
	uint32_t i = idmap_get(&rt->image_index, key);
	struct elf_file f;
	bool opened;
	long at;

	if (i != UINT32_MAX && !strcmp(rt->images[i].path, path))
		return &rt->images[i];
	opened = elf_file_open(&f, path) == 0;
	at = new_image(rt, path, opened ? &f : NULL);
	if (opened)
		elf_file_close(&f);
	if (at < 0 || idmap_put(&rt->image_index, key, (uint32_t)at))
		return NULL;
	return &rt->images[at];
}

/* A mapped image, inspected once for every process that maps its file:
 * the runtime's word in the image's record holds its index plus one. */
static struct py_image *mapped_image(struct python_runtime *rt, const struct runtime_image *img)
{
	long at;

	if (img->slot && *img->slot)
		return &rt->images[*img->slot - 1];
	if (!img->file)
		return NULL;
	at = new_image(rt, img->path, img->file);
	if (at < 0)
		return NULL;
	if (img->slot)
		*img->slot = (uint32_t)at + 1;
	return &rt->images[at];
}

/* The process's entry: the runtime's word in the process's record holds
 * its index plus one. */
static struct py_proc *proc_of(const struct python_runtime *rt, const struct proc_ref *rp)
{
	return proc_entry(&rt->procs, sizeof(struct py_proc), *rp->slot);
}

/* The layout of an interpreter of Py_Version v whose _PyRuntime is at
 * runtime in process pid. */
static int layout_for(pid_t pid, uint64_t runtime, uint32_t v, struct python_layout *out)
{
	uint32_t minor = v >> 16 & 0xff;
	const struct python_layout *l;

	if (minor >= 13)
		return python_layout_from_debug_offsets(pid, runtime, minor, out) ? -ENOTSUP : 0;
	l = python_layout_of(minor);
	if (!l)
		return -ENOTSUP;
	*out = *l;
	return 0;
}

static void note_unsupported(struct python_runtime *rt, const char *path, uint32_t version)
{
	rt->stats.unsupported++;
	rt->stats.last_unsupported_version = version;
	snprintf(rt->stats.last_unsupported_path, sizeof(rt->stats.last_unsupported_path), "%s",
		 path);
}

int python_runtime_image(struct python_runtime *rt, const struct proc_ref *rp,
			 const struct runtime_image *img)
{
	struct py_proc *p = proc_of(rt, rp);
	pid_t pid = rp->pid;
	const char *path = img->path;
	uint64_t bias = img->bias;
	struct python_layout layout;
	struct py_image *im;
	int err;

	if (p && (p->walked || p->unsupported))
		return 0;
	if (!path || path[0] != '/' || !(im = mapped_image(rt, img)) || !im->state)
		return 0;
	if (p)
		free_proc(p); /* a new image of the pid: what was cached is another's */
	if (!p) {
		p = proc_entry_new(&rt->procs, sizeof(*p), rp);
		if (!p)
			return -ENOMEM;
	}
	p->pid = pid;
	p->version = im->version;
	if (im->state < 0 ||
	    (err = layout_for(pid, im->runtime + bias, im->version, &layout)) != 0) {
		note_unsupported(rt, path, im->version);
		p->unsupported = true;
		return -ENOTSUP;
	}
	p->layout = layout;
	p->layout.walk.interp_head += im->runtime + bias;
	p->n_eval = im->n_eval;
	for (int i = 0; i < im->n_eval; i++) {
		p->eval[i][0] = im->eval[i][0] + bias;
		p->eval[i][1] = im->eval[i][1] + bias;
	}
	p->layout.walk.version = im->version;
	if (rt->has_maps) {
		err = rt->maps.set(rt->maps.ctx, COLLECTOR_FRAME_PYTHON, (uint32_t)pid,
				   &p->layout.walk, sizeof(p->layout.walk));
		if (err)
			return err;
	}
	p->walked = true;
	p->known = true;
	rt->live++;
	rt->stats.processes++;
	return 1;
}

bool python_runtime_maps_later(struct python_runtime *rt, const char *path)
{
	struct py_image *im = path && path[0] == '/' ? exe_image(rt, path) : NULL;
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	if (base && (!strncmp(base, "ld-linux", 8) || !strncmp(base, "ld.so", 5)))
		return true;
	return im && im->links_libpython;
}

bool python_runtime_may_be(struct python_runtime *rt, const char *path)
{
	struct py_image *im = path && path[0] == '/' ? exe_image(rt, path) : NULL;

	/* unreadable: as if it were one (its maps read at its exec) */
	if (path && path[0] == '/' && !im)
		return true;
	return (im && im->state) || python_runtime_maps_later(rt, path);
}

bool python_runtime_in_evaluator(const struct python_runtime *rt, const struct proc_ref *rp,
				 uint64_t addr)
{
	const struct py_proc *p = proc_of(rt, rp);

	for (int i = 0; p && i < p->n_eval; i++)
		if (addr >= p->eval[i][0] && addr < p->eval[i][1])
			return true;
	return false;
}

bool python_runtime_known(const struct python_runtime *rt, const struct proc_ref *rp)
{
	const struct py_proc *p = proc_of(rt, rp);

	return p && p->known;
}

bool python_runtime_has(const struct python_runtime *rt, const struct proc_ref *rp)
{
	const struct py_proc *p = proc_of(rt, rp);

	return p && p->walked;
}

size_t python_runtime_live(const struct python_runtime *rt)
{
	return rt->live;
}

void python_runtime_forget(struct python_runtime *rt, const struct proc_ref *rp)
{
	struct py_proc *p = proc_of(rt, rp);

	if (p)
		p->unsupported = false;
	if (!p || !p->walked)
		return;
	if (rt->has_maps)
		rt->maps.forget(rt->maps.ctx, COLLECTOR_FRAME_PYTHON, (uint32_t)rp->pid);
	/* the names stay: sums read at the end of the run name its frames */
	p->walked = false;
	rt->live--;
}

/* Entry e (at its time to be looked at again) as what is at its address
 * now: another code object read in its place; a code object not read
 * before, read; else as it was (the same code object; the process gone;
 * no code object there now, its frames most likely the one freed). */
static void look_again(struct python_runtime *rt, struct py_proc *p, struct py_code_entry *e)
{
	struct python_code now;
	int err;

	if (!e->err && python_code_same(p->pid, &p->layout, e->addr, &e->code) != 0)
		return;
	if (e->err == -ESRCH)
		return;
	err = python_code_read(p->pid, &p->layout, e->addr, &now);
	rt->stats.code_reads++;
	if (err) {
		rt->stats.code_failed++;
		return;
	}
	if (!e->err) {
		python_code_free(&e->code);
		rt->stats.code_replaced++;
	}
	e->code = now;
	e->err = 0;
}

static struct py_code_entry *code_of(struct python_runtime *rt, struct py_proc *p, uint64_t addr)
{
	uint32_t i = idmap_get(&p->code_index, addr);
	struct py_code_entry *e;
	uint64_t now = monotonic_ns();

	if (i != UINT32_MAX) {
		e = &p->codes[i];
		if (now >= e->checked_ns + CODE_RECHECK_NS) {
			e->checked_ns = now;
			look_again(rt, p, e);
		}
		return e;
	}
	if (array_grow((void **)&p->codes, &p->cap_codes, p->n_codes, sizeof(*e), 16) ||
	    idmap_put(&p->code_index, addr, (uint32_t)p->n_codes))
		return NULL;
	e = &p->codes[p->n_codes++];
	e->addr = addr;
	e->err = python_code_read(p->pid, &p->layout, addr, &e->code);
	e->checked_ns = now;
	rt->stats.code_reads++;
	if (e->err)
		rt->stats.code_failed++;
	return e;
}

int python_runtime_frame(struct python_runtime *rt, const struct proc_ref *rp, uint64_t frame,
			 struct python_frame_info *out)
{
	struct py_proc *p = proc_of(rt, rp);
	struct py_code_entry *e;

	if (!p || COLLECTOR_FRAME_KIND(frame) != COLLECTOR_FRAME_PYTHON)
		return -EINVAL;
	e = code_of(rt, p, COLLECTOR_PY_CODE(frame));
	if (!e)
		return -ENOMEM;
	if (e->err)
		return e->err;
	out->qualname = e->code.qualname;
	out->filename = e->code.filename;
	out->first_line = e->code.first_line;
	out->line = python_code_line(e->code.linetable, e->code.linetable_len,
				     e->code.first_line, (uint32_t)COLLECTOR_PY_UNITS(frame));
	return 0;
}

void python_runtime_stats(const struct python_runtime *rt, struct python_runtime_stats *st)
{
	*st = rt->stats;
}

uint64_t python_runtime_code_replaced(const struct python_runtime *rt)
{
	return rt->stats.code_replaced;
}

void python_runtime_drop(struct python_runtime *rt, uint32_t word)
{
	struct py_proc *p = proc_entry(&rt->procs, sizeof(*p), word);

	if (!p)
		return;
	if (p->walked) { /* not told of its exit: it is gone all the same */
		if (rt->has_maps)
			rt->maps.forget(rt->maps.ctx, COLLECTOR_FRAME_PYTHON, (uint32_t)p->pid);
		p->walked = false;
		rt->live--;
	}
	free_proc(p);
	proc_entry_drop(&rt->procs, sizeof(*p), word);
}
