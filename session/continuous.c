// SPDX-License-Identifier: GPL-2.0
/* Continuous runs: a complete set of files per interval (continuous.h). */
#include "session/continuous.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "session/push.h"
#include "formats/registry.h"

void continuous_start(struct continuous *c, double interval_s, uint64_t start_ktime_ns)
{
	memset(c, 0, sizeof(*c));
	c->interval_ns = (uint64_t)(interval_s * 1e9);
	c->start_ktime_ns = start_ktime_ns;
	c->end_ktime_ns = start_ktime_ns + c->interval_ns;
}

bool continuous_due(const struct continuous *c, uint64_t now_ktime_ns)
{
	return c->interval_ns && now_ktime_ns >= c->end_ktime_ns;
}

int continuous_wait_ms(const struct continuous *c, uint64_t now_ktime_ns, int max_ms)
{
	uint64_t end = c->end_ktime_ns;

	if (!c->interval_ns)
		return max_ms;
	if (now_ktime_ns >= end)
		return 0;
	/* rounded up, so that the wake-up finds the interval over */
	if ((end - now_ktime_ns + 999999) / 1000000 < (uint64_t)max_ms)
		return (int)((end - now_ktime_ns + 999999) / 1000000);
	return max_ms;
}

/* 20261123T141500Z: the UTC start of an interval's slot (the run's start
 * plus whole intervals), to the second.  Intervals are at least a second
 * long, so two slots never share a name, where two actual starts could: a
 * cut late by more than half an interval leaves the next interval short,
 * and two intervals began in one second, their files in one folder
 * (test_otlp_faults under ASan: 4 intervals, 3 folders). */
static void interval_name(char *buf, size_t size, uint64_t epoch_ns)
{
	time_t t = (time_t)(epoch_ns / 1000000000ULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, size, "%Y%m%dT%H%M%SZ", &tm);
}

/* The interval's window in the model while its files are written. */
static void set_window(struct model *m, uint64_t start_ktime, uint64_t end_ktime)
{
	m->run.start_ktime_ns = start_ktime;
	m->run.end_ktime_ns = end_ktime;
	m->run.start_ns = start_ktime + m->run.ktime_to_epoch_ns;
	m->run.end_ns = end_ktime + m->run.ktime_to_epoch_ns;
}

int continuous_write(struct continuous *c, struct model *m, unsigned int mask,
		     const struct export_options *eo, uint64_t end_ktime_ns,
		     const char *spill_dir, bool last)
{
	struct model_run whole = m->run;
	struct export_options io = *eo;
	char name[32], dir[4096 + 32];
	int err;

	model_seal_events(m); /* an I/O error there is counted as lost events */
	model_sort_by_time(m);
	model_events_tally(m);
	set_window(m, c->start_ktime_ns, end_ktime_ns);
	interval_name(name, sizeof(name),
		      c->end_ktime_ns - c->interval_ns + m->run.ktime_to_epoch_ns);
	err = mask ? export_mkdir(eo, name) : 0;
	if (!err && mask) {
		snprintf(dir, sizeof(dir), "%s/%s", eo->dir, name);
		io.dir = dir;
		io.quiet = true; /* one line per interval, not per file */
		err = formats_write(m, mask, &io);
	}
	/* (an interval of blocked threads only has sums, and no sample) */
	if (c->push && model_sample_count(m) + model_sum_records(m))
		push_model(c->push, m); /* a failure is the push's to count and say */
	if (!eo->quiet && model_sum_records(m))
		fprintf(stderr, "collector: interval %s: %llu samples, %llu off-CPU sums%s\n",
			name, (unsigned long long)model_sample_count(m),
			(unsigned long long)model_sum_records(m),
			err ? " (not every file could be written)" : "");
	else if (!eo->quiet)
		fprintf(stderr, "collector: interval %s: %llu samples%s\n", name,
			(unsigned long long)model_sample_count(m),
			err ? " (not every file could be written)" : "");
	c->samples += model_sample_count(m);
	c->sums += model_sum_records(m);
	c->written++;
	if (err && !c->first_err)
		c->first_err = err;
	m->run = whole; /* the whole run's window again, for the summary */
	c->start_ktime_ns = end_ktime_ns;
	while (c->end_ktime_ns <= end_ktime_ns)
		c->end_ktime_ns += c->interval_ns;
	if (!last)
		model_drop_events(m, spill_dir);
	return err;
}
