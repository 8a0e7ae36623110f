// SPDX-License-Identifier: GPL-2.0
/*
 * OTLP profiles writer: the model as one ExportProfilesServiceRequest
 * (otlp.h says what goes where).
 *
 * The request is packed one resource at a time into a growing buffer, the
 * dictionary last (it fills as the resources' samples are made): protobuf
 * concatenates the occurrences of a repeated field, so the bytes are one
 * request, and only one process's samples are messages in memory at once.
 */
#include "formats/otlp/otlp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/frames.h"
#include "formats/otlp/otlp_pb.h"
#include "formats/sample_types.h"
#include "formats/strtab.h"
#include "lib/idmap.h"

/* A protobuf-c output buffer growing in memory. */
struct otlp_buf {
	ProtobufCBuffer base;
	uint8_t *data;
	size_t len, cap;
	int err;
};

static void buf_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct otlp_buf *o = (struct otlp_buf *)b;

	if (o->err)
		return;
	if (len > o->cap - o->len) {
		size_t cap = o->cap ? o->cap : 1 << 16;
		uint8_t *nd;

		while (cap - o->len < len)
			cap *= 2;
		nd = realloc(o->data, cap);
		if (!nd) {
			o->err = -ENOMEM;
			return;
		}
		o->data = nd;
		o->cap = cap;
	}
	memcpy(o->data + o->len, data, len);
	o->len += len;
}

/* One attribute of the dictionary: a key and a string or an integer. */
struct attr {
	int64_t key;
	const char *str;     /* NULL: the integer */
	int64_t num;
};

/* One (stack, thread) of the samples, with its values. */
struct group {
	uint32_t stack, thread, process;
	uint32_t next;       /* the process's next group, or MODEL_NONE */
	int64_t values[SAMPLE_TYPES_MAX];
};

struct otlp_enc {
	const struct model *m;
	struct strtab strings;
	struct sample_types types;
	/* the dictionary, in the order its entries are first used: model ids */
	MODEL_VEC(uint32_t) stacks, locations, functions, images;
	MODEL_VEC(struct attr) attrs;
	/* per model id: the dictionary index, 0 until used */
	int32_t *stack_of, *location_of, *function_of, *mapping_of;
	int32_t *frame_type_of;   /* per image: its locations' frame type attribute */
	struct idmap attr_index;  /* (key, value) -> attribute index */
	MODEL_VEC(struct group) groups;
	uint32_t *first_group;    /* per process: its first group, or MODEL_NONE */
	uint32_t *last_group;
	struct otlp_buf out;
	int err;
};

/* ---- the dictionary's entries, made as they are used ------------------------ */

/* The attribute key=str (str not NULL) or key=num. */
static int32_t attr_id(struct otlp_enc *e, const char *key, const char *str, int64_t num)
{
	int64_t k = strtab_id(&e->strings, key);
	int64_t v = str ? strtab_id(&e->strings, str) : num;
	/* key and value in 64 bits: 24 for the key, 1 for the kind, 39 for
	 * the value (a string's index, a pid or tid) */
	uint64_t packed = (uint64_t)k << 40 | (uint64_t)!!str << 39 | ((uint64_t)v & ((1ULL << 39) - 1));
	bool fresh;
	long id = frames_group_id(&e->attr_index, packed, (uint32_t)e->attrs.len + 1, &fresh);

	if (id < 0) {
		e->err = (int)id;
		return 0;
	}
	if (fresh) {
		struct attr *a = MODEL_VEC_PUSH(e->attrs);

		a->key = k;
		a->str = !str ? NULL : v ? e->strings.names.names.items[v - 1].text : "";
		a->num = num;
	}
	return (int32_t)id;
}

static int32_t function_id(struct otlp_enc *e, uint32_t fn)
{
	if (fn >= e->m->functions.len)
		return 0;
	if (!e->function_of[fn]) {
		*MODEL_VEC_PUSH(e->functions) = fn;
		e->function_of[fn] = (int32_t)e->functions.len;
	}
	return e->function_of[fn];
}

