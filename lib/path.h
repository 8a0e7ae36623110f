/* SPDX-License-Identifier: GPL-2.0 */
/* Finding a command the way execvp(3) does. */
#ifndef COLLECTOR_PATH_H
#define COLLECTOR_PATH_H

/* 0 when path is a file we may execute; -ENOENT, -EISDIR, -EACCES... */
int path_check_executable(const char *path);

/* The path execvp would run for argv0 (malloc'd), or NULL. */
char *path_find_command(const char *argv0);

#endif /* COLLECTOR_PATH_H */
