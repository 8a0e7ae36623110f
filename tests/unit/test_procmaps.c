// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the /proc/PID/maps parser and reader. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/procmaps.h"

static int parse(const char *text, struct procmaps *out, size_t *bad)
{
	return procmaps_parse(text, strlen(text), out, bad);
}

static void test_typical(void **state)
{
	/* Shaped exactly as a kernel prints it (cat /proc/self/maps). */
	const char *text =
		"55663f084000-55663f086000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
		"55663f086000-55663f08b000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n"
		"556640e7c000-556640e9d000 rw-p 00000000 00:00 0                          [heap]\n"
		"7f1e2c000000-7f1e2c021000 rw-s 00000000 00:01 1034                       /dev/zero (deleted)\n"
		"7f1e2c400000-7f1e2c422000 rw-p 00000000 00:00 0 \n"
		"7f1e2c500000-7f1e2c501000 rw-p 00000000 00:00 0\n"
		"7ffd4c1f6000-7ffd4c1f8000 r-xp 00000000 00:00 0                          [vdso]\n"
		"7ffd4c1f8000-7ffd4c1f9000 r--p 00000000 00:00 0                          [anon:my name]\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";
	struct procmaps maps;
	size_t bad = 99;

	(void)state;
	assert_int_equal(parse(text, &maps, &bad), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(maps.n, 9);

	assert_true(maps.entries[0].start == 0x55663f084000ULL);
	assert_true(maps.entries[0].end == 0x55663f086000ULL);
	assert_true(maps.entries[0].read && !maps.entries[0].write && !maps.entries[0].exec);
	assert_false(maps.entries[0].shared);
	assert_int_equal(maps.entries[0].dev_major, 0xfe);
	assert_int_equal(maps.entries[0].dev_minor, 0);
	assert_int_equal(maps.entries[0].inode, 247134);
	assert_string_equal(maps.entries[0].path, "/usr/bin/cat");
	assert_true(procmap_is_file(&maps.entries[0]));

	assert_true(maps.entries[1].exec);
	assert_int_equal(maps.entries[1].pgoff, 0x2000);

	assert_string_equal(maps.entries[2].path, "[heap]");
	assert_false(procmap_is_file(&maps.entries[2]));

	assert_true(maps.entries[3].shared && maps.entries[3].write);
	assert_true(maps.entries[3].deleted);
	assert_string_equal(maps.entries[3].path, "/dev/zero");
	assert_int_equal(maps.entries[3].dev_minor, 1);

	assert_string_equal(maps.entries[4].path, "");
	assert_false(maps.entries[4].deleted);
	assert_string_equal(maps.entries[5].path, "");
	assert_string_equal(maps.entries[6].path, "[vdso]");
	assert_string_equal(maps.entries[7].path, "[anon:my name]");
	assert_true(maps.entries[8].start == 0xffffffffff600000ULL);
	assert_true(maps.entries[8].exec && !maps.entries[8].read);

	assert_ptr_equal(procmaps_find(&maps, 0x55663f086000ULL), &maps.entries[1]);
	assert_ptr_equal(procmaps_find(&maps, 0x55663f08afffULL), &maps.entries[1]);
	assert_null(procmaps_find(&maps, 0x55663f08b000ULL));
	assert_null(procmaps_find(&maps, 0x1000));
	assert_ptr_equal(procmaps_find(&maps, 0xffffffffff600abcULL), &maps.entries[8]);
	procmaps_free(&maps);
}

static void test_paths_and_widths(void **state)
{
	const char *text =
		/* 32-bit process, 8-digit addresses */
		"08048000-08049000 r-xp 00000000 08:01 1234       /opt/my app/bin/run me\n"
		/* a path that itself contains "(deleted)" in the middle, and is deleted */
		"08049000-0804a000 r--p 00001000 103:02 77 /tmp/a (deleted) b (deleted)\n"
		/* large major/minor, 64-bit offset */
		"7f0000000000-7f0000001000 r--s 1234567890abc000 fd:1ff 18446744073709551615 /x\n";
	struct procmaps maps;
	size_t bad;

	(void)state;
	assert_int_equal(parse(text, &maps, &bad), 0);
	assert_int_equal(maps.n, 3);
	assert_int_equal(maps.entries[0].start, 0x08048000);
	assert_string_equal(maps.entries[0].path, "/opt/my app/bin/run me");
	assert_false(maps.entries[0].deleted);
	assert_string_equal(maps.entries[1].path, "/tmp/a (deleted) b");
	assert_true(maps.entries[1].deleted);
	assert_int_equal(maps.entries[1].dev_major, 0x103);
	assert_int_equal(maps.entries[1].dev_minor, 2);
	assert_true(maps.entries[2].pgoff == 0x1234567890abc000ULL);
	assert_true(maps.entries[2].inode == UINT64_MAX);
	assert_int_equal(maps.entries[2].dev_minor, 0x1ff);
	assert_true(procmap_dev(&maps.entries[2]) == makedev(0xfd, 0x1ff));
	procmaps_free(&maps);

	/* empty input and a last line without newline */
	assert_int_equal(parse("", &maps, &bad), 0);
	assert_int_equal(maps.n, 0);
	procmaps_free(&maps);
	assert_int_equal(parse("1000-2000 r-xp 0 0:0 0 /a", &maps, &bad), 0);
	assert_int_equal(maps.n, 1);
	assert_string_equal(maps.entries[0].path, "/a");
	procmaps_free(&maps);
}

static void test_malformed(void **state)
{
	static const char *const bad_lines[] = {
		"",                                          /* empty line */
		"1000 r-xp 00000000 00:00 0 /a",             /* no end */
		"1000-2000 r-x 00000000 00:00 0 /a",         /* 3 perms */
		"1000-2000 r-xq 00000000 00:00 0 /a",        /* bad share flag */
		"1000-2000 rwxp 00000000 00:00 /a",          /* no inode */
		"1000-2000 rwxp 00000000 0000 0 /a",         /* dev without ':' */
		"2000-1000 rwxp 00000000 00:00 0 /a",        /* end < start */
		"10000000000000000-10000000000000001 r-xp 0 00:00 0 /a", /* > 64 bits */
		"1000-2000 rwxp 00000000 00:00 99999999999999999999 /a", /* inode overflow */
		"1000-2000 rwxp 00000000 00:00 12x /a",      /* junk after inode */
		"1000-2000 rwxp 0g 00:00 0 /a",              /* bad offset */
		"1000-2000  rwxp 0 00:00 0 /a",              /* double space */
		"1000-2000 rwxp 0 00:100000000 0 /a",        /* minor > 32 bits */
	};
	char text[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		struct procmaps maps;
		size_t bad = 0;

		snprintf(text, sizeof(text), "1000-2000 r-xp 00000000 00:00 0 /ok\n%s\n"
			 "3000-4000 r-xp 0 0:0 0 /ok\n", bad_lines[i]);
		assert_int_equal(parse(text, &maps, &bad), -EINVAL);
		if (bad != 2)
			fail_msg("line '%s': bad_line %zu", bad_lines[i], bad);
		assert_null(maps.entries);
		assert_int_equal(maps.n, 0);
	}
}

static void test_embedded_nul(void **state)
{
	static const char text[] = "1000-2000 r-xp 0 0:0 0 /a\0b\n";
	struct procmaps maps;
	size_t bad = 0;

	(void)state;
	assert_int_equal(procmaps_parse(text, sizeof(text) - 1, &maps, &bad), -EINVAL);
	assert_int_equal(bad, 1);
}

static void test_read_self(void **state)
{
	struct procmaps maps;
	const struct procmap_entry *e;
	char exe[4096], open_path[4200];
	ssize_t n;
	struct stat st;

	(void)state;
	assert_int_equal(procmaps_read(getpid(), &maps), 0);
	assert_true(maps.n > 3);
	/* The mapping of this very function is executable and names our binary. */
	e = procmaps_find(&maps, (uint64_t)(uintptr_t)&test_read_self);
	assert_non_null(e);
	assert_true(e->exec);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_string_equal(e->path, exe);
	assert_int_equal(stat(exe, &st), 0);
	assert_true(st.st_ino == e->inode);
	assert_true(st.st_dev == procmap_dev(e));
	for (size_t i = 1; i < maps.n; i++)
		assert_true(maps.entries[i].start >= maps.entries[i - 1].end);

	assert_int_equal(procmaps_open_path(getpid(), e, open_path, sizeof(open_path), NULL), 0);
	assert_int_equal(stat(open_path, &st), 0);
	assert_true(st.st_ino == e->inode);
	assert_int_equal(procmaps_open_path(getpid(), e, open_path, 10, NULL), -ENAMETOOLONG);
	procmaps_free(&maps);

	assert_int_equal(procmaps_read(0x7ffffff0, &maps), -ESRCH);
}

/* The kernel has PROCMAP_QUERY (Linux 6.11 and later). */
static bool kernel_has_query(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 11);
}

