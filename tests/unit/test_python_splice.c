// SPDX-License-Identifier: GPL-2.0
/*
 * decode/tracker_runtimes.c, through the runtimes' interface
 * (python_runtime, runtimes/runtime.h): a sample's Python frames spliced
 * into its native stack, one run (innermost first, up to an ENTRY frame) in place
 * of each C call of the evaluator, and COLLECTOR_PY_EMPTY_CALL, a run of
 * no Python frame (an evaluator call sampled in its entry or exit: 3.12+
 * with a shim frame current), keeping that call's native frame while the
 * caller's frames go to the caller's evaluator call.
 *
 * This program is the interpreter: it exports _PyRuntime and Py_Version
 * (3.11.2) and has a function named _PyEval_EvalFrameDefault, so the
 * tracker finds it among this process's mappings as it would a python3.11;
 * its code objects are laid out in this process's memory as 3.11's.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "decode/tracker.h"
#include "tracker_unit.h"
#include "runtimes/python/python.h"
#include "runtimes/python/python_report.h"
#include "runtimes/python/python_layouts.h"

/* What the tracker looks for in an interpreter's image. */
__attribute__((used)) const uint32_t Py_Version = 0x030b02f0;
__attribute__((used)) uint64_t _PyRuntime[64];

__attribute__((noinline, noipa)) int _PyEval_EvalFrameDefault(int x)
{
	return x * 7 + 3;
}

/* A C function between two calls of the evaluator (list.sort's place). */
__attribute__((noinline, noipa)) int sp_sort(int x)
{
	return _PyEval_EvalFrameDefault(x) + 1;
}

__attribute__((noinline, noipa)) int sp_main(int x)
{
	return _PyEval_EvalFrameDefault(sp_sort(x)) * 2;
}

/* A code object of 3.11 named `name`, with its str objects and an empty
 * location table. */
struct fake_code {
	uint64_t code[32];
	uint64_t qualname[16], filename[16], table[8];
};

static void make_ascii(const struct python_layout *l, uint64_t *obj, const char *s)
{
	uint8_t *b = (uint8_t *)obj;
	uint32_t state = 1u << 5 | 1u << 2 | 1u << 6; /* compact, 1 byte, ASCII */
	uint64_t len = strlen(s);

	memcpy(b + l->str_length, &len, 8);
	memcpy(b + l->str_state, &state, 4);
	memcpy(b + l->str_ascii_data, s, len);
}

static void make_code(struct fake_code *c, const char *name)
{
	const struct python_layout *l = python_layout_of(11);
	uint8_t *b = (uint8_t *)c->code;
	uint64_t p;
	int32_t first = 1;

	memset(c, 0, sizeof(*c));
	make_ascii(l, c->qualname, name);
	make_ascii(l, c->filename, "/srv/app.py");
	p = (uintptr_t)c->qualname;
	memcpy(b + l->co_qualname, &p, 8);
	p = (uintptr_t)c->filename;
	memcpy(b + l->co_filename, &p, 8);
	p = (uintptr_t)c->table;
	memcpy(b + l->co_linetable, &p, 8);
	memcpy(b + l->co_firstlineno, &first, 4);
}

struct fixture {
	struct model m;
	struct symbolizer *sym;
	struct tracker *t;
	struct runtimes rs;
	struct fake_code gen, drive, module;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->t = tracker_unit_new(&f->m, &f->sym);
	if (!f->t)
		return -1;
	{
		static const struct runtime_ops *const list[] = { &python_runtime, NULL };
		struct runtime_env env = { .m = &f->m };

		if (runtimes_open(&f->rs, list, &env) != 0)
			return -1;
	}
	tracker_set_runtimes(f->t, &f->rs);
	if (tracker_add_process(f->t, getpid(), ktime_now()) != 0)
		return -1;
	make_code(&f->gen, "gen");
	make_code(&f->drive, "drive");
	make_code(&f->module, "<module>");
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

/* A sample of these user frames (native, then Python). */
static void feed(struct fixture *f, const uint64_t *user, uint16_t n_user)
{
	tracker_unit_sample(f->t, user, n_user, 1001001);
}

/* The last sample's stack as names, innermost first, ";" between. */
static const char *last_names(const struct fixture *f, char *out, size_t size)
{
	const struct model_sample *s = &f->m.samples.items[f->m.samples.len - 1];
	const struct model_stack *st = &f->m.stacks.items[s->stack];
	size_t at = 0;

	out[0] = 0;
	for (uint32_t i = 0; i < st->n_frames && at < size; i++) {
		const char *name = model_location_name(&f->m, model_stack_frames(&f->m, st)[i]);

		at += (size_t)snprintf(out + at, size - at, "%s%s", i ? ";" : "",
				       name ? name : "?");
	}
	return out;
}

#define PY(c, entry) COLLECTOR_PY_FRAME((uintptr_t)(c).code, 0, entry)

static void test_runs_spliced(void **state)
{
	struct fixture *f = *state;
	char names[512];
	/* sp_sort called from the evaluator running drive, under <module> */
	uint64_t user[7] = {
		(uint64_t)sp_sort + 4, (uint64_t)_PyEval_EvalFrameDefault + 1,
		(uint64_t)sp_main + 1, PY(f->gen, 0), PY(f->drive, 0), PY(f->module, 1),
	};

	feed(f, user, 6);
	assert_string_equal(last_names(f, names, sizeof(names)), "sp_sort;gen;drive;<module>;sp_main");
}

static void test_empty_call_keeps_native(void **state)
{
	struct fixture *f = *state;
	char names[512];
	uint64_t cut[5];
	/* an evaluator called from sp_sort, sampled before its first frame
	 * (or after its last): its caller's frames are the outer call's */
	uint64_t user[8] = {
		(uint64_t)_PyEval_EvalFrameDefault + 4, (uint64_t)sp_sort + 1,
		(uint64_t)_PyEval_EvalFrameDefault + 1, (uint64_t)sp_main + 1,
		COLLECTOR_PY_EMPTY_CALL, PY(f->gen, 0), PY(f->drive, 0), PY(f->module, 1),
	};

	feed(f, user, 8);
	assert_string_equal(last_names(f, names, sizeof(names)),
			    "_PyEval_EvalFrameDefault;sp_sort;gen;drive;<module>;sp_main");
	/* the same with the inner call's own frame pushed */
	user[4] = PY(f->gen, 1);
	feed(f, user, 8);
	assert_string_equal(last_names(f, names, sizeof(names)),
			    "gen;sp_sort;gen;drive;<module>;sp_main");
	/* the native walk stopped before the outer call: the frames left
	 * follow */
	memcpy(cut, user, 2 * sizeof(cut[0]));
	cut[2] = COLLECTOR_PY_EMPTY_CALL;
	cut[3] = PY(f->gen, 0);
	cut[4] = PY(f->drive, 0);

	feed(f, cut, 5);
	assert_string_equal(last_names(f, names, sizeof(names)),
			    "_PyEval_EvalFrameDefault;sp_sort;gen;drive");
	assert_int_equal(model_named_stat_value(&f->m, PYTHON_STAT_FRAMES_UNNAMED), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_runs_spliced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_call_keeps_native, setup, teardown),
	};

	(void)sp_main(1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
