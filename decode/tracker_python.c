// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames of the samples (bpf/collector.h, "Frames"): the CPython
 * processes found as their mappings are read, and each run of Python
 * frames, innermost first and ending at an ENTRY frame, spliced into the
 * native stack in place of one native frame of the evaluator
 * (_PyEval_EvalFrameDefault), so that a Python function called back from C
 * (a sorted(key=...)) sits under the C frames that called it and native
 * code below the innermost Python frame stays.
 *
 * A Python frame's location is in the run's one "[python]" image
 * (MODEL_IMAGE_PYTHON): its function is (co_qualname, co_filename,
 * co_firstlineno), interned as any function, and its address a key of
 * (function, line), so that the same function and line from two processes
 * are one location.  A frame whose code object could not be read keeps a
 * location of its own with no function ("[unknown]" in [python]).
 */
#include "decode/tracker_internal.h"

#include <string.h>

#include "runtimes/python/python.h"

#define EVALUATOR "_PyEval_EvalFrameDefault"
/* Addresses of unnamed Python frames: the code object's, with this bit. */
#define UNNAMED_BIT (1ULL << 63)

void tracker_set_python(struct tracker *t, struct python_runtime *rt)
{
	t->python = rt;
}

static uint32_t python_image(struct tracker *t)
{
	if (t->python_image == MODEL_NONE) {
		struct model_image tmpl = { .path = "[python]", .kind = MODEL_IMAGE_PYTHON,
					    .has_symbols = true };

		t->python_image = model_add_image(t->m, &tmpl);
	}
	return t->python_image;
}

/* How often, and for how long after it was first met, the mappings of a
 * process whose executable links libpython are read again until the
 * interpreter is among them (ld.so maps it a few ms after exec). */
#define PENDING_REREAD_NS 10000000ULL
#define PENDING_FOR_NS 2000000000ULL

static void add_pending(struct tracker *t, uint32_t process, uint64_t ktime)
{
	for (size_t i = 0; i < t->python_pending.len; i++)
		if (t->python_pending.items[i].process == process)
			return;
	*MODEL_VEC_PUSH(t->python_pending) = (struct python_pending){ process, ktime };
}

void tracker_python_poll(struct tracker *t, uint64_t now_ktime)
{
	size_t i = 0;

	while (i < t->python_pending.len) {
		struct python_pending *pp = &t->python_pending.items[i];
		const struct model_process *p = &t->m->processes.items[pp->process];
		struct proc_state *ps = &t->procs.items[pp->process];

		if (!t->python || !ps->alive || p->end_ns || python_runtime_has(t->python, p->pid) ||
		    now_ktime > pp->since + PENDING_FOR_NS) {
			*pp = t->python_pending.items[--t->python_pending.len];
			continue;
		}
		if (now_ktime >= ps->maps_read_ktime + PENDING_REREAD_NS)
			trk_load_maps(t, pp->process, now_ktime);
		i++;
	}
}

bool tracker_python_pending(const struct tracker *t)
{
	return t->python_pending.len > 0;
}

void trk_python_maps_loaded(struct tracker *t, uint32_t process)
{
	const struct model_process *p = &t->m->processes.items[process];
	int err;

	if (!t->python || python_runtime_has(t->python, p->pid))
		return;
	for (size_t i = 0; i < p->maps.len; i++) {
		const struct model_mapping *mp = &p->maps.items[i];
		const struct model_image *img = &t->m->images.items[mp->image];

		if (img->kind != MODEL_IMAGE_ELF || !img->path)
			continue;
		err = python_runtime_image(t->python, p->pid, img->path, mp->bias);
		if (err == -ENOTSUP) {
			struct python_runtime_stats st;

			/* the summary names the last version met and says why */
			python_runtime_stats(t->python, &st);
			model_stat_add(t->m, MODEL_STAT_PYTHON_UNSUPPORTED, 1);
			model_stat_add(t->m, MODEL_STAT_PYTHON_UNSUPPORTED_VERSION,
				       st.last_unsupported_version -
					       model_stat_value(t->m,
								MODEL_STAT_PYTHON_UNSUPPORTED_VERSION));
		} else if (err > 0) {
			model_stat_add(t->m, MODEL_STAT_PYTHON_INTERPRETERS, 1);
		}
		if (err)
			return;
		p = &t->m->processes.items[process];
	}
	if (p->exe && python_runtime_maps_later(t->python, p->exe))
		add_pending(t, process, t->procs.items[process].maps_read_ktime);
}

void trk_python_gone(struct tracker *t, pid_t pid)
{
	if (t->python)
		python_runtime_forget(t->python, pid);
}

