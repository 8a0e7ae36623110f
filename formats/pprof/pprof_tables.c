// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof writer's tables: the gzip sink the protobuf goes through, then
 * mappings, locations, functions, sample types, comments and the string
 * table (see pprof.c for the choices).
 */
#include "formats/pprof/pprof_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- the gzip sink ---------------------------------------------------------- */

/*
 * zlib's fastest level (1), as Go's runtime/pprof writes the profiles a
 * program takes of itself (gzip.BestSpeed); `go tool pprof` writes with
 * the default (6).  A continuous run writes a profile every interval, and
 * deflate at level 6 was 11% of a `-a -F 99 --interval 10 -f pprof` run's
 * CPU under a build loop (self-profile).  An interval's profile (315 KB of
 * protobuf): 5.0 ms at level 1 against 12.4 ms at 6, for 120 KB against
 * 109 KB.  On the exporters bench's model, level 1 wrote 0.83 s instead
 * of 0.94 s at 10^6 samples for a file 12% bigger.
 */
#define PPROF_GZIP_LEVEL Z_BEST_SPEED

static void sink_drain(struct pprof_sink *s, int flush)
{
	do {
		s->z.next_out = s->out;
		s->z.avail_out = sizeof(s->out);
		if (deflate(&s->z, flush) == Z_STREAM_ERROR) {
			s->err = -EIO;
			return;
		}
		if (fwrite(s->out, 1, sizeof(s->out) - s->z.avail_out, s->fp) !=
		    sizeof(s->out) - s->z.avail_out) {
			s->err = errno ? -errno : -EIO; /* ENOSPC says more than EIO */
			return;
		}
	} while (s->z.avail_out == 0);
}

