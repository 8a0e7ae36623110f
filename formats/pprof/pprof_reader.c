// SPDX-License-Identifier: GPL-2.0
/* Reader of pprof profiles (pprof_reader.h). */
#include "formats/pprof/pprof_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


static bool str_ok(const Perftools__Profiles__Profile *m, int64_t i)
{
	return i >= 0 && (uint64_t)i < m->n_string_table;
}

/* Ids of one table: nonzero, unique, indexed. */
static int index_ids(struct idmap *index, size_t n, uint64_t (*id_at)(const void *, size_t),
		     const void *table, const char *what, struct format_error *err)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t id = id_at(table, i);

		if (!id)
			return format_fail(err, FORMAT_NO_OFFSET, "%s %zu has id 0 (ids are nonzero)", what, i);
		if (idmap_get(index, id) != UINT32_MAX)
			return format_fail(err, FORMAT_NO_OFFSET, "two %ss have id %" PRIu64, what, id);
		if (idmap_put(index, id, (uint32_t)i))
			return -ENOMEM;
	}
	return 0;
}

static uint64_t mapping_id_at(const void *t, size_t i)
{
	return ((const Perftools__Profiles__Profile *)t)->mapping[i]->id;
}

static uint64_t location_id_at(const void *t, size_t i)
{
	return ((const Perftools__Profiles__Profile *)t)->location[i]->id;
}

static uint64_t function_id_at(const void *t, size_t i)
{
	return ((const Perftools__Profiles__Profile *)t)->function[i]->id;
}

static int check_strings(const Perftools__Profiles__Profile *m, struct format_error *err)
{
	if (!m->n_string_table || m->string_table[0][0])
		return format_fail(err, FORMAT_NO_OFFSET, "string_table[0] must be the empty string");
	for (size_t i = 0; i < m->n_sample_type; i++)
		if (!str_ok(m, m->sample_type[i]->type) || !str_ok(m, m->sample_type[i]->unit))
			return format_fail(err, FORMAT_NO_OFFSET, "sample_type %zu: string index out of the table", i);
	if (m->period_type && (!str_ok(m, m->period_type->type) || !str_ok(m, m->period_type->unit)))
		return format_fail(err, FORMAT_NO_OFFSET, "period_type: string index out of the table");
	if (!str_ok(m, m->drop_frames) || !str_ok(m, m->keep_frames) ||
	    !str_ok(m, m->default_sample_type))
		return format_fail(err, FORMAT_NO_OFFSET, "drop_frames, keep_frames or default_sample_type: string "
			    "index out of the table");
	for (size_t i = 0; i < m->n_comment; i++)
		if (!str_ok(m, m->comment[i]))
			return format_fail(err, FORMAT_NO_OFFSET, "comment %zu: string index out of the table", i);
	for (size_t i = 0; i < m->n_mapping; i++)
		if (!str_ok(m, m->mapping[i]->filename) || !str_ok(m, m->mapping[i]->build_id))
			return format_fail(err, FORMAT_NO_OFFSET, "mapping %zu: string index out of the table", i);
	for (size_t i = 0; i < m->n_function; i++) {
		const Perftools__Profiles__Function *f = m->function[i];

		if (!str_ok(m, f->name) || !str_ok(m, f->system_name) || !str_ok(m, f->filename))
			return format_fail(err, FORMAT_NO_OFFSET, "function %zu: string index out of the table", i);
	}
	if (m->default_sample_type) {
		size_t i;

		for (i = 0; i < m->n_sample_type; i++)
			if (!strcmp(m->string_table[m->sample_type[i]->type],
				    m->string_table[m->default_sample_type]))
				break;
		if (i == m->n_sample_type)
			return format_fail(err, FORMAT_NO_OFFSET, "default_sample_type '%.40s' is none of the sample types",
				    m->string_table[m->default_sample_type]);
	}
	return 0;
}

