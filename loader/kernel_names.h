/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel addresses named by the kernel's own kallsyms search, one at a
 * time, through a BPF syscall program (bpf/kernel_names.bpf.c) run on
 * demand: what a run with a few kernel frames needs, without reading and
 * sorting /proc/kallsyms whole (50 ms of CPU here, most of it the kernel
 * formatting 122 000 lines).  Loaded on first use; where it cannot be
 * (an older kernel without bpf_snprintf's %pS for syscall programs), every
 * call fails and the caller reads kallsyms instead.
 */
#ifndef COLLECTOR_KERNEL_NAMES_H_LOADER
#define COLLECTOR_KERNEL_NAMES_H_LOADER

#include <stddef.h>
#include <stdint.h>

struct kernel_names;

struct kernel_names *kernel_names_new(void);
void kernel_names_free(struct kernel_names *k);
/* The kernel's "%pS" of addr into text ("vfs_read+0x2f/0x1a0", with
 * " [module]" after it for a module): 0, or a negative errno. */
int kernel_names_lookup(void *k, uint64_t addr, char *text, size_t size);
/* The kernel text's bounds (_stext, _etext): 0, or a negative errno. */
int kernel_names_text(void *k, uint64_t *start, uint64_t *end);

#endif
