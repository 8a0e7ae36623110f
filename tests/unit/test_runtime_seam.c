// SPDX-License-Identifier: GPL-2.0
/*
 * A runtime added through the runtimes' interface alone (runtimes/runtime.h):
 * "Fake" (tests/unit/fake_runtime/, no other file names it) finds this
 * program as its interpreter when the tracker reads its mappings, and its
 * frames, which stand among the native frames of a sample, come out named
 * with their files and lines in the model, in every format that names
 * frames (read back through each format's own reader, `collector dump`'s),
 * and as the OTLP frame type the runtime gives; a frame it cannot name
 * keeps a location of its own, counted under the runtime's statistic.
 * A runtime's BPF walk is asked for only when a target runs it (or any
 * process may), and a runtime whose walk was left out is opened unwalked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "decode/tracker.h"
#include "fake_runtime/fake_runtime.h"
#include "formats/format.h"
#include "formats/registry.h"
#include "lib/procmaps.h"
#include "tracker_unit.h"
#include "unit_files.h"

/* Native code around the fake frames: the thread's entry below them, a
 * native function they call on top. */
__attribute__((noinline, noipa)) int seam_native_leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, noipa)) int seam_native_main(int x)
{
	return seam_native_leaf(x) * 2;
}

struct fixture {
	struct model m;
	struct symbolizer *sym;
	struct tracker *t;
	struct runtimes rs;
};

