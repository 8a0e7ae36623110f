/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-memory model of one collector run.
 *
 * Data flows one way: kernel -> decode -> model -> formats.  decode/ (with
 * symbols/ for the images, functions and locations) fills a struct model;
 * every format (formats/) reads it and nothing else.  Formats know nothing
 * of BPF, so their tests build a model by hand with the functions below.
 *
 * Addresses.  Every code address in the model is a (image, file-relative
 * address) pair: the link-time virtual address inside that ELF file, so that
 * counts from different processes mapping the same file merge, and so that
 * no format ever sees a load address.  For the kernel image the address is
 * the kernel virtual address as /proc/kallsyms gives it.
 *
 * Stacks.  A stack is an array of location ids, leaf first.  Frame 0 is the
 * sampled instruction.  Every other frame is a call site: the loader stores
 * the return address minus one, so that its function, file and line are
 * those of the call instruction and not of the statement after it.  Kernel
 * frames (if any) come first, then user frames.
 *
 * Ids.  Every table is an array; an entity's id is its index in that array.
 * MODEL_NONE marks an absent id.
 */
#ifndef COLLECTOR_MODEL_H
#define COLLECTOR_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/hashtab.h"
#include "model/counters.h"

#define MODEL_NONE UINT32_MAX
#define MODEL_MAX_EVENTS 8    /* events of one run (COLLECTOR_MAX_EVENTS) */
#define MODEL_MAX_ARGS 6
#define MODEL_HIST_BUCKETS 64

/* A growable array: items[0..len) are valid. */
#define MODEL_VEC(type)          \
	struct {                 \
		type *items;     \
		size_t len;      \
		size_t cap;      \
	}

/*
 * The lookup indexes (lib/hashtab.h), private to model.c.  Files,
 * functions and stacks are found by an id and the full hash of what it
 * stands for (equality is checked against the vector the id indexes);
 * locations, looked up for every frame of every new stack, keep their key
 * in the entry so that a probe reads nothing else.
 */
struct model_index_entry {
	uint64_t hash;
	uint32_t id;
};
HASHTAB_STRUCT(model_index, struct model_index_entry);

struct model_location_entry {
	uint64_t addr;
	uint32_t image;
	uint32_t id;
};
HASHTAB_STRUCT(model_location_index, struct model_location_entry);

enum model_image_kind {
	MODEL_IMAGE_ELF = 0,     /* a regular ELF file on disk */
	MODEL_IMAGE_KERNEL = 1,  /* [kernel.kallsyms] */
	MODEL_IMAGE_ANON = 2,    /* anonymous or special mapping ([vdso], JIT) */
	MODEL_IMAGE_RUNTIME = 3, /* a language runtime's frames ("[python]"),
				  * whose functions have a source file and
				  * lines; its addresses are no code
				  * addresses but keys (runtimes/runtime.h,
				  * decode/tracker_runtimes.c) */
};

struct model_image {
	char *path;           /* as the process maps it; "[kernel.kallsyms]" */
	char *debug_path;     /* separate debug file used, or NULL */
	char *frame_type;     /* MODEL_IMAGE_RUNTIME: OTLP's profile.frame.type
			       * of its frames ("cpython"), else NULL */
	bool jit_methods;     /* MODEL_IMAGE_RUNTIME: its functions are methods
			       * a JIT compiles (Java's, not CPython's) */
	enum model_image_kind kind;
	bool is_et_exec;      /* ET_EXEC: load bias is 0 (non-PIE) */
	bool has_symbols;     /* any .symtab/.dynsym/kallsyms entry found */
	char build_id[41];    /* hex, "" when unknown */
	uint64_t dev, inode;  /* identity of the file, 0 when unknown */
	int64_t mtime;        /* seconds since the Unix epoch, 0 when unknown */
	uint32_t crc32;       /* CRC-32 of the whole file, 0 when unknown */
	uint64_t file_size;
	/* The executable (text) segment, file-relative link-time addresses.
	 * For the kernel: _stext and the size up to _etext. */
	uint64_t text_start;
	uint64_t text_size;
	/* ELF e_entry, link-time: where the kernel starts the program; 0 when
	 * none (most libraries) or unknown */
	uint64_t entry;
};

