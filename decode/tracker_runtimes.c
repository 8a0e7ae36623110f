// SPDX-License-Identifier: GPL-2.0
/*
 * The language runtimes' frames of the samples (runtimes/runtime.h): the
 * processes each runtime finds as their mappings are read, and each
 * frame of a runtime's kind named by it.  A runtime whose frames follow
 * the native ones (splices: CPython) has each run of them, innermost first
 * and ending at a RUN_END frame, put in place of one native frame of its
 * interpreter (CPython's evaluator, _PyEval_EvalFrameDefault), so that a
 * Python function called back from C (a sorted(key=...)) sits under the C
 * frames that called it and native code below the innermost one stays.
 *
 * A runtime's frame's location is in the run's one image of that runtime
 * (MODEL_IMAGE_RUNTIME, "[python]"): its function is (name, file, first
 * line), interned as any function with a key of (file, first line) for
 * its entry, and its address a key of (function,
 * line), so that the same function and line from two processes are one
 * location.  A frame that could not be named keeps a location of its own
 * with no function ("[unknown]" in [python]), keyed by the runtime.
 */
#include "decode/tracker_internal.h"

#include <errno.h>
#include <string.h>

#include "lib/hashmix.h"

_Static_assert(RUNTIMES_MAX <= SYMBOLIZER_IMAGE_SLOTS, "a word per runtime in an image's record");

/* Addresses of unnamed frames: the runtime's key, with this bit. */
#define UNNAMED_BIT (1ULL << 63)

/* The user-space unwinder stops where a runtime's own code begins (a
 * JVM's code cache: libdw would go on by frame pointer, which compiled
 * Java code does not keep), so that the runtime's walk goes on from there
 * (tracker_stacks.c, unwind_through_runtimes()). */
static bool stop_at_runtime(void *ctx, pid_t pid, uint64_t pc)
{
	struct tracker *t = ctx;
	uint32_t process = idmap_get(&t->pid_to_process, (uint64_t)pid);

	return process != UINT32_MAX && trk_runtime_owning_pc(t, process, pc) != NULL;
}

struct proc_ref trk_runtime_proc(struct tracker *t, const struct runtime *r, uint32_t process)
{
	return runtime_proc_of(t->runtimes, r, t->m->processes.items[process].pid,
			       &t->procs.items[process].runtime_words);
}

const struct runtime *trk_runtime_owning_pc(struct tracker *t, uint32_t process, uint64_t pc)
{
	return runtimes_owning_pc(t->runtimes, t->m->processes.items[process].pid,
				  &t->procs.items[process].runtime_words, pc);
}

void trk_runtimes_hook_unwinder(struct tracker *t)
{
	if (t->unwinder && t->runtimes)
		unwinder_set_stop(t->unwinder, stop_at_runtime, t);
}

void tracker_set_runtimes(struct tracker *t, const struct runtimes *rs)
{
	t->runtimes = rs;
	trk_runtimes_hook_unwinder(t);
}

static uint32_t runtime_image(struct tracker *t, const struct runtime *r)
{
	unsigned int kind = r->ops->frame_kind;

	if (t->runtime_image[kind] == MODEL_NONE) {
		struct model_image tmpl = { .path = (char *)r->ops->image,
					    .kind = MODEL_IMAGE_RUNTIME,
					    .frame_type = (char *)r->ops->frame_type,
					    .jit_methods = r->ops->jit_methods,
					    .has_symbols = true };

		t->runtime_image[kind] = model_add_image(t->m, &tmpl);
	}
	return t->runtime_image[kind];
}

/* How often, and for how long after it was first met, the mappings of a
 * process whose executable maps a runtime later (links libpython) are
 * read again until the runtime is among them (ld.so maps it a few ms
 * after exec). */
#define PENDING_REREAD_NS 10000000ULL
#define PENDING_FOR_NS 2000000000ULL

