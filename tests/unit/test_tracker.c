// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the raw-stack cache and of how the tracker turns sample
 * records, with their stacks inline, into model stacks.  The records are
 * made here, as the BPF program lays them out, with addresses of functions
 * of this test program, so the tracker resolves them through this
 * process's own mappings.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "bpf/collector.h"
#include "model/model.h"
#include "lib/stackcache.h"
#include "symbols/symbolize.h"
#include "decode/tracker.h"
#include "tracker_unit.h"

/* ---- stackcache ---------------------------------------------------------- */

static void test_stackcache_keys(void **state)
{
	uint64_t a[3] = { 0x401000, 0x401234, 0x7f0000001000 };
	uint64_t b[3] = { 0x401000, 0x401234, 0x7f0000001000 };
	struct stackcache_key ka, kb;

	(void)state;
	ka = stackcache_key(1, a, 3);
	kb = stackcache_key(1, b, 3);
	assert_true(ka.h1 == kb.h1 && ka.h2 == kb.h2 && ka.domain == kb.domain);
	/* another process, another length, another address, another order */
	kb = stackcache_key(2, b, 3);
	assert_false(ka.h1 == kb.h1 && ka.h2 == kb.h2 && ka.domain == kb.domain);
	kb = stackcache_key(1, b, 2);
	assert_false(ka.h1 == kb.h1 && ka.h2 == kb.h2);
	b[2]++;
	kb = stackcache_key(1, b, 3);
	assert_false(ka.h1 == kb.h1 || ka.h2 == kb.h2);
	b[2] = a[1];
	b[1] = a[2];
	kb = stackcache_key(1, b, 3);
	assert_false(ka.h1 == kb.h1 || ka.h2 == kb.h2);
}

static void test_stackcache_put_get(void **state)
{
	struct stackcache c = { 0 };
	struct stackcache_key k;
	uint64_t ips[4];

	(void)state;
	ips[0] = 0;
	k = stackcache_key(0, ips, 1);
	assert_int_equal(stackcache_get(&c, &k), UINT32_MAX);
	assert_int_equal(stackcache_put(&c, &k, UINT32_MAX), -EINVAL);
	/* enough stacks to grow the table many times; every one kept */
	for (uint32_t i = 0; i < 200000; i++) {
		ips[0] = 0x400000 + i;
		ips[1] = 0x500000 + (i % 7);
		k = stackcache_key(i % 3, ips, 2);
		assert_int_equal(stackcache_get(&c, &k), UINT32_MAX);
		assert_int_equal(stackcache_put(&c, &k, i), 0);
	}
	assert_int_equal(c.len, 200000);
	for (uint32_t i = 0; i < 200000; i++) {
		ips[0] = 0x400000 + i;
		ips[1] = 0x500000 + (i % 7);
		k = stackcache_key(i % 3, ips, 2);
		assert_int_equal(stackcache_get(&c, &k), i);
		k = stackcache_key(i % 3 + 3, ips, 2);
		assert_int_equal(stackcache_get(&c, &k), UINT32_MAX);
	}
	/* a second put replaces */
	ips[0] = 0x400000;
	ips[1] = 0x500000;
	k = stackcache_key(0, ips, 2);
	assert_int_equal(stackcache_put(&c, &k, 7), 0);
	assert_int_equal(stackcache_get(&c, &k), 7);
	assert_int_equal(c.len, 200000);
	stackcache_free(&c);
}

/* ---- tracker ------------------------------------------------------------- */

/* Real functions of this program for the frames to point into; noinline
 * and noipa so each has its own symbol. */
__attribute__((noinline, noipa)) int tt_leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline, noipa)) int tt_middle(int x)
{
	return tt_leaf(x) + 2;
}

__attribute__((noinline, noipa)) int tt_outer(int x)
{
	return tt_middle(x) * 5;
}