/* procmaps_read_exec lists what the text lists as executable, field for
 * field (but [vsyscall]): with a deleted file under a name with spaces and anonymous code
 * (a JIT's) mapped here for the test. */
static void test_read_exec(void **state)
{
	char path[] = "/tmp/procmaps exec XXXXXX";
	struct procmaps text, execs;
	void *file_code, *jit;
	size_t k = 0;
	bool deleted = false, anon = false;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	file_code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(file_code != MAP_FAILED);
	close(fd);
	unlink(path);
	jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(jit != MAP_FAILED);

	assert_int_equal(procmaps_read(getpid(), &text), 0);
	assert_int_equal(procmaps_read_exec(getpid(), &execs), 0);
	if (kernel_has_query())
		assert_true(procmaps_query_used());
	print_message("executable mappings %s\n",
		      procmaps_query_used() ? "asked of the kernel" : "read from the text");
	for (size_t i = 0; i < text.n; i++) {
		const struct procmap_entry *want = &text.entries[i], *got;

		/* the gate page is no mapping of the process's own */
		if (!want->exec || strcmp(want->path, "[vsyscall]") == 0)
			continue;
		assert_true(k < execs.n);
		got = &execs.entries[k++];
		assert_int_equal(got->start, want->start);
		assert_int_equal(got->end, want->end);
		assert_int_equal(got->pgoff, want->pgoff);
		assert_int_equal(got->dev_major, want->dev_major);
		assert_int_equal(got->dev_minor, want->dev_minor);
		assert_int_equal(got->inode, want->inode);
		assert_int_equal(got->read, want->read);
		assert_int_equal(got->write, want->write);
		assert_true(got->exec);
		assert_int_equal(got->shared, want->shared);
		assert_int_equal(got->deleted, want->deleted);
		assert_string_equal(got->path, want->path);
		deleted |= got->start == (uintptr_t)file_code && got->deleted &&
			   strcmp(got->path, path) == 0;
		anon |= got->start == (uintptr_t)jit && !got->path[0];
	}
	assert_int_equal(k, execs.n);
	assert_true(deleted);
	assert_true(anon);
	procmaps_free(&text);
	procmaps_free(&execs);
	munmap(file_code, 8192);
	munmap(jit, 4096);
}