static void add_pending(struct tracker *t, uint32_t process, uint64_t ktime)
{
	for (size_t i = 0; i < t->runtime_pending.len; i++)
		if (t->runtime_pending.items[i].process == process)
			return;
	*MODEL_VEC_PUSH(t->runtime_pending) = (struct runtime_pending){ process, ktime };
}

/* Whether some runtime walks model process `process`. */
static bool walked(struct tracker *t, uint32_t process)
{
	return runtimes_walk(t->runtimes, t->m->processes.items[process].pid,
			     &t->procs.items[process].runtime_words);
}

void tracker_runtimes_poll(struct tracker *t, uint64_t now_ktime)
{
	size_t i = 0;

	while (i < t->runtime_pending.len) {
		struct runtime_pending *pp = &t->runtime_pending.items[i];
		const struct model_process *p = &t->m->processes.items[pp->process];
		struct proc_state *ps = &t->procs.items[pp->process];

		if (!ps->alive || p->end_ns || walked(t, pp->process) ||
		    now_ktime > pp->since + PENDING_FOR_NS) {
			*pp = t->runtime_pending.items[--t->runtime_pending.len];
			continue;
		}
		if (now_ktime >= ps->maps_read_ktime + PENDING_REREAD_NS &&
		    trk_exec_current(t, pp->process))
			trk_load_maps(t, pp->process, now_ktime);
		i++;
	}
}

bool tracker_runtimes_pending(const struct tracker *t)
{
	return t->runtime_pending.len > 0;
}

/* Runtime r told of each file-backed image of the process until one is
 * its; then, when its executable maps it later, the process waits. */
static void find_runtime(struct tracker *t, const struct runtime *r, uint32_t process)
{
	const struct model_process *p = &t->m->processes.items[process];
	struct proc_ref rp = trk_runtime_proc(t, r, process);

	if (!r->ops->mapped || (r->ops->has && r->ops->has(r->rt, &rp)))
		return;
	for (size_t i = 0; i < p->maps.len; i++) {
		const struct model_mapping *mp = &p->maps.items[i];
		const struct model_image *img = &t->m->images.items[mp->image];
		struct runtime_image ri;

		if (img->kind != MODEL_IMAGE_ELF || !img->path)
			continue;
		/* the image's record: its file and the runtime's word, by
		 * the runtime's place in the run's list */
		ri = (struct runtime_image){
			.id = mp->image,
			.path = img->path,
			.bias = mp->bias,
			.file = symbolizer_image_file(t->sym, mp->image),
			.slot = symbolizer_image_slot(t->sym, mp->image,
						      (unsigned int)(r - t->runtimes->items)),
		};
		if (r->ops->mapped(r->rt, &rp, &ri) != 0)
			return;
		p = &t->m->processes.items[process];
	}
	if (p->exe && r->ops->maps_later && r->ops->maps_later(r->rt, p->exe))
		add_pending(t, process, t->procs.items[process].maps_read_ktime);
}

void trk_runtimes_maps_loaded(struct tracker *t, uint32_t process)
{
	for (size_t i = 0; t->runtimes && i < t->runtimes->n; i++)
		find_runtime(t, &t->runtimes->items[i], process);
}

void trk_runtimes_gone(struct tracker *t, uint32_t process)
{
	runtimes_forget(t->runtimes, t->m->processes.items[process].pid,
			&t->procs.items[process].runtime_words);
}

/* The runtime of frame f that model process `process` may have: a frame
 * of a kind no runtime walks the process for is data a frame-pointer walk
 * took for a return address, which the native resolution cuts off. */
