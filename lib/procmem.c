// SPDX-License-Identifier: GPL-2.0
#include "lib/procmem.h"

#include <errno.h>
#include <sys/uio.h>

int proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t size)
{
	struct iovec local = { buf, size }, remote = { (void *)(uintptr_t)addr, size };
	ssize_t n;

	if (size == 0)
		return 0;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)size)
		return 0;
	if (n < 0 && errno == ESRCH)
		return -ESRCH;
	return -EFAULT;
}