/* An exited child not yet reaped lists no mapping; a reaped one is gone. */
static void test_read_exec_exited(void **state)
{
	struct procmaps maps;
	char stat_path[64], buf[256];
	pid_t child;
	int fd, status;
	bool zombie = false;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)child);
	/* waitid(WNOWAIT) returns once it is a zombie, and leaves it one */
	assert_int_equal(waitid(P_PID, (id_t)child, NULL, WEXITED | WNOWAIT), 0);
	fd = open(stat_path, O_RDONLY);
	assert_true(fd >= 0);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	zombie = strstr(buf, ") Z ") != NULL;
	assert_true(zombie);
	assert_int_equal(procmaps_read_exec(child, &maps), 0);
	assert_int_equal(maps.n, 0);
	procmaps_free(&maps);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(procmaps_read_exec(child, &maps), -ESRCH);
	assert_int_equal(procmaps_read_exec(0x7ffffff0, &maps), -ESRCH);
}

/* A mapping as a test places it: [start, end) of path, pgoff = start. */
static struct procmap_entry mapping(uint64_t start, uint64_t end, const char *path)
{
	return (struct procmap_entry){ .start = start, .end = end, .pgoff = start, .exec = true,
				       .path = (char *)path };
}

/* maps as "start-end:path@pgoff " for each entry, in buf */
static const char *listed(const struct procmaps *maps, char *buf, size_t size)
{
	size_t at = 0;

	buf[0] = 0;
	for (size_t i = 0; i < maps->n && at < size; i++)
		at += (size_t)snprintf(buf + at, size - at, "%lx-%lx:%s@%lx ",
				       (unsigned long)maps->entries[i].start,
				       (unsigned long)maps->entries[i].end, maps->entries[i].path,
				       (unsigned long)maps->entries[i].pgoff);
	return buf;
}

/* procmaps_place: a new mapping over old ones, as mmap(MAP_FIXED) makes
 * it; the list stays sorted, the pieces left keep their file offsets. */
static bool ends_with(const char *path, void *suffix)
{
	size_t n = strlen(path), k = strlen(suffix);

	return n >= k && !strcmp(path + n - k, suffix);
}

static bool any_file(const char *path, void *ctx)
{
	(void)ctx;
	return path[0] == '/';
}

/* A question asked of a process's executable mappings: the first file that
 * answers, in address order; none, -ENOENT; too long a path for out. */
static void test_find_exec_file(void **state)
{
	char exe[4096], found[4096], tiny[4];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	struct procmaps maps;
	const char *base;

	(void)state;
	assert_true(n > 0);
	exe[n] = 0;
	base = strrchr(exe, '/');
	assert_int_equal(procmaps_find_exec_file(getpid(), ends_with, (void *)base, found,
						 sizeof(found)), 0);
	assert_string_equal(found, exe);
	/* the first of them all: the lowest executable file mapping */
	assert_int_equal(procmaps_read_exec(getpid(), &maps), 0);
	for (size_t i = 0; i < maps.n; i++)
		if (procmap_is_file(&maps.entries[i])) {
			assert_int_equal(procmaps_find_exec_file(getpid(), any_file, NULL, found,
								 sizeof(found)), 0);
			assert_string_equal(found, maps.entries[i].path);
			break;
		}
	procmaps_free(&maps);
	assert_int_equal(procmaps_find_exec_file(getpid(), ends_with, "/no-such-lib.so", found,
						 sizeof(found)), -ENOENT);
	assert_int_equal(procmaps_find_exec_file(getpid(), ends_with, (void *)base, tiny,
						 sizeof(tiny)), -ENAMETOOLONG);
}