struct model_source_file {
	char *path;
};

struct model_function {
	char *name;           /* the name to show: demangled unless --no-demangle */
	char *linkage_name;   /* the symbol as the linker spells it, when it differs
			       * from name (a mangled C++ or Rust name); else NULL */
	uint32_t image;
	uint64_t entry;       /* file-relative entry address; 0 if unknown */
	uint64_t size;        /* bytes, 0 if unknown */
	uint32_t file;        /* source file id of the definition, or NONE */
	uint32_t line;        /* line of the definition, 0 if unknown */
};

/*
 * One inlined call inside a location: function `function` was inlined at
 * call_file:call_line of the function enclosing it.
 */
struct model_inline {
	uint32_t function;
	uint32_t call_file;   /* or MODEL_NONE */
	uint32_t call_line;
};

/*
 * One unique code address.  `function` is the out-of-line function (the ELF
 * symbol) that contains the address, or MODEL_NONE when unresolved (printed
 * as "[unknown]" with the image and offset).  inlines[0..n_inlines) go from
 * the outermost inlined call to the innermost; file/line is the source
 * position of the address itself, inside the innermost function.
 */
struct model_location {
	uint32_t image;
	uint64_t addr;
	uint32_t function;
	uint32_t file;        /* or MODEL_NONE */
	uint32_t line;        /* 0 if unknown */
	uint32_t n_inlines;
	uint32_t inlines;     /* index of the first in model.inlines */
};

struct model_stack {
	uint32_t n_frames;
	uint32_t n_kernel;    /* frames[0..n_kernel) are kernel frames */
	uint32_t frames;      /* index of the first location id in model.frames */
	bool truncated;       /* the user part does not reach a known root */
};

struct model_mapping {
	uint64_t start, end;  /* runtime addresses [start, end) */
	uint64_t pgoff;
	uint64_t bias;        /* runtime address - file-relative address */
	uint32_t image;
	bool exec;
	uint64_t since_ns;    /* epoch ns from which this mapping was seen */
};

/*
 * A process image: one per (pid, exec).  An exec starts a new process entry
 * with the same pid and generation + 1, since the mappings change.
 */
struct model_process {
	pid_t pid;
	pid_t ppid;
	uint32_t generation;  /* 0 for the first image of the pid */
	char comm[16];
	char *cmdline;        /* arguments joined by spaces, or NULL */
	char *exe;            /* path of the main executable, or NULL */
	uint32_t exe_image;   /* or MODEL_NONE */
	uint64_t start_ns;    /* epoch ns: first seen */
	uint64_t end_ns;      /* epoch ns: exit or exec, 0 if still running */
	MODEL_VEC(struct model_mapping) maps;
	/* who the process is to a backend (model_set_process_identity()):
	 * the service it says it is (its OTEL_SERVICE_NAME), or NULL; the
	 * container it runs in (an id from its cgroup), or NULL */
	char *service_name;
	char *container_id;
	bool identified;      /* the two above were looked for */
};

struct model_thread {
	pid_t tid;
	uint32_t process;     /* model_process id */
	char comm[16];
	uint64_t start_ns, end_ns; /* epoch ns, end 0 if still running */
	uint64_t cputime_ns;  /* last known cumulative on-CPU time */
};

/*
 * One sampled event of the run (-e; cpu-clock by default; off-cpu with
 * --off-cpu).  A sample of it stands for its weight in the event's unit:
 * ns for the clocks (clock true), a count of events for the others.
 */
