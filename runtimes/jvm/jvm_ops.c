// SPDX-License-Identifier: GPL-2.0
/*
 * HotSpot behind the runtimes' interface (runtimes/runtime.h).  A JVM whose
 * libjvm.so the walk knows (JDK 17, 21, 25: jvm_procs.h) is walked by the
 * BPF side, its Java frames (COLLECTOR_FRAME_JAVA, bpf/hotspot.h) in place
 * among the native ones, named here from the live process.  A JVM it does
 * not know keeps its frames native, its JIT code named by the perf map it
 * is asked for through its attach listener (jvm_attach.h), as every JVM's
 * was before: the summary says what each JVM asked answered.
 */
#include "runtimes/jvm/jvm_ops.h"

#include <errno.h>
#include <stdlib.h>

#include "lib/idmap.h"
#include "runtimes/jvm/jvm_attach.h"
#include "runtimes/jvm/jvm_report.h"

struct jvm_instance {
	struct jvm_procs *procs;
	struct model *m;
	struct jvm_perfmaps asked;
	bool no_ask;
	bool no_walk;             /* --no-jvm-walk: no JVM is walked (the attach names) */
	bool did_ask;             /* the summary speaks only of a run that asks */
	struct idmap unwalked;    /* pids whose libjvm.so was met with no_walk */
	/* pids walked: one counted once, though walked again after an exec
	 * record decoded late made the run forget it (a script exec'ing java) */
	struct idmap walked;
};

static void *jvm_open(const struct runtime_env *env)
{
	struct jvm_instance *ji = calloc(1, sizeof(*ji));

	if (!ji)
		return NULL;
	ji->no_ask = env->no_ask;
	ji->no_walk = env->no_walk;
	ji->m = env->m;
	ji->procs = jvm_procs_new(env->bpf);
	if (!ji->procs) {
		free(ji);
		return NULL;
	}
	return ji;
}

static void jvm_close(void *inst)
{
	struct jvm_instance *ji = inst;

	if (!ji)
		return;
	idmap_free(&ji->unwalked);
	idmap_free(&ji->walked);
	jvm_perfmaps_free(&ji->asked);
	jvm_procs_free(ji->procs);
	free(ji);
}

struct jvm_procs *jvm_instance_procs(void *inst)
{
	return ((struct jvm_instance *)inst)->procs;
}

/* Counts statistic stat once per process: the first time pid is put in
 * seen. */
static void count_once(struct jvm_instance *ji, struct idmap *seen, pid_t pid, const char *stat)
{
	if (ji->m && idmap_get(seen, (uint64_t)pid) == UINT32_MAX &&
	    idmap_put(seen, (uint64_t)pid, 1) == 0)
		model_named_stat_add(ji->m, stat, 1);
}

static int jvm_mapped(void *inst, const struct proc_ref *p, const struct runtime_image *img)
{
	struct jvm_instance *ji = inst;
	int err;

	if (ji->no_walk) {
		/* counted once a process, for the summary to say why its
		 * stacks stop at their first Java frame */
		if (jvm_procs_is_libjvm(img->path))
			count_once(ji, &ji->unwalked, p->pid, JVM_STAT_UNWALKED);
		return 0;
	}
	err = jvm_procs_image(ji->procs, p, img);
	if (err > 0)
		count_once(ji, &ji->walked, p->pid, JVM_STAT_WALKED);
	else if (ji->m && err == -ENOTSUP)
		model_named_stat_add(ji->m, JVM_STAT_UNSUPPORTED, 1);
	return err;
}

static bool jvm_maps_later(void *inst, const char *exe)
{
	struct jvm_instance *ji = inst;

	return !ji->no_walk && jvm_procs_maps_later(ji->procs, exe);
}

/* a JVM's mappings are read at its exec: its walk must start before its
 * first samples (the launcher, or ld.so run as a command) */
static bool jvm_may_be(void *inst, const char *exe)
{
	(void)inst;
	return jvm_procs_is_launcher(exe);
}

static bool jvm_known(const void *inst, const struct proc_ref *p)
{
	return jvm_procs_known(((const struct jvm_instance *)inst)->procs, p);
}

static bool jvm_has(const void *inst, const struct proc_ref *p)
{
	return jvm_procs_has(((const struct jvm_instance *)inst)->procs, p);
}

static size_t jvm_live(const void *inst)
{
	return jvm_procs_live(((const struct jvm_instance *)inst)->procs);
}

static void jvm_forget(void *inst, const struct proc_ref *p)
{
	jvm_procs_forget(((struct jvm_instance *)inst)->procs, p);
}

static void jvm_drop(void *inst, uint32_t word)
{
	jvm_procs_drop(((struct jvm_instance *)inst)->procs, word);
}

static int jvm_name(void *inst, const struct proc_ref *p, uint64_t frame,
		    struct runtime_frame *out, uint32_t max)
{
	return jvm_procs_frame(((struct jvm_instance *)inst)->procs, p, frame, out, max);
}

/* Named now, kept for a stack decoded later: Method* and nmethods are
 * freed when classes unload or code is flushed. */