static const struct runtime *runtime_of(struct tracker *t, uint32_t process, uint64_t f)
{
	unsigned int kind = COLLECTOR_FRAME_KIND(f);
	const struct runtime *r;
	struct proc_ref rp;

	if (kind == COLLECTOR_FRAME_NATIVE || kind == COLLECTOR_FRAME_KERNEL ||
	    kind == COLLECTOR_FRAME_JIT)
		return NULL;
	r = runtimes_of_kind(t->runtimes, kind);
	if (!r || !r->ops->known)
		return NULL;
	rp = trk_runtime_proc(t, r, process);
	return r->ops->known(r->rt, &rp) ? r : NULL;
}

uint32_t trk_runtimes_native_frames(struct tracker *t, uint32_t process, const uint64_t *frames,
				    uint32_t n, const struct runtime **spliced)
{
	*spliced = NULL;
	for (uint32_t i = 0; i < n; i++) {
		const struct runtime *r = runtime_of(t, process, frames[i]);

		if (r && r->ops->splices) {
			*spliced = r;
			return i;
		}
	}
	return n;
}

bool trk_runtime_frame(struct tracker *t, uint32_t process, uint64_t frame)
{
	return runtime_of(t, process, frame) != NULL;
}

/* A runtime's function: one per (name, file, first line): "main" of a
 * script and of <frozen site> are two, which an entry of 0 made one
 * (named by whichever file came first). */
static uint32_t runtime_function(struct tracker *t, uint32_t image, const struct runtime_frame *f,
				 uint32_t *file)
{
	*file = f->file ? model_intern_file(t->m, f->file) : MODEL_NONE;
	return model_intern_function(t->m, image, f->function,
				     (uint64_t)(*file == MODEL_NONE ? 0 : *file + 1) << 32 |
					     f->first_line,
				     0, *file, f->first_line);
}

/* A frame of n functions (innermost first: inlined ones, then the one
 * compiled): the outermost is the location's function, the others its
 * inlined calls, each called at its caller's line, and the location's
 * line the innermost's.  Its key: (function, line) for one function, a
 * hash of the whole chain (top bit clear of UNNAMED_BIT) for more. */
static uint32_t named_location(struct tracker *t, uint32_t image, const struct runtime_frame *f,
			       uint32_t n)
{
	struct model_inline inl[RUNTIME_FRAME_MAX_INLINED];
	uint32_t fn, file, inner_fn, inner_file;
	uint64_t addr;

	fn = runtime_function(t, image, &f[n - 1], &file);
	if (n == 1) {
		addr = (uint64_t)fn << 32 | f[0].line;
		return model_intern_location(t->m, image, addr, fn, file, f[0].line, NULL, 0);
	}
	addr = hash_word(fn, f[n - 1].line);
	inner_file = file;
	for (uint32_t k = 0; k + 1 < n; k++) {
		const struct runtime_frame *callee = &f[n - 2 - k], *caller = &f[n - 1 - k];

		inl[k].call_file = inner_file;
		inl[k].call_line = caller->line;
		inl[k].function = inner_fn = runtime_function(t, image, callee, &inner_file);
		addr = hash_word(hash_word(addr, inner_fn), callee->line);
	}
	addr = hash_finish(addr) & ~UNNAMED_BIT;
	return model_intern_location(t->m, image, addr, fn, inner_file, f[0].line, inl, n - 1);
}

uint32_t trk_runtime_location(struct tracker *t, uint32_t process, uint64_t frame)
{
	const struct runtime *r = runtimes_of_kind(t->runtimes, COLLECTOR_FRAME_KIND(frame));
	struct proc_ref rp = trk_runtime_proc(t, r, process);
	struct runtime_frame f[RUNTIME_FRAME_MAX_INLINED];
	uint32_t image = runtime_image(t, r), loc;
	uint64_t addr;
	int n = r->ops->frame_name ? r->ops->frame_name(r->rt, &rp, frame, f,
							  RUNTIME_FRAME_MAX_INLINED)
				   : -ENOTSUP;

	if (n > 0)
		return named_location(t, image, f, (uint32_t)n);
	if (r->ops->unnamed_stat)
		model_named_stat_add(t->m, r->ops->unnamed_stat, 1);
	addr = UNNAMED_BIT | (r->ops->unnamed_key ? r->ops->unnamed_key(frame) : frame);
	loc = model_find_location(t->m, image, addr);
	return loc != MODEL_NONE ? loc
				 : model_intern_location(t->m, image, addr, MODEL_NONE, MODEL_NONE, 0,
							 NULL, 0);
}