struct model_event {
	char *name;           /* "cpu-clock", "page-faults", "off-cpu", "r01c2" */
	char *unit;           /* "ns", "faults", "switches", ... */
	char *description;    /* one phrase, for formats that show one */
	bool clock;           /* weights are ns */
	uint32_t freq_hz;     /* sampled at this frequency, or 0 */
	uint64_t period;      /* sampled every period units, or 0 (frequency) */
	uint64_t samples;     /* samples recorded (off-cpu: switches out attributed) */
	uint64_t total;       /* sum of the samples' weights */
	uint64_t lost;        /* samples the kernel could not deliver */
	bool aggregated;      /* summed in the kernel by stack: a sample is a sum */
	uint64_t occurrences; /* aggregated: what the sums hold (off-cpu: blocked
			       * intervals); else the samples */
};

/* One sample of a run event. */
struct model_sample {
	uint64_t time_ns;     /* Unix epoch ns */
	uint64_t ktime_ns;    /* CLOCK_MONOTONIC ns, as the kernel saw it */
	uint64_t weight;      /* what it stands for, in its event's unit (ns for clocks) */
	uint64_t cputime_ns;  /* the thread's cumulative on-CPU ns (sum_exec_runtime) */
	uint64_t user_pc;     /* runtime user-mode PC (0 if none, e.g. kthread) */
	uint32_t process;
	uint32_t thread;      /* model_thread id */
	uint32_t stack;       /* model_stack id */
	uint16_t cpu;
	uint8_t event;        /* model_event id (0 in a run of one event) */
	bool kernel_mode;     /* the sampled instruction was in the kernel */
};

/* The thread was switched out (off = true) or back in at time_ns. */
struct model_switch {
	uint64_t time_ns;
	uint64_t ktime_ns;
	uint64_t cputime_ns;  /* cumulative on-CPU ns at that moment */
	uint64_t user_pc;     /* runtime user PC where it stopped (off only) */
	uint32_t process;
	uint32_t thread;
	uint16_t cpu;
	bool off;
};

/* A function traced through uprobes. */
struct model_traced_function {
	uint32_t image;
	uint64_t addr;        /* file-relative entry address */
	uint32_t function;    /* model_function id */
};

enum model_trace_kind {
	MODEL_TRACE_ENTRY = 0,
	MODEL_TRACE_EXIT = 1,
};

struct model_trace_event {
	uint64_t time_ns;
	uint64_t ktime_ns;
	uint32_t process;
	uint32_t thread;
	uint32_t func;        /* model_traced_function id */
	uint32_t args;        /* index of the first in model.trace_args */
	uint16_t cpu;
	uint8_t kind;         /* enum model_trace_kind */
	uint8_t n_args;
};

/* Per-thread, per-traced-function aggregates counted in the kernel. */
struct model_func_stats {
	uint32_t func;        /* model_traced_function id */
	uint32_t process;
	uint32_t thread;
	uint64_t calls;
	uint64_t total_ns;
	uint64_t self_ns;
	uint64_t hist[MODEL_HIST_BUCKETS]; /* calls by floor(log2(ns)) */
};

/* Cumulative energy of the machine's RAPL packages at time_ns (µJ, wraps
 * already undone). */
struct model_energy {
	uint64_t time_ns;     /* epoch ns */
	uint64_t energy_uj;
};

struct model_run {
	char *command_line;   /* the profiled command, or NULL */
	bool system_wide;
	char *event;          /* the first event's name: "cpu-clock" by default */
	uint32_t freq_hz;     /* requested sampling frequency (-F) */
	uint64_t period_ns;   /* nominal period: 1e9 / freq_hz */
	uint64_t start_ns, end_ns;           /* epoch ns */
	uint64_t start_ktime_ns, end_ktime_ns;
	int64_t ktime_to_epoch_ns;           /* epoch = ktime + this */
	char hostname[64];
	uint64_t host_id;     /* gethostid() or a hash of the hostname */
	uint32_t ncpus;
	uint32_t cpu_mhz;     /* 0 if unknown */
	uint64_t collector_cpu_ns; /* the collector's own CPU time */
	uint64_t bpf_run_ns;  /* BPF programs' run time (bpf_stats), 0 if off */
	uint32_t trace_nargs; /* --args */
	char call_graph[8];   /* how user stacks were walked: "fp", "dwarf" */
	/* what the collector was told of itself (OTEL_RESOURCE_ATTRIBUTES),
	 * in the order given: every process's resource carries them */
	struct model_attribute {
		char *key, *value;
	} *attributes;
	size_t n_attributes;
};