struct fixture {
	struct model m;
	struct symbolizer *sym;
	struct tracker *t;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->t = tracker_unit_new(&f->m, &f->sym);
	if (!f->t || tracker_add_process(f->t, getpid(), ktime_now()) != 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tracker_unit_free(f->t, f->sym, &f->m);
	free(f);
	return 0;
}

/* Hands the tracker a sample record with these user frames (innermost
 * first, callers as return addresses) and n_kernel kernel frames before
 * them; returns the record's size as given to the tracker. */
static size_t feed_sample(struct fixture *f, const uint64_t *kernel, uint16_t n_kernel,
			  const uint64_t *user, uint16_t n_user, size_t size_cut)
{
	uint64_t buf[(sizeof(struct collector_sample_event) + 8 * 2 * COLLECTOR_MAX_STACK_DEPTH) / 8];
	struct collector_sample_event *e = (struct collector_sample_event *)buf;
	uint64_t *frames = (uint64_t *)(e + 1);
	size_t size;

	memset(buf, 0, sizeof(buf));
	e->hdr.kind = COLLECTOR_EV_SAMPLE;
	e->hdr.ktime_ns = ktime_now();
	e->hdr.tgid = getpid();
	e->hdr.tid = gettid();
	e->ip = n_kernel ? kernel[0] : user[0];
	e->user_ip = user[0];
	e->period = 1001001;
	e->cputime_ns = 1000;
	e->n_kernel = n_kernel;
	e->n_user = n_user;
	e->kernel_mode = n_kernel > 0;
	if (n_kernel)
		memcpy(frames, kernel, n_kernel * sizeof(uint64_t));
	memcpy(frames + n_kernel, user, n_user * sizeof(uint64_t));
	size = sizeof(*e) + (n_kernel + n_user) * sizeof(uint64_t) - size_cut;
	assert_int_equal(tracker_handle_record(f->t, buf, size), 0);
	return size;
}

static const struct model_stack *last_stack(const struct fixture *f)
{
	const struct model_sample *s = &f->m.samples.items[f->m.samples.len - 1];

	return &f->m.stacks.items[s->stack];
}

static const char *frame_name(const struct fixture *f, const struct model_stack *s, uint32_t i)
{
	const char *name = model_location_name(&f->m, model_stack_frames(&f->m, s)[i]);

	return name ? name : "(none)";
}

static const struct model_image *frame_image(const struct fixture *f, const struct model_stack *s,
					     uint32_t i)
{
	uint32_t loc = model_stack_frames(&f->m, s)[i];

	return &f->m.images.items[f->m.locations.items[loc].image];
}

static void test_user_frames_resolve(void **state)
{
	struct fixture *f = *state;
	uint64_t user[3] = {
		(uint64_t)tt_leaf + 4,   /* the sampled PC, inside tt_leaf */
		(uint64_t)tt_middle + 1, /* return addresses: resolved at -1 */
		(uint64_t)tt_outer + 1,
	};
	const struct model_stack *s;

	feed_sample(f, NULL, 0, user, 3, 0);
	assert_int_equal(f->m.samples.len, 1);
	s = last_stack(f);
	assert_int_equal(s->n_frames, 3);
	assert_int_equal(s->n_kernel, 0);
	assert_string_equal(frame_name(f, s, 0), "tt_leaf");
	assert_string_equal(frame_name(f, s, 1), "tt_middle");
	assert_string_equal(frame_name(f, s, 2), "tt_outer");
	/* tt_outer is no thread's start: the walk stopped early */
	assert_true(s->truncated);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_TRUNCATED_STACKS), 1);
}

static void test_identical_stacks_shared(void **state)
{
	struct fixture *f = *state;
	uint64_t a[2] = { (uint64_t)tt_leaf + 4, (uint64_t)tt_middle + 1 };
	uint64_t b[2] = { (uint64_t)tt_leaf + 4, (uint64_t)tt_outer + 1 };
	uint32_t s0, s1, s2;

	feed_sample(f, NULL, 0, a, 2, 0);
	s0 = f->m.samples.items[0].stack;
	feed_sample(f, NULL, 0, a, 2, 0);
	s1 = f->m.samples.items[1].stack;
	feed_sample(f, NULL, 0, b, 2, 0);
	s2 = f->m.samples.items[2].stack;
	assert_int_equal(f->m.samples.len, 3);
	assert_int_equal(s0, s1);
	assert_int_not_equal(s0, s2);
	assert_string_equal(frame_name(f, &f->m.stacks.items[s2], 1), "tt_outer");
	/* the same frames again, after another stack: still the first one */
	feed_sample(f, NULL, 0, a, 2, 0);
	assert_int_equal(f->m.samples.items[3].stack, s0);
}

