// SPDX-License-Identifier: GPL-2.0
/* --trace BIN:PATTERN into traced functions and the files to probe. */
#include "decode/trace_specs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/path.h"
#include "lib/userfs.h"
#include "symbols/elfinfo.h"
#include "lib/procmaps.h"

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

/* A mapped file named as a library name (--trace libfoo:...) names it,
 * when it is a regular file (not one deleted since). */
static bool names_library(const char *path, void *ctx)
{
	return library_name_matches(strrchr(path, '/') + 1, ctx) && regular_file(path);
}

static bool find_in_maps(pid_t pid, const char *name, char *out, size_t size)
{
	return procmaps_find_exec_file(pid, names_library, (void *)name, out, size) == 0;
}

struct needed_ctx {
	const char *name;
	char *out;
	size_t size;
};

static int needed_found(void *vctx, const char *needed)
{
	struct needed_ctx *c = vctx;

	return library_name_matches(needed, c->name) &&
	       path_find_library(needed, c->out, c->size) == 0;
}

/* A library that COMMAND's binary needs, by its DT_NEEDED name. */
static bool find_needed(const char *binary, const char *name, char *out, size_t size)
{
	struct needed_ctx c = { name, out, size };
	struct elf_file f;
	bool found;

	if (elf_file_open(&f, binary) != 0)
		return false;
	found = elf_file_for_each_needed(&f, needed_found, &c) == 1;
	elf_file_close(&f);
	return found;
}

static bool find_in_library_dirs(const char *name, char *out, size_t size)
{
	static const char *const suffixes[] = { ".so.6", ".so.1", ".so.0", ".so" };

	for (size_t d = 0; path_library_dirs[d]; d++)
		for (size_t s = 0; s < sizeof(suffixes) / sizeof(*suffixes); s++) {
			snprintf(out, size, "%s/%s%s", path_library_dirs[d], name, suffixes[s]);
			if (regular_file(out))
				return true;
		}
	return false;
}

/* COMMAND's executable as execvp finds it, resolved to a real path. */
static char *which(const char *cmd)
{
	char *found = path_find_command(cmd), *real;

	if (!found)
		return NULL;
	real = realpath(found, NULL);
	free(found);
	return real;
}

/*
 * BIN named by a path: the user names it, so it is resolved and opened
 * with his rights (lib/userfs.h), and its symbols are read from that open
 * file.  The probes are attached by the resolved path (with no symlink
 * left in it), as the kernel takes them.  An fd, or a negative errno after
 * a message.
 */
