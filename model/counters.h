/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The named counters of a run: events lost by cause (struct model.lost)
 * and the other run statistics (struct model.stats).
 *
 * Each counter is a constant, listed once below with the name the summary
 * and the formats print: count with model_lost_add() / model_stat_add(),
 * read with model_lost_value() / model_stat_value().  A misspelt constant
 * does not compile, where a misspelt string used to read 0.
 *
 * Storage stays what the formats read: m->lost and m->stats are vectors of
 * struct model_counter {name, value} in the order the counters were first
 * counted (with 0 too: a counter counted 0 is listed), and a counter never
 * counted is absent.  A language runtime's statistics are named by the
 * runtime (model_named_stat_add()), kept in the same vector.
 */
#ifndef COLLECTOR_MODEL_COUNTERS_H
#define COLLECTOR_MODEL_COUNTERS_H

#include <stdint.h>

/* Events the kernel side, or the collector, could not deliver. */
#define MODEL_LOST_LIST(X)                                                        \
	X(RB_FULL_SAMPLES, "ring buffer full (samples)")                          \
	X(RB_FULL_TASKS, "ring buffer full (fork/exec/exit)")                     \
	X(RB_FULL_SWITCHES, "ring buffer full (switches)")                        \
	X(KERNEL_STACK_FAILED, "kernel stack walk failed")                        \
	X(AGGREGATION_FULL, "aggregation map full")                               \
	X(CHILDREN_NOT_FOLLOWED, "children not followed")                         \
	X(AGG_STACKS_FULL, "kernel stack map full (stack not stored)")             \
	X(AGG_KEYS_FULL, "kernel by-stack sums map full (samples or off-CPU time not counted)") \
	X(RB_FULL_TRACE_ENTRIES, "ring buffer full (traced entries)")             \
	X(RB_FULL_TRACE_EXITS, "ring buffer full (traced exits)")                 \
	X(TRACE_TOO_DEEP, "traced calls nested too deep")                         \
	X(TRACE_STATS_FULL, "per-function map full")                              \
	X(TRACE_SHADOW_FULL, "per-thread call stack map full")                    \
	X(TRACE_CLAIM_FULL, "per-thread call aggregates not merged (claim map full)") \
	X(SPILL_UNREAD, "events not read back from the spill file")              \
	X(SAMPLER_BUSY, "samples skipped (sampler over its CPU share)")

