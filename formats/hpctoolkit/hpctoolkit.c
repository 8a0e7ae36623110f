// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit database writer: OUT/hpctoolkit/ with meta.db, profile.db,
 * cct.db, trace.db, metrics/default.yaml and src/ (copies of the source
 * files the samples resolved to).  One database holds every event of the
 * run, a metric each (and the wall-clock view's), side by side.  The layouts and the choices made where
 * the specs are vague are described in hpctoolkit_internal.h.
 */
#include "formats/hpctoolkit/hpctoolkit_internal.h"
#include "formats/hpctoolkit/hpctoolkit.h"
#include "lib/userfs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The database is written under DB_DIR's staging name and renamed whole
 * when every file is in place: a database is several files, and none may
 * stand under the final name while another is missing. */
#define DB_FINAL "hpctoolkit"
#define DB_DIR "hpctoolkit.tmp"
#define MAX_SOURCE_SIZE (64u << 20)

/* The metric taxonomy hpcviewer reads its columns from (METRICS.yaml
 * format), in the shape hpcprof writes it, with Min and Max variants for
 * the summary statistics meta.db also lists: a root (a column) per metric,
 * side by side, its inputs anchored as m<metric>-<combine>-<scope>. */
/* s as a YAML double-quoted scalar: an event's description may hold ": "
 * or "#", which end a plain one. */
static void put_yaml_quoted(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', fp);
		if ((unsigned char)*s < 0x20)
			fprintf(fp, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, fp);
	}
	fputc('"', fp);
}

static int write_taxonomy(const struct hk_tree *t, const struct export_options *opts)
{
	static const char *const combines[] = { "sum", "min", "max" };
	static const char *const variants[] = { "Sum", "Min", "Max" };
	static const char *const scopes[] = { "execution", "lex_aware", "function" };
	struct outfile f;
	int err = outfile_open(&f, opts, DB_DIR "/metrics/default.yaml");

	if (err)
		return err;
	fprintf(f.fp, "version: 0\ninputs:\n");
	for (unsigned mi = 0; mi < t->n_metrics; mi++)
		for (int c = 0; c < 3; c++)
			for (int s = 0; s < 3; s++)
				fprintf(f.fp, "  - &m%u-%s-%s\n    metric: %s\n"
					"    scope: %s\n    formula: $$\n    combine: %s\n", mi,
					combines[c], scopes[s], t->metrics[mi].name, scopes[s],
					combines[c]);
	fprintf(f.fp, "roots:\n");
	for (unsigned mi = 0; mi < t->n_metrics; mi++) {
		fprintf(f.fp, "  - name: %s\n    description: ", t->metrics[mi].name);
		put_yaml_quoted(f.fp, t->metrics[mi].description);
		fprintf(f.fp, "\n    variants:\n");
		for (int c = 0; c < 3; c++)
			fprintf(f.fp, "      %s:\n        render: [number%s]\n        formula:\n"
				"          inclusive:\n            standard: *m%u-%s-execution\n"
				"          exclusive:\n            custom: *m%u-%s-lex_aware\n"
				"            standard: *m%u-%s-function\n",
				variants[c], c == 0 ? ", percent" : "", mi, combines[c], mi,
				combines[c], mi, combines[c]);
	}
	return outfile_commit(&f);
}

/* Creates DB_DIR/src/<dirs of path> one level at a time. */
static int make_parents(const struct export_options *opts, const char *rel)
{
	char buf[PATH_MAX];
	size_t skip = strlen(DB_DIR "/src/");
	int err = 0;

	if (strlen(rel) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, rel);
	for (char *p = buf + skip; (p = strchr(p, '/')) && !err; p++) {
		*p = 0;
		err = export_mkdir(opts, buf);
		*p = '/';
	}
	return err;
}

/*
 * Copies a source file into DB_DIR/src/<canonical path>; returns the path
 * relative to the database ("src/..."), or NULL when not copied (missing,
 * not a regular file, unreadable, too big).  The canonical path has no
 * symlink and no "..", so the copy stays under src/.  The source is
 * opened with the invoking user's rights (lib/userfs.h): a binary's debug
 * information can name any path, and the user gets no copy of a file he
 * could not read himself.
 */