static void test_thread_root_completes(void **state)
{
	struct fixture *f = *state;
	void *start = dlsym(RTLD_DEFAULT, "__libc_start_main");
	uint64_t user[3] = { (uint64_t)tt_leaf + 4, (uint64_t)tt_outer + 1, 0 };
	const struct model_stack *s;

	assert_non_null(start);
	user[2] = (uint64_t)start + 1;
	feed_sample(f, NULL, 0, user, 3, 0);
	s = last_stack(f);
	assert_int_equal(s->n_frames, 3);
	assert_false(s->truncated);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_TRUNCATED_STACKS), 0);
}

static void test_kernel_frames_first(void **state)
{
	struct fixture *f = *state;
	uint64_t kernel[2] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL };
	uint64_t user[2] = { (uint64_t)tt_leaf + 4, (uint64_t)tt_middle + 1 };
	const struct model_stack *s;
	uint32_t user_only;

	feed_sample(f, NULL, 0, user, 2, 0);
	user_only = f->m.samples.items[0].stack;
	feed_sample(f, kernel, 2, user, 2, 0);
	assert_int_equal(f->m.samples.len, 2);
	s = last_stack(f);
	assert_int_equal(s->n_kernel, 2);
	assert_int_equal(s->n_frames, 4);
	assert_true(f->m.samples.items[1].kernel_mode);
	assert_int_not_equal(f->m.samples.items[1].stack, user_only);
	assert_string_equal(frame_name(f, s, 2), "tt_leaf");
	assert_string_equal(frame_name(f, s, 3), "tt_middle");
	/* same user part, another kernel part: another stack */
	kernel[1] += 0x100;
	feed_sample(f, kernel, 2, user, 2, 0);
	assert_int_not_equal(f->m.samples.items[2].stack, f->m.samples.items[1].stack);
	/* a kernel-mode sample whose kernel walk failed keeps its ip */
	feed_sample(f, kernel, 0, user, 2, 0);
	assert_int_equal(f->m.samples.len, 4);
}

/* A sample whose walk gave nothing keeps its PC as a one-frame stack, the
 * same stack a one-frame walk gives. */
static void test_pc_only_sample(void **state)
{
	struct fixture *f = *state;
	uint64_t user[1] = { (uint64_t)tt_middle + 4 };
	const struct model_stack *s;

	feed_sample(f, NULL, 0, user, 0, 0);
	feed_sample(f, NULL, 0, user, 1, 0);
	assert_int_equal(f->m.samples.len, 2);
	assert_int_equal(f->m.samples.items[0].stack, f->m.samples.items[1].stack);
	s = last_stack(f);
	assert_int_equal(s->n_frames, 1);
	assert_true(s->truncated);
	assert_string_equal(frame_name(f, s, 0), "tt_middle");
}

/* A frame-pointer walk that reads data as a return address: the walk ends
 * before the first caller outside every executable mapping, and the stack
 * counts as truncated.  Code in the uprobe trampoline is "[uprobes]". */
static void test_garbage_caller_ends_walk(void **state)
{
	struct fixture *f = *state;
	uint64_t user[4] = { (uint64_t)tt_leaf + 4, (uint64_t)tt_middle + 1,
			     0x31333436383a3d3eULL, (uint64_t)tt_outer + 1 };
	struct model_mapping mm = { .start = 0x7ffffffde000ULL, .end = 0x7ffffffdf000ULL,
				    .exec = true };
	const struct model_stack *s;

	feed_sample(f, NULL, 0, user, 4, 0);
	s = last_stack(f);
	assert_int_equal(s->n_frames, 2);
	assert_true(s->truncated);
	assert_string_equal(frame_name(f, s, 1), "tt_middle");
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_TRUNCATED_STACKS), 1);
	/* the trampoline, as /proc/PID/maps names it */
	mm.image = symbolizer_special_image(f->sym, "[uprobes]");
	mm.bias = mm.start;
	model_add_mapping(&f->m, f->m.samples.items[0].process, &mm);
	user[0] = mm.start + 0x10;
	feed_sample(f, NULL, 0, user, 2, 0);
	s = last_stack(f);
	assert_int_equal(s->n_frames, 2);
	assert_string_equal(frame_name(f, s, 0), "[uprobes]");
}

/* A sampled PC outside every mapping the tracker read ("[unknown]"):
 * code made executable since (node reserves its code range without
 * access, then makes pages of it executable as it compiles).  The stack is not remembered with that frame: the same
 * stack sampled again, after the maps may be read again, has its PC in
 * the new mapping. */
