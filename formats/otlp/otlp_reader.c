// SPDX-License-Identifier: GPL-2.0
/* Reader of OTLP profiles requests (otlp_reader.h). */
#include "formats/otlp/otlp_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Whether index i is inside a table of n entries (0 is always allowed:
 * the empty value, which needs no entry when nothing else is there). */
static bool in_table(int64_t i, size_t n)
{
	return i == 0 || (i > 0 && (uint64_t)i < n);
}

static int check_indices(const int32_t *idx, size_t n, size_t table, const char *what,
			 const char *of, size_t at, struct format_error *err)
{
	for (size_t k = 0; k < n; k++)
		if (!in_table(idx[k], table))
			return format_fail(err, FORMAT_NO_OFFSET,
					   "%s %zu: %s index %d is outside the table of %zu", of, at,
					   what, idx[k], table);
	return 0;
}

static int check_dictionary(const otlp_dictionary_t *d, struct format_error *err)
{
	size_t ns = d->n_string_table;
	int rc = 0;

	if (ns && d->string_table[0][0])
		return format_fail(err, FORMAT_NO_OFFSET, "string_table[0] is not the empty string");
	for (size_t i = 0; !rc && i < d->n_mapping_table; i++) {
		const otlp_mapping_t *mp = d->mapping_table[i];

		if (!in_table(mp->filename_strindex, ns))
			rc = format_fail(err, FORMAT_NO_OFFSET, "mapping %zu: file name index %d "
					 "is outside the string table", i, mp->filename_strindex);
		else
			rc = check_indices(mp->attribute_indices, mp->n_attribute_indices,
					   d->n_attribute_table, "attribute", "mapping", i, err);
	}
	for (size_t i = 0; !rc && i < d->n_location_table; i++) {
		const otlp_location_t *l = d->location_table[i];

		if (!in_table(l->mapping_index, d->n_mapping_table))
			rc = format_fail(err, FORMAT_NO_OFFSET, "location %zu: mapping index %d is "
					 "outside the table of %zu", i, l->mapping_index,
					 d->n_mapping_table);
		for (size_t k = 0; !rc && k < l->n_lines; k++)
			if (!in_table(l->lines[k]->function_index, d->n_function_table))
				rc = format_fail(err, FORMAT_NO_OFFSET, "location %zu: line %zu's "
						 "function index %d is outside the table of %zu", i,
						 k, l->lines[k]->function_index, d->n_function_table);
		if (!rc)
			rc = check_indices(l->attribute_indices, l->n_attribute_indices,
					   d->n_attribute_table, "attribute", "location", i, err);
	}
	for (size_t i = 0; !rc && i < d->n_function_table; i++) {
		const otlp_function_t *f = d->function_table[i];

		if (!in_table(f->name_strindex, ns) || !in_table(f->system_name_strindex, ns) ||
		    !in_table(f->filename_strindex, ns))
			rc = format_fail(err, FORMAT_NO_OFFSET, "function %zu: a string index is "
					 "outside the string table of %zu", i, ns);
	}
	for (size_t i = 0; !rc && i < d->n_stack_table; i++)
		rc = check_indices(d->stack_table[i]->location_indices,
				   d->stack_table[i]->n_location_indices, d->n_location_table,
				   "location", "stack", i, err);
	for (size_t i = 0; !rc && i < d->n_attribute_table; i++) {
		const otlp_attribute_t *a = d->attribute_table[i];

		if (!in_table(a->key_strindex, ns) || !in_table(a->unit_strindex, ns) ||
		    (a->value && a->value->value_case == OTLP_VALUE_STRINDEX &&
		     !in_table(a->value->string_value_strindex, ns)))
			rc = format_fail(err, FORMAT_NO_OFFSET, "attribute %zu: a string index is "
					 "outside the string table of %zu", i, ns);
	}
	return rc;
}

static int check_profile(const otlp_dictionary_t *d, const otlp_profile_t *p, size_t at,
			 struct format_error *err)
{
	size_t ns = d->n_string_table;