/*
 * Where a vector of run events (samples, switches, trace events and their
 * arguments) goes while the run lasts: a file in the output directory,
 * written a chunk at a time, so the collector's memory does not grow with
 * the length of the run.  model_seal_events() maps the file back.
 */
struct model_spill {
	bool active;          /* fd is open: full chunks go to it */
	bool failed;          /* a write failed: the rest stays in memory */
	int fd;
	size_t spilled;       /* elements in the file */
	void *map;            /* after sealing: the mapping items point into */
	size_t map_bytes;
};

struct model {
	struct model_run run;
	/* the run's events, by id (model/events.c); empty: one cpu-clock event
	 * at run.freq_hz, as model_event() describes it */
	MODEL_VEC(struct model_event) events;

	MODEL_VEC(struct model_image) images;
	MODEL_VEC(struct model_source_file) files;
	MODEL_VEC(struct model_function) functions;
	MODEL_VEC(struct model_inline) inlines;
	MODEL_VEC(struct model_location) locations;
	MODEL_VEC(uint32_t) frames;          /* location ids of every stack */
	MODEL_VEC(struct model_stack) stacks;
	MODEL_VEC(struct model_process) processes;
	MODEL_VEC(struct model_thread) threads;
	MODEL_VEC(struct model_sample) samples;     /* time-ordered */
	MODEL_VEC(struct model_switch) switches;    /* time-ordered */
	MODEL_VEC(struct model_traced_function) traced;
	MODEL_VEC(struct model_trace_event) trace;  /* time-ordered */
	MODEL_VEC(uint64_t) trace_args;
	MODEL_VEC(struct model_func_stats) func_stats;
	MODEL_VEC(struct model_energy) energy;      /* RAPL readings, time-ordered */
	MODEL_VEC(struct model_counter) lost;       /* lost events by cause */
	MODEL_VEC(struct model_counter) stats;      /* other run statistics */
	/* where each counter is in lost / stats, plus 1 (0: not yet there);
	 * private to counters.c */
	uint32_t lost_slot[MODEL_LOST_COUNT];
	uint32_t stat_slot[MODEL_STAT_COUNT];

	/* spill files of the four event vectors (private to model.c) */
	struct model_spill samples_spill, switches_spill, trace_spill, trace_args_spill;

	/* lookup indexes (private to model.c) */
	struct model_index file_index;
	struct model_index function_index;
	struct model_location_index location_index;
	struct model_index stack_index;
};

void model_init(struct model *m);
void model_free(struct model *m);

/* From now on, samples, switches and trace events go to unnamed files in
 * directory dir (O_TMPFILE) a chunk at a time instead of staying in memory.
 * Returns 0, or a negative errno when files cannot be made there (then
 * everything stays in memory, as before the call). */
int model_spill_events(struct model *m, const char *dir);
/* Ends the spilling: samples, switches and trace events are in their
 * vectors again (the files mapped back, or read back into memory), ready to
 * be sorted and written.  Returns 0, or -EIO when a file could not be read
 * back: the events in it are lost, and counted among the lost events. */
int model_seal_events(struct model *m);
/* Continuous runs: after a sealed interval was written, its samples,
 * switches and trace events are dropped (their files and memory freed,
 * an aggregated event's occurrences with its samples), the last energy
 * reading kept as the next interval's baseline, and the
 * spilling starts again in spill_dir (NULL: the events stay in memory).
 * Everything interned (processes, threads, images, functions, stacks)
 * stays (model_forget_ended_tasks() and model_forget_code() let it go).
 * Returns 0, or the negative errno of model_spill_events() (the events
 * then stay in memory). */