static void test_unmapped_leaf_read_again(void **state)
{
	struct fixture *f = *state;
	long page = sysconf(_SC_PAGESIZE);
	char *code = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t user[3] = { 0, (uint64_t)tt_middle + 1, (uint64_t)tt_outer + 1 };
	const struct model_stack *s;
	uint32_t first;

	assert_true(code != MAP_FAILED);
	user[0] = (uint64_t)code + 0x10;
	feed_sample(f, NULL, 0, user, 3, 0);
	s = last_stack(f);
	first = f->m.samples.items[0].stack;
	assert_int_equal(s->n_frames, 3);
	assert_string_equal(frame_image(f, s, 0)->path, "[unknown]");
	assert_int_equal(mprotect(code, page, PROT_READ | PROT_EXEC), 0);
	/* past the tracker's least time between two readings (50 ms) */
	usleep(120000);
	feed_sample(f, NULL, 0, user, 3, 0);
	s = last_stack(f);
	assert_int_not_equal(f->m.samples.items[1].stack, first);
	assert_int_equal(s->n_frames, 3);
	assert_int_equal(frame_image(f, s, 0)->kind, MODEL_IMAGE_ANON);
	assert_string_equal(frame_name(f, s, 1), "tt_middle");
	munmap(code, page);
}

/* Hands the tracker a kernel sum (COLLECTOR_EV_AGG_SAMPLE) of count
 * samples weighing weight in all, with these user frames. */
static void feed_sum(struct fixture *f, uint32_t event, const uint64_t *user, uint16_t n_user,
		     uint64_t count, uint64_t weight, uint8_t user_end)
{
	uint64_t buf[(sizeof(struct collector_agg_sample_event) + 8 * COLLECTOR_MAX_STACK_DEPTH) / 8];
	struct collector_agg_sample_event *ae = (struct collector_agg_sample_event *)buf;

	memset(buf, 0, sizeof(buf));
	ae->sample.hdr.kind = COLLECTOR_EV_AGG_SAMPLE;
	ae->sample.hdr.ktime_ns = ktime_now();
	ae->sample.hdr.tgid = getpid();
	ae->sample.hdr.tid = gettid();
	ae->sample.ip = user[0];
	ae->sample.user_ip = user[0];
	ae->sample.period = weight;
	ae->sample.n_user = n_user;
	ae->sample.event = event;
	ae->sample.user_end = user_end;
	ae->count = count;
	memcpy(ae + 1, user, n_user * sizeof(uint64_t));
	assert_int_equal(tracker_handle_record(f->t, buf, sizeof(*ae) + n_user * 8), 0);
}

/* --off-cpu with cfi, a thread switched out before its image's table:
 * its stacks (a copy) then its time out (at the switch-in) make one
 * off-CPU sum; a time whose number is not the stacks' is dropped and
 * counted; a time of 0 (shorter than --off-cpu-min) makes none. */
static void feed_offcpu_stack(struct fixture *f, uint64_t ip, uint32_t seq)
{
	struct collector_stack_sample_event se;

	memset(&se, 0, sizeof(se));
	se.sample.hdr.kind = COLLECTOR_EV_OFFCPU_STACK;
	se.sample.hdr.ktime_ns = ktime_now();
	se.sample.hdr.tgid = getpid();
	se.sample.hdr.tid = gettid();
	se.sample.user_ip = ip;
	se.regs.ip = ip;
	se.seq = seq;
	assert_int_equal(tracker_handle_record(f->t, &se, sizeof(se)), 0);
}

static void feed_offcpu_piece(struct fixture *f, uint32_t seq, uint64_t out_ns, uint32_t more)
{
	struct collector_offcpu_done_event d;

	memset(&d, 0, sizeof(d));
	d.hdr.kind = COLLECTOR_EV_OFFCPU_DONE;
	d.hdr.ktime_ns = ktime_now();
	d.hdr.tgid = getpid();
	d.hdr.tid = gettid();
	d.out_ns = out_ns;
	d.seq = seq;
	d.more = more;
	assert_int_equal(tracker_handle_record(f->t, &d, sizeof(d)), 0);
}

static void feed_offcpu_done(struct fixture *f, uint32_t seq, uint64_t out_ns)
{
	feed_offcpu_piece(f, seq, out_ns, 0);
}

