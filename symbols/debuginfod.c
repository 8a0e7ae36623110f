// SPDX-License-Identifier: GPL-2.0
/*
 * Debug files by build-id from debuginfod servers (libdebuginfod, from
 * elfutils): asked only when DEBUGINFOD_URLS names servers and no local
 * debug file matched.  The library keeps what it fetched, and what it
 * failed to find, in its cache ($DEBUGINFOD_CACHE_PATH, else
 * ~/.cache/debuginfod_client), so a second run asks nothing again.  A
 * server that does not answer costs at most DEBUGINFOD_TIMEOUT seconds
 * without progress (DEFAULT_TIMEOUT_S when the variable is unset, not the
 * library's 90) per image.
 */
#include "symbols/symbolize_internal.h"

#include <elfutils/debuginfod.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S "5"

char *sym_debuginfod_fetch(struct symbolizer *s, struct sym_image *si)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL, *found = NULL;
	int fd;

	if (!urls || !urls[0] || !si->file.build_id_len)
		return NULL;
	if (!s->debuginfod_tried) {
		s->debuginfod_tried = true;
		setenv("DEBUGINFOD_TIMEOUT", DEFAULT_TIMEOUT_S, 0);
		s->debuginfod = debuginfod_begin();
	}
	if (!s->debuginfod)
		return NULL;
	fd = debuginfod_find_debuginfo(s->debuginfod, si->file.build_id,
				       (int)si->file.build_id_len, &path);
	if (fd < 0)
		return NULL;
	close(fd);
	/* the same checks as a local file: its build-id is the image's */
	if (path && sym_try_debug_file(si, path, false, 0))
		found = xstrdup(path);
	free(path);
	return found;
}

void sym_debuginfod_end(struct symbolizer *s)
{
	if (s->debuginfod)
		debuginfod_end(s->debuginfod);
}