int model_drop_events(struct model *m, const char *spill_dir);
/* Frees what a process entry owns (its strings, its mappings): the one
 * place that knows, for model_free() and model_forget_ended_tasks(). */
void model_process_clear(struct model_process *p);
/* Continuous runs, after model_drop_events(): the processes that have
 * ended (end_ns set) and the threads that have ended or whose process has
 * leave the model; the others are renumbered in order.  process_map and
 * thread_map (as many entries as there were processes and threads) get
 * each old id's new one, or MODEL_NONE.  Nothing may refer to a process
 * or thread by id at that time but what the caller renumbers. */
void model_forget_ended_tasks(struct model *m, uint32_t *process_map, uint32_t *thread_map);
/* Continuous runs, after model_drop_events(): the code tables (source
 * files, functions, inlined calls, locations, stacks) are emptied and
 * their memory freed, so that each interval interns only what its own
 * samples meet; images, processes and threads stay.  Nothing may refer to
 * a file, function, location or stack by id at that time: the caller's
 * caches of them start over too. */
void model_forget_code(struct model *m);
/* Trace events so far, spilled or not. */
static inline size_t model_trace_event_count(const struct model *m)
{
	return m->trace_spill.spilled + m->trace.len;
}

/* Generic growth for MODEL_VEC; returns a pointer to the new zeroed slot,
 * aborting on out-of-memory (the model cannot be partially built). */
void *model_vec_grow(void *vec_items, size_t *len, size_t *cap, size_t size);
#define MODEL_VEC_PUSH(vec) \
	((__typeof__((vec).items))model_vec_grow(&(vec).items, &(vec).len, &(vec).cap, sizeof(*(vec).items)))
/* A copy of s (NULL for NULL), aborting on out-of-memory as the above. */
char *model_strdup(const char *s);

/* Copies the strings of `tmpl`; returns the new image id.  Images are not
 * deduplicated here: the loader keys them by build-id or dev+inode. */
uint32_t model_add_image(struct model *m, const struct model_image *tmpl);

/* Interning: equal contents give the same id. */
uint32_t model_intern_file(struct model *m, const char *path);
uint32_t model_intern_function(struct model *m, uint32_t image, const char *name,
			       uint64_t entry, uint64_t size, uint32_t file, uint32_t line);
/* Records the linkage (mangled) name of a function whose name is its
 * demangled form; the first one recorded stays. */
void model_function_set_linkage(struct model *m, uint32_t function, const char *linkage);
/* `inl` may be NULL when n_inl is 0. */
uint32_t model_intern_location(struct model *m, uint32_t image, uint64_t addr,
			       uint32_t function, uint32_t file, uint32_t line,
			       const struct model_inline *inl, uint32_t n_inl);
/* Looks a location up without creating it; MODEL_NONE when absent. */
uint32_t model_find_location(const struct model *m, uint32_t image, uint64_t addr);
uint32_t model_intern_stack(struct model *m, const uint32_t *frames, uint32_t n_frames,
			    uint32_t n_kernel, bool truncated);

uint32_t model_add_process(struct model *m, pid_t pid, pid_t ppid, uint32_t generation,
			   const char *comm, const char *cmdline, const char *exe);
uint32_t model_add_mapping(struct model *m, uint32_t process, const struct model_mapping *map);
uint32_t model_add_thread(struct model *m, uint32_t process, pid_t tid, const char *comm);
struct model_sample *model_add_sample(struct model *m);
struct model_switch *model_add_switch(struct model *m);
uint32_t model_add_traced_function(struct model *m, uint32_t image, uint64_t addr,
				   uint32_t function);
/* args may be NULL when n_args is 0 */
struct model_trace_event *model_add_trace_event(struct model *m, const uint64_t *args,
						 uint8_t n_args);
struct model_func_stats *model_add_func_stats(struct model *m);

/* Events (model/events.c).  Adds an event (strings copied) and returns its
 * id; the first one added also names run.event. */