/* A copied stack's block across cuts (bpf/offcpu_window.bpf.h): a piece
 * up to each cut, the stacks kept, then the rest at the switch-in; the
 * pieces sum to the block.  A piece of another number is the end of
 * neither. */
static void test_offcpu_pieces(void **state)
{
	struct fixture *f = *state;
	uint64_t sum = 0;

	feed_offcpu_stack(f, (uint64_t)tt_leaf + 4, 21);
	feed_offcpu_piece(f, 21, 1000, 1);
	feed_offcpu_piece(f, 21, 2000, 1);
	assert_int_equal(f->m.samples.len, 2);
	feed_offcpu_piece(f, 23, 5, 1); /* not this block's: dropped, the block kept */
	assert_int_equal(f->m.samples.len, 2);
	feed_offcpu_done(f, 21, 300);
	assert_int_equal(f->m.samples.len, 3);
	for (size_t i = 0; i < f->m.samples.len; i++) {
		sum += f->m.samples.items[i].weight;
		assert_int_equal(f->m.samples.items[i].stack, f->m.samples.items[0].stack);
	}
	assert_true(sum == 3300);
	assert_string_equal(frame_name(f, last_stack(f), 0), "tt_leaf");
	/* the block ended: a piece after it finds nothing */
	feed_offcpu_piece(f, 21, 7, 1);
	assert_int_equal(f->m.samples.len, 3);
}

/* The scheduler's own frames under the tracing ones leave a switch-out's
 * kernel stack (tracker_set_sched_text()): it starts at the waiting
 * function, as a blocked thread's taken from outside does. */
static void test_offcpu_sched_frames(void **state)
{
	struct fixture *f = *state;
	const uint64_t ranges[4] = { 0xffffffff81100000ULL, 0xffffffff81100100ULL, 0, 0 };
	const char text[] = "ffffffff81000000 T _stext\n"
			    "ffffffff81000100 T bpf_trace_run4\n"
			    "ffffffff81100000 T __schedule\n"
			    "ffffffff81100080 T schedule\n"
			    "ffffffff81200000 T hrtimer_nanosleep\n"
			    "ffffffff81300000 T do_syscall_64\n"
			    "ffffffff81400000 T _etext\n";
	char path[] = "/tmp/kallsyms-XXXXXX";
	uint8_t buf[sizeof(struct collector_agg_sample_event) + 8 * sizeof(uint64_t)];
	struct collector_agg_sample_event *ae = (struct collector_agg_sample_event *)buf;
	uint64_t *frames = (uint64_t *)(ae + 1);
	const struct model_stack *s;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	symbolizer_set_kallsyms_path(f->sym, path);
	tracker_set_sched_text(f->t, ranges);
	memset(buf, 0, sizeof(buf));
	ae->sample.hdr.kind = COLLECTOR_EV_AGG_SAMPLE;
	ae->sample.hdr.ktime_ns = ktime_now();
	ae->sample.hdr.tgid = getpid();
	ae->sample.hdr.tid = gettid();
	ae->sample.period = 1000;
	ae->sample.n_kernel = 5;
	ae->sample.kernel_mode = 1;
	ae->count = 1;
	frames[0] = 0xffffffff81000110ULL; /* the tracepoint's glue */
	frames[1] = 0xffffffff81100010ULL; /* __schedule */
	frames[2] = 0xffffffff81100090ULL; /* schedule */
	frames[3] = 0xffffffff81200010ULL; /* where the thread waits */
	frames[4] = 0xffffffff81300010ULL;
	assert_int_equal(tracker_handle_record(f->t, buf, sizeof(*ae) + 5 * sizeof(uint64_t)), 0);
	unlink(path);
	s = last_stack(f);
	assert_int_equal(s->n_kernel, 2);
	assert_string_equal(frame_name(f, s, 0), "hrtimer_nanosleep");
	assert_string_equal(frame_name(f, s, 1), "do_syscall_64");
}

