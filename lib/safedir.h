/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A directory the collector (often root) may write its own files in
 * without being led by anyone else: the unwind tables' cache, the OTLP
 * spool.
 *
 * The path must be absolute.  It is opened from "/" one component at a
 * time with O_NOFOLLOW (so no symlink is ever followed), and each
 * component, once open, must be a directory owned by root or by the
 * collector's effective user and writable by neither group nor others;
 * a sticky directory that is not the last (/tmp, /var/tmp) is allowed
 * writable, since there nobody can rename or remove another's entries.
 * The last component is made, 0755, when it is missing (its parent must
 * exist).  Checking each component after opening it (fstat on the open
 * descriptor, never stat on the name) leaves no window between the check
 * and the use.
 */
#ifndef COLLECTOR_SAFEDIR_H
#define COLLECTOR_SAFEDIR_H

#include <stddef.h>

/*
 * Returns an O_RDONLY|O_DIRECTORY|O_CLOEXEC descriptor of path, or -1
 * with errno set (ENOENT: a component above the last is missing; EPERM:
 * a component failed a check) and why (why_size bytes) saying which
 * component and what is wrong with it ("tmp: writable by group or
 * others", "spool: a symlink or not a directory").
 */
int safedir_open(const char *path, char *why, size_t why_size);

#endif /* COLLECTOR_SAFEDIR_H */
