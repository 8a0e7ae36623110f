// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the unwinder's rule cache against libdw's own walk, and of
 * signal-driven samples at arbitrary instructions, with the cost of an
 * unwind (tests/unit/unwind_run.h runs the captures).
 */
#include "unwind_run.h"

/* ---- the rule cache against libdw --------------------------------------- */

/* Frames up to the first zero address after the PC, as the decoder keeps
 * them: libdw's frame-pointer fallback reports a return address of 0 as a
 * frame, where the cached rules end the walk (both end it there). */
static int up_to_zero(const uint64_t *ips, int n)
{
	for (int i = 1; i < n; i++)
		if (!ips[i])
			return i;
	return n;
}

/* Unwinds one stack with the cached rules (twice: building them, then
 * reusing them) and with libdw alone: frames and completeness must agree. */
static void check_same_as_libdw(struct unwinder *u, struct unwinder *ref, const struct run *r,
				const struct unwind_regs *regs, const uint8_t *stack, size_t len)
{
	uint64_t got[MAX_FRAMES], want[MAX_FRAMES];
	bool got_complete, want_complete;
	int n_want = up_to_zero(want, unwinder_unwind(ref, proc_ref_unit(ref, 4242), 1, r->maps,
				r->n_maps, regs,
						      stack, len, want, MAX_FRAMES,
						      &want_complete));

	for (int pass = 0; pass < 2; pass++) {
		int n = up_to_zero(got, unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r->maps,
				   r->n_maps, regs, stack,
							len, got, MAX_FRAMES, &got_complete));

		if (n != n_want || got_complete != want_complete ||
		    memcmp(got, want, n * sizeof(*got)) != 0) {
			char names[MAX_FRAMES][64];

			name_frames(r, want, n_want, names);
			print_frames(want_complete ? "libdw (complete)" : "libdw", want, n_want,
				     names);
			name_frames(r, got, n, names);
			print_frames(got_complete ? "cached rules (complete)" : "cached rules", got,
				     n, names);
			fail_msg("pass %d: the cached rules disagree with libdw", pass);
		}
	}
}

static struct unwinder *libdw_only(void)
{
	struct unwinder *ref = unwinder_new();

	assert_non_null(ref);
	unwinder_use_rule_cache(ref, false);
	return ref;
}

/*
 * Every kind of captured stack (sampled anywhere in the chain, in a second
 * thread, in the vDSO, through a signal frame, from .debug_frame, cut
 * short) unwinds to the same frames with the cached rules as with libdw,
 * and the cache really serves the ordinary ones.
 */
static void test_rule_cache_matches_libdw(void **state)
{
	static const struct {
		const char *prog, *mode;
		int min_cached_pct;
	} cases[] = {
		{ "build/unwind/chain-eh", "sample", 90 },
		{ "build/unwind/chain-debug", "sample", 90 },
		{ "build/unwind/chain-eh", "thread", 90 },
		{ "build/unwind/chain-eh", "vdso", 50 },
		{ "build/unwind/chain-eh", "leaf", 100 },
		/* the trampoline's CFI is an expression: libdw's job */
		{ "build/unwind/chain-eh", "signal", 0 },
	};
	char count[8];

	(void)state;
	snprintf(count, sizeof(count), "%d", N_SAMPLES);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct unwinder *u = unwinder_new(), *ref = libdw_only();
		struct unwinder_stats st;
		struct run r;

		assert_non_null(u);
		run_chain(&r, cases[k].prog, cases[k].mode, count);
		assert_true(r.n_caps >= 1);
		for (size_t i = 0; i < r.n_caps; i++) {
			const struct cap *c = &r.caps[i];

			check_same_as_libdw(u, ref, &r, &c->regs, c->stack, c->len);
			/* cut short: the walk must stop where libdw stops */
			if (i % 16 == 0)
				for (size_t len = 0; len < c->len; len += 40)
					check_same_as_libdw(u, ref, &r, &c->regs, c->stack, len);
		}
		unwinder_get_stats(u, &st);
		print_message("%s %s: %llu of %llu unwinds with cached rules, %llu rules\n",
			      cases[k].prog, cases[k].mode, (unsigned long long)st.cached,
			      (unsigned long long)st.unwinds, (unsigned long long)st.rules);
		assert_true(st.cached * 100 >= st.unwinds * cases[k].min_cached_pct);
		if (!strcmp(cases[k].mode, "signal"))
			assert_true(st.cached < st.unwinds);
		unwinder_get_stats(ref, &st);
		assert_int_equal(st.cached, 0);
		unwinder_free(u);
		unwinder_free(ref);
		run_free(&r);
	}
}