static void test_offcpu_copy_then_time(void **state)
{
	struct fixture *f = *state;
	const struct model_stack *s;

	feed_offcpu_stack(f, (uint64_t)tt_leaf + 4, 7);
	assert_int_equal(f->m.samples.len, 0);
	feed_offcpu_done(f, 7, 123456789);
	assert_int_equal(f->m.samples.len, 1);
	assert_true(f->m.samples.items[0].weight == 123456789);
	s = last_stack(f);
	assert_int_equal(s->n_frames, 1);
	assert_string_equal(frame_name(f, s, 0), "tt_leaf");
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_OFFCPU_STACKS_UNWOUND), 1);
	/* its time came: a second one finds nothing kept */
	feed_offcpu_done(f, 7, 5);
	assert_int_equal(f->m.samples.len, 1);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_OFFCPU_STACKS_DROPPED), 1);
	/* another number than the stacks': both intervals lost one half */
	feed_offcpu_stack(f, (uint64_t)tt_middle + 4, 9);
	feed_offcpu_done(f, 11, 5);
	assert_int_equal(f->m.samples.len, 1);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_OFFCPU_STACKS_DROPPED), 3);
	/* shorter than the minimum: kept no longer, counted nowhere */
	feed_offcpu_stack(f, (uint64_t)tt_middle + 4, 13);
	feed_offcpu_done(f, 13, 0);
	assert_int_equal(f->m.samples.len, 1);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_OFFCPU_STACKS_DROPPED), 3);
	feed_offcpu_done(f, 13, 5);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_OFFCPU_STACKS_DROPPED), 4);
	/* two stacks in a row: the first lost its time */
	feed_offcpu_stack(f, (uint64_t)tt_middle + 4, 15);
	feed_offcpu_stack(f, (uint64_t)tt_outer + 4, 17);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_OFFCPU_STACKS_DROPPED), 5);
	feed_offcpu_done(f, 17, 42);
	assert_int_equal(f->m.samples.len, 2);
	assert_string_equal(frame_name(f, last_stack(f), 0), "tt_outer");
}

/* A sum of CPU samples is as many samples as it counts, its weight shared
 * to the last unit; a sum of an aggregated event (off-CPU) stays one. */
static void test_sum_becomes_samples(void **state)
{
	struct fixture *f = *state;
	struct model_event cpu = { .name = "cpu-clock", .unit = "ns", .clock = true };
	struct model_event off = { .name = "off-cpu", .unit = "ns", .clock = true,
				   .aggregated = true };
	uint64_t user[2] = { (uint64_t)tt_leaf + 4, (uint64_t)tt_middle + 1 };
	uint64_t total = 0;

	model_add_event(&f->m, &cpu);
	model_add_event(&f->m, &off);
	feed_sum(f, 0, user, 2, 3, 1000, COLLECTOR_END_COMPLETE);
	assert_int_equal(f->m.samples.len, 3);
	for (size_t i = 0; i < 3; i++) {
		const struct model_sample *s = &f->m.samples.items[i];

		assert_int_equal(s->event, 0);
		assert_int_equal(s->stack, f->m.samples.items[0].stack);
		assert_true(s->weight == 333 || s->weight == 334);
		total += s->weight;
	}
	assert_int_equal(total, 1000);
	assert_string_equal(frame_name(f, last_stack(f), 1), "tt_middle");
	/* the walk said complete: not truncated, though tt_middle is no root */
	assert_false(last_stack(f)->truncated);
	feed_sum(f, 0, user, 2, 2, 10, COLLECTOR_END_TRUNCATED);
	assert_int_equal(f->m.samples.len, 5);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_TRUNCATED_STACKS), 2);
	feed_sum(f, 1, user, 2, 7, 5000, COLLECTOR_END_COMPLETE);
	assert_int_equal(f->m.samples.len, 6);
	assert_int_equal(f->m.samples.items[5].weight, 5000);
	assert_int_equal(f->m.events.items[1].occurrences, 7);
}

static void test_short_record_rejected(void **state)
{
	struct fixture *f = *state;
	uint64_t user[3] = { (uint64_t)tt_leaf + 4, (uint64_t)tt_middle + 1,
			     (uint64_t)tt_outer + 1 };

	/* n_user says 3 frames, the record holds 2 and a half */
	feed_sample(f, NULL, 0, user, 3, 4);
	assert_int_equal(f->m.samples.len, 0);
	assert_int_equal(model_stat_value(&f->m, MODEL_STAT_MALFORMED_RECORDS), 1);
}

/* A child that has exited and been reaped: /proc knows nothing of it. */
static pid_t reaped_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* An exec record of pid with args (len bytes) from the exec's program,
 * cut there when cut; the model process's command line after it. */