static int setup(void **state)
{
	static const struct runtime_ops *const list[] = { &fake_runtime, NULL };
	struct fixture *f = calloc(1, sizeof(*f));
	struct model_event cpu = { .name = "cpu-clock", .unit = "ns", .clock = true,
				   .freq_hz = 1000 };
	struct runtime_env env;

	if (!f)
		return -1;
	f->t = tracker_unit_new(&f->m, &f->sym);
	env = (struct runtime_env){ .m = &f->m };
	if (!f->t || runtimes_open(&f->rs, list, &env) != 0)
		return -1;
	tracker_set_runtimes(f->t, &f->rs);
	model_add_event(&f->m, &cpu);
	f->m.run.freq_hz = 1000;
	f->m.run.period_ns = 1000000;
	if (tracker_add_process(f->t, getpid(), ktime_now()) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tracker_unit_free(f->t, f->sym, &f->m);
	runtimes_close(&f->rs);
	free(f);
	return 0;
}

static void feed(struct fixture *f, const uint64_t *user, uint16_t n_user)
{
	tracker_unit_sample(f->t, user, n_user, 1000000);
}

/* The last sample's stack as "name@file:line" (file and line of runtime
 * frames only), innermost first, ";" between. */
static const char *last_stack(const struct fixture *f, char *out, size_t size)
{
	const struct model_sample *s = &f->m.samples.items[f->m.samples.len - 1];
	const struct model_stack *st = &f->m.stacks.items[s->stack];
	size_t at = 0;

	out[0] = 0;
	for (uint32_t i = 0; i < st->n_frames && at < size; i++) {
		uint32_t loc = model_stack_frames(&f->m, st)[i];
		const struct model_location *l = &f->m.locations.items[loc];
		const char *name = model_location_name(&f->m, loc);

		at += (size_t)snprintf(out + at, size - at, "%s%s", i ? ";" : "", name ? name : "?");
		if (f->m.images.items[l->image].kind == MODEL_IMAGE_RUNTIME && l->file != MODEL_NONE)
			at += (size_t)snprintf(out + at, size - at, "@%s:%u",
					       f->m.files.items[l->file].path, l->line);
	}
	return out;
}

static void test_frames_named_in_place(void **state)
{
	struct fixture *f = *state;
	char names[512];
	uint64_t user[4] = {
		(uint64_t)seam_native_leaf + 4, FAKE_FRAME(0, 11), FAKE_FRAME(1, 23),
		(uint64_t)seam_native_main + 1,
	};

	feed(f, user, 4);
	assert_string_equal(last_stack(f, names, sizeof(names)),
			    "seam_native_leaf;Spin.turn@/srv/fake/spin.fk:11;"
			    "Spin.loop@/srv/fake/spin.fk:23;seam_native_main");
	/* the runtime's image, of the runtime's frame type */
	{
		const struct model_sample *s = &f->m.samples.items[0];
		const struct model_stack *st = &f->m.stacks.items[s->stack];
		uint32_t loc = model_stack_frames(&f->m, st)[1];
		const struct model_image *img =
			&f->m.images.items[f->m.locations.items[loc].image];

		assert_string_equal(img->path, "[fake]");
		assert_string_equal(img->frame_type, "fake");
	}
	/* a compiled frame with a method inlined at its point: one location
	 * whose function is the compiled method, with the inlined call */
	user[2] = FAKE_FRAME(1, 24);
	feed(f, user, 4);
	{
		const struct model_sample *s = &f->m.samples.items[f->m.samples.len - 1];
		const struct model_stack *st = &f->m.stacks.items[s->stack];
		const struct model_location *l =
			&f->m.locations.items[model_stack_frames(&f->m, st)[2]];

		assert_int_equal(st->n_frames, 4);
		assert_string_equal(f->m.functions.items[l->function].name, "Spin.loop");
		assert_int_equal(l->n_inlines, 1);
		assert_string_equal(f->m.functions.items[model_location_inlines(&f->m, l)[0].function].name,
				    "Spin.turn");
		assert_int_equal(model_location_inlines(&f->m, l)[0].call_line, 24);
		assert_int_equal(l->line, 12);
	}
	/* a function whose name is gone: a location of its own, counted */
	user[2] = FAKE_FRAME(99, 5);
	feed(f, user, 4);
	assert_int_equal(model_named_stat_value(&f->m, FAKE_STAT_UNNAMED), 1);
	assert_null(strstr(last_stack(f, names, sizeof(names)), "Spin.loop"));
}

/* A frame of the fake kind in a process the runtime does not walk is no
 * frame of it: data a frame-pointer walk took for a return address, cut
 * off as any address outside the mappings. */
static void test_frames_of_other_processes_cut(void **state)
{
	struct fixture *f = *state;
	struct fake_instance *fi = f->rs.by_kind[FAKE_FRAME_KIND]->rt;
	char names[512];
	uint64_t user[3] = { (uint64_t)seam_native_leaf + 4, FAKE_FRAME(0, 11),
			     (uint64_t)seam_native_main + 1 };

	fi->walked = 1; /* another process's */
	feed(f, user, 3);
	assert_string_equal(last_stack(f, names, sizeof(names)), "seam_native_leaf");
	assert_int_equal(fi->named, 0);
}

/* What the formats wrote, each file dumped by the reader of the format
 * that recognizes it, appended to that format's text. */
#define N_NAMING 7
static const char *const naming[N_NAMING] = {
	"callgrind", "hpctoolkit", "pprof", "otlp", "flamegraph", "speedscope", "folded",
};
static char *dumped[N_NAMING];
static size_t dumped_len[N_NAMING];

static int dump_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const struct format *fmt;
	unsigned char *head;
	size_t n;

	(void)st;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	head = unit_slurp(path, &n);
	fmt = head ? formats_recognize(path, head, n) : NULL;
	for (size_t i = 0; fmt && i < N_NAMING; i++) {
		FILE *out;
		char *text = NULL;
		size_t len = 0;

		if (strcmp(fmt->name, naming[i]) != 0)
			continue;
		/* valid (check), then its text */
		out = open_memstream(&text, &len);
		assert_non_null(out);
		assert_int_equal(fmt->dump(path, out, true), 0);
		fclose(out);
		free(text);
		text = NULL;
		out = open_memstream(&text, &len);
		assert_non_null(out);
		assert_int_equal(fmt->dump(path, out, false), 0);
		fclose(out);
		dumped[i] = realloc(dumped[i], dumped_len[i] + len + 1);
		assert_non_null(dumped[i]);
		memcpy(dumped[i] + dumped_len[i], text, len + 1);
		dumped_len[i] += len;
		free(text);
		/* speedscope's dump sums the profiles up: its frames are in the
		 * JSON itself, which the dump has just found valid */
		if (!strcmp(naming[i], "speedscope")) {
			dumped[i] = realloc(dumped[i], dumped_len[i] + n + 1);
			assert_non_null(dumped[i]);
			memcpy(dumped[i] + dumped_len[i], head, n);
			dumped_len[i] += n;
			dumped[i][dumped_len[i]] = 0;
		}
	}
	free(head);
	return 0;
}