uint32_t trk_runtime_native_location(struct tracker *t, uint32_t process, uint64_t pc)
{
	const struct runtime *r = trk_runtime_owning_pc(t, process, pc);
	struct runtime_frame f[1];
	struct proc_ref rp;

	if (!r || !r->ops->frame_name || !r->ops->image)
		return MODEL_NONE;
	rp = trk_runtime_proc(t, r, process);
	if (r->ops->frame_name(r->rt, &rp, pc, f, 1) != 1)
		return MODEL_NONE;
	return named_location(t, runtime_image(t, r), f, 1);
}

/* Whether native frame i (at ips[i]: the PC, then return addresses) is
 * one activation of the interpreter r's runs go in place of. */
static bool replaced(struct tracker *t, const struct runtime *r, const struct proc_ref *rp,
		     const uint64_t *ips, uint32_t i, uint32_t loc)
{
	return r->ops->replaces &&
	       r->ops->replaces(r->rt, rp, i ? ips[i] - 1 : ips[i], model_location_name(t->m, loc));
}

uint32_t trk_runtimes_splice(struct tracker *t, uint32_t process, const struct runtime *r,
			     const uint64_t *ips, const uint64_t *rf, uint32_t n_rf,
			     uint32_t *locs, uint32_t n_native)
{
	struct proc_ref rp = trk_runtime_proc(t, r, process);
	uint64_t empty = COLLECTOR_FRAME_EMPTY_RUN(r->ops->frame_kind);
	uint32_t out[COLLECTOR_MAX_STACK_DEPTH], n = 0, j = 0;

	for (uint32_t i = 0; i < n_native && n < COLLECTOR_MAX_STACK_DEPTH; i++) {
		if (j >= n_rf || !replaced(t, r, &rp, ips, i, locs[i])) {
			out[n++] = locs[i];
			continue;
		}
		/* one C activation of the interpreter: its frames, or none
		 * (in its entry or exit): its native frame stays */
		if (rf[j] == empty) {
			out[n++] = locs[i];
			j++;
			continue;
		}
		while (j < n_rf && n < COLLECTOR_MAX_STACK_DEPTH) {
			bool end = (rf[j] & COLLECTOR_FRAME_RUN_END) != 0;

			out[n++] = trk_runtime_location(t, process, rf[j++]);
			if (end)
				break;
		}
	}
	/* the native walk stopped before the interpreter's outer activations */
	for (; j < n_rf && n < COLLECTOR_MAX_STACK_DEPTH; j++)
		if (rf[j] != empty)
			out[n++] = trk_runtime_location(t, process, rf[j]);
	memcpy(locs, out, n * sizeof(*locs));
	return n;
}

void trk_runtimes_notice(struct tracker *t, uint32_t process, const uint64_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < n && i < COLLECTOR_MAX_STACK_DEPTH; i++) {
		const struct runtime *r = runtime_of(t, process, frames[i]);
		struct proc_ref rp;

		if (!r || !r->ops->notice)
			continue;
		rp = trk_runtime_proc(t, r, process);
		r->ops->notice(r->rt, &rp, frames[i]);
	}
}

void trk_handle_runtime_frames(struct tracker *t, const struct collector_runtime_frames_event *e)
{
	uint32_t thread = trk_thread(t, e->hdr.tgid, e->hdr.tid, e->hdr.ktime_ns);
	trk_runtimes_notice(t, t->m->threads.items[thread].process, (const uint64_t *)e->frames,
			    e->n);
}
