/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPython frames of a sample, walked in the kernel.
 *
 * Contract: python_frames(sc, at, room, tgid, task) appends to sc->frames,
 * from index `at` on and at most `room` of them, one PYTHON frame
 * (bpf/collector.h, "Frames") per interpreter frame of the sampled thread,
 * innermost first (and a COLLECTOR_PY_EMPTY_CALL for an evaluator call
 * sampled while its 3.12+ shim frame is current), and returns how many it
 * wrote.  It writes nothing for a
 * process without an entry in python_procs (user space writes one when it
 * finds an image exporting _PyRuntime among the process's mappings,
 * runtimes/python/).  Every walk is counted, and every walk that stops
 * before the outermost frame is counted by why (COLLECTOR_CNT_PY_*).
 *
 * The thread state: the interpreter's list of threads, searched for the
 * one whose thread_id (pthread_self()) is the sampled task's fs base, the
 * thread pointer glibc's pthread_self() returns on x86-64.  It is right
 * for every thread of a multi-threaded program, where the GIL holder
 * (_PyRuntime.gilstate.tstate_current in 3.11) is only one of them, and
 * needs neither the TSS key nor glibc's thread-specific data layout (which
 * differs between the C libraries the interpreters run with here).
 *
 * Frames: the thread state's current frame (through its cframe before
 * 3.13), then `previous` to the first.  Each frame costs one read of its
 * first bytes; the instruction offset is the frame's instruction pointer
 * less the code object's first code unit, with no read of the code.
 *
 * python_frames_of_task() is the same walk of a thread that is not the
 * current one (offcpu_window.bpf.h: a thread found blocked when the run
 * starts), its memory read with bpf_copy_from_user_task(): sleepable
 * programs only.  Each walk's reads are chosen by a constant, so that a
 * program that is not sleepable never holds that helper.
 *
 * The sampler's walk is sample_python (sample_runtimes.bpf.h), the
 * switch-out's offcpu_python (offcpu_runtimes.bpf.h): programs loaded
 * when the run meets its first interpreter and reached by tail call, not
 * verified at every start.  The off-CPU window's walk of threads found
 * blocked carries it inline (walk_python: false with
 * COLLECTOR_NO_PYTHON_WALK).  The frames it places are marked for
 * runtime_frames_notice() (runtime.bpf.h).
 *
 * Included by sample.bpf.c after struct sample_scratch and count().
 */
#ifndef COLLECTOR_PYTHON_BPF_H
#define COLLECTOR_PYTHON_BPF_H

/* false: no CPython frames are walked, and the walk is not verified */
const volatile bool walk_python = true;

/* Interpreters by tgid, written by the loader (loader/runtime_procs.c). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, u32);
	__type(value, struct collector_python_proc);
} python_procs SEC(".maps");

/* Threads of an interpreter searched for the sampled one, at most. */
#define PY_MAX_THREADS 256
/* The bytes of an interpreter frame read at once: every field the walk
 * needs lies in them in 3.11 to 3.15 (the largest offset is owner's, 0x45
 * in 3.11, 0x46 in 3.14). */
#define PY_FRAME_BYTES 80

/* A read of the walked thread's memory: the current task's, or (remote, a
 * constant at every call) task's, which only a sleepable program may do. */
static __always_inline long py_read(void *dst, u32 size, u64 src, struct task_struct *task,
				    bool remote)
{
	if (remote)
		return bpf_copy_from_user_task(dst, size, (void *)src, task, 0);
	return bpf_probe_read_user(dst, size, (void *)src);
}

struct py_thread_search {
	const struct collector_python_proc *pp;
	struct task_struct *task; /* the walked thread */
	u64 tstate, want;
	bool found, failed;
};

static __always_inline long py_thread_step_in(void *data, bool remote)
{
	struct py_thread_search *s = data;
	u64 id = 0, next = 0;

	if (!s->tstate)
		return 1;
	if (py_read(&id, sizeof(id), s->tstate + s->pp->tstate_thread_id, s->task, remote) ||
	    py_read(&next, sizeof(next), s->tstate + s->pp->tstate_next, s->task, remote)) {
		s->failed = true;
		return 1;
	}
	if (id == s->want) {
		s->found = true;
		return 1;
	}
	s->tstate = next;
	return 0;
}

static long py_thread_step(u32 i, void *data)
{
	return py_thread_step_in(data, false);
}

static long py_thread_step_task(u32 i, void *data)
{
	return py_thread_step_in(data, true);
}

struct py_frame_walk {
	const struct collector_python_proc *pp;
	struct task_struct *task; /* the walked thread */
	u64 *frames;
	u64 frame;
	u32 at, room, n;
	bool failed;
	bool in_run; /* a Python frame written since the last shim frame */
};

static __always_inline u64 py_field(const u8 *buf, u32 off)
{
	u64 v;

	off &= 127;
	if (off > PY_FRAME_BYTES - 8)
		return 0;
	__builtin_memcpy(&v, buf + off, sizeof(v));
	return v;
}