/* Every format that names frames: the dump of what it wrote names the
 * fake functions (the sampled-instruction formats, DCPI and the sampler,
 * count native PCs by image: a runtime's frame has no PC; XRay holds
 * traced calls, not samples). */
static void test_every_format_names_them(void **state)
{
	struct fixture *f = *state;
	uint64_t user[4] = {
		(uint64_t)seam_native_leaf + 4, FAKE_FRAME(0, 11), FAKE_FRAME(1, 23),
		(uint64_t)seam_native_main + 1,
	};
	struct export_options opts = { .quiet = true };
	char *dir = unit_tmpdir("seam");
	unsigned int mask = 0;

	for (int i = 0; i < 5; i++)
		feed(f, user, 4);
	tracker_finish(f->t);
	model_events_tally(&f->m);
	opts.dir = dir;
	for (size_t i = 0; i < N_NAMING; i++) {
		const struct format *fmt = formats_by_name(naming[i]);

		assert_non_null(fmt);
		for (size_t k = 0; k < formats_count(); k++)
			if (formats_get(k) == fmt)
				mask |= 1u << k;
	}
	assert_int_equal(formats_write(&f->m, mask, &opts), 0);
	assert_int_equal(nftw(dir, dump_file, 8, FTW_PHYS), 0);
	for (size_t i = 0; i < N_NAMING; i++) {
		if (!dumped[i] || !strstr(dumped[i], "Spin.turn") || !strstr(dumped[i], "Spin.loop"))
			fail_msg("%s: the fake frames are not named in its dump:\n%s", naming[i],
				 dumped[i] ? dumped[i] : "(no file of it)");
		free(dumped[i]);
		dumped[i] = NULL;
		dumped_len[i] = 0;
	}
	unit_rm_rf(dir);
	free(dir);
}

/* A child running argv (exec'd, not a fork of this program), its pid once
 * its executable is argv[0]'s; or 0. */
static pid_t start_child(char *const argv[])
{
	char exe[4096], want[4096];
	pid_t pid = fork();

	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0 || !realpath(argv[0], want))
		return 0;
	/* exec has replaced the mappings once /proc says the new executable */
	for (int i = 0; i < 5000; i++) {
		fake_exe_of(pid, exe, sizeof(exe));
		if (!strcmp(exe, want))
			return pid;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return 0;
}

static void stop_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* An image is read once for the run (item 2 of issue 37: one record an
 * image): the runtime is told of each process that maps a file, with the
 * file opened once and its own word in the file's record, so that a second
 * process of the same program, or another program's process that maps
 * the same libraries, has nothing read again but its new files. */
static bool path_ends_with(const char *path, void *suffix)
{
	size_t n = strlen(path), k = strlen(suffix);

	return n >= k && !strcmp(path + n - k, suffix);
}

/* Whether process pid maps, executable, a file whose path ends in suffix,
 * waited for up to 5 s. */
static bool wait_exec_mapped(pid_t pid, const char *suffix)
{
	char path[4096];

	for (int i = 0; i < 5000; i++) {
		if (procmaps_find_exec_file(pid, path_ends_with, (void *)suffix, path,
					    sizeof(path)) == 0)
			return true;
		usleep(1000);
	}
	return false;
}