static int32_t mapping_id(struct otlp_enc *e, uint32_t image)
{
	if (image >= e->m->images.len)
		return 0;
	if (!e->mapping_of[image]) {
		*MODEL_VEC_PUSH(e->images) = image;
		e->mapping_of[image] = (int32_t)e->images.len;
	}
	return e->mapping_of[image];
}

/* What kind of code an image holds (profile.frame.type), anonymous code
 * by the runtime of the process that maps it. */
static const char *frame_type(const struct model *m, uint32_t image, uint32_t process)
{
	const struct model_process *p = &m->processes.items[process];
	const char *exe;

	switch (m->images.items[image].kind) {
	case MODEL_IMAGE_KERNEL:
		return "kernel";
	case MODEL_IMAGE_RUNTIME:
		return m->images.items[image].frame_type ? m->images.items[image].frame_type
							 : "native";
	case MODEL_IMAGE_ANON:
		exe = frame_basename(p->exe ? p->exe : p->comm);
		if (!strcmp(m->images.items[image].path, "[jit]")) {
			if (!strncmp(exe, "java", 4))
				return "jvm";
			if (!strncmp(exe, "node", 4))
				return "v8js";
		}
		return "native";
	default:
		return "native";
	}
}

static int32_t location_id(struct otlp_enc *e, uint32_t loc, uint32_t process)
{
	const struct model_location *l;

	if (loc >= e->m->locations.len)
		return 0;
	if (e->location_of[loc])
		return e->location_of[loc];
	l = &e->m->locations.items[loc];
	if (l->image < e->m->images.len) {
		mapping_id(e, l->image);
		if (!e->frame_type_of[l->image])
			e->frame_type_of[l->image] = attr_id(
				e, "profile.frame.type", frame_type(e->m, l->image, process), 0);
	}
	*MODEL_VEC_PUSH(e->locations) = loc;
	e->location_of[loc] = (int32_t)e->locations.len;
	return e->location_of[loc];
}

static int32_t stack_id(struct otlp_enc *e, uint32_t stack, uint32_t process)
{
	const struct model_stack *st;
	const uint32_t *frames;

	if (stack >= e->m->stacks.len)
		return 0;
	if (e->stack_of[stack])
		return e->stack_of[stack];
	st = &e->m->stacks.items[stack];
	frames = model_stack_frames(e->m, st);
	for (uint32_t k = 0; k < st->n_frames; k++)
		location_id(e, frames[k], process);
	*MODEL_VEC_PUSH(e->stacks) = stack;
	e->stack_of[stack] = (int32_t)e->stacks.len;
	return e->stack_of[stack];
}

/* ---- samples, grouped by (stack, thread) and chained per process ---------- */

static int group_samples(struct otlp_enc *e)
{
	const struct model *m = e->m;
	struct idmap index = { 0 };
	int err = 0;

	for (size_t i = 0; i < m->samples.len; i++) {
		const struct model_sample *s = &m->samples.items[i];
		uint32_t stack = s->stack < m->stacks.len ? s->stack : MODEL_NONE;
		bool fresh;
		long id = frames_group_id(&index, (uint64_t)stack << 32 | s->thread,
					  (uint32_t)e->groups.len, &fresh);
		struct group *g;

		if (id < 0) {
			err = (int)id;
			break;
		}
		if (fresh) {
			uint32_t p = s->thread < m->threads.len ? m->threads.items[s->thread].process
								  : MODEL_NONE;

			if (p >= m->processes.len)
				p = s->process < m->processes.len ? s->process : 0;
			g = MODEL_VEC_PUSH(e->groups);
			memset(g, 0, sizeof(*g));
			g->stack = stack;
			g->thread = s->thread;
			g->process = p;
			g->next = MODEL_NONE;
			if (e->first_group[p] == MODEL_NONE)
				e->first_group[p] = (uint32_t)id;
			else
				e->groups.items[e->last_group[p]].next = (uint32_t)id;
			e->last_group[p] = (uint32_t)id;
		}
		sample_types_add(m, &e->types, s, e->groups.items[id].values);
	}
	idmap_free(&index);
	return err;
}

