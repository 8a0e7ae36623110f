/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the model keeps of HotSpot's walks: its statistics, named counters
 * of the model (model_named_stat_add()) written by jvm_ops.c, and the
 * summary's Java part printed from them, from the "[java]" image's frames
 * and, when a run's instance is at hand, from what it knows of each JVM
 * (jvm_procs.h: releases walked, why one was not) (jvm_report.c).
 */
#ifndef COLLECTOR_JVM_REPORT_H
#define COLLECTOR_JVM_REPORT_H

#include <stdio.h>

#include "model/model.h"
#include "runtimes/jvm/jvm_procs.h"
#include "runtimes/runtime.h"

/* the kernel side's walks (bpf/hotspot.bpf.h: COLLECTOR_CNT_HS_*) */
#define JVM_STAT_WALKS "jvm_walks"
#define JVM_STAT_FRAMES "jvm_frames"
#define JVM_STAT_NO_BLOB "jvm_walks_stopped_no_blob"
#define JVM_STAT_BAD_FRAME "jvm_walks_stopped_bad_frame"
#define JVM_STAT_LIMIT "jvm_walks_stopped_limit"
/* Java frames whose code blob came from the walk's cache (bpf/hotspot.bpf.h:
 * hotspot_blob_facts), and cached blobs found gone (code freed) */
#define JVM_STAT_FACTS_HIT "jvm_blob_facts_cached"
#define JVM_STAT_FACTS_STALE "jvm_blob_facts_stale"
/* frames that could not be named (code freed or reused, process gone) */
#define JVM_STAT_FRAMES_UNNAMED "jvm_frames_unnamed"
/* JVMs walked; met but not known to the walk (their layout) */
#define JVM_STAT_WALKED "jvm_vms_walked"
#define JVM_STAT_UNSUPPORTED "jvm_vms_unsupported"
/* JVMs met in a run that does not walk JVMs (--no-jvm-walk, or a -p run
 * whose targets ran none when it started: the walk is not loaded) */
#define JVM_STAT_UNWALKED "jvm_vms_unwalked"

extern const struct runtime_ops jvm_runtime;

/* The walks' lines: JVMs walked (their releases when st is not NULL),
 * samples with Java frames, the walks and how they stopped, frames
 * unnamed; then JVMs the walk does not know, and why (st's last reason).
 * Nothing when no JVM was met. */
void jvm_report_walks(FILE *out, const struct model *m, const struct jvm_procs_stats *st);
/* The table of Java methods by self samples (the innermost Java frame's
 * innermost inlined method) and total samples. */
void jvm_report_tables(FILE *out, const struct model *m);

#endif /* COLLECTOR_JVM_REPORT_H */