static pid_t fork_paused(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void test_image_read_once(void **state)
{
	struct fixture *f = *state;
	struct fake_instance *fi = f->rs.by_kind[FAKE_FRAME_KIND]->rt;
	char *const sleep_argv[] = { "/bin/sleep", "30", NULL };
	unsigned int read;
	pid_t twin, twin2, other;

	/* setup() added this process: told of its files up to the test
	 * program's, the interpreter, which it walks */
	assert_int_equal(fi->told, 1);
	assert_int_equal(fi->walked, getpid());
	assert_true(fi->images_read >= 1);
	/* a fork is told of them all (it is not walked: the fake walks one
	 * process), those past the program read now */
	twin = fork_paused();
	assert_true(twin > 0);
	assert_int_equal(tracker_add_process(f->t, twin, ktime_now()), 0);
	assert_int_equal(fi->told, 2);
	read = fi->images_read;
	assert_true(read >= 3); /* the program, its ld.so and C library at least */
	/* another fork: the same files, told again, nothing read */
	twin2 = fork_paused();
	assert_true(twin2 > 0);
	assert_int_equal(tracker_add_process(f->t, twin2, ktime_now()), 0);
	assert_int_equal(fi->told, 3);
	assert_int_equal(fi->images_read, read);
	stop_child(twin);
	stop_child(twin2);

	/* another program: /bin/sleep is new; its ld.so (and C library, once
	 * mapped) are this program's, read already */
	other = start_child(sleep_argv);
	assert_true(other > 0);
	/* its executable mapped: /proc names the new executable before the
	 * exec has mapped it (an empty address space for a moment) */
	assert_true(wait_exec_mapped(other, "/sleep"));
	assert_int_equal(tracker_add_process(f->t, other, ktime_now()), 0);
	assert_int_equal(fi->images_read, read + 1);
	assert_int_equal(fi->told, 3);
	stop_child(other);
}

static void test_walk_only_where_run(void **state)
{
	static const struct runtime_ops *const list[] = { &fake_runtime, NULL };
	char *const sleep_argv[] = { "/bin/sleep", "30", NULL };
	const uint32_t fake_bit = 1u << FAKE_FRAME_KIND;
	pid_t self = getpid(), other = start_child(sleep_argv);
	pid_t both[2] = { other, self };
	struct runtime_env env = { .unwalked_kinds = fake_bit };
	struct runtimes rs;

	(void)state;
	assert_true(other > 0);
	assert_int_equal(runtimes_walks_needed(list, &self, 1, false), fake_bit);
	assert_int_equal(runtimes_walks_needed(list, &other, 1, false), 0);
	assert_int_equal(runtimes_walks_needed(list, both, 2, false), fake_bit);
	/* -a, -- COMMAND: any process may start the runtime later */
	assert_int_equal(runtimes_walks_needed(list, &other, 1, true), fake_bit);
	assert_int_equal(runtimes_walks_needed(list, NULL, 0, true), fake_bit);
	assert_int_equal(runtimes_kind_named(list, "fake"), fake_bit);
	assert_int_equal(runtimes_kind_named(list, "python"), 0);
	stop_child(other);

	/* its walk left out: opened unwalked, with nothing for the BPF side */
	assert_int_equal(runtimes_open(&rs, list, &env), 0);
	assert_true(((struct fake_instance *)rs.items[0].rt)->no_walk);
	runtimes_close(&rs);
	env.unwalked_kinds = 0;
	assert_int_equal(runtimes_open(&rs, list, &env), 0);
	assert_false(((struct fake_instance *)rs.items[0].rt)->no_walk);
	runtimes_close(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_frames_named_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frames_of_other_processes_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_every_format_names_them, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_read_once, setup, teardown),
		cmocka_unit_test(test_walk_only_where_run),
	};

	(void)seam_native_main(1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