static const char *exec_cmdline(struct fixture *f, pid_t pid, const char *args, size_t len,
				bool cut)
{
	static struct collector_exec_event e;

	memset(&e, 0, sizeof(e));
	e.task.hdr.kind = COLLECTOR_EV_EXEC;
	e.task.hdr.ktime_ns = ktime_now();
	e.task.hdr.tgid = pid;
	e.task.hdr.tid = pid;
	strcpy(e.task.comm, "cc1");
	strcpy(e.task.filename, "/usr/libexec/cc1");
	memcpy(e.args, args, len);
	e.args_len = len;
	e.args_cut = cut;
	assert_int_equal(tracker_handle_record(f->t, &e, offsetof(struct collector_exec_event, args) +
							    len), 0);
	for (size_t i = f->m.processes.len; i-- > 0;)
		if (f->m.processes.items[i].pid == pid)
			return f->m.processes.items[i].cmdline;
	fail_msg("no process %d in the model", (int)pid);
	return NULL;
}

/* The command line of an exec comes from its record (the process is gone
 * when the record is decoded); cut short there, /proc's is taken, else
 * what the record has. */
static void test_exec_args(void **state)
{
	struct fixture *f = *state;
	static const char args[] = "cc1\0-O2\0file with space.c\0";
	const char *cmd;

	cmd = exec_cmdline(f, reaped_pid(), args, sizeof(args) - 1, false);
	assert_non_null(cmd);
	assert_string_equal(cmd, "cc1 -O2 file with space.c");
	cmd = exec_cmdline(f, reaped_pid(), args, 8, true);
	assert_non_null(cmd);
	assert_string_equal(cmd, "cc1 -O2");
	/* cut, and the process still there: /proc's whole line */
	cmd = exec_cmdline(f, getpid(), args, 4, true);
	assert_non_null(cmd);
	assert_true(strlen(cmd) > 4 && strcmp(cmd, "cc1") != 0);
}

/* A task record of kind for thread tid of this process, named comm. */
static void task_record(struct fixture *f, uint32_t kind, pid_t tid, const char *comm)
{
	struct collector_task_event e;

	memset(&e, 0, sizeof(e));
	e.hdr.kind = kind;
	e.hdr.ktime_ns = ktime_now();
	e.hdr.tgid = (uint32_t)getpid();
	e.hdr.tid = (uint32_t)tid;
	e.parent_tgid = (uint32_t)getpid();
	e.child_tgid = (uint32_t)getpid();
	e.child_tid = (uint32_t)tid;
	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	assert_int_equal(tracker_handle_record(f->t, &e, sizeof(e)), 0);
}

static const char *thread_name(const struct fixture *f, pid_t tid)
{
	for (size_t i = f->m.threads.len; i-- > 0;)
		if (f->m.threads.items[i].tid == tid)
			return f->m.threads.items[i].comm;
	fail_msg("no thread %d in the model", (int)tid);
	return NULL;
}

/* A thread forked with its parent's name and renamed after it started (a
 * JVM's): named by its last rename, the names of others untouched; a
 * name of 15 characters kept whole. */
static void test_thread_renamed(void **state)
{
	struct fixture *f = *state;
	pid_t tid = reaped_pid();
	char own[16];

	snprintf(own, sizeof(own), "%s", thread_name(f, getpid()));
	task_record(f, COLLECTOR_EV_FORK, tid, "java");
	assert_string_equal(thread_name(f, tid), "java");
	task_record(f, COLLECTOR_EV_COMM, tid, "shares-second");
	assert_string_equal(thread_name(f, tid), "shares-second");
	task_record(f, COLLECTOR_EV_COMM, tid, "C2 CompilerThre");
	assert_string_equal(thread_name(f, tid), "C2 CompilerThre");
	assert_string_equal(thread_name(f, getpid()), own);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stackcache_keys),
		cmocka_unit_test(test_stackcache_put_get),
		cmocka_unit_test_setup_teardown(test_user_frames_resolve, setup, teardown),
		cmocka_unit_test_setup_teardown(test_identical_stacks_shared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_root_completes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_frames_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pc_only_sample, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_record_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_caller_ends_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmapped_leaf_read_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sum_becomes_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_copy_then_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offcpu_sched_frames, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_thread_renamed, setup, teardown),
	};

	(void)tt_outer(1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
