// SPDX-License-Identifier: GPL-2.0
/* COLLECTOR_SAVE_RECORDS=FILE: what the decode stage receives, into FILE. */
#include "session/save_records.h"

#include "bpf/collector.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode/kernel_counters.h"
#include "lib/userfs.h"
#include "model/model.h"

struct save_records {
	FILE *f;
	char *path;
	int err;                /* the first write error, a positive errno */
};

int save_records_open(struct save_records **out)
{
	const char *path = getenv(SAVE_RECORDS_ENV);
	struct save_records *s;

	*out = NULL;
	if (!path || !*path)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return -ENOMEM;
	}
	/* a path the user names: created with his rights (lib/userfs.h) */
	if (user_fs_enter() == 0) {
		s->f = fopen(path, "wbe");
		user_fs_leave();
	}
	if (!s->f) {
		int err = -errno;

		fprintf(stderr, "collector: %s=%s: cannot create the file: %s\n", SAVE_RECORDS_ENV,
			path, strerror(errno));
		free(s->path);
		free(s);
		return err;
	}
	/* records come a few hundred bytes at a time */
	setvbuf(s->f, NULL, _IOFBF, 1 << 20);
	save_records_put(s, SAVE_MAGIC, SAVE_RECORDS_MAGIC, strlen(SAVE_RECORDS_MAGIC));
	*out = s;
	return 0;
}

void save_records_put(struct save_records *s, enum save_tag tag, const void *data, size_t len)
{
	struct save_item_head head = { .tag = tag, .len = (uint32_t)len };

	if (s->err)
		return;
	if (fwrite(&head, sizeof(head), 1, s->f) != 1 || (len && fwrite(data, len, 1, s->f) != 1))
		s->err = errno ? errno : EIO;
}

/* "key=value" strings, each ended by a NUL, into one text item. */
struct text {
	char *buf;
	size_t len;
	FILE *f;
};

static void text_add(struct text *t, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void text_add(struct text *t, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (!t->f)
		return;
	fprintf(t->f, "%s=", key);
	va_start(ap, fmt);
	vfprintf(t->f, fmt, ap);
	va_end(ap);
	fputc(0, t->f);
}

static void text_put(struct save_records *s, enum save_tag tag, struct text *t)
{
	if (!t->f) {
		s->err = s->err ? s->err : ENOMEM;
		return;
	}
	if (fclose(t->f) == 0)
		save_records_put(s, tag, t->buf, t->len);
	else
		s->err = s->err ? s->err : ENOMEM;
	free(t->buf);
}

void save_records_facts(struct save_records *s, const struct model *m, char *const *trace_specs,
			int n_trace_specs)
{
	const struct model_run *run = &m->run;
	struct text t = { 0 };

	t.f = open_memstream(&t.buf, &t.len);
	text_add(&t, "pid", "%d", (int)getpid());
	text_add(&t, "system_wide", "%d", run->system_wide);
	text_add(&t, "freq_hz", "%" PRIu32, run->freq_hz);
	text_add(&t, "period_ns", "%" PRIu64, run->period_ns);
	text_add(&t, "ktime_to_epoch_ns", "%" PRId64, run->ktime_to_epoch_ns);
	text_add(&t, "start_ktime_ns", "%" PRIu64, run->start_ktime_ns);
	text_add(&t, "hostname", "%s", run->hostname);
	text_add(&t, "host_id", "%" PRIu64, run->host_id);
	text_add(&t, "ncpus", "%" PRIu32, run->ncpus);
	text_add(&t, "cpu_mhz", "%" PRIu32, run->cpu_mhz);
	text_add(&t, "trace_nargs", "%" PRIu32, run->trace_nargs);
	text_add(&t, "call_graph", "%s", run->call_graph);
	if (run->command_line)
		text_add(&t, "command", "%s", run->command_line);
	for (int i = 0; i < n_trace_specs; i++)
		text_add(&t, "trace", "%s", trace_specs[i]);
	for (size_t i = 0; i < m->events.len; i++) {
		const struct model_event *e = &m->events.items[i];

		text_add(&t, "event", "%s\t%s\t%d\t%d\t%" PRIu32 "\t%" PRIu64 "\t%s", e->name, e->unit,
			 e->clock, e->aggregated, e->freq_hz, e->period, e->description);
	}
	text_put(s, SAVE_FACTS, &t);
}

void save_records_end(struct save_records *s, const struct model *m, int cpus,
		      const uint64_t *counters, uint64_t by_ip,
		      const uint64_t *tcounters)
{
	const struct model_run *run = &m->run;
	struct text t = { 0 };

	save_records_put(s, SAVE_COUNTERS, counters, COLLECTOR_CNT_MAX * sizeof(*counters));
	save_records_put(s, SAVE_KERNEL_SAMPLES, &by_ip, sizeof(by_ip));
	if (tcounters)
		save_records_put(s, SAVE_TRACE_COUNTERS, tcounters,
				 COLLECTOR_TCNT_MAX * sizeof(*tcounters));
	for (size_t i = 0; i < m->energy.len; i++) {
		uint64_t e[2] = { m->energy.items[i].time_ns, m->energy.items[i].energy_uj };

		save_records_put(s, SAVE_ENERGY, e, sizeof(e));
	}
	t.f = open_memstream(&t.buf, &t.len);
	text_add(&t, "collector_cpu_ns", "%" PRIu64, run->collector_cpu_ns);
	text_add(&t, "bpf_run_ns", "%" PRIu64, run->bpf_run_ns);
	text_add(&t, "cpus", "%d", cpus);
	/* each event's samples the kernel could not deliver, in event order */
	for (size_t i = 0; i < m->events.len; i++)
		text_add(&t, "event_lost", "%" PRIu64, m->events.items[i].lost);
	text_put(s, SAVE_END, &t);
}

void save_records_close(struct save_records *s)
{
	if (!s)
		return;
	if (fclose(s->f) != 0 && !s->err)
		s->err = errno ? errno : EIO;
	if (s->err)
		fprintf(stderr, "collector: %s=%s: writing the file failed: %s\n", SAVE_RECORDS_ENV,
			s->path, strerror(s->err));
	free(s->path);
	free(s);
}

void save_records_func_stats(void *ctx, const struct collector_func_key *key,
			     const struct collector_func_stats *fs)
{
	struct save_func_stats *sf = ctx;
	unsigned char item[sizeof(*key) + sizeof(*fs)];

	memcpy(item, key, sizeof(*key));
	memcpy(item + sizeof(*key), fs, sizeof(*fs));
	save_records_put(sf->save, SAVE_FUNC_STATS, item, sizeof(item));
	decode_func_stats(sf->m, key, fs);
}