/* ---- one resource: a process and its profiles ---------------------------- */

struct resource_msgs {
	otlp_resource_t resource;
	otlp_key_value_t kv[16 + 64], *kv_ptrs[16 + 64];
	otlp_any_value_t any[16 + 64];
	size_t n_kv;
	otlp_scope_t scope;
	otlp_scope_profiles_t sp, *sp_ptr;
	otlp_profile_t profiles[SAMPLE_TYPES_MAX], *profile_ptrs[SAMPLE_TYPES_MAX];
	otlp_value_type_t types[SAMPLE_TYPES_MAX], period_type;
	otlp_resource_profiles_t rp;
};

static bool has_kv(const struct resource_msgs *r, const char *key)
{
	for (size_t i = 0; i < r->n_kv; i++)
		if (!strcmp(r->kv[i].key, key))
			return true;
	return false;
}

static void put_kv(struct resource_msgs *r, const char *key, const char *str, int64_t num)
{
	size_t i = r->n_kv;

	if (i >= sizeof(r->kv) / sizeof(r->kv[0]) || has_kv(r, key))
		return;
	otlp_key_value_init(&r->kv[i]);
	otlp_any_value_init(&r->any[i]);
	r->kv[i].key = (char *)key;
	r->kv[i].value = &r->any[i];
	if (str) {
		r->any[i].value_case = OTLP_VALUE_STRING;
		r->any[i].string_value = (char *)str;
	} else {
		r->any[i].value_case = OTLP_VALUE_INT;
		r->any[i].int_value = num;
	}
	r->kv_ptrs[i] = &r->kv[i];
	r->n_kv++;
}

/* The process's resource attributes (otlp.h). */
static void put_resource(struct otlp_enc *e, struct resource_msgs *r, uint32_t process)
{
	const struct model *m = e->m;
	const struct model_process *p = &m->processes.items[process];
	const char *exe_name = p->exe ? frame_basename(p->exe) : p->comm;
	char buf[80];
	/* a name made in buf is kept by the string table */
	const char *service = p->service_name ? p->service_name :
			      strtab_own(&e->strings, strdup(model_service_name(p, buf, sizeof(buf))));

	put_kv(r, "service.name", service ? service : "unknown_service", 0);
	put_kv(r, "process.pid", NULL, p->pid);
	if (exe_name[0])
		put_kv(r, "process.executable.name", exe_name, 0);
	if (p->exe)
		put_kv(r, "process.executable.path", p->exe, 0);
	if (p->cmdline)
		put_kv(r, "process.command_line", p->cmdline, 0);
	if (p->container_id)
		put_kv(r, "container.id", p->container_id, 0);
	for (size_t i = 0; i < m->run.n_attributes; i++)
		put_kv(r, m->run.attributes[i].key, m->run.attributes[i].value, 0);
	if (m->run.hostname[0]) /* unless the run's attributes said it */
		put_kv(r, "host.name", m->run.hostname, 0);
	otlp_resource_init(&r->resource);
	r->resource.attributes = r->kv_ptrs;
	r->resource.n_attributes = r->n_kv;
}

/* The process's samples of sample type t, into samples[] (n_groups of
 * room, each with its one value and the two thread attributes). */
static size_t fill_samples(struct otlp_enc *e, uint32_t process, size_t t, otlp_sample_t *samples,
			   otlp_sample_t **ptrs, int64_t *values, int32_t *thread_attrs)
{
	const struct model *m = e->m;
	size_t n = 0;

	for (uint32_t g = e->first_group[process]; g != MODEL_NONE; g = e->groups.items[g].next) {
		const struct group *gr = &e->groups.items[g];
		const struct model_thread *th;

		if (!gr->values[t])
			continue;
		otlp_sample_init(&samples[n]);
		ptrs[n] = &samples[n];
		values[n] = gr->values[t];
		samples[n].values = &values[n];
		samples[n].n_values = 1;
		samples[n].stack_index = gr->stack == MODEL_NONE ? 0 : stack_id(e, gr->stack, process);
		if (gr->thread < m->threads.len) {
			th = &m->threads.items[gr->thread];
			thread_attrs[2 * n] = attr_id(e, "thread.id", NULL, th->tid);
			samples[n].attribute_indices = &thread_attrs[2 * n];
			samples[n].n_attribute_indices = 1;
			if (th->comm[0]) {
				thread_attrs[2 * n + 1] = attr_id(e, "thread.name", th->comm, 0);
				samples[n].n_attribute_indices = 2;
			}
		}
		n++;
	}
	return n;
}

