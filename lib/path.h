/* SPDX-License-Identifier: GPL-2.0 */
/* Finding a command the way execvp(3) does, and a library in the
 * directories ld.so searches. */
#ifndef COLLECTOR_PATH_H
#define COLLECTOR_PATH_H

#include <stddef.h>

/* 0 when path is a file we may execute; -ENOENT, -EISDIR, -EACCES... */
int path_check_executable(const char *path);

/* The path execvp would run for argv0 (malloc'd), or NULL. */
char *path_find_command(const char *argv0);

/* The directories ld.so searches on this system (Debian's ld.so.conf,
 * then its built-in ones), in its order: the one list every part that
 * looks for a library by name uses. */
extern const char *const path_library_dirs[];

/* The first regular file `name` in path_library_dirs, written to out
 * (size bytes); 0, or -ENOENT.  A name with a '/' is taken as it is. */
int path_find_library(const char *name, char *out, size_t size);

#endif /* COLLECTOR_PATH_H */
