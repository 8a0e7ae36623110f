/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HotSpot's table of runtime operations (runtimes/runtime.h), jvm_runtime,
 * defined in jvm_ops.c and listed by runtimes/runtime_registry.c; and the
 * one way into an instance the tests and tools take: its JVMs, to give it
 * one whose layout and record they built (jvm_procs_add()).
 */
#ifndef COLLECTOR_JVM_OPS_H
#define COLLECTOR_JVM_OPS_H

#include "runtimes/jvm/jvm_procs.h"
#include "runtimes/runtime.h"

extern const struct runtime_ops jvm_runtime;

/* The JVMs of an instance jvm_runtime.open() returned. */
struct jvm_procs *jvm_instance_procs(void *inst);

#endif /* COLLECTOR_JVM_OPS_H */
