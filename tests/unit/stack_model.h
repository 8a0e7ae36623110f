/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A model built by hand for the tests of the stack-shaped formats (pprof,
 * folded, flame graph, speedscope), and an output directory for them.
 *
 * Process "work" (pid 100) with threads 100 ("work") and 101 ("worker");
 * images /usr/bin/work (ELF, build-id), [kernel.kallsyms] and [anon:exec]
 * (JIT).  Stacks, leaf first, and the frames they make root first:
 *
 *   S_INLINE  leaf+inl, work, main   main;work;leaf;inl   (inl inlined into leaf)
 *   S_KERNEL  k_irq, work, main       main;work;k_irq_[k]
 *   S_UNKNOWN 0x1f00 of work, main    main;[work]
 *   S_JIT     0x10 of [anon:exec]     main;[anon:exec]_[j]
 *
 * Samples, in time order, PERIOD ns apart:
 *   t0..t2  thread 100  S_INLINE x3
 *   t3      thread 101  S_KERNEL
 *   t4      thread 101  S_INLINE
 *   t5      thread 100  S_UNKNOWN
 *   t6      thread 100  S_JIT
 *   t7      thread 100  no stack
 */
#ifndef COLLECTOR_TEST_STACK_MODEL_H
#define COLLECTOR_TEST_STACK_MODEL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/format.h"
#include "model/model.h"

#define SM_T0 1700000000000000000ULL
#define SM_PERIOD 1000000ULL
#define SM_BUILD_ID "0123456789abcdef0123456789abcdef01234567"
#define SM_SAMPLES 8

struct stack_model {
	char dir[64];
	struct export_options opts;
	struct model m;
	uint32_t exe, kernel, jit, proc, t100, t101;
	uint32_t f_main, f_work, f_leaf, f_inl, f_irq;
	uint32_t l_main, l_work, l_leaf, l_irq, l_unknown, l_jit;
	uint32_t s_inline, s_kernel, s_unknown, s_jit;
};

static inline void sm_sample(struct stack_model *sm, uint32_t thread, uint32_t stack, int i)
{
	struct model_sample *s = model_add_sample(&sm->m);

	s->time_ns = SM_T0 + (uint64_t)(i + 1) * SM_PERIOD;
	s->weight = SM_PERIOD;
	s->process = sm->proc;
	s->thread = thread;
	s->stack = stack;
	s->kernel_mode = stack == sm->s_kernel;
}