/* Deflates len bytes at data (no flush). */
static void sink_deflate(struct pprof_sink *s, const uint8_t *data, size_t len)
{
	while (len && !s->err) {
		/* avail_in is 32 bits */
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		s->z.next_in = (Bytef *)data;
		s->z.avail_in = n;
		sink_drain(s, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

/*
 * protobuf-c hands the packed message over in pieces of a few bytes (a
 * tag, a varint, a string): they are staged and deflated 16 KiB at a
 * time.  One deflate() call per piece was 6% of a continuous -a run's CPU
 * under a build loop (-f pprof --interval 10, self-profile).
 */
static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct pprof_sink *s = (struct pprof_sink *)b;

	if (s->err)
		return;
	if (len > sizeof(s->in) - s->n_in) {
		sink_deflate(s, s->in, s->n_in);
		s->n_in = 0;
	}
	if (len >= sizeof(s->in)) {
		sink_deflate(s, data, len);
		return;
	}
	memcpy(s->in + s->n_in, data, len);
	s->n_in += len;
}

int pprof_sink_init(struct pprof_sink *s, FILE *fp)
{
	memset(s, 0, offsetof(struct pprof_sink, in));
	s->base.append = sink_append;
	s->fp = fp;
	/* windowBits 15 + 16: a gzip header and trailer around the stream */
	if (deflateInit2(&s->z, PPROF_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	s->started = true;
	return 0;
}

int pprof_sink_finish(struct pprof_sink *s, int err)
{
	if (!s->started)
		return err;
	if (!err && !s->err) {
		sink_deflate(s, s->in, s->n_in);
		s->n_in = 0;
		s->z.avail_in = 0;
		if (!s->err)
			sink_drain(s, Z_FINISH);
	}
	deflateEnd(&s->z);
	s->started = false;
	return err ? err : s->err;
}

/* ---- traced functions -------------------------------------------------------- */

void pprof_plan_traced_locations(struct pprof_writer *w)
{
	const struct model *m = w->m;

	for (size_t i = 0; i < m->traced.len; i++) {
		const struct model_traced_function *tf = &m->traced.items[i];
		uint32_t loc = model_find_location(m, tf->image, tf->addr);

		if (loc != MODEL_NONE)
			w->traced_location[i] = (uint64_t)loc + 1;
		else
			w->traced_location[i] = m->locations.len + 1 + w->n_extra_locations++;
	}
}

/* ---- mappings ------------------------------------------------------------------ */

/* The main executable: the first process's, else the first ELF image. */
static uint32_t main_image(const struct model *m)
{
	for (size_t p = 0; p < m->processes.len; p++)
		if (m->processes.items[p].exe_image < m->images.len)
			return m->processes.items[p].exe_image;
	for (size_t i = 0; i < m->images.len; i++)
		if (m->images.items[i].kind == MODEL_IMAGE_ELF)
			return (uint32_t)i;
	return 0;
}

static int fill_mappings(struct pprof_writer *w, Perftools__Profiles__Mapping *maps,
			 Perftools__Profiles__Mapping **ptrs)
{
	const struct model *m = w->m;
	uint64_t *lo = malloc((m->images.len + 1) * sizeof(*lo));
	uint64_t *hi = calloc(m->images.len + 1, sizeof(*hi));
	uint32_t first = main_image(m);

	if (!lo || !hi) {
		free(lo);
		free(hi);
		return -ENOMEM;
	}
	/* every location must fall inside its mapping's range */
	memset(lo, 0xff, (m->images.len + 1) * sizeof(*lo));
	for (size_t i = 0; i < m->locations.len; i++) {
		const struct model_location *l = &m->locations.items[i];

		if (l->image >= m->images.len)
			continue;
		if (l->addr < lo[l->image])
			lo[l->image] = l->addr;
		if (l->addr >= hi[l->image])
			hi[l->image] = l->addr + 1;
	}
	for (size_t k = 0; k < m->images.len; k++) {
		/* the main executable first, then the images in model order */
		uint32_t i = k == 0 ? first : (uint32_t)(k <= first ? k - 1 : k);
		const struct model_image *img = &m->images.items[i];
		Perftools__Profiles__Mapping *mp = &maps[k];
		bool resolved = img->has_symbols || img->kind == MODEL_IMAGE_KERNEL;
		uint64_t start = img->text_start, limit = img->text_start + img->text_size;

		if (!img->text_size || lo[i] < start)
			start = img->text_size ? lo[i] : (lo[i] == UINT64_MAX ? 0 : lo[i]);
		if (hi[i] > limit)
			limit = hi[i];
		perftools__profiles__mapping__init(mp);
		ptrs[k] = mp;
		mp->id = k + 1;
		mp->memory_start = start;
		mp->memory_limit = limit > start ? limit : start + 1;
		mp->file_offset = img->kind == MODEL_IMAGE_ELF ? frame_file_offset(m, i, start) : 0;
		mp->filename = strtab_id(&w->strings, img->path);
		mp->build_id = strtab_id(&w->strings, img->build_id);
		/* symbolized here: pprof need not look for the file again */
		mp->has_functions = mp->has_filenames = mp->has_line_numbers =
			mp->has_inline_frames = resolved;
		w->mapping_of_image[i] = k + 1;
	}
	free(lo);
	free(hi);
	return 0;
}

/* ---- functions and locations --------------------------------------------------- */

static void fill_functions(struct pprof_writer *w, Perftools__Profiles__Function *fns,
			   Perftools__Profiles__Function **ptrs)
{
	const struct model *m = w->m;

	for (size_t i = 0; i < m->functions.len; i++) {
		const struct model_function *f = &m->functions.items[i];
		const char *display, *linkage;

		frame_function_names(m, (uint32_t)i, &display, &linkage);
		perftools__profiles__function__init(&fns[i]);
		ptrs[i] = &fns[i];
		fns[i].id = i + 1;
		fns[i].name = strtab_id(&w->strings, display);
		fns[i].system_name = strtab_id(&w->strings, linkage);
		fns[i].filename = f->file < m->files.len ? strtab_id(&w->strings, m->files.items[f->file].path) : 0;
		fns[i].start_line = f->line;
	}
}

/* The lines of a location, innermost inlined function first, its
 * out-of-line function last; each line is where that function is at the
 * address (the call site of the next inner one). */
static size_t fill_lines(const struct model *m, const struct model_location *l,
			 Perftools__Profiles__Line *lines, Perftools__Profiles__Line **ptrs)
{
	uint32_t n = l->n_inlines;

	if (l->function >= m->functions.len)
		return 0;
	for (uint32_t k = 0; k <= n; k++) {
		uint32_t fn, line;

		frame_location_line(m, l, k, &fn, &line);
		perftools__profiles__line__init(&lines[k]);
		ptrs[k] = &lines[k];
		lines[k].function_id = fn < m->functions.len ? (uint64_t)fn + 1 : 0;
		lines[k].line = line;
	}
	return n + 1;
}

struct tables {
	Perftools__Profiles__Mapping *maps, **map_ptrs;
	Perftools__Profiles__Function *fns, **fn_ptrs;
	Perftools__Profiles__Location *locs, **loc_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	char **strings;
};

static int fill_locations(struct pprof_writer *w, struct tables *t)
{
	const struct model *m = w->m;
	size_t n_lines = 0, used = 0, n = m->locations.len + w->n_extra_locations;

	for (size_t i = 0; i < m->locations.len; i++)
		n_lines += 1 + m->locations.items[i].n_inlines;
	n_lines += w->n_extra_locations;
	t->locs = calloc(n + 1, sizeof(*t->locs));
	t->loc_ptrs = calloc(n + 1, sizeof(*t->loc_ptrs));
	t->lines = calloc(n_lines + 1, sizeof(*t->lines));
	t->line_ptrs = calloc(n_lines + 1, sizeof(*t->line_ptrs));
	if (!t->locs || !t->loc_ptrs || !t->lines || !t->line_ptrs)
		return -ENOMEM;
	for (size_t i = 0; i < m->locations.len; i++) {
		const struct model_location *l = &m->locations.items[i];
		Perftools__Profiles__Location *pl = &t->locs[i];

		perftools__profiles__location__init(pl);
		t->loc_ptrs[i] = pl;
		pl->id = i + 1;
		pl->mapping_id = l->image < m->images.len ? w->mapping_of_image[l->image] : 0;
		pl->address = l->addr;
		pl->line = t->line_ptrs + used;
		pl->n_line = fill_lines(m, l, t->lines + used, t->line_ptrs + used);
		used += pl->n_line;
	}
	/* traced functions' entries that no sample hit */
	for (size_t i = 0; i < m->traced.len; i++) {
		const struct model_traced_function *tf = &m->traced.items[i];
		size_t k = w->traced_location[i] - 1;
		Perftools__Profiles__Location *pl = &t->locs[k];

		if (k < m->locations.len)
			continue;
		perftools__profiles__location__init(pl);
		t->loc_ptrs[k] = pl;
		pl->id = k + 1;
		pl->mapping_id = tf->image < m->images.len ? w->mapping_of_image[tf->image] : 0;
		pl->address = tf->addr;
		if (tf->function < m->functions.len) {
			perftools__profiles__line__init(&t->lines[used]);
			t->line_ptrs[used] = &t->lines[used];
			t->lines[used].function_id = (uint64_t)tf->function + 1;
			t->lines[used].line = m->functions.items[tf->function].line;
			pl->line = t->line_ptrs + used++;
			pl->n_line = 1;
		}
	}
	return 0;
}

/* ---- the rest ------------------------------------------------------------------- */

static void fill_comments(struct pprof_writer *w, int64_t *c, size_t *n)
{
	const struct model *m = w->m;
	uint64_t truncated = 0, lost = model_total_lost(m);
	char events[512];

	*n = 0;
	model_events_phrase(m, events, sizeof(events));
	c[(*n)++] = strtab_printf(&w->strings, "collector %s", COLLECTOR_VERSION);
	if (m->run.command_line)
		c[(*n)++] = strtab_printf(&w->strings, "command: %s", m->run.command_line);
	c[(*n)++] = strtab_printf(&w->strings, "event%s: %s, call graph %s", model_event_count(m) > 1 ? "s" : "",
			    events, *m->run.call_graph ? m->run.call_graph : "fp");
	for (size_t i = 0; i < m->samples.len; i++) {
		uint32_t s = m->samples.items[i].stack;

		truncated += s < m->stacks.len && m->stacks.items[s].truncated;
	}
	c[(*n)++] = strtab_printf(&w->strings, "samples: %zu, truncated user stacks: %" PRIu64, m->samples.len,
			    truncated);
	if (lost)
		c[(*n)++] = strtab_printf(&w->strings, "lost events: %" PRIu64 " (the counts are a lower bound)",
				    lost);
}

static void free_tables(struct tables *t)
{
	free(t->maps);
	free(t->map_ptrs);
	free(t->fns);
	free(t->fn_ptrs);
	free(t->locs);
	free(t->loc_ptrs);
	free(t->lines);
	free(t->line_ptrs);
	free(t->strings);
}

int pprof_put_tables(struct pprof_writer *w)
{
	const struct model *m = w->m;
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType types[PPROF_MAX_VALUES], *type_ptrs[PPROF_MAX_VALUES];
	Perftools__Profiles__ValueType period;
	const char *type_names[PPROF_MAX_VALUES][2];
	struct tables t = { 0 };
	int64_t comments[8];
	int err;

	for (size_t i = 0; i < w->types.n; i++) {
		type_names[i][0] = w->types.type[i];
		type_names[i][1] = w->types.unit[i];
	}
	type_names[w->types.n][0] = "traced_calls";
	type_names[w->types.n][1] = "count";
	type_names[w->types.n + 1][0] = "traced_time";
	type_names[w->types.n + 1][1] = "nanoseconds";
	for (size_t i = 0; i < w->n_values; i++) {
		perftools__profiles__value_type__init(&types[i]);
		types[i].type = strtab_id(&w->strings, type_names[i][0]);
		types[i].unit = strtab_id(&w->strings, type_names[i][1]);
		type_ptrs[i] = &types[i];
	}
	p.sample_type = type_ptrs;
	p.n_sample_type = w->n_values;
	perftools__profiles__value_type__init(&period);
	period.type = strtab_id(&w->strings, type_names[1][0]);
	period.unit = strtab_id(&w->strings, type_names[1][1]);
	p.period_type = &period;
	p.period = (int64_t)sample_types_period(model_event(m, 0));
	p.default_sample_type = strtab_id(&w->strings, type_names[1][0]);
	p.time_nanos = (int64_t)m->run.start_ns;
	p.duration_nanos = m->run.end_ns > m->run.start_ns ?
			   (int64_t)(m->run.end_ns - m->run.start_ns) : 0;
	fill_comments(w, comments, &p.n_comment);
	p.comment = comments;

	t.maps = calloc(m->images.len + 1, sizeof(*t.maps));
	t.map_ptrs = calloc(m->images.len + 1, sizeof(*t.map_ptrs));
	t.fns = calloc(m->functions.len + 1, sizeof(*t.fns));
	t.fn_ptrs = calloc(m->functions.len + 1, sizeof(*t.fn_ptrs));
	err = !t.maps || !t.map_ptrs || !t.fns || !t.fn_ptrs ? -ENOMEM : 0;
	if (!err)
		err = fill_mappings(w, t.maps, t.map_ptrs);
	if (!err) {
		fill_functions(w, t.fns, t.fn_ptrs);
		err = fill_locations(w, &t);
	}
	if (!err)
		err = w->err ? w->err : w->strings.err;
	if (!err) {
		p.mapping = t.map_ptrs;
		p.n_mapping = m->images.len;
		p.function = t.fn_ptrs;
		p.n_function = m->functions.len;
		p.location = t.loc_ptrs;
		p.n_location = m->locations.len + w->n_extra_locations;
		/* last: every part above added its strings */
		t.strings = strtab_array(&w->strings);
		err = t.strings ? 0 : -ENOMEM;
	}
	if (!err) {
		p.string_table = t.strings;
		p.n_string_table = strtab_count(&w->strings);
		protobuf_c_message_pack_to_buffer(&p.base, &w->sink.base);
		err = w->sink.err;
	}
	free_tables(&t);
	return err;
}
