// SPDX-License-Identifier: GPL-2.0
/* OTLP profiles as a format: OUT/profiles.otlp.pb and `collector dump`
 * (otlp.h). */
#include "formats/otlp/otlp.h"

#include <stdlib.h>
#include <string.h>

#include "formats/otlp/otlp_reader.h"

int otlp_write(const struct model *m, const struct export_options *opts)
{
	struct outfile f;
	uint8_t *buf = NULL;
	size_t len = 0;
	int err = otlp_encode(m, &buf, &len);

	if (err) {
		fprintf(stderr, "collector: %s/%s: %s\n", opts->dir, OTLP_FILE, strerror(-err));
		return err;
	}
	err = outfile_open(&f, opts, OTLP_FILE);
	if (!err) {
		err = outfile_write(&f, buf, len);
		if (err)
			outfile_abort(&f);
		else
			err = outfile_commit(&f);
	}
	free(buf);
	return err;
}

/* By name: a protobuf message has no magic to tell it by (a gzip'd one
 * would be taken for pprof's). */
bool otlp_recognize(const char *path, const unsigned char *head, size_t n)
{
	size_t len = strlen(path);

	(void)head;
	(void)n;
	return len >= 8 && (!strcmp(path + len - 8, ".otlp.pb") ||
			    (len >= 11 && !strcmp(path + len - 11, ".otlp.pb.gz")) ||
			    (len >= 5 && !strcmp(path + len - 5, ".otlp")) ||
			    (len >= 8 && !strcmp(path + len - 8, ".otlp.gz")));
}

int otlp_dump(const char *path, FILE *out, bool check)
{
	FORMAT_DUMP(struct otlp_request, otlp_read_file, otlp_print, otlp_request_free, path, out,
		    check);
}

const struct format otlp_format = {
	.name = "otlp",
	.needs = FORMAT_NEEDS_SAMPLES,
	.write = otlp_write,
	.recognize = otlp_recognize,
	.dump = otlp_dump,
};
