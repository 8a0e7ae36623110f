// SPDX-License-Identifier: GPL-2.0
/* --trace py:GLOB: the interpreter and its functions (python_trace.h). */
#include "runtimes/python/python_trace.h"

#include <errno.h>
#include <gelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/path.h"
#include "lib/proc.h"
#include "lib/procmaps.h"
#include "symbols/elfinfo.h"

#define NT_STAPSDT 3

bool trace_python_elf_has_probes(const struct elf_file *f)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	size_t shstrndx;

	if (elf_getshdrstrndx(f->elf, &shstrndx) != 0)
		return false;
	while (!found && (scn = elf_nextscn(f->elf, scn))) {
		GElf_Shdr sh;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		Elf_Data *d;
		const char *sname;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		sname = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (!sname || strcmp(sname, ".note.stapsdt") != 0 || !(d = elf_getdata(scn, NULL)))
			continue;
		while (!found && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const char *desc = (const char *)d->d_buf + desc_off, *prov, *probe;
			size_t addrs = 3 * (gelf_getclass(f->elf) == ELFCLASS32 ? 4 : 8);

			if (nh.n_type != NT_STAPSDT || nh.n_descsz <= addrs ||
			    desc[nh.n_descsz - 1] != '\0')
				continue;
			prov = desc + addrs;
			probe = prov + strlen(prov) + 1;
			if (probe < desc + nh.n_descsz && strcmp(prov, "python") == 0 &&
			    strcmp(probe, "function__entry") == 0)
				found = true;
		}
	}
	return found;
}

static bool has_python_probes(const char *path)
{
	struct elf_file f;
	bool found;

	if (elf_file_open(&f, path) != 0)
		return false;
	found = trace_python_elf_has_probes(&f);
	elf_file_close(&f);
	return found;
}

static bool is_libpython(const char *path, void *ctx)
{
	(void)ctx;
	return strstr(path, "/libpython") != NULL;
}

/* A mapped libpython of the process, into out. */
static bool mapped_libpython(pid_t pid, char *out, size_t size)
{
	return procmaps_find_exec_file(pid, is_libpython, NULL, out, size) == 0;
}

struct libpython_ctx {
	const char *exe;
	char *out;
	size_t size;
};

/* The libpython an executable needs: beside it in ../lib (the layout of
 * pyenv and of `make install`, its RUNPATH), or in the library dirs. */
static int needed_libpython(void *vctx, const char *needed)
{
	struct libpython_ctx *c = vctx;
	char exe[PATH_MAX], dir[PATH_MAX + 8];
	const char *dirs[] = { dir, "/usr/lib/x86_64-linux-gnu", "/usr/lib", "/usr/local/lib" };

	if (strncmp(needed, "libpython", 9) != 0)
		return 0;
	snprintf(exe, sizeof(exe), "%s", c->exe);
	snprintf(dir, sizeof(dir), "%s/../lib", dirname(exe));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
		char *real;

		snprintf(c->out, c->size, "%s/%s", dirs[i], needed);
		if (access(c->out, R_OK) != 0)
			continue;
		real = realpath(c->out, NULL);
		if (real && strlen(real) < c->size)
			strcpy(c->out, real);
		free(real);
		return 1;
	}
	return 0;
}

static bool libpython_of(const char *exe, char *out, size_t size)
{
	struct libpython_ctx c = { exe, out, size };
	struct elf_file f;
	bool found;

	if (elf_file_open(&f, exe) != 0)
		return false;
	found = elf_file_for_each_needed(&f, needed_libpython, &c) == 1;
	elf_file_close(&f);
	return found;
}

static bool is_elf(const char *path)
{
	char magic[4];
	FILE *f = fopen(path, "rb");
	bool yes = f && fread(magic, 1, 4, f) == 4 && !memcmp(magic, "\177ELF", 4);

	if (f)
		fclose(f);
	return yes;
}