static int check_references(const struct pprof_profile *p, struct format_error *err)
{
	const Perftools__Profiles__Profile *m = p->msg;

	for (size_t i = 0; i < m->n_location; i++) {
		const Perftools__Profiles__Location *l = m->location[i];

		if (l->mapping_id && !pprof_mapping(p, l->mapping_id))
			return format_fail(err, FORMAT_NO_OFFSET, "location %" PRIu64 ": no mapping %" PRIu64, l->id,
				    l->mapping_id);
		for (size_t k = 0; k < l->n_line; k++)
			if (!pprof_function(p, l->line[k]->function_id))
				return format_fail(err, FORMAT_NO_OFFSET, "location %" PRIu64 ": no function %" PRIu64,
					    l->id, l->line[k]->function_id);
	}
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];

		if (s->n_value != m->n_sample_type)
			return format_fail(err, FORMAT_NO_OFFSET, "sample %zu has %zu values for %zu sample types", i,
				    s->n_value, m->n_sample_type);
		for (size_t k = 0; k < s->n_location_id; k++)
			if (!pprof_location(p, s->location_id[k]))
				return format_fail(err, FORMAT_NO_OFFSET, "sample %zu: no location %" PRIu64, i,
					    s->location_id[k]);
		for (size_t k = 0; k < s->n_label; k++) {
			const Perftools__Profiles__Label *l = s->label[k];

			if (!l->key || !str_ok(m, l->key) || !str_ok(m, l->str) ||
			    !str_ok(m, l->num_unit))
				return format_fail(err, FORMAT_NO_OFFSET, "sample %zu: label %zu has no key or a string "
					    "index out of the table", i, k);
			if (l->str && l->num)
				return format_fail(err, FORMAT_NO_OFFSET, "sample %zu: label '%.40s' has both a string and "
					    "a number", i, m->string_table[l->key]);
		}
	}
	return 0;
}

int pprof_parse(const unsigned char *data, size_t n, struct pprof_profile *p,
		struct format_error *err)
{
	unsigned char *raw = NULL;
	size_t raw_len = n;
	int rc;

	memset(p, 0, sizeof(*p));
	if (n >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		rc = format_inflate(data, n, PPROF_MAX_INFLATED, &raw, &raw_len, err);
		if (rc)
			return rc;
		p->compressed = true;
	}
	p->packed_size = raw_len;
	p->msg = perftools__profiles__profile__unpack(NULL, raw_len, raw ? raw : data);
	free(raw);
	if (!p->msg)
		return format_fail(err, FORMAT_NO_OFFSET, "not a perftools.profiles.Profile protobuf message "
			    "(protobuf-c cannot unpack it)");
	rc = check_strings(p->msg, err);
	if (!rc)
		rc = index_ids(&p->mapping_index, p->msg->n_mapping, mapping_id_at, p->msg,
			       "mapping", err);
	if (!rc)
		rc = index_ids(&p->location_index, p->msg->n_location, location_id_at, p->msg,
			       "location", err);
	if (!rc)
		rc = index_ids(&p->function_index, p->msg->n_function, function_id_at, p->msg,
			       "function", err);
	if (!rc)
		rc = check_references(p, err);
	if (rc)
		pprof_profile_free(p);
	return rc;
}

static int parse_cb(const unsigned char *data, size_t n, void *obj, struct format_error *err)
{
	return pprof_parse(data, n, obj, err);
}

int pprof_read_file(const char *path, struct pprof_profile *p, struct format_error *err)
{
	return format_parse_file(path, err, parse_cb, p);
}

void pprof_profile_free(struct pprof_profile *p)
{
	if (p->msg)
		perftools__profiles__profile__free_unpacked(p->msg, NULL);
	idmap_free(&p->mapping_index);
	idmap_free(&p->location_index);
	idmap_free(&p->function_index);
	memset(p, 0, sizeof(*p));
}

const Perftools__Profiles__Location *pprof_location(const struct pprof_profile *p, uint64_t id)
{
	uint32_t i = idmap_get(&p->location_index, id);

	return i == UINT32_MAX ? NULL : p->msg->location[i];
}

const Perftools__Profiles__Function *pprof_function(const struct pprof_profile *p, uint64_t id)
{
	uint32_t i = idmap_get(&p->function_index, id);

	return i == UINT32_MAX ? NULL : p->msg->function[i];
}

