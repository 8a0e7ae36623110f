// SPDX-License-Identifier: GPL-2.0
/* `collector dump` of an HPCToolkit database directory or one of its files. */
#include "formats/hpctoolkit/hpctoolkit_reader.h"
#include "formats/hpctoolkit/hpctoolkit.h"
#include "formats/hpctoolkit/hpctoolkit_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const relation_names[] = { "lexical", "call", "inlined_call" };
static const char *const lexical_names[] = { "function", "loop", "line", "instruction" };
static const char *const combine_names[] = { "sum", "min", "max" };

bool hpctoolkit_recognize(const char *path, const unsigned char *head, size_t n)
{
	struct stat st;
	char buf[4096];

	if (head && n >= 14 && !memcmp(head, HK_MAGIC, 10) &&
	    (!memcmp(head + 10, "meta", 4) || !memcmp(head + 10, "prof", 4) ||
	     !memcmp(head + 10, "ctxt", 4) || !memcmp(head + 10, "trce", 4)))
		return true;
	if (!path || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return false;
	snprintf(buf, sizeof(buf), "%s/meta.db", path);
	return stat(buf, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *name_or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

static void print_context(FILE *out, const struct hkr_db *db, const struct hkr_context *c)
{
	fprintf(out, "%*s#%u ", 2 + 2 * (int)c->depth, "", c->id);
	if (c->is_entry) {
		fprintf(out, "entry point %u \"%s\"\n", c->entry_point, c->pretty_name);
		return;
	}
	fprintf(out, "-%s-> [%s]", c->relation < 3 ? relation_names[c->relation] : "?",
		c->lexical_type < 4 ? lexical_names[c->lexical_type] : "?");
	if (c->function != HKR_NONE)
		fprintf(out, " %s", name_or(db->functions[c->function].name, "<anonymous>"));
	if (c->file != HKR_NONE)
		fprintf(out, " %s:%u", db->files[c->file].path, c->line);
	if (c->module != HKR_NONE)
		fprintf(out, " %s+0x%" PRIx64, db->modules[c->module].path, c->offset);
	if (!db->draft)
		fprintf(out, " propagation=%u", c->propagation);
	fputc('\n', out);
}

static void dump_meta(FILE *out, const struct hkr_db *db)
{
	const char *d;

	fprintf(out, "meta.db (%s layout)\n  title: %s\n  description:\n", db->draft ? "draft" :
		"released", db->title);
	for (d = db->description; *d;) {
		const char *nl = strchr(d, '\n');
		int len = nl ? (int)(nl - d) : (int)strlen(d);

		fprintf(out, "    | %.*s\n", len, d);
		d += len + (nl != NULL);
	}
	fprintf(out, "  identifier kinds:");
	for (size_t k = 0; k < db->n_kinds; k++)
		fprintf(out, " %zu=%s", k, db->kind_names[k]);
	fprintf(out, "\n  propagation scopes:\n");
	for (size_t s = 0; s < db->n_scopes; s++)
		fprintf(out, "    [%zu] %s type=%u propagationIndex=%u\n", s, db->scopes[s].name,
			db->scopes[s].type, db->scopes[s].prop_index);
	for (size_t i = 0; i < db->n_metrics; i++) {
		const struct hkr_metric *md = &db->metrics[i];

		fprintf(out, "  metric \"%s\"\n", md->name);
		for (size_t k = 0; k < md->n_insts; k++)
			fprintf(out, "    propMetricId %u: %s\n", md->insts[k].prop_id,
				db->scopes[md->insts[k].scope].name);
		for (size_t k = 0; k < md->n_summaries; k++) {
			const struct hkr_summary *ss = &md->summaries[k];

			fprintf(out, "    statMetricId %u: %s / '%s' / %s\n", ss->stat_id,
				ss->combine < 3 ? combine_names[ss->combine] : "?", ss->formula,
				db->scopes[ss->scope].name);
		}
	}
	fprintf(out, "  load modules (%zu):\n", db->n_modules);
	for (size_t i = 0; i < db->n_modules; i++)
		fprintf(out, "    [%zu] %s\n", i, db->modules[i].path);
	fprintf(out, "  source files (%zu):\n", db->n_files);
	for (size_t i = 0; i < db->n_files; i++)
		fprintf(out, "    [%zu] %s%s\n", i, db->files[i].path,
			db->files[i].flags & 1 ? " (copied)" : "");
	fprintf(out, "  functions (%zu):\n", db->n_functions);
	for (size_t i = 0; i < db->n_functions; i++) {
		const struct hkr_function *f = &db->functions[i];

		fprintf(out, "    [%zu] %s", i, name_or(f->name, "<anonymous>"));
		if (f->module != HKR_NONE)
			fprintf(out, " %s+0x%" PRIx64, db->modules[f->module].path, f->offset);
		if (f->file != HKR_NONE)
			fprintf(out, " %s:%u", db->files[f->file].path, f->line);
		fputc('\n', out);
	}
	fprintf(out, "  contexts (%zu):\n", db->n_contexts);
	/* depth-first from the top-level ones (children are contiguous) */
	{
		uint32_t *stack = malloc((db->n_contexts + 1) * sizeof(*stack));
		size_t n = 0;

		if (!stack)
			return;
		for (size_t i = db->n_contexts; i-- > 0;)
			if (db->contexts[i].parent == HKR_NONE)
				stack[n++] = i;
		while (n) {
			const struct hkr_context *c = &db->contexts[stack[--n]];

			print_context(out, db, c);
			for (uint32_t k = c->n_children; k-- > 0;)
				stack[n++] = c->first_child + k;
		}
		free(stack);
	}
}

static void dump_profiles(FILE *out, const struct hkr_db *db)
{
	fprintf(out, "profile.db: %zu profiles\n", db->n_profiles);
	for (size_t i = 0; i < db->n_profiles; i++) {
		const struct hkr_profile *p = &db->profiles[i];

		fprintf(out, "  profile %zu%s {", i, i == 0 ? " (summary)" : "");
		for (uint16_t k = 0; k < p->n_ids; k++) {
			const struct hkr_id *id = &p->ids[k];
			const char *kind = db->has_meta && id->kind < db->n_kinds ?
						   db->kind_names[id->kind] : NULL;

			fprintf(out, "%s%s%s %u", k ? " / " : "", kind ? kind : "kind",
				kind ? "" : "?", id->logical);
			if (id->flags & 1)
				fprintf(out, " [0x%" PRIx64 "]", id->physical);
		}
		fprintf(out, "}: %zu contexts, %zu values\n", p->n_ctxs, p->n_values);
		for (size_t v = 0; v < p->n_values; v++) {
			if (!v || p->values[v].ctx != p->values[v - 1].ctx)
				fprintf(out, "%s    ctx #%u:", v ? "\n" : "", p->values[v].ctx);
			fprintf(out, " m%u=%.9g", p->values[v].metric, p->values[v].value);
		}
		if (p->n_values)
			fputc('\n', out);
	}
}

static void dump_cct(FILE *out, const struct hkr_db *db)
{
	fprintf(out, "cct.db: %zu contexts\n", db->n_cct);
	for (size_t c = 0; c < db->n_cct; c++) {
		const struct hkr_ctx_values *cv = &db->cct[c];

		if (!cv->n_values)
			continue;
		fprintf(out, "  ctx #%zu:", c);
		for (size_t v = 0; v < cv->n_values; v++) {
			if (!v || cv->values[v].metric != cv->values[v - 1].metric)
				fprintf(out, "\n    m%u:", cv->values[v].metric);
			fprintf(out, " p%u=%.9g", cv->values[v].prof, cv->values[v].value);
		}
		fputc('\n', out);
	}
}

static void dump_traces(FILE *out, const struct hkr_db *db)
{
	fprintf(out, "trace.db: %zu traces", db->n_traces);
	if (db->has_range)
		fprintf(out, ", timestamps %" PRIu64 "..%" PRIu64, db->min_ts, db->max_ts);
	fputc('\n', out);
	for (size_t i = 0; i < db->n_traces; i++) {
		const struct hkr_trace *tr = &db->traces[i];

		fprintf(out, "  trace of profile %u: %zu elements\n", tr->prof, tr->n);
		for (size_t k = 0; k < tr->n; k++)
			fprintf(out, "    %" PRIu64 " ctx #%u\n", tr->elems[k].timestamp,
				tr->elems[k].ctx);
	}
}

int hpctoolkit_dump(const char *path, FILE *out, bool check)
{
	struct hkr_db db = { 0 };
	struct stat st;
	int err;

	if (stat(path, &st) != 0) {
		err = -errno;
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		err = hkr_read_dir(path, &db, stderr);
	} else {
		FILE *f = fopen(path, "rb");
		uint8_t *data = NULL;
		size_t n = st.st_size;

		err = -ENOMEM;
		if (f && (data = malloc(n ? n : 1)) && fread(data, 1, n, f) == n)
			err = hkr_read_mem(path, data, n, &db, stderr);
		else if (!f || data)
			err = -EIO, fprintf(stderr, "%s: cannot read\n", path);
		if (f)
			fclose(f);
		free(data);
	}
	if (!err && !check) {
		fprintf(out, "HPCToolkit database %s\n", path);
		if (db.has_meta)
			dump_meta(out, &db);
		if (db.has_profile)
			dump_profiles(out, &db);
		if (db.has_cct)
			dump_cct(out, &db);
		if (db.has_trace)
			dump_traces(out, &db);
	}
	hkr_free(&db);
	return err;
}
