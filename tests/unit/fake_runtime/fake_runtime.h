/* SPDX-License-Identifier: GPL-2.0 */
/*
 * "Fake": a language runtime that exists only for the tests, added through
 * the runtimes' interface alone (runtimes/runtime.h): this folder is all
 * of it, and no file of the engine names it.  It takes the test program
 * itself for its interpreter (the image whose file is /proc/self/exe's, told
 * by the file the image's record opened, read once a record),
 * and its frames, of a kind no other runtime uses, stand where a walk put
 * them among the native frames, as a JIT runtime's would:
 *
 *   bits 60-63  FAKE_FRAME_KIND
 *   bits 32-47  the line
 *   bits 0-31   the function: an index of fake_functions[], or past it
 *               for a function whose name cannot be read (gone)
 *
 * Spin.loop at line 24 is a compiled frame with Spin.turn inlined at that
 * call (at Spin.turn's line 12).  A process runs Fake when its executable
 * is the test program's (present()).
 */
#ifndef COLLECTOR_TEST_FAKE_RUNTIME_H
#define COLLECTOR_TEST_FAKE_RUNTIME_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtimes/runtime.h"

#define FAKE_FRAME_KIND 0x7u
#define FAKE_FRAME(fn, line) \
	((uint64_t)FAKE_FRAME_KIND << COLLECTOR_FRAME_KIND_SHIFT | (uint64_t)(line) << 32 | (fn))
#define FAKE_STAT_UNNAMED "fake_frames_unnamed"

static const struct {
	const char *name, *file;
	uint32_t first_line;
} fake_functions[] = {
	{ "Spin.turn", "/srv/fake/spin.fk", 10 },
	{ "Spin.loop", "/srv/fake/spin.fk", 20 },
	{ "main", "/srv/fake/main.fk", 1 },
};

struct fake_instance {
	char exe[4096];
	dev_t exe_dev;            /* the test program's file */
	ino_t exe_ino;
	pid_t walked;             /* the one process found, or 0 */
	unsigned int told;        /* mapped() calls with the test program's file */
	unsigned int images_read; /* files read (at a record's first telling) */
	unsigned int named;       /* frames named */
	bool no_walk;             /* opened unwalked (runtime_env's no_walk) */
};

/* pid's executable, "" when it cannot be read */
static void fake_exe_of(pid_t pid, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, size - 1);
	buf[n > 0 ? n : 0] = 0;
}

static bool fake_present(pid_t pid)
{
	char exe[4096], mine[4096];

	fake_exe_of(pid, exe, sizeof(exe));
	fake_exe_of(getpid(), mine, sizeof(mine));
	return exe[0] && !strcmp(exe, mine);
}

static void *fake_open(const struct runtime_env *env)
{
	struct fake_instance *fi = calloc(1, sizeof(*fi));
	struct stat st;

	if (!fi)
		return NULL;
	fake_exe_of(getpid(), fi->exe, sizeof(fi->exe));
	if (stat(fi->exe, &st) == 0) {
		fi->exe_dev = st.st_dev;
		fi->exe_ino = st.st_ino;
	}
	fi->no_walk = env->no_walk;
	return fi;
}

static void fake_close(void *inst)
{
	free(inst);
}

/* The image is the interpreter when its file (the record's, opened once)
 * is the test program's; what it is, is read at the record's first
 * telling and kept in the runtime's word of the image (1: it, 2: not).
 * The process walked is marked in its own record's word (1). */
static int fake_mapped(void *inst, const struct proc_ref *p, const struct runtime_image *img)
{
	struct fake_instance *fi = inst;
	uint32_t is;

	if (!img->file || !img->slot)
		return 0;
	if (!*img->slot) {
		fi->images_read++;
		*img->slot = img->file->dev == fi->exe_dev && img->file->inode == fi->exe_ino ? 1
											      : 2;
	}
	is = *img->slot;
	if (is != 1)
		return 0;
	fi->told++;
	if (fi->walked)
		return 0;
	fi->walked = p->pid;
	*p->slot = 1;
	return 1;
}

/* the process walked: by its record, and still the one (a test may say
 * another is, fi->walked) */
static bool fake_known(const void *inst, const struct proc_ref *p)
{
	return *p->slot == 1 && ((const struct fake_instance *)inst)->walked == p->pid;
}

static int fake_frame_name(void *inst, const struct proc_ref *p, uint64_t frame,
			   struct runtime_frame *out, uint32_t max)
{
	struct fake_instance *fi = inst;
	uint32_t fn = (uint32_t)frame;

	if (!fake_known(inst, p) || fn >= sizeof(fake_functions) / sizeof(fake_functions[0]) || !max)
		return -EFAULT;
	fi->named++;
	out->function = fake_functions[fn].name;
	out->file = fake_functions[fn].file;
	out->first_line = fake_functions[fn].first_line;
	out->line = (uint32_t)(frame >> 32) & 0xffff;
	/* Spin.loop compiled, at its line 24 a call of Spin.turn inlined,
	 * whose line 12 the frame is in: two functions, innermost first */
	if (fn == 1 && out->line == 24 && max >= 2) {
		out[1] = out[0];
		out[0].function = fake_functions[0].name;
		out[0].file = fake_functions[0].file;
		out[0].first_line = fake_functions[0].first_line;
		out[0].line = 12;
		return 2;
	}
	return 1;
}

static uint64_t fake_unnamed_key(uint64_t frame)
{
	return (uint32_t)frame;
}

static const struct runtime_ops fake_runtime = {
	.name = "fake",
	.image = "[fake]",
	.frame_type = "fake",
	.frame_kind = FAKE_FRAME_KIND,
	.unnamed_stat = FAKE_STAT_UNNAMED,
	.present = fake_present,
	.open = fake_open,
	.close = fake_close,
	.mapped = fake_mapped,
	.known = fake_known,
	.has = fake_known,
	.frame_name = fake_frame_name,
	.unnamed_key = fake_unnamed_key,
};

#endif /* COLLECTOR_TEST_FAKE_RUNTIME_H */
