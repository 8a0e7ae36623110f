// SPDX-License-Identifier: GPL-2.0
/* Kernel addresses named by the kernel (kernel_names.h). */
#include "loader/kernel_names.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/kernel_names.h"
#include "kernel_names.skel.h"

struct kernel_names {
	struct kernel_names_bpf *skel;
	bool tried;
	int err;             /* why it cannot be used, once tried */
};

struct kernel_names *kernel_names_new(void)
{
	return calloc(1, sizeof(struct kernel_names));
}

void kernel_names_free(struct kernel_names *k)
{
	if (!k)
		return;
	kernel_names_bpf__destroy(k->skel);
	free(k);
}

static int run(struct kernel_names *k)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	if (bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.kernel_names), &opts) != 0)
		return -errno;
	return opts.retval == 0 ? 0 : -EIO;
}

/* Loaded at the first call (about 2 ms); a failure is kept. */
static int ready(struct kernel_names *k)
{
	if (k->tried)
		return k->err;
	k->tried = true;
	k->skel = kernel_names_bpf__open_and_load();
	if (!k->skel)
		k->err = -errno ? -errno : -EINVAL;
	else if ((k->err = run(k)) != 0 || !k->skel->bss->stext) {
		k->err = k->err ? k->err : -ENOENT;
	}
	if (k->err) {
		kernel_names_bpf__destroy(k->skel);
		k->skel = NULL;
	}
	return k->err;
}

int kernel_names_lookup(void *ctx, uint64_t addr, char *text, size_t size)
{
	struct kernel_names *k = ctx;
	int err = ready(k);

	if (err)
		return err;
	k->skel->bss->addrs[0] = addr;
	k->skel->bss->n_addrs = 1;
	k->skel->bss->names[0][0] = '\0';
	err = run(k);
	if (err)
		return err;
	if (!memchr(k->skel->bss->names[0], '\0', COLLECTOR_KNAMES_LEN - 1))
		return -ENAMETOOLONG; /* cut: taken as not named */
	snprintf(text, size, "%s", k->skel->bss->names[0]);
	return 0;
}

int kernel_names_text(void *ctx, uint64_t *start, uint64_t *end)
{
	struct kernel_names *k = ctx;
	int err = ready(k);

	if (err)
		return err;
	*start = k->skel->bss->stext;
	*end = k->skel->bss->etext;
	return 0;
}
