// SPDX-License-Identifier: GPL-2.0
/*
 * HPCToolkit writer: meta.db (properties, identifier names, metrics, load
 * modules, source files, functions and the context tree).
 *
 * Built in memory (it is linear in contexts) and written at once.  Sections
 * are placed in hpcprof's order: general, identifier names, metrics, string
 * table, modules, files, functions, context tree; each starts 8-aligned.
 */
#include "formats/hpctoolkit/hpctoolkit_internal.h"
#include "lib/bytes.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct meta {
	const struct hk_tree *t;
	const struct model *m;
	struct hk_buf b;
	uint8_t hdr[0x90];
	/* model id -> index in the written array, or UINT32_MAX */
	uint32_t *mod_of_image, *file_of_file, *fn_of_function;
	uint32_t *images, *files, *functions; /* written order -> model id */
	size_t n_images, n_files, n_functions;
	uint64_t p_modules, p_files, p_functions, p_entry_fn; /* array starts */
	uint64_t s_entry[HK_N_ENTRIES]; /* entry point names, in the string table */
};

static void section(struct meta *mt, int idx, size_t start)
{
	uint64_t sz = mt->b.len - start, p = start;

	le64_put(mt->hdr + 0x10 + idx * 16, sz);
	le64_put(mt->hdr + 0x18 + idx * 16, p);
}

enum { SEC_GENERAL, SEC_IDNAMES, SEC_METRICS, SEC_CONTEXT, SEC_STRINGS, SEC_MODULES, SEC_FILES,
       SEC_FUNCTIONS };