static void jvm_notice(void *inst, const struct proc_ref *p, uint64_t frame)
{
	struct runtime_frame f[RUNTIME_FRAME_MAX_INLINED];

	jvm_name(inst, p, frame, f, RUNTIME_FRAME_MAX_INLINED);
}

/* An unnamed frame is kept by its Method* (interpreted) or pc (compiled). */
static uint64_t jvm_unnamed_key(uint64_t frame)
{
	return COLLECTOR_HS_IS_INTERP(frame) ? COLLECTOR_HS_METHOD(frame) : COLLECTOR_HS_PC(frame);
}

/* A HotSpot JVM that is not walked is asked for its perf map whenever its
 * JIT code is unnamed, whatever its map names now: a map it dumped at an
 * earlier request may name code freed since.  A walked one names its
 * Java frames itself. */
static bool jvm_owns_jit(const void *inst, const struct proc_ref *p)
{
	return !jvm_procs_in_bpf(((const struct jvm_instance *)inst)->procs, p) &&
	       jvm_is_hotspot(p->pid);
}

/* pids: none walked (the engine asks for processes no runtime walks) */
static void jvm_ask_names(void *inst, const pid_t *pids, size_t n)
{
	struct jvm_instance *ji = inst;

	if (ji->no_ask || !n)
		return;
	ji->did_ask = true;
	if (jvm_perfmaps_refresh(&ji->asked, pids, n) != 0)
		fprintf(stderr, "collector: asking JVMs for perf maps: out of memory\n");
}

static void jvm_counters(struct model *m, const uint64_t *c)
{
	if (!c[COLLECTOR_CNT_HS_WALKS])
		return;
	model_named_stat_add(m, JVM_STAT_WALKS, c[COLLECTOR_CNT_HS_WALKS]);
	model_named_stat_add(m, JVM_STAT_FRAMES, c[COLLECTOR_CNT_HS_FRAMES]);
	model_named_stat_add(m, JVM_STAT_NO_BLOB, c[COLLECTOR_CNT_HS_NO_BLOB]);
	model_named_stat_add(m, JVM_STAT_BAD_FRAME, c[COLLECTOR_CNT_HS_BAD_FRAME]);
	model_named_stat_add(m, JVM_STAT_LIMIT, c[COLLECTOR_CNT_HS_LIMIT]);
	model_named_stat_add(m, JVM_STAT_FACTS_HIT, c[COLLECTOR_CNT_HS_FACTS_HIT]);
	model_named_stat_add(m, JVM_STAT_FACTS_STALE, c[COLLECTOR_CNT_HS_FACTS_STALE]);
}

static void jvm_summary(FILE *out, const struct model *m, enum runtime_summary_part part,
			const void *inst)
{
	const struct jvm_instance *ji = inst;

	if (part == RUNTIME_SUMMARY_TABLES) {
		jvm_report_tables(out, m);
		return;
	}
	if (part != RUNTIME_SUMMARY_WALKS)
		return;
	jvm_report_walks(out, m, ji ? jvm_procs_stats(ji->procs) : NULL);
	if (ji && ji->did_ask)
		jvm_perfmaps_print(out, &ji->asked);
}

static bool jvm_owns_pc(const void *inst, const struct proc_ref *p, uint64_t pc)
{
	return jvm_procs_owns_pc(((const struct jvm_instance *)inst)->procs, p, pc);
}

static int jvm_walk_copy(void *inst, const struct proc_ref *p, struct runtime_regs *regs,
			 bool first,
			 const uint8_t *stack, uint64_t stack_sp, size_t stack_len, uint64_t *frames,
			 uint32_t max, bool *left)
{
	return jvm_procs_walk_copy(((struct jvm_instance *)inst)->procs, p, regs, first, stack,
				   stack_sp, stack_len, frames, max, left);
}

/* A HotSpot JVM now: libjvm.so mapped (a launcher about to map it is
 * not: a -p target that is the java launcher has mapped it long since). */
static bool jvm_present(pid_t pid)
{
	return jvm_is_hotspot(pid);
}

const struct runtime_ops jvm_runtime = {
	.name = "jvm",
	.image = "[java]",
	.frame_type = "jvm",
	.jit_methods = true,
	.frame_kind = COLLECTOR_FRAME_JAVA,
	.splices = false,
	.unnamed_stat = JVM_STAT_FRAMES_UNNAMED,
	.present = jvm_present,
	.open = jvm_open,
	.close = jvm_close,
	.mapped = jvm_mapped,
	.owns_pc = jvm_owns_pc,
	.walk_copy = jvm_walk_copy,
	.maps_later = jvm_maps_later,
	.may_be = jvm_may_be,
	.known = jvm_known,
	.has = jvm_has,
	.live = jvm_live,
	.forget = jvm_forget,
	.drop = jvm_drop,
	.frame_name = jvm_name,
	.notice = jvm_notice,
	.unnamed_key = jvm_unnamed_key,
	.owns_jit = jvm_owns_jit,
	.ask_names = jvm_ask_names,
	.counters = jvm_counters,
	.summary = jvm_summary,
};
