// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graph writer: OUT/flamegraph.html, one self-contained page (no
 * network, no Perl) that a browser opens: an SVG flame graph of every
 * sample, the process names under the root ("all") and each process's
 * stacks above it, root at the bottom as flamegraph.pl draws it.  Click a
 * frame to zoom to it, pick a process to see its graph alone, search with
 * a regular expression (matches turn magenta, their share of the samples is
 * shown), and hover for a frame's samples and share.  Kernel, JIT and
 * unknown frames have colours of their own, user code flamegraph.pl's
 * "hot" palette.
 *
 * The page is written by collector itself: the HTML around a <script
 * type="application/json" id="flamegraph-data"> element that holds the
 * samples' tree (formats/flametree.h), then the page's CSS and JavaScript,
 * which live as flamegraph.css and flamegraph.js beside this file and are
 * built into the binary (mk/gen.mk).  The data:
 *
 *   { "version": 1, "title": ..., "subtitle": ..., "samples": N,
 *     "period_ns": P, "names": [name...], "kinds": [kind bits...],
 *     "nodes": [name, total, children, ...] }
 *
 * nodes lists the tree depth first, each node as three numbers: its name
 * (an index of names, -1 for the root), the samples through it, and how
 * many children follow; children come sorted by name.  The kind bits are
 * formats/frames.h's (1 kernel, 2 JIT, 4 unknown, 8 a process name, 16
 * a language runtime's frame), and a runtime's frame says which runtime
 * from bit 5 up: 1 + its index in "runtimes", the names of the runtimes'
 * images ("java" for [java]), an array the data has when a runtime's
 * frame is in it.  The page labels such a frame " [java]", " [python]".
 * Nothing is pruned: the page draws only frames at least 0.1 px wide, so
 * zooming shows the rest.
 */
#include "formats/format.h"
#include "formats/flamegraph/flamegraph.h"
#include "formats/flamegraph/flamegraph_reader.h"
#include "formats/flamegraph/assets.h"
#include "formats/flametree.h"
#include "formats/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FLAMEGRAPH_FILE "flamegraph.html"

static void put_html_text(FILE *fp, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", fp); break;
		case '<': fputs("&lt;", fp); break;
		case '>': fputs("&gt;", fp); break;
		case '"': fputs("&quot;", fp); break;
		default: fputc(*s, fp);
		}
	}
}

/* The tree depth first, as [name, total, children] triples. */
static void put_nodes(const struct flametree *t, FILE *fp)
{
	MODEL_VEC(uint32_t) stack = { 0 };

	*MODEL_VEC_PUSH(stack) = FLAMETREE_ROOT;
	while (stack.len) {
		uint32_t id = stack.items[--stack.len];
		const struct flame_node *n = &t->nodes.items[id];
		size_t first = stack.len, children = 0;

		if (id != FLAMETREE_ROOT)
			fputc(',', fp);
		if (id == FLAMETREE_ROOT)
			fputs("-1", fp);
		else
			json_put_uint(fp, n->name);
		fputc(',', fp);
		json_put_uint(fp, n->total);
		fputc(',', fp);
		for (uint32_t c = n->first_child; c != MODEL_NONE; c = t->nodes.items[c].next_sibling) {
			*MODEL_VEC_PUSH(stack) = c;
			children++;
		}
		json_put_uint(fp, children);
		/* pushed in order: reverse them so that the first child comes out first */
		for (size_t i = first, j = stack.len; i + 1 < j; i++, j--) {
			uint32_t tmp = stack.items[i];

			stack.items[i] = stack.items[j - 1];
			stack.items[j - 1] = tmp;
		}
		if (!(id & 0xfff))
			fputc('\n', fp); /* now and then a line break: no line of megabytes */
	}
	free(stack.items);
}

/* The runtimes whose frames the tree holds (their images, at most
 * FLAMEGRAPH_MAX_RUNTIMES, in the order met) and each name's runtime bits
 * (1 + the runtime's index, from bit 5 up; 0 for a name of no runtime's,
 * or past the last runtime the bits can say). */
struct runtime_names {
	uint32_t image[FLAMEGRAPH_MAX_RUNTIMES];
	unsigned int n;
	uint8_t *bits;  /* per name */
};

static int runtime_names_of(const struct flametree *t, struct runtime_names *r)
{
	memset(r, 0, sizeof(*r));
	r->bits = calloc(t->frames.names.len + 1, 1);
	if (!r->bits)
		return -ENOMEM;
	for (size_t i = 0; i < t->frames.frames.len; i++) {
		const struct frame *f = &t->frames.frames.items[i];
		unsigned int k = 0;

		if (!(f->kind & FRAME_RUNTIME) || f->name >= t->frames.names.len)
			continue;
		while (k < r->n && r->image[k] != f->image)
			k++;
		if (k == r->n && r->n < FLAMEGRAPH_MAX_RUNTIMES)
			r->image[r->n++] = f->image;
		if (k < r->n && !r->bits[f->name])
			r->bits[f->name] = (uint8_t)((k + 1) << FLAMEGRAPH_RUNTIME_SHIFT);
	}
	return 0;
}