static char *describe(const struct hk_tree *t)
{
	const struct model *m = t->m;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uint64_t lost = model_total_lost(m);
	double dur = m->run.end_ns > m->run.start_ns ? (m->run.end_ns - m->run.start_ns) / 1e9 : 0;
	char events[512];

	if (!f)
		return NULL;
	fprintf(f, "# collector profile\n\n");
	if (m->run.command_line)
		fprintf(f, "- Command: `%s`\n", m->run.command_line);
	else
		fprintf(f, "- System-wide run\n");
	fprintf(f, "- Host: %s (host id 0x%" PRIx64 "), %u CPUs\n", m->run.hostname,
		m->run.host_id, m->run.ncpus);
	model_events_phrase(m, events, sizeof(events));
	fprintf(f, "- Event%s: %s, %.3f s of wall time\n", model_event_count(m) > 1 ? "s" : "",
		events, dur);
	for (unsigned mi = 0; mi < t->n_metrics; mi++) {
		const struct hk_metric *mt = &t->metrics[mi];
		const struct model_event *e = mt->wall ? NULL : model_event(m, mi);

		fprintf(f, "- Metric `%s`: %.*f %s", mt->name, mt->seconds ? 6 : 0,
			hk_metric_value(t, mi, mt->total), mt->unit);
		if (e && e->aggregated)
			fprintf(f, " in %" PRIu64 " sums by stack of %" PRIu64 " %s", mt->samples,
				e->occurrences, strcmp(e->name, "off-cpu") ? "events" :
				"blocked intervals");
		else if (e)
			fprintf(f, " in %" PRIu64 " samples (%" PRIu64 " lost)", mt->samples,
				e->lost);
		fprintf(f, ". %s\n", mt->description);
	}
	fprintf(f, "- Lost events: %" PRIu64 "\n", lost);
	for (size_t i = 0; i < m->lost.len; i++)
		fprintf(f, "  - %s: %" PRIu64 "\n", m->lost.items[i].name, m->lost.items[i].value);
	fprintf(f, "- Contexts: %zu. No loop contexts: they need loop analysis of the binaries "
		"(hpcstruct), which collector does not do; lexical contexts are functions, "
		"inlined functions, source lines and instructions.\n", t->n_nodes);
	fprintf(f, "- Stacks that do not reach a known root are under `unknown entry`.\n");
	fprintf(f, "\n## Profiles\n\nRANK = process index, THREAD = thread index within the "
		"process.\n\n| profile | RANK | THREAD | pid | tid | comm |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < t->n_threads; i++) {
		const struct model_thread *th = &m->threads.items[t->threads[i].thread];
		const struct model_process *p = &m->processes.items[th->process];

		fprintf(f, "| %zu | %u | %u | %d | %d | %s |\n", i + 1, t->threads[i].rank,
			t->threads[i].index, (int)p->pid, (int)th->tid, th->comm);
	}
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void write_general(struct meta *mt)
{
	struct hk_buf *b = &mt->b;
	size_t start, p;
	char *desc = describe(mt->t);
	const char *title = mt->m->run.command_line ? mt->m->run.command_line : "system-wide";

	if (!desc) {
		b->err = -ENOMEM;
		return;
	}
	hk_buf_align(b, 8);
	start = hk_buf_zero(b, 0x10);
	p = hk_buf_str(b, title);
	hk_buf_set_u64(b, start, p);
	p = hk_buf_str(b, desc);
	hk_buf_set_u64(b, start + 8, p);
	free(desc);
	section(mt, SEC_GENERAL, start);
}

static void write_idnames(struct meta *mt)
{
	struct hk_buf *b = &mt->b;
	size_t start, arr;

	hk_buf_align(b, 8);
	start = hk_buf_zero(b, 0x10);
	arr = hk_buf_zero(b, 8 * HK_N_KINDS);
	hk_buf_set_u64(b, start, arr);
	hk_buf_set_u8(b, start + 8, HK_N_KINDS);
	for (unsigned k = 0; k < HK_N_KINDS; k++)
		hk_buf_set_u64(b, arr + 8 * k, hk_buf_str(b, hk_kind_name(k)));
	section(mt, SEC_IDNAMES, start);
}

static const uint8_t scope_type[HK_N_SCOPES] = {
	HK_PS_POINT, HK_PS_TRANSITIVE, HK_PS_CUSTOM, HK_PS_EXECUTION,
};

/* The strings both layouts' metric sections hold: the metrics' names, the
 * formula, the scopes' names; and the section head's first fields. */
struct metric_strings {
	size_t name[HK_MAX_METRICS], formula, scope[HK_N_SCOPES];
};

static void put_metric_strings(struct hk_buf *b, const struct hk_tree *t, struct metric_strings *ms)
{
	for (unsigned mi = 0; mi < t->n_metrics; mi++)
		ms->name[mi] = hk_buf_str(b, t->metrics[mi].name);
	ms->formula = hk_buf_str(b, "$$");
	for (int s = 0; s < HK_N_SCOPES; s++)
		ms->scope[s] = hk_buf_str(b, hk_scope_name(s));
}

/* pMetrics, nMetrics and three structure sizes. */
static void set_metrics_head(struct hk_buf *b, size_t start, size_t md, uint32_t n,
			     const uint8_t sizes[3])
{
	hk_buf_set_u64(b, start, md);
	hk_buf_set_u32(b, start + 0x08, n);
	for (int i = 0; i < 3; i++)
		hk_buf_set_u8(b, start + 0x0c + i, sizes[i]);
}

/* released: {MD}[] -> {PSI}[], {SS}[] of each metric -> the shared {PS}[] */
static void write_metrics_released(struct meta *mt)
{
	static const uint8_t sizes[3] = { HK_SZ_METRIC, HK_SZ_SCOPE_INST, HK_SZ_SUMMARY };
	const struct hk_tree *t = mt->t;
	struct hk_buf *b = &mt->b;
	struct metric_strings ms;
	size_t start, md, psi, ss, ps;

	hk_buf_align(b, 8);
	start = hk_buf_zero(b, 0x20);
	md = hk_buf_zero(b, HK_SZ_METRIC * t->n_metrics);
	psi = hk_buf_zero(b, HK_SZ_SCOPE_INST * HK_N_SCOPES * t->n_metrics);
	ss = hk_buf_zero(b, HK_SZ_SUMMARY * HK_N_STATS * t->n_metrics);
	ps = hk_buf_zero(b, HK_SZ_SCOPE * HK_N_SCOPES);
	put_metric_strings(b, t, &ms);

	set_metrics_head(b, start, md, t->n_metrics, sizes);
	hk_buf_set_u64(b, start + 0x10, ps);
	hk_buf_set_u16(b, start + 0x18, HK_N_SCOPES);
	hk_buf_set_u8(b, start + 0x1a, HK_SZ_SCOPE);
	for (int s = 0; s < HK_N_SCOPES; s++) {
		size_t o = ps + s * HK_SZ_SCOPE;

		hk_buf_set_u64(b, o, ms.scope[s]);
		hk_buf_set_u8(b, o + 8, scope_type[s]);
		/* only the transitive scope has a propagation bit; hpcprof
		 * writes 255 for the others */
		hk_buf_set_u8(b, o + 9, s == HK_SCOPE_FUNCTION ? 0 : 255);
	}
	for (unsigned mi = 0; mi < t->n_metrics; mi++) {
		size_t o = md + mi * HK_SZ_METRIC, mpsi = psi + mi * HK_SZ_SCOPE_INST * HK_N_SCOPES,
		       mss = ss + mi * HK_SZ_SUMMARY * HK_N_STATS;

		hk_buf_set_u64(b, o, ms.name[mi]);
		hk_buf_set_u64(b, o + 0x08, mpsi);
		hk_buf_set_u64(b, o + 0x10, mss);
		hk_buf_set_u16(b, o + 0x18, HK_N_SCOPES);
		hk_buf_set_u16(b, o + 0x1a, HK_N_STATS);
		for (int s = 0; s < HK_N_SCOPES; s++) {
			o = mpsi + s * HK_SZ_SCOPE_INST;
			hk_buf_set_u64(b, o, ps + s * HK_SZ_SCOPE);
			hk_buf_set_u16(b, o + 8, hk_prop_id(mi, s));
		}
		for (int c = 0; c < HK_N_COMBINES; c++) {
			for (int s = 0; s < HK_N_SCOPES; s++) {
				o = mss + (c * HK_N_SCOPES + s) * HK_SZ_SUMMARY;
				hk_buf_set_u64(b, o, ps + s * HK_SZ_SCOPE);
				hk_buf_set_u64(b, o + 8, ms.formula);
				hk_buf_set_u8(b, o + 0x10, c);
				hk_buf_set_u16(b, o + 0x12, hk_stat_id(mi, c, s));
			}
		}
	}
	section(mt, SEC_METRICS, start);
}

/* draft: {MD}[] -> each metric's {PS}[] -> {SS}[] per scope */
static void write_metrics_draft(struct meta *mt)
{
	static const uint8_t sizes[3] = { HK_DRAFT_SZ_METRIC, HK_DRAFT_SZ_SCOPE,
					  HK_DRAFT_SZ_SUMMARY };
	const struct hk_tree *t = mt->t;
	struct hk_buf *b = &mt->b;
	struct metric_strings ms;
	size_t start, md, ps, ss;

	hk_buf_align(b, 8);
	start = hk_buf_zero(b, 0x10);
	md = hk_buf_zero(b, HK_DRAFT_SZ_METRIC * t->n_metrics);
	ps = hk_buf_zero(b, HK_DRAFT_SZ_SCOPE * HK_N_SCOPES * t->n_metrics);
	ss = hk_buf_zero(b, HK_DRAFT_SZ_SUMMARY * HK_N_STATS * t->n_metrics);
	put_metric_strings(b, t, &ms);

	set_metrics_head(b, start, md, t->n_metrics, sizes);
	for (unsigned mi = 0; mi < t->n_metrics; mi++) {
		size_t o = md + mi * HK_DRAFT_SZ_METRIC,
		       mps = ps + mi * HK_DRAFT_SZ_SCOPE * HK_N_SCOPES,
		       mss = ss + mi * HK_DRAFT_SZ_SUMMARY * HK_N_STATS;

		hk_buf_set_u64(b, o, ms.name[mi]);
		hk_buf_set_u16(b, o + 8, HK_N_SCOPES);
		hk_buf_set_u64(b, o + 0x10, mps);
		for (int s = 0; s < HK_N_SCOPES; s++) {
			size_t sums = mss + s * HK_N_COMBINES * HK_DRAFT_SZ_SUMMARY;

			o = mps + s * HK_DRAFT_SZ_SCOPE;
			hk_buf_set_u64(b, o, ms.scope[s]);
			hk_buf_set_u16(b, o + 8, HK_N_COMBINES);
			hk_buf_set_u16(b, o + 0x0a, hk_prop_id(mi, s));
			hk_buf_set_u64(b, o + 0x10, sums);
			for (int c = 0; c < HK_N_COMBINES; c++) {
				size_t so = sums + c * HK_DRAFT_SZ_SUMMARY;

				hk_buf_set_u64(b, so, ms.formula);
				hk_buf_set_u8(b, so + 8, c);
				hk_buf_set_u16(b, so + 0x0a, hk_stat_id(mi, c, s));
			}
		}
	}
	section(mt, SEC_METRICS, start);
}

/* Marks the modules, files and functions the contexts use. */
static int select_used(struct meta *mt)
{
	const struct model *m = mt->m;
	const struct hk_tree *t = mt->t;

	mt->mod_of_image = malloc((m->images.len + 1) * sizeof(uint32_t));
	mt->file_of_file = malloc((m->files.len + 1) * sizeof(uint32_t));
	mt->fn_of_function = malloc((m->functions.len + 1) * sizeof(uint32_t));
	mt->images = malloc((m->images.len + 1) * sizeof(uint32_t));
	mt->files = malloc((m->files.len + 1) * sizeof(uint32_t));
	mt->functions = malloc((m->functions.len + 1) * sizeof(uint32_t));
	if (!mt->mod_of_image || !mt->file_of_file || !mt->fn_of_function || !mt->images ||
	    !mt->files || !mt->functions)
		return -ENOMEM;
	memset(mt->mod_of_image, 0xff, (m->images.len + 1) * sizeof(uint32_t));
	memset(mt->file_of_file, 0xff, (m->files.len + 1) * sizeof(uint32_t));
	memset(mt->fn_of_function, 0xff, (m->functions.len + 1) * sizeof(uint32_t));
	/* mark (0), then number in model order (deterministic output) */
	for (size_t i = 1; i < t->n_nodes; i++) {
		const struct hk_node *n = &t->nodes[i];

		if (n->function < m->functions.len) {
			const struct model_function *f = &m->functions.items[n->function];

			mt->fn_of_function[n->function] = 0;
			if (f->image < m->images.len)
				mt->mod_of_image[f->image] = 0;
			if (f->file < m->files.len)
				mt->file_of_file[f->file] = 0;
		}
		if (n->kind == HK_NODE_LINE && n->file < m->files.len)
			mt->file_of_file[n->file] = 0;
		if (n->kind == HK_NODE_INSN && n->image < m->images.len)
			mt->mod_of_image[n->image] = 0;
	}
	for (size_t i = 0; i < m->images.len; i++)
		if (!mt->mod_of_image[i]) {
			mt->mod_of_image[i] = mt->n_images;
			mt->images[mt->n_images++] = i;
		}
	for (size_t i = 0; i < m->files.len; i++)
		if (!mt->file_of_file[i]) {
			mt->file_of_file[i] = mt->n_files;
			mt->files[mt->n_files++] = i;
		}
	for (size_t i = 0; i < m->functions.len; i++)
		if (!mt->fn_of_function[i]) {
			mt->fn_of_function[i] = mt->n_functions;
			mt->functions[mt->n_functions++] = i;
		}
	return 0;
}

/* String table, then the module, file and function arrays. */
static void write_tables(struct meta *mt, char *const *src_paths)
{
	const struct model *m = mt->m;
	struct hk_buf *b = &mt->b;
	size_t start, n_entry_fns = mt->t->draft ? HK_N_ENTRIES : 0;
	uint64_t *smod = calloc(mt->n_images + 1, 8), *sfile = calloc(mt->n_files + 1, 8);
	uint64_t *sfn = calloc(mt->n_functions + n_entry_fns + 1, 8);

	if (!smod || !sfile || !sfn) {
		b->err = -ENOMEM;
		goto out;
	}
	hk_buf_align(b, 8);
	start = b->len;
	for (size_t i = 0; i < mt->n_images; i++)
		smod[i] = hk_buf_str(b, m->images.items[mt->images[i]].path);
	for (size_t i = 0; i < mt->n_files; i++) {
		uint32_t id = mt->files[i];

		sfile[i] = hk_buf_str(b, src_paths && src_paths[id] ? src_paths[id]
								   : m->files.items[id].path);
	}
	for (size_t i = 0; i < mt->n_functions; i++)
		sfn[i] = hk_buf_str(b, m->functions.items[mt->functions[i]].name);
	for (size_t i = 0; i < HK_N_ENTRIES; i++)
		mt->s_entry[i] = hk_buf_str(b, hk_entry_name(i));
	for (size_t i = 0; i < n_entry_fns; i++)
		sfn[mt->n_functions + i] = mt->s_entry[i];
	section(mt, SEC_STRINGS, start);

	/* Load modules */
	hk_buf_align(b, 8);
	start = hk_buf_zero(b, 0x10);
	mt->p_modules = hk_buf_zero(b, HK_SZ_MODULE * mt->n_images);
	hk_buf_set_u64(b, start, mt->n_images ? mt->p_modules : 0);
	hk_buf_set_u32(b, start + 8, mt->n_images);
	hk_buf_set_u16(b, start + 0x0c, HK_SZ_MODULE);
	for (size_t i = 0; i < mt->n_images; i++)
		hk_buf_set_u64(b, mt->p_modules + i * HK_SZ_MODULE + 8, smod[i]);
	section(mt, SEC_MODULES, start);

	/* Source files */
	start = hk_buf_zero(b, 0x10);
	mt->p_files = hk_buf_zero(b, HK_SZ_FILE * mt->n_files);
	hk_buf_set_u64(b, start, mt->n_files ? mt->p_files : 0);
	hk_buf_set_u32(b, start + 8, mt->n_files);
	hk_buf_set_u16(b, start + 0x0c, HK_SZ_FILE);
	for (size_t i = 0; i < mt->n_files; i++) {
		uint32_t id = mt->files[i];

		hk_buf_set_u32(b, mt->p_files + i * HK_SZ_FILE, src_paths && src_paths[id] ? 1 : 0);
		hk_buf_set_u64(b, mt->p_files + i * HK_SZ_FILE + 8, sfile[i]);
	}
	section(mt, SEC_FILES, start);

	/* Functions (in the draft, also the entry points' pseudo-functions) */
	start = hk_buf_zero(b, 0x10);
	mt->p_functions = hk_buf_zero(b, HK_SZ_FUNCTION * (mt->n_functions + n_entry_fns));
	mt->p_entry_fn = mt->p_functions + HK_SZ_FUNCTION * mt->n_functions;
	hk_buf_set_u64(b, start, mt->n_functions + n_entry_fns ? mt->p_functions : 0);
	hk_buf_set_u32(b, start + 8, mt->n_functions + n_entry_fns);
	hk_buf_set_u16(b, start + 0x0c, HK_SZ_FUNCTION);
	for (size_t i = 0; i < mt->n_functions + n_entry_fns; i++) {
		size_t o = mt->p_functions + i * HK_SZ_FUNCTION;
		const struct model_function *f;

		hk_buf_set_u64(b, o, sfn[i]);
		if (i >= mt->n_functions)
			continue; /* an entry point's pseudo-function: a name only */
		f = &m->functions.items[mt->functions[i]];
		if (f->image < m->images.len)
			hk_buf_set_u64(b, o + 0x08,
				       mt->p_modules + mt->mod_of_image[f->image] * HK_SZ_MODULE);
		hk_buf_set_u64(b, o + 0x10, f->entry);
		if (f->file < m->files.len) {
			hk_buf_set_u64(b, o + 0x18,
				       mt->p_files + mt->file_of_file[f->file] * HK_SZ_FILE);
			hk_buf_set_u32(b, o + 0x20, f->line);
		}
	}
	section(mt, SEC_FUNCTIONS, start);
out:
	free(smod);
	free(sfile);
	free(sfn);
}

static unsigned ctx_words(const struct hk_node *n)
{
	return n->kind == HK_NODE_FUNCTION || n->kind == HK_NODE_ENTRY ? 1 : 2;
}

/* Writes {Ctx} of node id at the end of the buffer; returns its offset.
 * The record is built on the stack and appended whole: a context tree has
 * millions of them. */
static size_t put_ctx(struct meta *mt, uint32_t id)
{
	const struct hk_node *n = &mt->t->nodes[id];
	size_t head = mt->t->draft ? HK_DRAFT_CTX_HEAD : HK_CTX_HEAD;
	unsigned words = ctx_words(n);
	uint8_t rec[HK_CTX_HEAD + 16] = { 0 }, *flex = rec + head;
	uint8_t flags = 0, lex = HK_LEX_FUNCTION;
	uint64_t p = 0;

	le32_put(rec + 0x10, id);
	switch (n->kind) {
	case HK_NODE_ENTRY: /* draft only: a root "function" named after it */
		flags = HK_CTX_HAS_FUNCTION;
		p = mt->p_entry_fn + n->entry * HK_SZ_FUNCTION;
		le64_put(flex, p);
		break;
	case HK_NODE_FUNCTION:
		flags = HK_CTX_HAS_FUNCTION;
		p = mt->p_functions + (uint64_t)mt->fn_of_function[n->function] * HK_SZ_FUNCTION;
		le64_put(flex, p);
		break;
	case HK_NODE_LINE:
		flags = HK_CTX_HAS_SRCLOC;
		lex = HK_LEX_LINE;
		p = mt->p_files + (uint64_t)mt->file_of_file[n->file] * HK_SZ_FILE;
		le64_put(flex, p);
		le32_put(flex + 8, n->line);
		break;
	case HK_NODE_INSN:
		flags = HK_CTX_HAS_POINT;
		lex = HK_LEX_INSTRUCTION;
		p = mt->p_modules + (uint64_t)mt->mod_of_image[n->image] * HK_SZ_MODULE;
		le64_put(flex, p);
		le64_put(flex + 8, n->addr);
		break;
	}
	rec[0x14] = flags;
	rec[0x15] = n->kind == HK_NODE_ENTRY ? HK_REL_LEXICAL : n->relation;
	rec[0x16] = lex;
	rec[0x17] = words;
	if (!mt->t->draft) {
		uint16_t prop = hk_node_propagation(n);

		le16_put(rec + 0x18, prop);
	}
	return hk_buf_put(&mt->b, rec, head + 8 * words);
}

/* Context tree: the top array (entry points, or the draft's roots), then
 * each context's children array in breadth-first order. */
static void write_context(struct meta *mt)
{
	const struct hk_tree *t = mt->t;
	struct hk_buf *b = &mt->b;
	size_t start, top, n_top = t->child_start[1] - t->child_start[0];
	uint64_t *off = malloc(t->n_nodes * sizeof(*off));
	uint32_t *queue = malloc(t->n_nodes * sizeof(*queue));
	size_t qh = 0, qt = 0;

	if (!off || !queue) {
		b->err = -ENOMEM;
		goto out;
	}
	hk_buf_align(b, 8);
	start = hk_buf_zero(b, 0x10);
	if (t->draft) {
		top = b->len;
		for (size_t i = 0; i < n_top; i++) {
			uint32_t id = t->children[t->child_start[0] + i];

			off[id] = put_ctx(mt, id);
			queue[qt++] = id;
		}
		hk_buf_set_u64(b, start, b->len - top);
		hk_buf_set_u64(b, start + 8, n_top ? top : 0);
	} else {
		top = hk_buf_zero(b, HK_SZ_ENTRY * n_top);
		hk_buf_set_u64(b, start, n_top ? top : 0);
		hk_buf_set_u16(b, start + 8, n_top);
		hk_buf_set_u8(b, start + 0x0a, HK_SZ_ENTRY);
		for (size_t i = 0; i < n_top; i++) {
			uint32_t id = t->children[t->child_start[0] + i];
			size_t o = top + i * HK_SZ_ENTRY;
			unsigned e = t->nodes[id].entry;

			off[id] = o;
			queue[qt++] = id;
			hk_buf_set_u32(b, o + 0x10, id);
			hk_buf_set_u16(b, o + 0x14, e);
			hk_buf_set_u64(b, o + 0x18, mt->s_entry[e]);
		}
	}
	while (qh < qt && !b->err) {
		uint32_t id = queue[qh++];
		size_t arr = b->len;

		for (uint32_t k = t->child_start[id]; k < t->child_start[id + 1]; k++) {
			uint32_t c = t->children[k];

			off[c] = put_ctx(mt, c);
			queue[qt++] = c;
		}
		if (b->len > arr) {
			hk_buf_set_u64(b, off[id], b->len - arr);
			hk_buf_set_u64(b, off[id] + 8, arr);
		}
	}
	section(mt, SEC_CONTEXT, start);
out:
	free(off);
	free(queue);
}

int hk_write_meta(const struct hk_tree *t, const struct export_options *opts,
		  const char *relpath, char *const *src_paths)
{
	struct meta mt = { .t = t, .m = t->m };
	struct outfile f;
	int err;

	err = select_used(&mt);
	if (err)
		goto out;
	hk_file_header(mt.hdr, "meta");
	hk_buf_zero(&mt.b, sizeof(mt.hdr));
	write_general(&mt);
	write_idnames(&mt);
	if (t->draft)
		write_metrics_draft(&mt);
	else
		write_metrics_released(&mt);
	write_tables(&mt, src_paths);
	write_context(&mt);
	hk_buf_align(&mt.b, 8);
	hk_buf_put(&mt.b, "_meta.db", 8);
	hk_buf_set(&mt.b, 0, mt.hdr, sizeof(mt.hdr));
	err = mt.b.err;
	if (err)
		goto out;
	err = outfile_open(&f, opts, relpath);
	if (err)
		goto out;
	err = outfile_write(&f, mt.b.p, mt.b.len);
	if (err) {
		outfile_abort(&f);
		goto out;
	}
	err = outfile_commit(&f);
out:
	hk_buf_free(&mt.b);
	free(mt.mod_of_image);
	free(mt.file_of_file);
	free(mt.fn_of_function);
	free(mt.images);
	free(mt.files);
	free(mt.functions);
	return err;
}
