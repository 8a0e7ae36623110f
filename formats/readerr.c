// SPDX-License-Identifier: GPL-2.0
/* The readers' errors (readerr.h). */
#include "formats/readerr.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

int reader_fail(struct reader_error *err, size_t offset, const char *fmt, ...)
{
	va_list ap;

	err->offset = offset;
	va_start(ap, fmt);
	vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int reader_report(const char *path, int rc, const struct reader_error *err)
{
	if (rc != -EINVAL)
		fprintf(stderr, "%s: %s\n", path, strerror(-rc));
	else if (err->offset == READER_NO_OFFSET)
		fprintf(stderr, "%s: %s\n", path, err->reason);
	else
		fprintf(stderr, "%s: offset %zu: %s\n", path, err->offset, err->reason);
	return rc;
}