	if (!p->sample_type)
		return format_fail(err, FORMAT_NO_OFFSET, "profile %zu has no sample type", at);
	if (!in_table(p->sample_type->type_strindex, ns) ||
	    !in_table(p->sample_type->unit_strindex, ns) ||
	    (p->period_type && (!in_table(p->period_type->type_strindex, ns) ||
				!in_table(p->period_type->unit_strindex, ns))))
		return format_fail(err, FORMAT_NO_OFFSET, "profile %zu: a sample type's string "
				   "index is outside the string table of %zu", at, ns);
	for (size_t i = 0; i < p->n_samples; i++) {
		const otlp_sample_t *s = p->samples[i];
		int rc;

		if (!in_table(s->stack_index, d->n_stack_table))
			return format_fail(err, FORMAT_NO_OFFSET, "profile %zu: sample %zu's stack "
					   "index %d is outside the table of %zu", at, i,
					   s->stack_index, d->n_stack_table);
		if (!s->n_values || (s->n_values != 1 && s->n_values != s->n_timestamps_unix_nano))
			return format_fail(err, FORMAT_NO_OFFSET, "profile %zu: sample %zu has %zu "
					   "values (one, or one per timestamp)", at, i, s->n_values);
		rc = check_indices(s->attribute_indices, s->n_attribute_indices,
				   d->n_attribute_table, "attribute", "sample", i, err);
		if (rc)
			return rc;
	}
	return check_indices(p->attribute_indices, p->n_attribute_indices, d->n_attribute_table,
			     "attribute", "profile", at, err);
}

static int check_request(const otlp_request_t *m, struct format_error *err)
{
	static const otlp_dictionary_t empty = { .n_string_table = 0 };
	const otlp_dictionary_t *d = m->dictionary ? m->dictionary : &empty;
	size_t n_profiles = 0;
	int rc = check_dictionary(d, err);

	for (size_t r = 0; !rc && r < m->n_resource_profiles; r++) {
		const otlp_resource_profiles_t *rp = m->resource_profiles[r];

		for (size_t k = 0; rp->resource && k < rp->resource->n_attributes; k++)
			if (!rp->resource->attributes[k]->key || !*rp->resource->attributes[k]->key)
				return format_fail(err, FORMAT_NO_OFFSET, "resource %zu: attribute %zu "
						   "has no key", r, k);
		for (size_t s = 0; !rc && s < rp->n_scope_profiles; s++)
			for (size_t p = 0; !rc && p < rp->scope_profiles[s]->n_profiles; p++)
				rc = check_profile(d, rp->scope_profiles[s]->profiles[p],
						   n_profiles++, err);
	}
	return rc;
}

int otlp_parse(const unsigned char *data, size_t n, struct otlp_request *r,
	       struct format_error *err)
{
	unsigned char *raw = NULL;
	size_t raw_len = n;
	int rc;

	memset(r, 0, sizeof(*r));
	if (n >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		rc = format_inflate(data, n, OTLP_MAX_INFLATED, &raw, &raw_len, err);
		if (rc)
			return rc;
		r->compressed = true;
	}
	r->packed_size = raw_len;
	r->msg = otlp_request_unpack(NULL, raw_len, raw ? raw : data);
	free(raw);
	if (!r->msg)
		return format_fail(err, FORMAT_NO_OFFSET, "not an OTLP ExportProfilesServiceRequest "
				   "protobuf message (protobuf-c cannot unpack it)");
	rc = check_request(r->msg, err);
	if (rc)
		otlp_request_free(r);
	return rc;
}

static int parse_hook(const unsigned char *data, size_t n, void *ctx, struct format_error *err)
{
	return otlp_parse(data, n, ctx, err);
}

int otlp_read_file(const char *path, struct otlp_request *r, struct format_error *err)
{
	memset(r, 0, sizeof(*r));
	return format_parse_file(path, err, parse_hook, r);
}

void otlp_request_free(struct otlp_request *r)
{
	if (r->msg)
		otlp_request_free_unpacked(r->msg, NULL);
	r->msg = NULL;
}

const char *otlp_resource_string(const otlp_resource_profiles_t *rp, const char *key)
{
	for (size_t k = 0; rp->resource && k < rp->resource->n_attributes; k++) {
		const otlp_key_value_t *kv = rp->resource->attributes[k];

		if (kv->key && !strcmp(kv->key, key) && kv->value &&
		    kv->value->value_case == OTLP_VALUE_STRING)
			return kv->value->string_value;
	}
	return NULL;
}

/* ---- printing ------------------------------------------------------------ */

static const char *str_at(const otlp_dictionary_t *d, int64_t i)
{
	return i > 0 && (uint64_t)i < d->n_string_table ? d->string_table[i] : "";
}