const Perftools__Profiles__Mapping *pprof_mapping(const struct pprof_profile *p, uint64_t id)
{
	uint32_t i = idmap_get(&p->mapping_index, id);

	return i == UINT32_MAX ? NULL : p->msg->mapping[i];
}

/* ---- printing ------------------------------------------------------------------ */

static void print_header(const struct pprof_profile *p, FILE *out)
{
	const Perftools__Profiles__Profile *m = p->msg;

	fprintf(out, "encoding %s, %zu bytes of protobuf\n", p->compressed ? "gzip" : "none",
		p->packed_size);
	fprintf(out, "time_nanos %" PRId64 "\nduration_nanos %" PRId64 "\n", m->time_nanos,
		m->duration_nanos);
	if (m->period_type)
		fprintf(out, "period %" PRId64 " %s/%s\n", m->period,
			pprof_string(p, m->period_type->type), pprof_string(p, m->period_type->unit));
	fprintf(out, "sample_types");
	for (size_t i = 0; i < m->n_sample_type; i++)
		fprintf(out, " %s/%s", pprof_string(p, m->sample_type[i]->type),
			pprof_string(p, m->sample_type[i]->unit));
	fprintf(out, "\ndefault_sample_type %s\n", pprof_string(p, m->default_sample_type));
	for (size_t i = 0; i < m->n_comment; i++)
		fprintf(out, "comment %s\n", pprof_string(p, m->comment[i]));
	fprintf(out, "samples %zu locations %zu functions %zu mappings %zu strings %zu\n",
		m->n_sample, m->n_location, m->n_function, m->n_mapping, m->n_string_table);
	for (size_t i = 0; i < m->n_mapping; i++) {
		const Perftools__Profiles__Mapping *mp = m->mapping[i];

		fprintf(out, "mapping %" PRIu64 ": 0x%" PRIx64 "-0x%" PRIx64 " offset 0x%" PRIx64
			" %s build_id %s%s\n", mp->id, mp->memory_start, mp->memory_limit,
			mp->file_offset, pprof_string(p, mp->filename),
			*pprof_string(p, mp->build_id) ? pprof_string(p, mp->build_id) : "-",
			mp->has_functions ? " [symbolized]" : "");
	}
}

static void print_location(const struct pprof_profile *p, uint64_t id, FILE *out)
{
	const Perftools__Profiles__Location *l = pprof_location(p, id);

	fprintf(out, "    #%" PRIu64 " 0x%" PRIx64, id, l->address);
	if (!l->n_line)
		fprintf(out, " ?");
	for (size_t k = 0; k < l->n_line; k++) {
		const Perftools__Profiles__Function *f = pprof_function(p, l->line[k]->function_id);

		fprintf(out, "%s %s %s:%" PRId64 "\n", k ? "        inlined into" : "",
			pprof_string(p, f->name), *pprof_string(p, f->filename) ?
			pprof_string(p, f->filename) : "?", l->line[k]->line);
	}
	if (!l->n_line)
		fputc('\n', out);
}

void pprof_print(const struct pprof_profile *p, FILE *out)
{
	const Perftools__Profiles__Profile *m = p->msg;

	print_header(p, out);
	for (size_t i = 0; i < m->n_sample; i++) {
		const Perftools__Profiles__Sample *s = m->sample[i];

		fprintf(out, "sample");
		for (size_t k = 0; k < s->n_value; k++)
			fprintf(out, " %" PRId64, s->value[k]);
		for (size_t k = 0; k < s->n_label; k++) {
			const Perftools__Profiles__Label *l = s->label[k];

			if (l->str)
				fprintf(out, " %s=%s", pprof_string(p, l->key), pprof_string(p, l->str));
			else
				fprintf(out, " %s=%" PRId64, pprof_string(p, l->key), l->num);
		}
		fputc('\n', out);
		for (size_t k = 0; k < s->n_location_id; k++)
			print_location(p, s->location_id[k], out);
	}
}
