/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every format shares: options, safe output files, and struct format,
 * the entry points `collector` and `collector dump` call.  What the readers
 * share is formats/infile.h.
 *
 * Writers take the model (model/model.h) and write under opts->dir.  Readers
 * parse a file into plain structs and reject malformed input with the byte
 * offset and the reason.  Formats know nothing of BPF.
 */
#ifndef COLLECTOR_FORMAT_H
#define COLLECTOR_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "model/model.h"

struct export_options {
	const char *dir;          /* output directory, already created */
	bool sampler_layout_spec; /* --sampler-layout=spec */
	bool hpctoolkit_draft;    /* --hpctoolkit-layout=draft */
	bool quiet;
};

/*
 * An output file written under a temporary name in the same directory and
 * renamed to its final name only when complete, so that no partial file
 * ever stands under a final name.  Created with O_EXCL|O_NOFOLLOW, mode
 * 0644, with the invoking user's rights (lib/userfs.h): his, and only
 * where he may write.
 */
struct outfile {
	FILE *fp;
	char *tmp_path;
	char *final_path;
	const struct export_options *opts;
};

/* relpath is relative to opts->dir; its parent directories must exist
 * (see export_mkdir).  Returns 0 or a negative errno, with a message on
 * stderr naming the file. */
int outfile_open(struct outfile *f, const struct export_options *opts, const char *relpath);
/* Flushes, checks every write (ENOSPC included), closes and renames.
 * Returns 0 or a negative errno; on error the temporary file is removed. */
int outfile_commit(struct outfile *f);
/* Closes and removes the temporary file. */
void outfile_abort(struct outfile *f);
/* Creates opts->dir/relpath (one level) with mode 0755, like files with
 * the invoking user's rights.
 * An existing directory is accepted. */
int export_mkdir(const struct export_options *opts, const char *relpath);

/* Writes n bytes (fields encoded by the caller, with lib/bytes.h): 0 or a
 * negative errno. */
int outfile_write(struct outfile *f, const void *data, size_t n);

/*
 * A file name made from src[0..n) (stopping at a NUL) into dst[size]: every
 * byte outside [A-Za-z0-9._+-] becomes '_', and so does a leading dot (no
 * hidden files, no "." or ".."); fallback when nothing is left.  At most
 * size - 1 bytes; returns the length.
 */
size_t export_file_name(char *dst, size_t size, const char *src, size_t n, const char *fallback);

/*
 * One output format: a folder under formats/ and one line in the registry
 * (formats/registry.c).  write() takes the finished model and writes under
 * opts->dir (0 or a negative errno, after a message naming the file).
 * recognize() looks at the first bytes of a file (or, for a directory
 * format, at the path) and says whether it is this format; dump() prints
 * the file as readable text (or, with check, validates only) and returns
 * 0, or a negative errno / -EINVAL after printing "PATH: offset N: reason"
 * on stderr.
 */
enum format_needs {
	FORMAT_NEEDS_SAMPLES = 1 << 0,      /* applies when the run has samples */
	FORMAT_NEEDS_TRACE_EVENTS = 1 << 1, /* applies to, and wants, the traced calls'
					     * entry and exit events */
};

struct format {
	const char *name;
	unsigned int needs;    /* enum format_needs: it applies when any is there */
	bool uses_switches;    /* reads the threads' context switches (model.switches) */
	/* writes the samples one by one in time order (a timeline, a trace):
	 * when no format of a run does, the kernel sums the samples by stack
	 * and sends no record per sample (bpf/sample_agg.bpf.h) */
	bool samples_in_time_order;
	/* names each image with the CRC-32 of its whole file (model_image's
	 * crc32): the symbolizer reads every file whole only for such a run */
	bool needs_image_crc;
	int (*write)(const struct model *m, const struct export_options *opts);
	bool (*recognize)(const char *path, const unsigned char *head, size_t n);
	int (*dump)(const char *path, FILE *out, bool check);
	/* The format holds one event: in a run of several, formats_write()
	 * gives it the first event's samples under opts->dir and each other
	 * event's under opts->dir/<event>/ (a model view of that event only). */
	bool one_event;
};

#endif /* COLLECTOR_FORMAT_H */