static void test_place(void **state)
{
	struct procmaps m = { 0 };
	struct procmap_entry e;
	char buf[512];

	(void)state;
	e = mapping(0x5000, 0x6000, "/b");
	assert_int_equal(procmaps_place(&m, &e), 0);
	e = mapping(0x1000, 0x3000, "/a");
	assert_int_equal(procmaps_place(&m, &e), 0);
	e = mapping(0x8000, 0x9000, "/c");
	assert_int_equal(procmaps_place(&m, &e), 0);
	assert_string_equal(listed(&m, buf, sizeof(buf)),
			    "1000-3000:/a@1000 5000-6000:/b@5000 8000-9000:/c@8000 ");
	/* the same range again: replaced, its path copied */
	e = mapping(0x5000, 0x6000, "/b2");
	assert_int_equal(procmaps_place(&m, &e), 0);
	assert_string_equal(listed(&m, buf, sizeof(buf)),
			    "1000-3000:/a@1000 5000-6000:/b2@5000 8000-9000:/c@8000 ");
	/* inside /a: /a in two pieces around it */
	e = mapping(0x1800, 0x2000, "/in");
	e.pgoff = 0;
	assert_int_equal(procmaps_place(&m, &e), 0);
	assert_string_equal(listed(&m, buf, sizeof(buf)),
			    "1000-1800:/a@1000 1800-2000:/in@0 2000-3000:/a@2000 "
			    "5000-6000:/b2@5000 8000-9000:/c@8000 ");
	/* across the tail of one, all of another and the head of a third */
	e = mapping(0x2800, 0x8800, "/wide");
	assert_int_equal(procmaps_place(&m, &e), 0);
	assert_string_equal(listed(&m, buf, sizeof(buf)),
			    "1000-1800:/a@1000 1800-2000:/in@0 2000-2800:/a@2000 "
			    "2800-8800:/wide@2800 8800-9000:/c@8800 ");
	assert_ptr_equal(procmaps_find(&m, 0x8900)->path, m.entries[4].path);
	/* an empty range is refused, the list as it was */
	e = mapping(0x4000, 0x4000, "/empty");
	assert_int_equal(procmaps_place(&m, &e), -EINVAL);
	assert_int_equal(m.n, 5);
	/* exactly two whole entries */
	e = mapping(0x1000, 0x2000, "/two");
	assert_int_equal(procmaps_place(&m, &e), 0);
	assert_string_equal(listed(&m, buf, sizeof(buf)),
			    "1000-2000:/two@1000 2000-2800:/a@2000 2800-8800:/wide@2800 "
			    "8800-9000:/c@8800 ");
	/* the tail of one, then the head of another */
	e = mapping(0x2400, 0x2800, "/tailof");
	assert_int_equal(procmaps_place(&m, &e), 0);
	e = mapping(0x8800, 0x8900, "/headof");
	assert_int_equal(procmaps_place(&m, &e), 0);
	assert_string_equal(listed(&m, buf, sizeof(buf)),
			    "1000-2000:/two@1000 2000-2400:/a@2000 2400-2800:/tailof@2400 "
			    "2800-8800:/wide@2800 8800-8900:/headof@8800 8900-9000:/c@8900 ");
	/* over everything */
	e = mapping(0x500, 0x10000, "/all");
	assert_int_equal(procmaps_place(&m, &e), 0);
	assert_string_equal(listed(&m, buf, sizeof(buf)), "500-10000:/all@500 ");
	procmaps_free(&m);
	/* into an empty list again, then before and after it */
	e = mapping(0x5000, 0x6000, "/mid");
	assert_int_equal(procmaps_place(&m, &e), 0);
	e = mapping(0x7000, 0x8000, "/after");
	assert_int_equal(procmaps_place(&m, &e), 0);
	e = mapping(0x1000, 0x2000, "/before");
	assert_int_equal(procmaps_place(&m, &e), 0);
	assert_string_equal(listed(&m, buf, sizeof(buf)),
			    "1000-2000:/before@1000 5000-6000:/mid@5000 7000-8000:/after@7000 ");
	procmaps_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_typical),
		cmocka_unit_test(test_paths_and_widths),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_embedded_nul),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_exec),
		cmocka_unit_test(test_read_exec_exited),
		cmocka_unit_test(test_find_exec_file),
		cmocka_unit_test(test_place),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
