/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one reader of another process's memory (process_vm_readv): the
 * language runtimes read what their frames name (a CPython code object, a
 * HotSpot Method) through it, the process never stopped.  Needs the
 * ptrace access that root has.
 */
#ifndef COLLECTOR_PROCMEM_H
#define COLLECTOR_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads size bytes at addr of process pid into buf, all or nothing: 0,
 * -ESRCH when the process is gone, -EFAULT when any byte is unmapped. */
int proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t size);

#endif /* COLLECTOR_PROCMEM_H */
