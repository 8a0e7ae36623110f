/* SPDX-License-Identifier: GPL-2.0 */
/* Whole writes to a file descriptor: the one loop over short writes and
 * EINTR that the model's spill files and the unwind tables' cache share. */
#ifndef COLLECTOR_FDIO_H
#define COLLECTOR_FDIO_H

#include <stddef.h>

/* Writes buf[0..n) to fd; 0, or a negative errno (-EIO when write(2)
 * writes nothing). */
int fd_write_all(int fd, const void *buf, size_t n);

#endif /* COLLECTOR_FDIO_H */