static int open_as_user(const char *bin, char *out, size_t size)
{
	char *real = NULL;
	struct stat st;
	int fd = -1, err = user_fs_enter();

	if (err)
		return err;
	real = realpath(bin, NULL);
	if (real)
		fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	err = fd < 0 ? -errno : 0;
	user_fs_leave();
	if (!err && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
		err = -ENOENT;
	if (err) {
		fprintf(stderr, "collector: --trace %s: %s\n", bin,
			err == -ENOENT ? "no such file" : strerror(-err));
		if (fd >= 0)
			close(fd);
		free(real);
		return err;
	}
	snprintf(out, size, "%s", real);
	free(real);
	return fd;
}

/* BIN: a path (then *fd is the file opened with the user's rights), or a
 * library name found in the targets' mappings, in what COMMAND needs, or
 * in the library directories (then *fd is -1). */
static int resolve_binary(const struct trace_specs_config *cfg, const char *bin, char *out,
			  size_t size, int *fd)
{
	char *cmd_path = NULL;

	*fd = -1;
	if (strchr(bin, '/')) {
		*fd = open_as_user(bin, out, size);
		return *fd < 0 ? *fd : 0;
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
	struct trace_file *file;
	size_t matched, skipped;
	uint64_t last_addr;
	bool verbose;
};

static int on_match(void *vctx, const struct symbolizer_symbol *sym)
{
	struct match_ctx *c = vctx;
	struct trace_file *f = c->file;
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
	fn = symbolizer_function(c->sym, c->image, sym->name, sym->addr, sym->size, MODEL_NONE, 0);
	id = model_add_traced_function(c->m, c->image, sym->addr, fn);
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->offsets = realloc(f->offsets, f->cap * sizeof(*f->offsets));
		f->cookies = realloc(f->cookies, f->cap * sizeof(*f->cookies));
		f->names = realloc(f->names, f->cap * sizeof(*f->names));
		if (!f->offsets || !f->cookies || !f->names)
			return -ENOMEM;
	}
	f->offsets[f->n] = sym->file_offset;
	f->cookies[f->n] = id;
	f->names[f->n] = c->m->functions.items[fn].name;
	f->n++;
	c->matched++;
	return 0;
}

void trace_files_free(struct trace_files *files)
{
	for (size_t i = 0; i < files->len; i++) {
		if (files->items[i].fd >= 0)
			close(files->items[i].fd);
		free(files->items[i].path);
		free(files->items[i].offsets);
		free(files->items[i].cookies);
		free(files->items[i].names);
	}
	free(files->items);
	files->items = NULL;
	files->len = 0;
}

/* The file of `path` in the list, added when new. */
static struct trace_file *file_of(struct trace_files *files, const char *path)
{
	struct trace_file *grown;

	for (size_t k = 0; k < files->len; k++)
		if (strcmp(files->items[k].path, path) == 0)
			return &files->items[k];
	grown = realloc(files->items, (files->len + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	files->items = grown;
	memset(&grown[files->len], 0, sizeof(*grown));
	grown[files->len].fd = -1;
	grown[files->len].path = strdup(path);
	if (!grown[files->len].path)
		return NULL;
	return &grown[files->len++];
}

static int resolve_specs(struct model *m, struct symbolizer *sym,
			 const struct trace_specs_config *cfg, struct trace_files *files)
{
	for (int i = 0; i < cfg->n_specs; i++) {
		const char *spec = cfg->specs[i], *colon = strchr(spec, ':');
		char bin[PATH_MAX], path[PATH_MAX], open_path[64];
		struct match_ctx c = { .m = m, .sym = sym, .verbose = cfg->verbose };
		struct trace_file *f = NULL;
		struct stat st;
		int n, err, fd;

		if (strncmp(spec, "py:", 3) == 0) {
			err = trace_python_resolve(spec + 3, cfg->pids, cfg->n_pids, cfg->command,
						   &files->python);
			if (err)
				return err;
			continue;
		}
		if (!colon || colon == spec || !colon[1]) {
			fprintf(stderr, "collector: --trace '%s': expected BIN:PATTERN, e.g. "
				"--trace ./app:'*' or --trace libc:malloc\n", spec);
			return -EINVAL;
		}
		snprintf(bin, sizeof(bin), "%.*s", (int)(colon - spec), spec);
		err = resolve_binary(cfg, bin, path, sizeof(path), &fd);
		if (err)
			return err;
		f = file_of(files, path);
		if (!f) {
			if (fd >= 0)
				close(fd);
			return -ENOMEM;
		}
		if (fd >= 0 && f->fd >= 0)
			close(fd); /* named twice: the first open serves */
		else if (fd >= 0)
			f->fd = fd;
		snprintf(open_path, sizeof(open_path), "/proc/self/fd/%d", f->fd);
		if (f->fd >= 0 ? fstat(f->fd, &st) : stat(path, &st))
			memset(&st, 0, sizeof(st));
		c.image = symbolizer_image(sym, path, f->fd >= 0 ? open_path : NULL, st.st_dev,
					   st.st_ino);
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

int trace_specs_resolve(struct model *m, struct symbolizer *sym,
			const struct trace_specs_config *cfg, struct trace_files *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	err = resolve_specs(m, sym, cfg, out);
	out->python.first_id = (uint32_t)m->traced.len; /* the Python ids follow */
	if (err)
		trace_files_free(out);
	return err;
}
