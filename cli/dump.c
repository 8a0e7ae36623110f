// SPDX-License-Identifier: GPL-2.0
/*
 * `collector dump [--check] FILE|DIR...`: recognizes each file's format by
 * its content and prints it as text (or, with --check, only validates it)
 * through the formats' readers.  A directory is either a format of its
 * own (an HPCToolkit database) or a collector output directory, whose files
 * are dumped one after another.
 */
#include "cli/dump.h"

#include <argp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/registry.h"
#include "session/options.h"
#include "loader/privileges.h"

struct dump_args {
	bool check;
	char **paths;
	int n_paths;
};

static const struct argp_option dump_options[] = {
	{ "check", 'c', NULL, 0, "Validate only: print nothing, exit non-zero at the first "
	  "violation", 0 },
	{ 0 },
};

static error_t parse_dump_opt(int key, char *arg, struct argp_state *state)
{
	struct dump_args *a = state->input;

	(void)arg;
	switch (key) {
	case 'c':
		a->check = true;
		break;
	case ARGP_KEY_ARGS:
		a->paths = state->argv + state->next;
		a->n_paths = state->argc - state->next;
		break;
	case ARGP_KEY_NO_ARGS:
		fprintf(stderr, "collector dump: name a file or directory to dump\n");
		argp_usage(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct format *recognize(const char *path, bool is_dir)
{
	unsigned char head[512];
	ssize_t n = 0;

	if (!is_dir) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return NULL;
		n = read(fd, head, sizeof(head));
		close(fd);
		if (n < 0)
			n = 0;
	}
	return formats_recognize(path, head, n);
}

static int dump_path(const char *path, bool check, int depth);

/* A collector output directory: every file and format directory in it. */
static int dump_directory(const char *path, bool check, int depth)
{
	struct dirent **names;
	int n, rc = 0, dumped = 0;

	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "collector dump: cannot read %s: %s\n", path, strerror(errno));
		return EXIT_BAD_FILE;
	}
	for (int i = 0; i < n; i++) {
		char child[4096];
		struct stat st;

		if (names[i]->d_name[0] == '.' || strstr(names[i]->d_name, ".tmp")) {
			free(names[i]);
			continue;
		}
		snprintf(child, sizeof(child), "%s/%s", path, names[i]->d_name);
		free(names[i]);
		if (lstat(child, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode) || recognize(child, false)) {
			int r = dump_path(child, check, depth + 1);

			if (r && !rc)
				rc = r;
			dumped++;
		}
	}
	free(names);
	if (!dumped && depth == 0) {
		fprintf(stderr, "collector dump: %s holds no file in a known format\n", path);
		return EXIT_BAD_FILE;
	}
	return rc;
}

static int dump_path(const char *path, bool check, int depth)
{
	const struct format *fmt;
	struct stat st;
	int err;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "collector dump: cannot open %s: %s\n", path, strerror(errno));
		return EXIT_BAD_FILE;
	}
	fmt = recognize(path, S_ISDIR(st.st_mode));
	if (!fmt && S_ISDIR(st.st_mode)) {
		if (depth > 2)
			return 0;
		return dump_directory(path, check, depth);
	}
	if (!fmt) {
		fprintf(stderr, "collector dump: %s: not a file in a format collector knows "
			"(%s)\n", path, formats_names());
		return EXIT_BAD_FILE;
	}
	if (!check)
		printf("==> %s (%s)\n", path, fmt->name);
	err = fmt->dump(path, stdout, check);
	if (err) {
		fprintf(stderr, "collector dump: %s is not a valid %s file\n", path, fmt->name);
		return EXIT_BAD_FILE;
	}
	if (check)
		printf("%s: valid %s\n", path, fmt->name);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const char doc[] = "Print collector's output files as text, or validate them.\v"
		"FILE is recognized by its content; a DIR is an HPCToolkit database or a "
		"collector output directory. Exit code 7 on a malformed or unknown file.";
	const struct argp argp = { dump_options, parse_dump_opt, "FILE|DIR...", doc,
				   NULL, NULL, NULL };
	struct dump_args a = { 0 };
	struct invoking_user user;
	int rc = 0, err;

	/* dump reads only the files the user names, and needs no privilege:
	 * under sudo or capabilities it keeps none, and reads as the user */
	if (invoking_user_get(&user) != 0)
		return EXIT_USAGE;
	if ((err = privileges_drop(&user)) != 0) {
		fprintf(stderr, "collector dump: cannot drop privileges: %s\n", strerror(-err));
		return EXIT_NO_PRIVILEGE;
	}
	argp_err_exit_status = EXIT_USAGE;
	if (argp_parse(&argp, argc, argv, 0, NULL, &a))
		return EXIT_USAGE;
	for (int i = 0; i < a.n_paths; i++) {
		int r = dump_path(a.paths[i], a.check, 0);

		if (r && !rc)
			rc = r;
		if (r && a.check)
			break; /* the first violation ends a check */
	}
	return rc;
}