/* The executable of the targets: -p's first, COMMAND's, else python3 in
 * PATH (the system's /usr/bin/python3 when PATH's is a script: a pyenv
 * shim). */
static bool target_executable(const pid_t *pids, int n_pids, char *const *command, char *out,
			      size_t size)
{
	char *found, *real;

	if (n_pids > 0)
		return proc_exe(pids[0], out, size) > 0;
	found = path_find_command(command ? command[0] : "python3");
	if (!command && (!found || !is_elf(found))) {
		free(found);
		found = strdup("/usr/bin/python3");
	}
	if (!found)
		return false;
	real = realpath(found, NULL);
	free(found);
	if (!real)
		return false;
	snprintf(out, size, "%s", real);
	free(real);
	return true;
}

static int parse_globs(const char *glob, struct trace_python *out)
{
	const char *colon = strrchr(glob, ':');
	const char *name = colon ? colon + 1 : glob;
	size_t file_len = colon ? (size_t)(colon - glob) : 0;

	if (!*name || strlen(name) >= COLLECTOR_PY_GLOB_LEN || file_len >= COLLECTOR_PY_GLOB_LEN ||
	    (colon && !file_len)) {
		fprintf(stderr, "collector: --trace py:%s: expected py:GLOB or py:FILEGLOB:GLOB, "
			"each at most %d characters (e.g. --trace 'py:work*')\n", glob,
			COLLECTOR_PY_GLOB_LEN - 1);
		return -EINVAL;
	}
	snprintf(out->name_glob, sizeof(out->name_glob), "%s", name);
	snprintf(out->file_glob, sizeof(out->file_glob), "%.*s", (int)file_len, glob);
	return 0;
}

int trace_python_resolve(const char *glob, const pid_t *pids, int n_pids, char *const *command,
			 struct trace_python *out)
{
	char exe[PATH_MAX], lib[PATH_MAX];
	bool have_lib;
	int err;

	if (out->on) {
		fprintf(stderr, "collector: --trace py: given twice; one py: spec per run\n");
		return -EINVAL;
	}
	err = parse_globs(glob, out);
	if (err)
		return err;
	if (!target_executable(pids, n_pids, command, exe, sizeof(exe))) {
		fprintf(stderr, "collector: --trace py:%s: no Python interpreter found (%s)\n", glob,
			n_pids > 0 ? "the process's executable cannot be read" :
			command ? "the command is not found" : "no python3 in PATH");
		return -ENOENT;
	}
	have_lib = n_pids > 0 ? mapped_libpython(pids[0], lib, sizeof(lib))
			      : libpython_of(exe, lib, sizeof(lib));
	if (have_lib && has_python_probes(lib))
		snprintf(out->interpreter, sizeof(out->interpreter), "%s", lib);
	else if (has_python_probes(exe))
		snprintf(out->interpreter, sizeof(out->interpreter), "%s", exe);
	else {
		fprintf(stderr, "collector: --trace py:%s: the Python interpreter %s was built "
			"without its USDT probes (no python:function__entry in .note.stapsdt; "
			"CPython's --with-dtrace builds have them, as Debian's python3.11 does)\n",
			glob, have_lib ? lib : exe);
		return -ENOTSUP;
	}
	out->on = true;
	out->image = MODEL_NONE;
	return 0;
}

void trace_python_add_function(struct model *m, struct trace_python *py, uint32_t k,
			       const struct collector_py_key *key)
{
	uint32_t fn, file = MODEL_NONE;

	if (py->image == MODEL_NONE) {
		struct model_image tmpl = { .path = "[python]", .kind = MODEL_IMAGE_ANON };

		py->image = model_add_image(m, &tmpl);
	}
	if (key->file[0])
		file = model_intern_file(m, key->file);
	/* keyed by (name, entry): the id tells two functions of one name apart */
	fn = model_intern_function(m, py->image, key->name[0] ? key->name : "[unnamed]",
				   py->first_id + k + 1, 0, file, 0);
	model_add_traced_function(m, py->image, py->first_id + k + 1, fn);
}