uint32_t trk_python_native_frames(struct tracker *t, uint32_t process, const uint64_t *frames,
				  uint32_t n)
{
	uint32_t i;

	/* only a process walked as Python has Python frames: elsewhere a
	 * frame of another kind is data a frame-pointer walk took for a
	 * return address, which the native resolution cuts off */
	if (!t->python || !python_runtime_known(t->python, t->m->processes.items[process].pid))
		return n;
	for (i = 0; i < n && COLLECTOR_FRAME_KIND(frames[i]) != COLLECTOR_FRAME_PYTHON; i++)
		;
	return i;
}

static uint32_t python_location(struct tracker *t, pid_t pid, uint64_t frame)
{
	struct python_frame_info info;
	uint32_t image = python_image(t), fn, file;
	uint64_t addr;

	if (!t->python || python_runtime_frame(t->python, pid, frame, &info) != 0) {
		model_stat_add(t->m, MODEL_STAT_PYTHON_FRAMES_UNNAMED, 1);
		addr = UNNAMED_BIT | COLLECTOR_PY_CODE(frame);
		fn = model_find_location(t->m, image, addr);
		return fn != MODEL_NONE ? fn
					: model_intern_location(t->m, image, addr, MODEL_NONE,
								MODEL_NONE, 0, NULL, 0);
	}
	file = model_intern_file(t->m, info.filename);
	fn = model_intern_function(t->m, image, info.qualname, 0, 0, file, info.first_line);
	addr = (uint64_t)fn << 32 | info.line;
	return model_intern_location(t->m, image, addr, fn, file, info.line, NULL, 0);
}

/* Whether native frame i (at ips[i]: the PC, then return addresses) is a
 * C call of the evaluator: by address (its cold part has no name in a
 * stripped interpreter), else by name (an interpreter the runtime found
 * no ranges for; NAME.cold in one that keeps its symbols). */
static bool is_evaluator(struct tracker *t, pid_t pid, const uint64_t *ips, uint32_t i,
			 uint32_t loc)
{
	const char *name = model_location_name(t->m, loc);

	if (t->python && python_runtime_in_evaluator(t->python, pid, i ? ips[i] - 1 : ips[i]))
		return true;
	return name && !strncmp(name, EVALUATOR, strlen(EVALUATOR)) &&
	       (!name[strlen(EVALUATOR)] || name[strlen(EVALUATOR)] == '.');
}

uint32_t trk_python_splice(struct tracker *t, uint32_t process, const uint64_t *ips,
			   const uint64_t *py, uint32_t n_py, uint32_t *locs, uint32_t n_native)
{
	pid_t pid = t->m->processes.items[process].pid;
	uint32_t out[COLLECTOR_MAX_STACK_DEPTH], n = 0, j = 0;

	for (uint32_t i = 0; i < n_native && n < COLLECTOR_MAX_STACK_DEPTH; i++) {
		if (j >= n_py || !is_evaluator(t, pid, ips, i, locs[i])) {
			out[n++] = locs[i];
			continue;
		}
		/* one C activation of the evaluator: its Python frames, or
		 * none (in its entry or exit): its native frame stays */
		if (py[j] == COLLECTOR_PY_EMPTY_CALL) {
			out[n++] = locs[i];
			j++;
			continue;
		}
		while (j < n_py && n < COLLECTOR_MAX_STACK_DEPTH) {
			bool entry = COLLECTOR_PY_IS_ENTRY(py[j]);

			out[n++] = python_location(t, pid, py[j++]);
			if (entry)
				break;
		}
	}
	/* the native walk stopped before the evaluator's outer activations */
	for (; j < n_py && n < COLLECTOR_MAX_STACK_DEPTH; j++)
		if (py[j] != COLLECTOR_PY_EMPTY_CALL)
			out[n++] = python_location(t, pid, py[j]);
	memcpy(locs, out, n * sizeof(*locs));
	return n;
}

void trk_python_notice(struct tracker *t, pid_t pid, const uint64_t *frames, uint32_t n)
{
	struct python_frame_info info;

	if (!t->python)
		return;
	for (uint32_t i = 0; i < n && i < COLLECTOR_MAX_STACK_DEPTH; i++)
		if (COLLECTOR_FRAME_KIND(frames[i]) == COLLECTOR_FRAME_PYTHON &&
		    frames[i] != COLLECTOR_PY_EMPTY_CALL)
			python_runtime_frame(t->python, pid, frames[i], &info);
}

void trk_handle_python_code(struct tracker *t, const struct collector_python_code_event *e)
{
	uint32_t thread = trk_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	pid_t pid = t->m->processes.items[t->m->threads.items[thread].process].pid;

	trk_python_notice(t, pid, (const uint64_t *)e->frames, e->n);
}
