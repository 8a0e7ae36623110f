// SPDX-License-Identifier: GPL-2.0
/* Function symbols of an image by name, for --trace (symbolize.h). */
#include "symbols/symbolize_internal.h"

#include <errno.h>
#include <fnmatch.h>

struct match_ctx {
	struct sym_image *si;
	const char *glob;
	int (*fn)(void *ctx, const struct symbolizer_symbol *sym);
	void *ctx;
	int count;
};

static int match_cb(void *ctx, const char *name, const GElf_Sym *sym)
{
	struct match_ctx *c = ctx;
	struct symbolizer_symbol out;
	int ret;

	if (fnmatch(c->glob, name, 0))
		return 0;
	out.name = name;
	out.addr = sym->st_value;
	out.size = sym->st_size;
	/* offsets come from the file itself: a debug file's segments hold no bytes */
	if (!elf_file_vaddr_to_offset(&c->si->file, sym->st_value, &out.file_offset))
		return 0;
	ret = c->fn(c->ctx, &out);
	if (ret < 0)
		return ret;
	c->count++;
	return 0;
}

int symbolizer_match_functions(struct symbolizer *s, uint32_t image, const char *glob,
			       int (*fn)(void *ctx, const struct symbolizer_symbol *sym),
			       void *ctx)
{
	struct sym_image *si = sym_get_image(s, image);
	struct match_ctx c = { si, glob, fn, ctx, 0 };
	int ret;

	if (image == s->kernel_image && image != MODEL_NONE)
		return -EOPNOTSUPP;
	if (!si || !si->opened || !si->sym_scn)
		return 0;
	ret = elf_file_for_each_function(si->sym_file, si->sym_scn, match_cb, &c);
	return ret < 0 ? ret : c.count;
}