/* Garbage registers and stacks: the cached rules agree with libdw too. */
static void test_rule_cache_garbage(void **state)
{
	struct unwinder *u = unwinder_new(), *ref = libdw_only();
	uint8_t *junk = malloc(CAPTURE_STACK_MAX);
	struct unwind_regs regs;
	struct run r;

	(void)state;
	assert_non_null(u);
	assert_non_null(junk);
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	srandom(2);
	for (int round = 0; round < 1000; round++) {
		for (size_t i = 0; i < CAPTURE_STACK_MAX; i++)
			junk[i] = random();
		/* the real stack with a few words overwritten: plausible frames
		 * that go wrong somewhere */
		if (round % 2) {
			memcpy(junk, r.caps[0].stack, r.caps[0].len);
			for (int k = 0; k < 4; k++) {
				uint64_t a = r.caps[0].regs.ip + (random() % 4096) - 2048;

				memcpy(junk + (random() % (r.caps[0].len / 8)) * 8, &a, 8);
			}
		}
		regs = r.caps[0].regs;
		if (round % 3 == 1)
			regs.ip += (random() % 8192) - 4096;
		if (round % 5 == 1)
			regs.sp += (random() % 512) - 256;
		check_same_as_libdw(u, ref, &r, &regs, junk, CAPTURE_STACK_MAX);
	}
	free(junk);
	unwinder_free(u);
	unwinder_free(ref);
	run_free(&r);
}

/*
 * The cache holds rules by PC, never results: two stacks with the same PC
 * and registers but different contents unwind differently, and each the
 * same way every time.
 */
static void test_rule_cache_same_pc_other_stack(void **state)
{
	struct unwinder *u = unwinder_new(), *ref = libdw_only();
	uint64_t full[MAX_FRAMES], ips[MAX_FRAMES];
	uint8_t *other;
	struct run r;
	bool complete;
	int n_full, n;

	(void)state;
	assert_non_null(u);
	run_chain(&r, "build/unwind/chain-eh", "leaf", NULL);
	n_full = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, full, &complete);
	assert_true(complete);
	assert_true(n_full > 4);
	/* capture_here's return address is at [sp] (test_reads_image_memory):
	 * make it return to its caller's caller instead */
	other = malloc(r.caps[0].len);
	assert_non_null(other);
	memcpy(other, r.caps[0].stack, r.caps[0].len);
	memcpy(other, &full[2], sizeof(full[2]));
	for (int rep = 0; rep < 3; rep++) {
		n = unwinder_unwind(u, proc_ref_unit(u, 4242), 1, r.maps, r.n_maps, &r.caps[0].regs,
				    other,
				    r.caps[0].len, ips, MAX_FRAMES, &complete);
		assert_true(n >= 2);
		assert_int_equal(ips[0], full[0]);
		assert_int_equal(ips[1], full[2]);
		check_same_as_libdw(u, ref, &r, &r.caps[0].regs, other, r.caps[0].len);
		n = unwind_cap(u, &r, &r.caps[0], r.caps[0].len, ips, &complete);
		assert_int_equal(n, n_full);
		assert_memory_equal(ips, full, n * sizeof(uint64_t));
		assert_true(complete);
	}
	free(other);
	unwinder_free(u);
	unwinder_free(ref);
	run_free(&r);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static bool in_vdso(const struct run *r, uint64_t ip)
{
	for (size_t i = 0; i < r->n_maps; i++)
		if (ip >= r->maps[i].start && ip < r->maps[i].end)
			return !strcmp(r->maps[i].path, "[vdso]");
	return false;
}

/*
 * Signal-driven samples at arbitrary instructions (prologues, epilogues,
 * between calls): at least 95% carry the whole chain to main and are
 * complete.  Also measures the cost of one unwind: the first (which builds
 * the process's Dwfl) and then with a warm cache.
 */
