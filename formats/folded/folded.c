// SPDX-License-Identifier: GPL-2.0
/*
 * Folded stacks: OUT/collector.folded, the input of flamegraph.pl and of
 * every tool that reads stackcollapse output (speedscope, Firefox
 * Profiler's importer, inferno, pyroscope's ingest).
 *
 * One line per distinct stack of names: the process name (comm) as the
 * root frame, then the frames root first (formats/frames.h: inlined calls
 * as frames of their own, unknown code as "[image]"), then a space and the
 * number of samples.  Kernel frames end in "_[k]" and anonymous (JIT)
 * code in "_[j]", as stackcollapse-perf.pl --kernel --jit marks them, and
 * so do a JIT runtime's methods (Java's, walked or named from a perf map),
 * as async-profiler's annotated output marks them, so that flamegraph.pl
 * --color=java colours them apart.  Stacks that print
 * alike merge into one line, and lines come in the tree's order (sorted by
 * name, root first), so the counts add up to the samples and the file does
 * not depend on the order the samples came in.
 */
#include "formats/format.h"
#include "formats/folded/folded.h"
#include "formats/folded/folded_reader.h"
#include "formats/flametree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FOLDED_FILE "collector.folded"

/* Every node with samples of its own, as a line of the names from the
 * process down to it; a depth-first walk with the path kept in an array. */
static int write_lines(const struct flametree *t, FILE *fp)
{
	uint32_t *path = malloc((t->max_depth + 2) * sizeof(*path));
	uint32_t node = t->nodes.items[FLAMETREE_ROOT].first_child;
	uint32_t depth = 0;

	if (!path)
		return -ENOMEM;
	while (node != MODEL_NONE) {
		const struct flame_node *n = &t->nodes.items[node];

		path[depth] = node;
		if (n->self) {
			for (uint32_t d = 0; d <= depth; d++) {
				if (d)
					fputc(';', fp);
				frame_put_folded_name(fp, flametree_name(t, &t->nodes.items[path[d]]));
			}
			fprintf(fp, " %" PRIu64 "\n", n->self);
		}
		if (n->first_child != MODEL_NONE) {
			node = n->first_child;
			depth++;
			continue;
		}
		/* up until a node with a next sibling */
		while (node != MODEL_NONE && t->nodes.items[node].next_sibling == MODEL_NONE) {
			node = t->nodes.items[node].parent;
			if (node == FLAMETREE_ROOT || depth == 0) {
				node = MODEL_NONE;
				break;
			}
			depth--;
		}
		if (node != MODEL_NONE)
			node = t->nodes.items[node].next_sibling;
	}
	free(path);
	return 0;
}

int folded_write(const struct model *m, const struct export_options *opts)
{
	struct flametree t;
	struct outfile f;
	int err;

	err = flametree_build(&t, m);
	if (err) {
		fprintf(stderr, "collector: %s/%s: %s\n", opts->dir, FOLDED_FILE, strerror(-err));
		return err;
	}
	err = outfile_open(&f, opts, FOLDED_FILE);
	if (!err) {
		err = write_lines(&t, f.fp);
		if (err)
			outfile_abort(&f);
		else
			err = outfile_commit(&f);
	}
	flametree_free(&t);
	return err;
}

/* ---- collector dump ---------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

/* By name (*.folded), or by a first line of two frames or more and a count:
 * folded text has no magic of its own. */
bool folded_recognize(const char *path, const unsigned char *head, size_t n)
{
	if (ends_with(path, ".folded"))
		return true;
	return folded_first_line_ok((const char *)head, n);
}

int folded_dump(const char *path, FILE *out, bool check)
{
	FORMAT_DUMP(struct folded_profile, folded_read_file, folded_print, folded_profile_free,
		    path, out, check);
}

const struct format folded_format = {
	.name = "folded",
	.needs = FORMAT_NEEDS_SAMPLES,
	.write = folded_write,
	.recognize = folded_recognize,
	.dump = folded_dump,
	.one_event = true,
};