uint32_t model_add_event(struct model *m, const struct model_event *tmpl);
/* How many events the run has: at least 1. */
static inline uint32_t model_event_count(const struct model *m)
{
	return m->events.len ? (uint32_t)m->events.len : 1;
}
/* Event id (< model_event_count()); with no event added, a cpu-clock event
 * described from run (freq_hz, period_ns).  Its samples, total and lost
 * are what model_events_tally() counted. */
const struct model_event *model_event(const struct model *m, uint32_t id);
/* Counts each event's samples and total weight from the samples (the
 * lost counts are the decoder's); adds the default event when none was. */
void model_events_tally(struct model *m);
void model_events_free(struct model *m);
/* A read-only view of m holding event ev only: a shallow copy whose samples
 * are ev's (their event 0) and whose one event is ev; everything else is
 * m's.  Free it with model_event_view_free(), never model_free().  0 or
 * -ENOMEM. */
int model_event_view(const struct model *m, uint32_t ev, struct model *view);
void model_event_view_free(struct model *view);
/* The wall-clock view: with an off-cpu event and a clock sampling on-CPU
 * time (cpu-clock or task-clock: the first), on-CPU + off-CPU time per
 * stack, what the threads' lifetimes are made of.  model_wall_event()
 * tells whether event ev's weights are part of it. */
bool model_has_wall(const struct model *m);
bool model_wall_event(const struct model *m, uint32_t ev);
/* Whether event e samples (at a frequency, every period): not off-cpu,
 * whose records are the kernel's sums of every switch by stack. */
bool model_event_samples(const struct model_event *e);
/* The samples the run's sampling events took (after model_events_tally()):
 * a sum made in the kernel counts the samples it holds; off-cpu's sums are
 * no samples.  Without events, every sample. */
uint64_t model_sample_count(const struct model *m);
/* The records among m's samples that are no samples: off-cpu's sums. */
uint64_t model_sum_records(const struct model *m);
/* How event e was sampled, as a phrase: "at 999 Hz", "every 1 faults",
 * "per switch" (off-cpu). */
void model_event_rate(const struct model_event *e, char *buf, size_t size);
/* Every event and how it was sampled: "page-faults every 1 faults,
 * cpu-clock at 999 Hz". */
void model_events_phrase(const struct model *m, char *buf, size_t size);

/* Counters: model/counters.h. */

void model_set_command_line(struct model *m, const char *cmdline);
/* Sets who process is (struct model_process's service_name and
 * container_id, copied; NULL for none) and marks it identified. */
void model_set_process_identity(struct model *m, uint32_t process, const char *service_name,
				const char *container_id);
/* The service process p is to a backend: its own service_name, else
 * "unknown_service:" and its executable's base name (its comm when the
 * path is unknown), as the OpenTelemetry SDKs name a service they were
 * not told of, made in buf. */
const char *model_service_name(const struct model_process *p, char *buf, size_t size);
/* Adds key=value to the run's attributes (a key given again replaces its
 * value).  0 or -ENOMEM. */
int model_add_run_attribute(struct model *m, const char *key, const char *value);
/* The value of the run's attribute key, or NULL. */
const char *model_run_attribute(const struct model *m, const char *key);

/* Accessors. */
static inline const uint32_t *model_stack_frames(const struct model *m,
						 const struct model_stack *s)
{
	return m->frames.items + s->frames;
}

static inline const struct model_inline *model_location_inlines(const struct model *m,
								const struct model_location *l)
{
	return m->inlines.items + l->inlines;
}

static inline const uint64_t *model_trace_event_args(const struct model *m,
						     const struct model_trace_event *e)
{
	return m->trace_args.items + e->args;
}

/* Name of a location's function, or NULL when unresolved. */
const char *model_location_name(const struct model *m, uint32_t location);

/* The mapping of `process` that contained runtime address `addr`, or NULL. */
const struct model_mapping *model_find_mapping(const struct model *m, uint32_t process,
					       uint64_t addr);

/* Sorts samples, switches and trace events by time (stable). */
void model_sort_by_time(struct model *m);

#endif /* COLLECTOR_MODEL_H */
