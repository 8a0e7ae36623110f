/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by bpf/kernel_names.bpf.c and loader/kernel_names.c: how many
 * kernel addresses one run of the program names, and the room for each
 * name ("%pS": symbol+0xoffset/0xsize [module]; the kernel's names are at
 * most KSYM_NAME_LEN, 512, but a longer one than this is cut, and then
 * taken as not named).
 */
#ifndef COLLECTOR_KERNEL_NAMES_H
#define COLLECTOR_KERNEL_NAMES_H

#define COLLECTOR_KNAMES_BATCH 64
#define COLLECTOR_KNAMES_LEN 256

#endif /* COLLECTOR_KERNEL_NAMES_H */