static inline struct stack_model *sm_new(void)
{
	struct stack_model *sm = calloc(1, sizeof(*sm));
	struct model_image exe = { .path = "/usr/bin/work", .kind = MODEL_IMAGE_ELF,
				   .has_symbols = true, .build_id = SM_BUILD_ID,
				   .text_start = 0x1000, .text_size = 0x1000 };
	struct model_image kernel = { .path = "[kernel.kallsyms]", .kind = MODEL_IMAGE_KERNEL,
				      .has_symbols = true, .text_start = 0xffffffff81000000ULL,
				      .text_size = 0x1000000 };
	struct model_image jit = { .path = "[anon:exec]", .kind = MODEL_IMAGE_ANON };
	struct model_mapping map = { .start = 0x555555555000ULL, .end = 0x555555556000ULL,
				     .pgoff = 0x1000, .bias = 0x555555554000ULL, .exec = true };
	struct model *m;
	uint32_t file, frames[3];
	struct model_inline inl;

	if (!sm)
		abort();
	m = &sm->m;
	strcpy(sm->dir, "/tmp/test_stackfmt.XXXXXX");
	if (!mkdtemp(sm->dir))
		abort();
	sm->opts.dir = sm->dir;
	sm->opts.quiet = true;
	model_init(m);
	m->run.start_ns = SM_T0;
	m->run.end_ns = SM_T0 + 10 * SM_PERIOD;
	m->run.freq_hz = 1000;
	m->run.period_ns = SM_PERIOD;
	model_set_command_line(m, "work --hard");
	sm->exe = model_add_image(m, &exe);
	sm->kernel = model_add_image(m, &kernel);
	sm->jit = model_add_image(m, &jit);
	sm->proc = model_add_process(m, 100, 1, 0, "work", "work --hard", "/usr/bin/work");
	m->processes.items[sm->proc].exe_image = sm->exe;
	map.image = sm->exe;
	model_add_mapping(m, sm->proc, &map);
	sm->t100 = model_add_thread(m, sm->proc, 100, "work");
	sm->t101 = model_add_thread(m, sm->proc, 101, "worker");

	file = model_intern_file(m, "/src/work.c");
	sm->f_main = model_intern_function(m, sm->exe, "main", 0x1000, 0x100, file, 10);
	sm->f_work = model_intern_function(m, sm->exe, "work", 0x1100, 0x100, file, 20);
	sm->f_leaf = model_intern_function(m, sm->exe, "leaf", 0x1200, 0x100, file, 30);
	sm->f_inl = model_intern_function(m, sm->exe, "inl", 0, 0, file, 40);
	sm->f_irq = model_intern_function(m, sm->kernel, "k_irq", 0xffffffff81000100ULL, 0x40,
					  MODEL_NONE, 0);
	sm->l_main = model_intern_location(m, sm->exe, 0x1010, sm->f_main, file, 12, NULL, 0);
	sm->l_work = model_intern_location(m, sm->exe, 0x1110, sm->f_work, file, 22, NULL, 0);
	/* inl inlined into leaf at work.c:33; the address is at work.c:41, in inl */
	inl = (struct model_inline){ .function = sm->f_inl, .call_file = file, .call_line = 33 };
	sm->l_leaf = model_intern_location(m, sm->exe, 0x1210, sm->f_leaf, file, 41, &inl, 1);
	sm->l_irq = model_intern_location(m, sm->kernel, 0xffffffff81000110ULL, sm->f_irq,
					  MODEL_NONE, 0, NULL, 0);
	sm->l_unknown = model_intern_location(m, sm->exe, 0x1f00, MODEL_NONE, MODEL_NONE, 0,
					      NULL, 0);
	sm->l_jit = model_intern_location(m, sm->jit, 0x10, MODEL_NONE, MODEL_NONE, 0, NULL, 0);

	frames[0] = sm->l_leaf, frames[1] = sm->l_work, frames[2] = sm->l_main;
	sm->s_inline = model_intern_stack(m, frames, 3, 0, false);
	frames[0] = sm->l_irq;
	sm->s_kernel = model_intern_stack(m, frames, 3, 1, false);
	frames[0] = sm->l_unknown, frames[1] = sm->l_main;
	sm->s_unknown = model_intern_stack(m, frames, 2, 0, false);
	frames[0] = sm->l_jit;
	sm->s_jit = model_intern_stack(m, frames, 2, 0, false);

	for (int i = 0; i < 3; i++)
		sm_sample(sm, sm->t100, sm->s_inline, i);
	sm_sample(sm, sm->t101, sm->s_kernel, 3);
	sm_sample(sm, sm->t101, sm->s_inline, 4);
	sm_sample(sm, sm->t100, sm->s_unknown, 5);
	sm_sample(sm, sm->t100, sm->s_jit, 6);
	sm_sample(sm, sm->t100, MODEL_NONE, 7);
	return sm;
}

/* One more sample (the 9th, on thread 100), of a stack through two
 * runtimes' frames: main calls "handle" of a "[python]" image, which calls
 * "long Kestrel.hotMix(long[], int)" of a "[java]" image whose methods a
 * JIT compiles. */
static inline void sm_sample_runtimes(struct stack_model *sm)
{
	struct model_image java = { .path = "[java]", .kind = MODEL_IMAGE_RUNTIME,
				    .jit_methods = true };
	struct model_image py = { .path = "[python]", .kind = MODEL_IMAGE_RUNTIME };
	struct model *m = &sm->m;
	uint32_t ip = model_add_image(m, &py), ij = model_add_image(m, &java);
	uint32_t fp = model_intern_function(m, ip, "handle", 0, 0, MODEL_NONE, 0);
	uint32_t fj = model_intern_function(m, ij, "long Kestrel.hotMix(long[], int)", 0, 0,
					    MODEL_NONE, 0);
	uint32_t frames[3] = {
		model_intern_location(m, ij, 0x10, fj, MODEL_NONE, 0, NULL, 0),
		model_intern_location(m, ip, 0x20, fp, MODEL_NONE, 0, NULL, 0),
		sm->l_main,
	};

	sm_sample(sm, sm->t100, model_intern_stack(m, frames, 3, 0, false), 8);
}

static inline void sm_free(struct stack_model *sm)
{
	char cmd[128];

	model_free(&sm->m);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sm->dir);
	if (system(cmd) != 0)
		abort();
	free(sm);
}

/* dir/name into buf. */
static inline const char *sm_path(const struct stack_model *sm, const char *name, char *buf,
				  size_t size)
{
	snprintf(buf, size, "%s/%s", sm->dir, name);
	return buf;
}

#endif /* COLLECTOR_TEST_STACK_MODEL_H */
