// SPDX-License-Identifier: GPL-2.0
/* Callgrind profiles in `collector dump`: recognizing one, and printing what
 * the reader (callgrind_reader.h) parsed, record by record. */
#include "formats/callgrind/callgrind.h"
#include "formats/callgrind/callgrind_parser.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool callgrind_recognize(const char *path, const unsigned char *head, size_t n)
{
	static const char magic[] = "# callgrind format";
	size_t lim = n < KCACHEGRIND_SNIFF_BYTES ? n : KCACHEGRIND_SNIFF_BYTES;

	(void)path;
	if (n >= sizeof(magic) - 1 && !memcmp(head, magic, sizeof(magic) - 1))
		return true;
	/* Files without the format line (older Callgrind, Cachegrind): as
	 * KCachegrind, look for "events:" at a line start, and insist that
	 * the file is text. */
	for (size_t i = 0; i < lim; i++) {
		if (head[i] == 0)
			return false;
		if ((i == 0 || head[i - 1] == '\n') && lim - i >= 7 &&
		    !memcmp(head + i, "events:", 7))
			return true;
	}
	return false;
}

static void print_costs(FILE *out, const struct callgrind_profile *p, const uint64_t *c)
{
	for (size_t i = 0; i < p->n_events; i++)
		fprintf(out, " %s=%llu", p->events[i], (unsigned long long)c[i]);
}

int callgrind_dump(const char *path, FILE *out, bool check)
{
	struct callgrind_profile p;
	struct format_error err;
	int ret;

	ret = callgrind_read_file(path, &p, &err);
	if (ret)
		return format_report(path, ret, &err);
	if (check)
		goto done;
	fprintf(out, "format: callgrind, version %u%s\n", p.version,
		p.has_format_line ? "" : " (no '# callgrind format' line)");
	fprintf(out, "creator: %s\n", p.creator ? p.creator : "(none)");
	if (p.has_pid)
		fprintf(out, "pid: %llu\n", (unsigned long long)p.pid);
	fprintf(out, "cmd: %s\n", p.cmd ? p.cmd : "(none)");
	fprintf(out, "positions:%s%s\n", p.pos_instr ? " instr" : "", p.pos_line ? " line" : "");
	for (size_t i = 0; i < p.n_events; i++)
		fprintf(out, "event %zu: %s%s%s\n", i, p.events[i], p.event_long[i] ? " : " : "",
			p.event_long[i] ? p.event_long[i] : "");
	for (size_t i = 0; i < p.n_desc; i++)
		fprintf(out, "desc: %s: %s\n", p.desc[i].type, p.desc[i].value);
	if (p.summary) {
		fprintf(out, "summary:");
		print_costs(out, &p, p.summary);
		fputc('\n', out);
	}
	if (p.totals) {
		fprintf(out, "totals:");
		print_costs(out, &p, p.totals);
		fputc('\n', out);
	}
	fprintf(out, "records: %zu, jumps: %zu\n", p.n_records, p.n_jumps);
	for (size_t i = 0; i < p.n_records; i++) {
		const struct callgrind_record *r = &p.records[i];

		fprintf(out, "%s ob=%s fl=%s", r->kind == CALLGRIND_CALL ? "call" : "cost",
			callgrind_name(&p, r->object), callgrind_name(&p, r->fn_file));
		if (r->file != r->fn_file)
			fprintf(out, " fi=%s", callgrind_name(&p, r->file));
		fprintf(out, " fn=%s", callgrind_name(&p, r->function));
		if (p.pos_instr)
			fprintf(out, " instr=0x%llx", (unsigned long long)r->addr);
		if (p.pos_line)
			fprintf(out, " line=%llu", (unsigned long long)r->line);
		if (r->kind == CALLGRIND_CALL) {
			fprintf(out, " -> cob=%s cfi=%s cfn=%s calls=%llu",
				callgrind_name(&p, r->called_object),
				callgrind_name(&p, r->called_file),
				callgrind_name(&p, r->called_function),
				(unsigned long long)r->calls);
			if (p.pos_instr)
				fprintf(out, " target=0x%llx", (unsigned long long)r->target_addr);
			if (p.pos_line)
				fprintf(out, " target_line=%llu",
					(unsigned long long)r->target_line);
		}
		print_costs(out, &p, callgrind_record_costs(&p, r));
		fputc('\n', out);
	}
done:
	callgrind_profile_free(&p);
	if (ferror(out))
		return -EIO;
	return 0;
}