static void check_sampled(const char *prog, const char *mode)
{
	struct unwinder *u = unwinder_new();
	uint64_t ips[MAX_FRAMES];
	char names[MAX_FRAMES][64];
	char count[8];
	struct run r;
	size_t whole = 0, levels[CAPTURE_DEPTH + 1] = { 0 }, frames = 0;
	size_t vdso = 0, vdso_whole = 0;
	int reps = 20;
	double t0, t1, first_us = 0;
	bool complete, thread = !strcmp(mode, "thread");
	const char *root = thread ? "thread_main" : "main";

	snprintf(count, sizeof(count), "%d", N_SAMPLES);
	run_chain(&r, prog, mode, count);
	assert_int_equal(r.n_caps, N_SAMPLES);
	for (size_t i = 0; i < r.n_caps; i++) {
		int n, leaf = -1;
		bool ok;

		t0 = now_us();
		n = unwind_cap(u, &r, &r.caps[i], r.caps[i].len, ips, &complete);
		if (i == 0)
			first_us = now_us() - t0;
		assert_true(n >= 1);
		assert_int_equal(ips[0], r.caps[i].regs.ip);
		name_frames(&r, ips, n, names);
		ok = complete && whole_chain_to(names, n, &leaf, root);
		/* the outermost frame: _start for the main thread, clone3 (in
		 * libc, a static symbol) for another */
		if (ok && thread)
			ok = strstr(mapping_path(&r, ips[n - 1] - 1), "/libc.so") != NULL;
		else if (ok)
			ok = !strcmp(names[n - 1], "_start");
		if (ok) {
			whole++;
			levels[leaf]++;
		} else {
			print_frames(complete ? "not whole, complete" : "not whole, incomplete",
				     ips, n, names);
		}
		if (in_vdso(&r, ips[0])) {
			vdso++;
			vdso_whole += ok;
		}
	}
	print_message("%s %s: %zu of %zu samples carry the whole chain to %s (%.1f%%); "
		      "%zu in the vDSO, %zu of them whole; by leaf level:", prog, mode, whole,
		      r.n_caps, root, 100.0 * whole / r.n_caps, vdso, vdso_whole);
	for (int k = 0; k <= CAPTURE_DEPTH; k++)
		print_message(" %zu", levels[k]);
	print_message("\n");
	assert_true(whole * 100 >= r.n_caps * 95);
	if (!strcmp(mode, "vdso")) {
		/* the samples must really exercise the vDSO */
		assert_true(vdso * 5 >= r.n_caps);
		assert_true(vdso_whole * 100 >= vdso * 95);
	} else {
		/* they must really spread over the chain, not sit in one place */
		for (int k = 1; k <= CAPTURE_DEPTH; k++)
			assert_true(levels[k] > 0);
	}

	t0 = now_us();
	for (int rep = 0; rep < reps; rep++)
		for (size_t i = 0; i < r.n_caps; i++)
			frames += unwind_cap(u, &r, &r.caps[i], r.caps[i].len, ips, &complete);
	t1 = now_us();
	print_message("%s %s: %.2f us per unwind (warm, %zu unwinds, %.1f frames each%s); "
		      "first unwind with Dwfl build %.0f us\n", prog, mode,
		      (t1 - t0) / (reps * r.n_caps), reps * r.n_caps,
		      (double)frames / (reps * r.n_caps), SANITIZED, first_us);
	unwinder_free(u);
	run_free(&r);
}

static void test_sampled_eh_frame(void **state)
{
	(void)state;
	check_sampled("build/unwind/chain-eh", "sample");
}

static void test_sampled_debug_frame(void **state)
{
	(void)state;
	check_sampled("build/unwind/chain-debug", "sample");
}

static void test_sampled_thread(void **state)
{
	(void)state;
	check_sampled("build/unwind/chain-eh", "thread");
}

static void test_sampled_vdso(void **state)
{
	(void)state;
	check_sampled("build/unwind/chain-eh", "vdso");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_cache_matches_libdw),
		cmocka_unit_test(test_rule_cache_garbage),
		cmocka_unit_test(test_rule_cache_same_pc_other_stack),
		cmocka_unit_test(test_sampled_eh_frame),
		cmocka_unit_test(test_sampled_debug_frame),
		cmocka_unit_test(test_sampled_vdso),
		cmocka_unit_test(test_sampled_thread),
	};

	elf_version(EV_CURRENT);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
