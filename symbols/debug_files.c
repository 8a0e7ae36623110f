// SPDX-License-Identifier: GPL-2.0
/*
 * Separate debug files: by build-id under the debug root, by
 * .gnu_debuglink beside the file, in .debug/ beside it and under the debug
 * root (as gdb looks), and the dwz supplementary file that a debug file
 * names in .gnu_debugaltlink.  Files of another mount namespace are looked
 * for there first.
 */
#include "symbols/debug_files.h"
#include "symbols/symbolize_internal.h"

#include <errno.h>
#include <unistd.h>

/*
 * Files of another mount namespace are opened through /proc/PID/root; so
 * are the debug files beside them.  "/proc/PID/root" for an open_path
 * under /proc/PID/map_files or /proc/PID/root, else "".
 */
char *sym_namespace_prefix(const char *open_path)
{
	const char *p;
	char buf[64];
	size_t digits;

	if (!open_path || strncmp(open_path, "/proc/", 6))
		return xstrdup("");
	p = open_path + 6;
	digits = strspn(p, "0123456789");
	if (!digits || digits > 20 ||
	    (strncmp(p + digits, "/map_files/", 11) && strncmp(p + digits, "/root/", 6)))
		return xstrdup("");
	snprintf(buf, sizeof(buf), "/proc/%.*s/root", (int)digits, p);
	return xstrdup(buf);
}

static bool same_build_id(const struct elf_file *a, const uint8_t *id, size_t len)
{
	return a->build_id_len == len && !memcmp(a->build_id, id, len);
}

bool debug_file_try(const struct elf_file *f, const char *candidate, bool check_crc,
		    uint32_t crc, struct elf_file *debug)
{
	struct elf_file d;

	if (access(candidate, R_OK))
		return false;
	if (elf_file_open(&d, candidate))
		return false;
	if ((d.dev == f->dev && d.inode == f->inode) ||
	    (f->build_id_len && d.build_id_len && !same_build_id(&d, f->build_id, f->build_id_len)) ||
	    (check_crc && elf_file_crc32(&d) != crc)) {
		elf_file_close(&d);
		return false;
	}
	*debug = d;
	return true;
}

/* The symbolizer's: the debug file of si->file into si->debug. */
bool sym_try_debug_file(struct sym_image *si, const char *candidate, bool check_crc,
			uint32_t crc)
{
	if (!debug_file_try(&si->file, candidate, check_crc, crc, &si->debug))
		return false;
	si->has_debug = true;
	return true;
}

static int build_id_path(char *buf, size_t size, const char *prefix, const char *root,
			 const uint8_t *id, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	char rest[2 * ELFINFO_MAX_BUILD_ID + 1];
	size_t i;
	int n;

	if (len < 2 || len > ELFINFO_MAX_BUILD_ID)
		return -EINVAL;
	for (i = 1; i < len; i++) {
		rest[2 * (i - 1)] = hex[id[i] >> 4];
		rest[2 * (i - 1) + 1] = hex[id[i] & 15];
	}
	rest[2 * (len - 1)] = '\0';
	n = snprintf(buf, size, "%s%s/.build-id/%02x/%s.debug", prefix, root, id[0], rest);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* The directory part of path ("." when none, "" for the root). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return xstrdup(".");
	return xstrndup(path, (size_t)(slash - path));
}

char *debug_file_find(const struct elf_file *f, const char *path, const char *ns_prefix,
		      const char *debug_root, struct elf_file *debug)
{
	const char *roots[2] = { "", ns_prefix };
	char cand[4096];
	const char *link;
	uint32_t crc;

	for (int r = 0; r < (ns_prefix[0] ? 2 : 1); r++) {
		if (f->build_id_len &&
		    !build_id_path(cand, sizeof(cand), roots[r], debug_root, f->build_id,
				   f->build_id_len) &&
		    debug_file_try(f, cand, false, 0, debug))
			return xstrdup(cand);
	}
	if (elf_file_debuglink(f, &link, &crc) && !strchr(link, '/')) {
		char *dir = dir_of(path);
		const char *sep = dir[0] == '/' || !dir[0] ? "" : "/";
		char *found = NULL;

		if ((size_t)snprintf(cand, sizeof(cand), "%s%s/%s", ns_prefix, dir, link) <
			    sizeof(cand) &&
		    debug_file_try(f, cand, true, crc, debug))
			found = xstrdup(cand);
		else if ((size_t)snprintf(cand, sizeof(cand), "%s%s/.debug/%s", ns_prefix, dir,
					  link) < sizeof(cand) &&
			 debug_file_try(f, cand, true, crc, debug))
			found = xstrdup(cand);
		else if ((size_t)snprintf(cand, sizeof(cand), "%s%s%s/%s", debug_root, sep, dir,
					  link) < sizeof(cand) &&
			 debug_file_try(f, cand, true, crc, debug))
			found = xstrdup(cand);
		free(dir);
		return found;
	}
	return NULL;
}

/* The symbolizer's: a local debug file, then one from the debuginfod
 * servers of DEBUGINFOD_URLS.  Returns the path used. */
char *sym_find_debug_file(struct symbolizer *s, struct sym_image *si, const char *path)
{
	char *found = debug_file_find(&si->file, path, si->ns_prefix, s->debug_root, &si->debug);

	if (found) {
		si->has_debug = true;
		return found;
	}
	return sym_debuginfod_fetch(s, si);
}

/* Attaches the dwz supplementary file named by .gnu_debugaltlink. */
void sym_open_alt(struct symbolizer *s, struct sym_image *si, const struct elf_file *f)
{
	const char *alt_path;
	const uint8_t *bid;
	size_t bid_len;
	char cand[4096];
	bool ok = false;

	if (!elf_file_debugaltlink(f, &alt_path, &bid, &bid_len))
		return;
	if (alt_path[0] == '/') {
		ok = (size_t)snprintf(cand, sizeof(cand), "%s%s", si->ns_prefix, alt_path) <
			     sizeof(cand) &&
		     !elf_file_open(&si->alt, cand);
	} else {
		char *dir = dir_of(si->dwarf_path);

		ok = (size_t)snprintf(cand, sizeof(cand), "%s/%s", dir, alt_path) < sizeof(cand) &&
		     !elf_file_open(&si->alt, cand);
		free(dir);
	}
	if (ok && !same_build_id(&si->alt, bid, bid_len)) {
		elf_file_close(&si->alt);
		ok = false;
	}
	if (!ok && !build_id_path(cand, sizeof(cand), "", s->debug_root, bid, bid_len))
		ok = !elf_file_open(&si->alt, cand);
	if (!ok)
		return;
	si->has_alt = true;
	si->alt_dwarf = dwarf_begin_elf(si->alt.elf, DWARF_C_READ, NULL);
	if (si->alt_dwarf)
		dwarf_setalt(si->dwarf, si->alt_dwarf);
}