static int put_process(struct otlp_enc *e, uint32_t process, size_t n_groups)
{
	const struct model *m = e->m;
	struct resource_msgs *r = calloc(1, sizeof(*r));
	otlp_sample_t *samples = calloc(n_groups * e->types.n + 1, sizeof(*samples));
	otlp_sample_t **ptrs = calloc(n_groups * e->types.n + 1, sizeof(*ptrs));
	int64_t *values = calloc(n_groups * e->types.n + 1, sizeof(*values));
	int32_t *thread_attrs = calloc(2 * n_groups * e->types.n + 1, sizeof(*thread_attrs));
	otlp_request_t req;
	size_t used = 0, n_profiles = 0;
	int err = 0;

	if (!r || !samples || !ptrs || !values || !thread_attrs) {
		err = -ENOMEM;
		goto out;
	}
	put_resource(e, r, process);
	otlp_value_type_init(&r->period_type);
	r->period_type.type_strindex = (int32_t)strtab_id(&e->strings, e->types.type[1]);
	r->period_type.unit_strindex = (int32_t)strtab_id(&e->strings, e->types.unit[1]);
	for (size_t t = 0; t < e->types.n; t++) {
		otlp_profile_t *pr = &r->profiles[n_profiles];
		size_t n = fill_samples(e, process, t, samples + used, ptrs + used, values + used,
					thread_attrs + 2 * used);

		if (!n)
			continue;
		otlp_profile_init(pr);
		otlp_value_type_init(&r->types[n_profiles]);
		r->types[n_profiles].type_strindex = (int32_t)strtab_id(&e->strings, e->types.type[t]);
		r->types[n_profiles].unit_strindex = (int32_t)strtab_id(&e->strings, e->types.unit[t]);
		pr->sample_type = &r->types[n_profiles];
		pr->samples = ptrs + used;
		pr->n_samples = n;
		pr->time_unix_nano = m->run.start_ns;
		pr->duration_nano = m->run.end_ns > m->run.start_ns ? m->run.end_ns - m->run.start_ns : 0;
		pr->period_type = &r->period_type;
		pr->period = (int64_t)sample_types_period(model_event(m, 0));
		r->profile_ptrs[n_profiles++] = pr;
		used += n;
	}
	otlp_scope_init(&r->scope);
	r->scope.name = "collector";
	r->scope.version = COLLECTOR_VERSION;
	otlp_scope_profiles_init(&r->sp);
	r->sp.scope = &r->scope;
	r->sp.profiles = r->profile_ptrs;
	r->sp.n_profiles = n_profiles;
	r->sp_ptr = &r->sp;
	otlp_resource_profiles_init(&r->rp);
	r->rp.resource = &r->resource;
	r->rp.scope_profiles = &r->sp_ptr;
	r->rp.n_scope_profiles = 1;
	if (n_profiles && !e->err && !e->strings.err) {
		otlp_resource_profiles_t *rp = &r->rp;

		otlp_request_init(&req);
		req.resource_profiles = &rp;
		req.n_resource_profiles = 1;
		protobuf_c_message_pack_to_buffer(&req.base, &e->out.base);
	}
out:
	free(r);
	free(samples);
	free(ptrs);
	free(values);
	free(thread_attrs);
	return err;
}

/* ---- the dictionary, last --------------------------------------------------- */