/* "[java]" -> "java" */
static void put_runtime_name(const struct model *m, uint32_t image, FILE *fp)
{
	const char *path = image < m->images.len ? m->images.items[image].path : "";
	char name[64];
	size_t n = strlen(path);

	if (n >= 2 && path[0] == '[' && path[n - 1] == ']')
		snprintf(name, sizeof(name), "%.*s", (int)(n - 2), path + 1);
	else
		snprintf(name, sizeof(name), "%s", frame_basename(path));
	json_put_string(fp, name);
}

static void put_data(const struct model *m, const struct flametree *t,
		     const struct runtime_names *rt, FILE *fp)
{
	char title[320], subtitle[256], rate[64];

	snprintf(title, sizeof(title), "collector: %s",
		 m->run.command_line ? m->run.command_line : m->run.system_wide ? "all CPUs" : "");
	model_event_rate(model_event(m, 0), rate, sizeof(rate));
	snprintf(subtitle, sizeof(subtitle), "%zu samples of %s %s, %.3f s, "
		 "call graph %s", m->samples.len, model_event(m, 0)->name, rate,
		 m->run.end_ns > m->run.start_ns ?
		 (double)(m->run.end_ns - m->run.start_ns) / 1e9 : 0.0,
		 *m->run.call_graph ? m->run.call_graph : "fp");
	fputs("{\"version\":1,\"title\":", fp);
	json_put_string(fp, title);
	fputs(",\"subtitle\":", fp);
	json_put_string(fp, subtitle);
	fputs(",\"samples\":", fp);
	json_put_uint(fp, t->nodes.items[FLAMETREE_ROOT].total);
	fputs(",\"period_ns\":", fp);
	json_put_uint(fp, m->run.period_ns);
	fputs(",\n\"names\":[", fp);
	for (size_t i = 0; i < t->frames.names.len; i++) {
		if (i)
			fputs(i % 64 ? "," : ",\n", fp);
		json_put_string(fp, t->frames.names.items[i].text);
	}
	fputs("],\n\"kinds\":[", fp);
	for (size_t i = 0; i < t->frames.names.len; i++) {
		uint8_t kind = t->frames.names.items[i].kind | rt->bits[i];

		if (i)
			fputc(',', fp);
		json_put_uint(fp, kind);
	}
	if (rt->n) {
		fputs("],\n\"runtimes\":[", fp);
		for (unsigned int k = 0; k < rt->n; k++) {
			if (k)
				fputc(',', fp);
			put_runtime_name(m, rt->image[k], fp);
		}
	}
	fputs("],\n\"nodes\":[", fp);
}

static void put_page(const struct model *m, const struct flametree *t,
		     const struct runtime_names *rt, FILE *fp)
{
	fputs("<!DOCTYPE html>\n<!-- " FLAMEGRAPH_MARK " by collector " COLLECTOR_VERSION
	      ": the samples are in the script element " FLAMEGRAPH_DATA_ID " -->\n"
	      "<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", fp);
	put_html_text(fp, m->run.command_line ? m->run.command_line : "collector");
	fputs(" - flame graph</title>\n<style>\n", fp);
	fwrite(fg_flamegraph_css, 1, sizeof(fg_flamegraph_css), fp);
	fputs("</style>\n</head>\n<body>\n<script type=\"application/json\" id=\""
	      FLAMEGRAPH_DATA_ID "\">\n", fp);
	put_data(m, t, rt, fp);
	put_nodes(t, fp);
	fputs("]}\n</script>\n<script>\n", fp);
	fwrite(fg_flamegraph_js, 1, sizeof(fg_flamegraph_js), fp);
	fputs("</script>\n</body>\n</html>\n", fp);
}

int flamegraph_write(const struct model *m, const struct export_options *opts)
{
	struct runtime_names rt = { 0 };
	struct flametree t;
	struct outfile f;
	int err;

	err = flametree_build(&t, m);
	if (!err) {
		err = runtime_names_of(&t, &rt);
		if (err)
			flametree_free(&t);
	}
	if (err) {
		fprintf(stderr, "collector: %s/%s: %s\n", opts->dir, FLAMEGRAPH_FILE, strerror(-err));
		return err;
	}
	err = outfile_open(&f, opts, FLAMEGRAPH_FILE);
	if (!err) {
		put_page(m, &t, &rt, f.fp);
		err = outfile_commit(&f);
	}
	free(rt.bits);
	flametree_free(&t);
	return err;
}

/* ---- collector dump ---------------------------------------------------- */

bool flamegraph_recognize(const char *path, const unsigned char *head, size_t n)
{
	(void)path;
	return memmem(head, n, "<!-- " FLAMEGRAPH_MARK, strlen("<!-- " FLAMEGRAPH_MARK)) != NULL;
}

int flamegraph_dump(const char *path, FILE *out, bool check)
{
	FORMAT_DUMP(struct flamegraph_page, flamegraph_read_file, flamegraph_print,
		    flamegraph_page_free, path, out, check);
}

const struct format flamegraph_format = {
	.name = "flamegraph",
	.needs = FORMAT_NEEDS_SAMPLES,
	.write = flamegraph_write,
	.recognize = flamegraph_recognize,
	.dump = flamegraph_dump,
	.one_event = true,
};