/* Other statistics: records set aside, costs, what symbolizing met. */
#define MODEL_STAT_LIST(X)                                                        \
	/* decode/: records and stacks */                                         \
	X(MALFORMED_RECORDS, "malformed_records")                                 \
	X(RECORDS_OF_COLLECTOR, "records_of_collector")                           \
	X(RECORDS_BEFORE_EXEC, "records_before_exec")                             \
	X(TRACE_RECORDS_CALIBRATION, "trace_records_calibration")                 \
	X(SWITCHES_AFTER_EXIT, "switches_after_exit")                             \
	X(MAPS_UNREADABLE, "maps_unreadable")                                     \
	X(MAPS_SHARED, "maps_shared")                                             \
	X(MAPS_DEFERRED, "maps_deferred")                                         \
	X(FRAMES_WITHOUT_MAPPING, "frames_without_mapping")                       \
	X(TRUNCATED_STACKS, "truncated_stacks")                                   \
	X(OFFCPU_STACKS_UNWOUND, "offcpu_stacks_unwound")                         \
	X(OFFCPU_STACKS_DROPPED, "offcpu_stacks_dropped")                         \
	/* decode/: --call-graph dwarf */                                         \
	X(UNWINDER_PREPARE_FAILED, "unwinder_prepare_failed")                     \
	X(UNWIND_NS_TOTAL, "unwind_ns_total")                                     \
	X(UNWOUND_SAMPLES, "unwound_samples")                                     \
	X(STACK_RECORD_BYTES, "stack_record_bytes")                               \
	X(UNWOUND_COMPLETE, "unwound_complete")                                   \
	X(UNWINDER_DWFL_BUILDS, "unwinder_dwfl_builds")                           \
	X(UNWINDER_IMAGES_FAILED, "unwinder_images_failed")                       \
	X(UNWINDER_CACHED_WALKS, "unwinder_cached_walks")                         \
	X(UNWINDER_RULES, "unwinder_rules")                                       \
	/* decode/: --call-graph cfi, the unwinder in BPF and its tables */       \
	X(CFI_FP_FRAMES, "cfi_fp_frames")                                         \
	X(CFI_SAMPLES_BEFORE_TABLES, "cfi_samples_before_tables")                 \
	X(CFI_STOPPED_OUTSIDE, "cfi_stopped_outside_mappings")                    \
	X(CFI_COMPLETE, "cfi_complete")                                           \
	X(CFI_MAPPINGS_LEARNED, "cfi_mappings_learned")                           \
	X(CFI_TABLE_IMAGES, "cfi_table_images")                                   \
	X(CFI_TABLE_ROWS, "cfi_table_rows")                                       \
	X(CFI_TABLE_INDEX_ENTRIES, "cfi_table_index_entries")                     \
	X(CFI_TABLE_BUILD_US, "cfi_table_build_us")                               \
	X(CFI_TABLE_MAP_BYTES, "cfi_table_map_bytes")                             \
	X(CFI_TABLE_LOADER_BYTES, "cfi_table_loader_bytes")                       \
	X(CFI_TABLE_EVICTED_IMAGES, "cfi_table_evicted_images")                   \
	X(CFI_TABLE_EVICTED_ROWS, "cfi_table_evicted_rows")                       \
	X(CFI_TABLE_NO_SPACE, "cfi_table_no_space")                               \
	X(CFI_TABLE_DEBUG_FILES, "cfi_table_debug_files")                         \
	X(CFI_TABLE_BUILT, "cfi_table_built")                                     \
	X(CFI_TABLE_CACHE_HITS, "cfi_table_cache_hits")                           \
	X(CFI_TABLE_CACHE_REFUSED, "cfi_table_cache_refused")                     \
	X(CFI_TABLE_SERVED_EXEC, "cfi_table_served_exec")                         \
	X(CFI_TABLE_SERVED_FIRST, "cfi_table_served_first")                       \
	X(CFI_TABLE_OPEN_FAILED, "cfi_table_open_failed")                         \
	X(MAPS_READ, "maps_read")                                                 \
	X(MAPS_REUSED, "maps_reused")                                             \
	X(MAPS_FOLLOWED, "maps_followed")                                         \
	X(MMAP_RECORDS, "mmap_records")                                           \
	X(MMAP_RECORDS_LOST, "mmap_records_lost")                                 \
	/* decode/: the kernel side's counters and the uprobes' attach */         \
	X(RING_WAKEUPS, "ring_wakeups")                                           \
	X(RUNTIME_WALK_UNLOADED, "runtime_walk_unloaded")                         \
	X(KERNEL_SAMPLES, "kernel_samples")                                       \
	X(OFFCPU_SHORT_SWITCHES, "offcpu_short_switches")                         \
	X(OFFCPU_MIN_NS, "offcpu_min_ns")                                         \
	X(OFFCPU_NO_STATE, "offcpu_no_state")                                     \
	X(OFFCPU_WINDOW_BLOCKED, "offcpu_window_blocked")                         \
	X(OFFCPU_WINDOW_NO_USER, "offcpu_window_kernel_stack_only")               \
	X(OFFCPU_WINDOW_WOKE, "offcpu_window_woke")                               \
	X(OFFCPU_WINDOW_CUT, "offcpu_window_cut")                                 \
	X(PROBE_OVERHEAD_NS, "probe_overhead_ns")                                 \
	X(TRACED_FUNCTIONS_SKIPPED, "traced_functions_skipped")                   \
	X(ATTACH_US, "attach_us")                                                 \
	X(TRACED_EXITS_WITHOUT_ENTRY, "traced_exits_without_entry")               \
	X(TRACED_ENTRIES_WITHOUT_EXIT, "traced_entries_without_exit")             \
	X(TRACE_RING_WAKEUPS, "trace_ring_wakeups")                               \
	X(TRACED_CALLS_PAST_THREAD_SLOTS, "traced_calls_past_thread_slots")       \
	X(TRACED_STATS_UNKNOWN_THREAD, "traced_stats_unknown_thread")             \
	/* symbols/ */                                                            \
	X(SYMBOLIZE_UNREADABLE_IMAGES, "symbolize_unreadable_images")             \
	X(SYMBOLIZE_IDENTITY_MISMATCH, "symbolize_identity_mismatch")             \
	X(SYMBOLIZE_UNRESOLVED_LOCATIONS, "symbolize_unresolved_locations")       \
	X(KALLSYMS_UNREADABLE, "kallsyms_unreadable")                             \
	X(KALLSYMS_RESTRICTED, "kallsyms_restricted")

/* MODEL_LOST_RB_FULL_SAMPLES, ... */
enum model_lost {
#define MODEL_LOST_ENUM(id, name) MODEL_LOST_##id,
	MODEL_LOST_LIST(MODEL_LOST_ENUM)
#undef MODEL_LOST_ENUM
	MODEL_LOST_COUNT
};

/* MODEL_STAT_MALFORMED_RECORDS, ... */
enum model_stat {
#define MODEL_STAT_ENUM(id, name) MODEL_STAT_##id,
	MODEL_STAT_LIST(MODEL_STAT_ENUM)
#undef MODEL_STAT_ENUM
	MODEL_STAT_COUNT
};

/* A named count: lost events by cause, or run statistics. */
struct model_counter {
	char *name;
	uint64_t value;
};

/* The printed names. */
const char *model_lost_name(enum model_lost cause);
const char *model_stat_name(enum model_stat stat);

struct model;

/* Adds n to the counter, creating it (at the end of its vector) the first
 * time, even when n is 0. */
void model_lost_add(struct model *m, enum model_lost cause, uint64_t n);
void model_stat_add(struct model *m, enum model_stat stat, uint64_t n);
/* The counter's value; 0 when it was never counted. */
uint64_t model_lost_value(const struct model *m, enum model_lost cause);
uint64_t model_stat_value(const struct model *m, enum model_stat stat);
/* The sum of every lost-event counter. */
uint64_t model_total_lost(const struct model *m);

/* A lost-event cause by any name, for models built by hand (the formats'
 * tests); what the collector counts goes through model_lost_add(). */
void model_count_lost(struct model *m, const char *cause, uint64_t value);

/* A statistic named by its owner rather than listed above: a language
 * runtime's (runtimes/runtime.h), whose names start with the runtime's
 * name ("python_walks"), so that model/ names no runtime.  Stored and
 * printed as the listed ones; a name is compared as a string. */
void model_named_stat_add(struct model *m, const char *name, uint64_t n);
uint64_t model_named_stat_value(const struct model *m, const char *name);

#endif /* COLLECTOR_MODEL_COUNTERS_H */