struct dict_msgs {
	otlp_dictionary_t dict;
	otlp_mapping_t *maps, **map_ptrs;
	int32_t *map_attrs;
	otlp_location_t *locs, **loc_ptrs;
	otlp_line_t *lines, **line_ptrs;
	otlp_function_t *fns, **fn_ptrs;
	otlp_stack_t *stacks, **stack_ptrs;
	int32_t *stack_locs;
	otlp_attribute_t *attrs, **attr_ptrs;
	otlp_any_value_t *attr_values;
	char **strings;
};

static void free_dict(struct dict_msgs *d)
{
	free(d->maps);
	free(d->map_ptrs);
	free(d->map_attrs);
	free(d->locs);
	free(d->loc_ptrs);
	free(d->lines);
	free(d->line_ptrs);
	free(d->fns);
	free(d->fn_ptrs);
	free(d->stacks);
	free(d->stack_ptrs);
	free(d->stack_locs);
	free(d->attrs);
	free(d->attr_ptrs);
	free(d->attr_values);
	free(d->strings);
}

#define ALLOC(p, n) ((p) = calloc((n) + 1, sizeof(*(p))))

static void fill_stacks(struct otlp_enc *e, struct dict_msgs *d)
{
	const struct model *m = e->m;
	size_t used = 0;

	otlp_stack_init(&d->stacks[0]);
	d->stack_ptrs[0] = &d->stacks[0];
	for (size_t i = 0; i < e->stacks.len; i++) {
		const struct model_stack *st = &m->stacks.items[e->stacks.items[i]];
		const uint32_t *frames = model_stack_frames(m, st);
		otlp_stack_t *s = &d->stacks[i + 1];

		otlp_stack_init(s);
		d->stack_ptrs[i + 1] = s;
		s->location_indices = d->stack_locs + used;
		for (uint32_t k = 0; k < st->n_frames; k++)
			if (frames[k] < m->locations.len)
				d->stack_locs[used + s->n_location_indices++] =
					e->location_of[frames[k]];
		used += s->n_location_indices;
	}
}

static void fill_locations(struct otlp_enc *e, struct dict_msgs *d)
{
	const struct model *m = e->m;
	size_t used = 0;

	otlp_location_init(&d->locs[0]);
	d->loc_ptrs[0] = &d->locs[0];
	for (size_t i = 0; i < e->locations.len; i++) {
		const struct model_location *l = &m->locations.items[e->locations.items[i]];
		otlp_location_t *ol = &d->locs[i + 1];

		otlp_location_init(ol);
		d->loc_ptrs[i + 1] = ol;
		ol->address = l->addr;
		if (l->image < m->images.len) {
			ol->mapping_index = e->mapping_of[l->image];
			ol->attribute_indices = &e->frame_type_of[l->image];
			ol->n_attribute_indices = 1;
		}
		ol->lines = d->line_ptrs + used;
		for (uint32_t k = 0; l->function < m->functions.len && k <= l->n_inlines; k++) {
			uint32_t fn, line;

			frame_location_line(m, l, k, &fn, &line);
			otlp_line_init(&d->lines[used]);
			d->line_ptrs[used] = &d->lines[used];
			d->lines[used].function_index = function_id(e, fn);
			d->lines[used].line = line;
			used++;
			ol->n_lines++;
		}
	}
}

static void fill_functions(struct otlp_enc *e, struct dict_msgs *d)
{
	const struct model *m = e->m;

	otlp_function_init(&d->fns[0]);
	d->fn_ptrs[0] = &d->fns[0];
	for (size_t i = 0; i < e->functions.len; i++) {
		const struct model_function *f = &m->functions.items[e->functions.items[i]];
		otlp_function_t *of = &d->fns[i + 1];
		const char *display, *linkage;

		frame_function_names(m, e->functions.items[i], &display, &linkage);
		otlp_function_init(of);
		d->fn_ptrs[i + 1] = of;
		of->name_strindex = (int32_t)strtab_id(&e->strings, display);
		of->system_name_strindex = (int32_t)strtab_id(&e->strings, linkage);
		of->filename_strindex = f->file < m->files.len ?
			(int32_t)strtab_id(&e->strings, m->files.items[f->file].path) : 0;
		of->start_line = f->line;
	}
}