static __always_inline long py_frame_step_in(void *data, bool remote)
{
	struct py_frame_walk *w = data;
	const struct collector_python_proc *pp = w->pp;
	u8 buf[PY_FRAME_BYTES];
	u64 code, instr, first, units = 0;
	u32 owner_off = pp->frame_owner & 127, entry_off = pp->frame_entry & 127;
	bool entry;

	if (!w->frame)
		return 1;
	if (w->n >= w->room) {
		count(COLLECTOR_CNT_PY_TOO_DEEP);
		return 1;
	}
	if (py_read(buf, sizeof(buf), w->frame, w->task, remote)) {
		w->failed = true;
		return 1;
	}
	/* 3.14 on: a _PyStackRef, its low bits a tag */
	code = py_field(buf, pp->frame_code) & ~7ULL;
	instr = py_field(buf, pp->frame_instr);
	if (py_field(buf, pp->frame_previous) == w->frame) {
		/* a chain that loops on itself */
		w->failed = true;
		return 1;
	}
	w->frame = py_field(buf, pp->frame_previous);
	if (owner_off < PY_FRAME_BYTES && pp->owner_cstack &&
	    buf[owner_off] >= (u8)pp->owner_cstack) {
		/* 3.12 on: the frame an evaluator's C call starts with, of no
		 * Python code: the Python frame before it (inner) is the
		 * first of that call.  None before it: the call is in its
		 * entry or its exit (a generator's yield leaves it there until
		 * INTERPRETER_EXIT), with no Python frame of its own: said by
		 * COLLECTOR_PY_EMPTY_CALL, else its caller's frames would be
		 * spliced into it (measured: 6.4% of a generator-heavy 3.12
		 * program's samples, 3.1% on 3.13) */
		if (w->in_run) {
			w->frames[(w->at + w->n - 1) & 255] |= COLLECTOR_PY_ENTRY;
		} else {
			w->frames[(w->at + w->n) & 255] = COLLECTOR_PY_EMPTY_CALL;
			w->n++;
		}
		w->in_run = false;
		return 0;
	}
	if (!code) {
		/* a frame without code: one caught being pushed */
		w->failed = true;
		return 1;
	}
	entry = (pp->flags & COLLECTOR_PY_IS_ENTRY_BYTE) && entry_off < PY_FRAME_BYTES &&
		buf[entry_off];
	first = code + pp->code_units;
	if (instr >= first)
		units = (instr - first) / 2 - (pp->instr_next && instr > first ? 1 : 0);
	w->frames[(w->at + w->n) & 255] = COLLECTOR_PY_FRAME(code, units, entry);
	w->n++;
	w->in_run = true;
	return 0;
}

static long py_frame_step(u32 i, void *data)
{
	return py_frame_step_in(data, false);
}

static long py_frame_step_task(u32 i, void *data)
{
	return py_frame_step_in(data, true);
}

static __always_inline u32 python_frames_in(struct sample_scratch *sc, u32 at, u32 room, u32 tgid,
					    struct task_struct *task, bool remote)
{
	const struct collector_python_proc *pp;
	struct py_thread_search s = {};
	struct py_frame_walk w = {};
	u64 interp = 0, frame = 0;

	if (!walk_python)
		return 0;
	pp = bpf_map_lookup_elem(&python_procs, &tgid);
	if (!pp || !room)
		return 0;
	count(COLLECTOR_CNT_PY_WALKS);
	s.pp = pp;
	s.task = task;
	/* the thread pointer: glibc's struct pthread, pthread_self() */
	s.want = BPF_CORE_READ(task, thread.fsbase);
	if (py_read(&interp, sizeof(interp), pp->interp_head, task, remote) || !interp ||
	    py_read(&s.tstate, sizeof(s.tstate), interp + pp->threads_head, task, remote)) {
		count(COLLECTOR_CNT_PY_READ_FAILED);
		return 0;
	}
	bpf_loop(PY_MAX_THREADS, remote ? py_thread_step_task : py_thread_step, &s, 0);
	if (!s.found) {
		count(s.failed ? COLLECTOR_CNT_PY_READ_FAILED : COLLECTOR_CNT_PY_NO_THREAD);
		return 0;
	}
	if (py_read(&frame, sizeof(frame), s.tstate + pp->tstate_frame, task, remote)) {
		count(COLLECTOR_CNT_PY_READ_FAILED);
		return 0;
	}
	if (frame && (pp->flags & COLLECTOR_PY_VIA_CFRAME) &&
	    py_read(&frame, sizeof(frame), frame + pp->cframe_frame, task, remote)) {
		count(COLLECTOR_CNT_PY_READ_FAILED);
		return 0;
	}
	w.pp = pp;
	w.task = task;
	w.frames = sc->frames;
	w.frame = frame;
	w.at = at;
	w.room = room;
	bpf_loop(COLLECTOR_MAX_STACK_DEPTH, remote ? py_frame_step_task : py_frame_step, &w, 0);
	if (w.failed)
		count(COLLECTOR_CNT_PY_READ_FAILED);
	if (w.n)
		runtime_frames_placed(sc, COLLECTOR_FRAME_PYTHON);
	return w.n;
}

static __always_inline u32 python_frames(struct sample_scratch *sc, u32 at, u32 room, u32 tgid,
					 struct task_struct *task)
{
	return python_frames_in(sc, at, room, tgid, task, false);
}

/* Sleepable programs only. */
static __always_inline u32 python_frames_of_task(struct sample_scratch *sc, u32 at, u32 room,
						 u32 tgid, struct task_struct *task)
{
	return python_frames_in(sc, at, room, tgid, task, true);
}

#endif /* COLLECTOR_PYTHON_BPF_H */