static void print_any(FILE *out, const otlp_dictionary_t *d, const otlp_any_value_t *v)
{
	if (!v) {
		fprintf(out, "(none)");
		return;
	}
	switch (v->value_case) {
	case OTLP_VALUE_STRING:
		fprintf(out, "\"%s\"", v->string_value);
		break;
	case OTLP_VALUE_INT:
		fprintf(out, "%" PRId64, v->int_value);
		break;
	case OTLP_VALUE_BOOL:
		fprintf(out, "%s", v->bool_value ? "true" : "false");
		break;
	case OTLP_VALUE_DOUBLE:
		fprintf(out, "%g", v->double_value);
		break;
	case OTLP_VALUE_STRINDEX:
		fprintf(out, "\"%s\"", str_at(d, v->string_value_strindex));
		break;
	default:
		fprintf(out, "(a value of kind %d)", (int)v->value_case);
	}
}

static void print_attrs(FILE *out, const otlp_dictionary_t *d, const int32_t *idx, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		const otlp_attribute_t *a;

		if (idx[k] <= 0 || (size_t)idx[k] >= d->n_attribute_table)
			continue;
		a = d->attribute_table[idx[k]];
		fprintf(out, " %s=", str_at(d, a->key_strindex));
		print_any(out, d, a->value);
	}
}

static void print_location(FILE *out, const otlp_dictionary_t *d, int32_t li)
{
	const otlp_location_t *l = d->location_table[li];
	const otlp_mapping_t *mp = l->mapping_index ? d->mapping_table[l->mapping_index] : NULL;

	fprintf(out, "      0x%" PRIx64 " %s", l->address, mp ? str_at(d, mp->filename_strindex) : "");
	print_attrs(out, d, l->attribute_indices, l->n_attribute_indices);
	fputc('\n', out);
	for (size_t k = 0; k < l->n_lines; k++) {
		const otlp_line_t *ln = l->lines[k];
		const otlp_function_t *f = ln->function_index ? d->function_table[ln->function_index]
							       : NULL;

		fprintf(out, "        %s%s %s:%" PRId64 "\n", k + 1 < l->n_lines ? "inlined " : "",
			f ? str_at(d, f->name_strindex) : "?", f ? str_at(d, f->filename_strindex) : "",
			ln->line);
	}
}

void otlp_print(const struct otlp_request *r, FILE *out)
{
	static const otlp_dictionary_t empty = { .n_string_table = 0 };
	const otlp_request_t *m = r->msg;
	const otlp_dictionary_t *d = m->dictionary ? m->dictionary : &empty;

	fprintf(out, "OTLP profiles request: %zu bytes%s, %zu resources; dictionary: %zu "
		"strings, %zu stacks, %zu locations, %zu functions, %zu mappings, %zu attributes\n",
		r->packed_size, r->compressed ? " (gzip)" : "", m->n_resource_profiles,
		d->n_string_table, d->n_stack_table, d->n_location_table, d->n_function_table,
		d->n_mapping_table, d->n_attribute_table);
	for (size_t ri = 0; ri < m->n_resource_profiles; ri++) {
		const otlp_resource_profiles_t *rp = m->resource_profiles[ri];

		fprintf(out, "resource %zu:", ri);
		for (size_t k = 0; rp->resource && k < rp->resource->n_attributes; k++) {
			fprintf(out, " %s=", rp->resource->attributes[k]->key);
			print_any(out, d, rp->resource->attributes[k]->value);
		}
		fputc('\n', out);
		for (size_t s = 0; s < rp->n_scope_profiles; s++) {
			const otlp_scope_profiles_t *sp = rp->scope_profiles[s];

			for (size_t p = 0; p < sp->n_profiles; p++) {
				const otlp_profile_t *pr = sp->profiles[p];

				fprintf(out, "  profile %s/%s: %zu samples, start %" PRIu64
					" ns, duration %" PRIu64 " ns, period %" PRId64 "\n",
					str_at(d, pr->sample_type->type_strindex),
					str_at(d, pr->sample_type->unit_strindex), pr->n_samples,
					pr->time_unix_nano, pr->duration_nano, pr->period);
				for (size_t i = 0; i < pr->n_samples; i++) {
					const otlp_sample_t *sm = pr->samples[i];
					const otlp_stack_t *st = sm->stack_index ?
						d->stack_table[sm->stack_index] : NULL;

					fprintf(out, "    sample %zu: value %" PRId64, i,
						sm->n_values ? sm->values[0] : 0);
					print_attrs(out, d, sm->attribute_indices,
						    sm->n_attribute_indices);
					fputc('\n', out);
					for (size_t k = 0; st && k < st->n_location_indices; k++)
						if (st->location_indices[k])
							print_location(out, d, st->location_indices[k]);
				}
			}
		}
	}
}