/* Each used image's mapping: its text range, widened to every address of
 * it this request names, and its build-id. */
static void fill_mappings(struct otlp_enc *e, struct dict_msgs *d)
{
	const struct model *m = e->m;

	otlp_mapping_init(&d->maps[0]);
	d->map_ptrs[0] = &d->maps[0];
	for (size_t i = 0; i < e->images.len; i++) {
		const struct model_image *img = &m->images.items[e->images.items[i]];
		otlp_mapping_t *om = &d->maps[i + 1];

		otlp_mapping_init(om);
		d->map_ptrs[i + 1] = om;
		om->memory_start = img->text_size ? img->text_start : UINT64_MAX;
		om->memory_limit = img->text_start + img->text_size;
		om->filename_strindex = (int32_t)strtab_id(&e->strings, img->path);
		if (img->build_id[0]) {
			d->map_attrs[i] = attr_id(e, "process.executable.build_id.gnu", img->build_id, 0);
			om->attribute_indices = &d->map_attrs[i];
			om->n_attribute_indices = 1;
		}
	}
	for (size_t i = 0; i < e->locations.len; i++) {
		const struct model_location *l = &m->locations.items[e->locations.items[i]];
		otlp_mapping_t *om;

		if (l->image >= m->images.len)
			continue;
		om = &d->maps[e->mapping_of[l->image]];
		if (l->addr < om->memory_start)
			om->memory_start = l->addr;
		if (l->addr >= om->memory_limit)
			om->memory_limit = l->addr + 1;
	}
	for (size_t i = 0; i < e->images.len; i++) {
		otlp_mapping_t *om = &d->maps[i + 1];
		const struct model_image *img = &m->images.items[e->images.items[i]];

		if (om->memory_start == UINT64_MAX)
			om->memory_start = 0;
		if (img->kind == MODEL_IMAGE_ELF)
			om->file_offset = frame_file_offset(m, e->images.items[i], om->memory_start);
	}
}

/* Attributes last but strings: the mappings add theirs. */
static void fill_attributes(struct otlp_enc *e, struct dict_msgs *d)
{
	otlp_attribute_init(&d->attrs[0]);
	d->attr_ptrs[0] = &d->attrs[0];
	for (size_t i = 0; i < e->attrs.len; i++) {
		const struct attr *a = &e->attrs.items[i];
		otlp_attribute_t *oa = &d->attrs[i + 1];
		otlp_any_value_t *v = &d->attr_values[i];

		otlp_attribute_init(oa);
		otlp_any_value_init(v);
		d->attr_ptrs[i + 1] = oa;
		oa->key_strindex = (int32_t)a->key;
		oa->value = v;
		if (a->str) {
			v->value_case = OTLP_VALUE_STRING;
			v->string_value = (char *)a->str;
		} else {
			v->value_case = OTLP_VALUE_INT;
			v->int_value = a->num;
		}
	}
}

