// SPDX-License-Identifier: GPL-2.0
/* The list of language runtimes, and a run's set of them (runtime.h). */
#include "runtimes/runtime.h"

#include <errno.h>
#include <string.h>

/* One line per runtime: its folder defines NAME_runtime (struct runtime_ops). */
#define RUNTIMES(X) \
	X(python)   \
	X(jvm)

#define DECLARE(name) extern const struct runtime_ops name##_runtime;
RUNTIMES(DECLARE)
#define ENTRY(name) &name##_runtime,
const struct runtime_ops *const runtime_registry[] = { RUNTIMES(ENTRY) NULL };

/* The bit of a runtime's frame kind in a mask of kinds (0: none). */
static uint32_t kind_bit(const struct runtime_ops *ops)
{
	return ops->frame_kind && ops->frame_kind < 32 ? 1u << ops->frame_kind : 0;
}

uint32_t runtimes_kind_named(const struct runtime_ops *const *list, const char *name)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i]->name, name))
			return kind_bit(list[i]);
	return 0;
}

uint32_t runtimes_walks_needed(const struct runtime_ops *const *list, const pid_t *pids, size_t n,
			       bool any)
{
	uint32_t kinds = 0;

	for (size_t i = 0; list[i]; i++) {
		const struct runtime_ops *ops = list[i];
		bool needed = any || !ops->present;

		for (size_t k = 0; k < n && !needed; k++)
			needed = ops->present(pids[k]);
		if (needed)
			kinds |= kind_bit(ops);
	}
	return kinds;
}

int runtimes_open(struct runtimes *rs, const struct runtime_ops *const *list,
		  const struct runtime_env *env)
{
	struct runtime_env unwalked = *env;

	unwalked.bpf = NULL;
	unwalked.no_walk = true;
	memset(rs, 0, sizeof(*rs));
	for (size_t i = 0; list[i] && rs->n < RUNTIMES_MAX; i++) {
		struct runtime *r = &rs->items[rs->n];

		r->ops = list[i];
		r->rt = r->ops->open(env->unwalked_kinds & kind_bit(r->ops) ? &unwalked : env);
		if (!r->rt) {
			runtimes_close(rs);
			return -ENOMEM;
		}
		if (r->ops->frame_kind && r->ops->frame_kind < 16)
			rs->by_kind[r->ops->frame_kind] = r;
		rs->n++;
	}
	return 0;
}

void runtimes_close(struct runtimes *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		rs->items[i].ops->close(rs->items[i].rt);
	memset(rs, 0, sizeof(*rs));
}

bool runtimes_may_be(const struct runtimes *rs, const char *exe)
{
	for (size_t i = 0; rs && i < rs->n; i++)
		if (rs->items[i].ops->may_be && rs->items[i].ops->may_be(rs->items[i].rt, exe))
			return true;
	return false;
}

uint32_t runtimes_kinds_of_exe(const struct runtimes *rs, const char *exe)
{
	uint32_t kinds = 0;

	for (size_t i = 0; rs && i < rs->n; i++)
		if (rs->items[i].ops->may_be && rs->items[i].ops->may_be(rs->items[i].rt, exe))
			kinds |= kind_bit(rs->items[i].ops);
	return kinds;
}

size_t runtimes_live(const struct runtimes *rs)
{
	size_t n = 0;

	for (size_t i = 0; rs && i < rs->n; i++)
		if (rs->items[i].ops->live)
			n += rs->items[i].ops->live(rs->items[i].rt);
	return n;
}

void runtimes_forget(const struct runtimes *rs, pid_t pid, struct runtime_words *words)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		struct proc_ref p = runtime_proc_of(rs, &rs->items[i], pid, words);

		if (rs->items[i].ops->forget)
			rs->items[i].ops->forget(rs->items[i].rt, &p);
	}
}

void runtimes_drop(const struct runtimes *rs, const struct runtime_words *words)
{
	for (size_t i = 0; rs && i < rs->n; i++)
		if (rs->items[i].ops->drop && words->w[i])
			rs->items[i].ops->drop(rs->items[i].rt, words->w[i]);
}

const struct runtime *runtimes_owning_pc(const struct runtimes *rs, pid_t pid,
					 struct runtime_words *words, uint64_t pc)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		struct proc_ref p = runtime_proc_of(rs, &rs->items[i], pid, words);

		if (rs->items[i].ops->owns_pc && rs->items[i].ops->walk_copy &&
		    rs->items[i].ops->owns_pc(rs->items[i].rt, &p, pc))
			return &rs->items[i];
	}
	return NULL;
}

bool runtimes_own_jit(const struct runtimes *rs, pid_t pid, struct runtime_words *words)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		struct proc_ref p = runtime_proc_of(rs, &rs->items[i], pid, words);

		if (rs->items[i].ops->owns_jit && rs->items[i].ops->owns_jit(rs->items[i].rt, &p))
			return true;
	}
	return false;
}

bool runtimes_walk(const struct runtimes *rs, pid_t pid, struct runtime_words *words)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		struct proc_ref p = runtime_proc_of(rs, &rs->items[i], pid, words);

		if (rs->items[i].ops->has && rs->items[i].ops->has(rs->items[i].rt, &p))
			return true;
	}
	return false;
}

void runtimes_ask_names(const struct runtimes *rs, const pid_t *pids, size_t n)
{
	for (size_t i = 0; rs && i < rs->n; i++)
		if (rs->items[i].ops->ask_names)
			rs->items[i].ops->ask_names(rs->items[i].rt, pids, n);
}

/* The runtimes of rs, or every registered one when rs is NULL (a summary
 * printed from a model alone, a replay). */
static size_t ops_list(const struct runtimes *rs, const struct runtime_ops **ops,
		       const void **inst)
{
	size_t n = 0;

	if (rs) {
		for (size_t i = 0; i < rs->n; i++, n++) {
			ops[n] = rs->items[i].ops;
			inst[n] = rs->items[i].rt;
		}
		return n;
	}
	for (; runtime_registry[n] && n < RUNTIMES_MAX; n++) {
		ops[n] = runtime_registry[n];
		inst[n] = NULL;
	}
	return n;
}

void runtimes_counters(const struct runtimes *rs, struct model *m, const uint64_t *kernel_counters)
{
	const struct runtime_ops *ops[RUNTIMES_MAX];
	const void *inst[RUNTIMES_MAX];
	size_t n = ops_list(rs, ops, inst);

	for (size_t i = 0; i < n; i++)
		if (ops[i]->counters)
			ops[i]->counters(m, kernel_counters);
}

void runtimes_summary(FILE *out, const struct model *m, enum runtime_summary_part part,
		      const struct runtimes *rs)
{
	const struct runtime_ops *ops[RUNTIMES_MAX];
	const void *inst[RUNTIMES_MAX];
	size_t n = ops_list(rs, ops, inst);

	for (size_t i = 0; i < n; i++)
		if (ops[i]->summary)
			ops[i]->summary(out, m, part, inst[i]);
}