static char *copy_source(const struct export_options *opts, const char *path)
{
	char *real = NULL, *rel = NULL, *ret = NULL;
	struct outfile f;
	struct stat st;
	char buf[65536];
	ssize_t n;
	int fd = -1;

	if (path[0] != '/' || user_fs_enter() != 0)
		goto out;
	real = realpath(path, NULL);
	if (real)
		fd = open(real, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	user_fs_leave();
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > MAX_SOURCE_SIZE)
		goto out;
	if (asprintf(&rel, DB_DIR "/src%s", real) < 0) {
		rel = NULL;
		goto out;
	}
	if (make_parents(opts, rel) != 0 || outfile_open(&f, opts, rel) != 0)
		goto out;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (outfile_write(&f, buf, n) != 0)
			break;
	if (n != 0) {
		outfile_abort(&f);
		goto out;
	}
	if (outfile_commit(&f) == 0)
		ret = strdup(rel + strlen(DB_DIR "/"));
out:
	if (fd >= 0)
		close(fd);
	free(real);
	free(rel);
	return ret;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* A failed write leaves no half database behind. */
static void remove_stage(const struct export_options *opts)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", opts->dir, DB_DIR);
	if (user_fs_enter() == 0) {
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
		user_fs_leave();
	}
}

static int publish(const struct export_options *opts)
{
	char from[4096], to[4096];
	int err;

	snprintf(from, sizeof(from), "%s/%s", opts->dir, DB_DIR);
	snprintf(to, sizeof(to), "%s/%s", opts->dir, DB_FINAL);
	err = user_fs_enter();
	if (err)
		return err;
	err = rename(from, to) == 0 ? 0 : -errno;
	/* a database written before into the same output is replaced, as files are */
	if ((err == -ENOTEMPTY || err == -EEXIST) &&
	    nftw(to, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0)
		err = rename(from, to) == 0 ? 0 : -errno;
	user_fs_leave();
	if (!err)
		return 0;
	errno = -err;
	fprintf(stderr, "collector: cannot rename %s to %s: %s\n", from, to, strerror(errno));
	return err;
}

int hpctoolkit_write(const struct model *m, const struct export_options *opts)
{
	struct hk_tree t;
	char **src = NULL;
	uint8_t *tried = NULL;
	int err;

	if (!m->samples.len || !m->threads.len)
		return 0;
	err = hk_tree_build(&t, m, opts->hpctoolkit_draft);
	if (err)
		goto out;
	if (!t.n_samples)
		goto out; /* no sample of a known thread */
	err = export_mkdir(opts, DB_DIR);
	if (!err)
		err = export_mkdir(opts, DB_DIR "/metrics");
	if (!err)
		err = export_mkdir(opts, DB_DIR "/src");
	if (err)
		goto out;
	src = calloc(m->files.len + 1, sizeof(*src));
	tried = calloc(m->files.len + 1, 1);
	if (!src || !tried) {
		err = -ENOMEM;
		goto out;
	}
	/* the files the samples resolved to: those of line contexts */
	for (size_t i = 1; i < t.n_nodes; i++) {
		uint32_t file = t.nodes[i].file;

		if (t.nodes[i].kind == HK_NODE_LINE && file < m->files.len && !tried[file]) {
			tried[file] = 1;
			src[file] = copy_source(opts, m->files.items[file].path);
		}
	}
	err = hk_write_meta(&t, opts, DB_DIR "/meta.db", src);
	if (!err)
		err = hk_write_profile(&t, opts, DB_DIR "/profile.db");
	if (!err)
		err = hk_write_cct(&t, opts, DB_DIR "/cct.db");
	if (!err)
		err = hk_write_trace(&t, opts, DB_DIR "/trace.db");
	if (!err)
		err = write_taxonomy(&t, opts);
	if (!err)
		err = publish(opts);
out:
	if (err)
		remove_stage(opts);
	if (src)
		for (size_t i = 0; i < m->files.len; i++)
			free(src[i]);
	free(src);
	free(tried);
	hk_tree_free(&t);
	return err;
}

const struct format hpctoolkit_format = {
	.name = "hpctoolkit",
	.needs = FORMAT_NEEDS_SAMPLES,
	.uses_switches = true, /* the traces: when each thread ran */
	.samples_in_time_order = true, /* the traces: which context ran when */
	.write = hpctoolkit_write,
	.recognize = hpctoolkit_recognize,
	.dump = hpctoolkit_dump,
};