static int put_dictionary(struct otlp_enc *e)
{
	struct dict_msgs d = { 0 };
	size_t n_lines = 0, n_stack_locs = 0;
	otlp_request_t req;
	int err = 0;

	for (size_t i = 0; i < e->locations.len; i++)
		n_lines += 1 + e->m->locations.items[e->locations.items[i]].n_inlines;
	for (size_t i = 0; i < e->stacks.len; i++)
		n_stack_locs += e->m->stacks.items[e->stacks.items[i]].n_frames;
	if (!ALLOC(d.stacks, e->stacks.len) || !ALLOC(d.stack_ptrs, e->stacks.len) ||
	    !ALLOC(d.stack_locs, n_stack_locs) || !ALLOC(d.locs, e->locations.len) ||
	    !ALLOC(d.loc_ptrs, e->locations.len) || !ALLOC(d.lines, n_lines) ||
	    !ALLOC(d.line_ptrs, n_lines)) {
		err = -ENOMEM;
		goto out;
	}
	fill_stacks(e, &d);
	fill_locations(e, &d);   /* adds functions */
	/* the mappings and functions are known now; their attributes and
	 * strings are the last to be added */
	if (!ALLOC(d.fns, e->functions.len) || !ALLOC(d.fn_ptrs, e->functions.len) ||
	    !ALLOC(d.maps, e->images.len) || !ALLOC(d.map_ptrs, e->images.len) ||
	    !ALLOC(d.map_attrs, e->images.len)) {
		err = -ENOMEM;
		goto out;
	}
	fill_functions(e, &d);
	fill_mappings(e, &d);
	if (!ALLOC(d.attrs, e->attrs.len) || !ALLOC(d.attr_ptrs, e->attrs.len) ||
	    !ALLOC(d.attr_values, e->attrs.len) || !(d.strings = strtab_array(&e->strings))) {
		err = -ENOMEM;
		goto out;
	}
	fill_attributes(e, &d);
	err = e->err ? e->err : e->strings.err;
	if (err)
		goto out;
	otlp_dictionary_init(&d.dict);
	d.dict.mapping_table = d.map_ptrs;
	d.dict.n_mapping_table = e->images.len + 1;
	d.dict.location_table = d.loc_ptrs;
	d.dict.n_location_table = e->locations.len + 1;
	d.dict.function_table = d.fn_ptrs;
	d.dict.n_function_table = e->functions.len + 1;
	d.dict.stack_table = d.stack_ptrs;
	d.dict.n_stack_table = e->stacks.len + 1;
	d.dict.attribute_table = d.attr_ptrs;
	d.dict.n_attribute_table = e->attrs.len + 1;
	d.dict.string_table = d.strings;
	d.dict.n_string_table = strtab_count(&e->strings);
	otlp_request_init(&req);
	req.dictionary = &d.dict;
	protobuf_c_message_pack_to_buffer(&req.base, &e->out.base);
out:
	free_dict(&d);
	return err;
}

/* ---- the encoder ------------------------------------------------------------ */

static void enc_free(struct otlp_enc *e)
{
	strtab_free(&e->strings);
	free(e->stacks.items);
	free(e->locations.items);
	free(e->functions.items);
	free(e->images.items);
	free(e->attrs.items);
	free(e->stack_of);
	free(e->location_of);
	free(e->function_of);
	free(e->mapping_of);
	free(e->frame_type_of);
	idmap_free(&e->attr_index);
	free(e->groups.items);
	free(e->first_group);
	free(e->last_group);
	free(e->out.data);
}

int otlp_encode(const struct model *m, uint8_t **out, size_t *len)
{
	struct otlp_enc e = { .m = m };
	size_t n_procs = m->processes.len + 1;
	size_t *n_groups = NULL;
	int err;

	e.out.base.append = buf_append;
	sample_types_of(m, &e.types);
	err = strtab_init(&e.strings, m);
	if (!err && (!ALLOC(e.stack_of, m->stacks.len) || !ALLOC(e.location_of, m->locations.len) ||
		     !ALLOC(e.function_of, m->functions.len) || !ALLOC(e.mapping_of, m->images.len) ||
		     !ALLOC(e.frame_type_of, m->images.len) ||
		     !(e.first_group = malloc(n_procs * sizeof(*e.first_group))) ||
		     !(e.last_group = malloc(n_procs * sizeof(*e.last_group))) ||
		     !ALLOC(n_groups, n_procs)))
		err = -ENOMEM;
	if (!err) {
		memset(e.first_group, 0xff, n_procs * sizeof(*e.first_group));
		err = group_samples(&e);
	}
	for (size_t g = 0; !err && g < e.groups.len; g++)
		n_groups[e.groups.items[g].process]++;
	for (uint32_t p = 0; !err && p < m->processes.len; p++)
		if (n_groups[p])
			err = put_process(&e, p, n_groups[p]);
	if (!err)
		err = put_dictionary(&e);
	if (!err)
		err = e.out.err ? e.out.err : e.err;
	free(n_groups);
	if (!err) {
		*out = e.out.data ? e.out.data : malloc(1);
		*len = e.out.len;
		e.out.data = NULL;
		if (!*out)
			err = -ENOMEM;
	}
	enc_free(&e);
	return err;
}
