/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --trace py:GLOB: Python functions traced through the interpreter's USDT
 * probes python:function__entry and python:function__return (CPython
 * built --with-dtrace; Debian's python3.11 is).  libbpf attaches them
 * (bpf_program__attach_usdt: the probe's address from the ELF note, its
 * semaphore raised through the uprobe reference counter, the note's
 * argument specs into its maps) and bpf_usdt_arg() reads the arguments:
 * the code object's co_filename and co_name (UTF-8 C strings of the
 * interpreter; the third, the line being run, is not used).
 *
 * Matching, exact and decided here, so that the first call of a function
 * is counted like every other: a Python function is the pair (file, name),
 * read whole (NUL-padded) into a collector_py_key.  (The probes give
 * co_name, not the qualified name: two functions of one name in one file,
 * methods of two classes, are one.)
 * py_ids maps each key met to its traced-function id, or to NO_MATCH: the
 * first call of a key runs the glob (py_name_glob against the name, and
 * py_file_glob, when given, against the file: the whole path if it has a
 * '/', else its base name), and a match takes the next id, py_first_id +
 * py_next (the loader's native traced functions come first).  Ids are
 * given under BPF_NOEXIST: of two CPUs meeting one new key at once, the
 * loser uses the winner's id (its own stays unused).  py_by_id[id -
 * py_first_id] keeps the key, from which user space names the function
 * once the run has ended.  Names longer than 63 bytes and paths longer
 * than 255 are cut there (two functions alike up to there would be one).
 *
 * The calls then go through the native tracer's shadow stack, slots and
 * records (trace.bpf.c).  One difference: the interpreter runs nested
 * Python calls in one C activation of its evaluator (3.11), so the probes
 * of all of them see about the same stack pointer; entries within
 * PY_SP_SLACK bytes of it belong to this activation, and are matched in
 * LIFO order, recursion included; entries deeper than that are gone.
 */
#ifndef COLLECTOR_TRACE_PYTHON_BPF_H
#define COLLECTOR_TRACE_PYTHON_BPF_H

#include <bpf/usdt.bpf.h>

/* Set by the loader before load.  The globs are data, not read-only: the
 * verifier would follow a read-only glob's characters as constants, and
 * the paths through the matcher multiply with each one (a 6-character
 * glob took it past its million instructions). */
const volatile u32 py_first_id = 0;
char py_name_glob[COLLECTOR_PY_GLOB_LEN] = {};
u32 py_name_glob_len = 0;
char py_file_glob[COLLECTOR_PY_GLOB_LEN] = {};
u32 py_file_glob_len = 0; /* 0: any file */
bool py_file_glob_base = false; /* the glob has no '/' */

/* ids given so far (read by user space after the run) */
u32 py_next = 0;

#define PY_GLOB_STEPS (1 << 16)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1 << 16);
	__type(key, struct collector_py_key);
	__type(value, u32);
} py_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, COLLECTOR_PY_MAX_FUNCS);
	__type(key, u32);
	__type(value, struct collector_py_key);
} py_by_id SEC(".maps");

/* the key being built (too big for the BPF stack) */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct collector_py_key);
} py_scratch SEC(".maps");

/* The matcher's state.  In a map, not on the stack: the verifier then
 * knows nothing of its values and sees the loop's states as one (on the
 * stack it followed the positions as constants, step after step, until it
 * gave up: "the sequence of 8193 jumps is too complex"). */
struct py_glob {
	u32 s, slen;         /* in the string */
	u32 p, star, mark;   /* in the glob; star: after the last '*' + 1, 0: none */
	u32 file;            /* the file glob, else the name's */
	u32 result;
	u32 len, base;       /* the path's length and where its base name starts */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct py_glob);
} py_glob_state SEC(".maps");

static __always_inline char py_glob_char(u32 file, u32 p)
{
	return file ? py_file_glob[p & (COLLECTOR_PY_GLOB_LEN - 1)] :
		      py_name_glob[p & (COLLECTOR_PY_GLOB_LEN - 1)];
}

/* One step of glob matching ('*' any run, '?' any character, the rest
 * literally) with backtracking to the last '*': at most slen * plen steps. */
static long py_glob_step(u32 i, void *unused)
{
	u32 zero = 0, plen;
	struct collector_py_key *k = bpf_map_lookup_elem(&py_scratch, &zero);
	struct py_glob *g = bpf_map_lookup_elem(&py_glob_state, &zero);
	char sc, pc;

	if (!k || !g)
		return 1;
	plen = g->file ? py_file_glob_len : py_name_glob_len;
	if (g->s >= g->slen) {
		if (g->p < plen && py_glob_char(g->file, g->p) == '*') {
			g->p++;
			return 0;
		}
		g->result = g->p == plen;
		return 1;
	}
	sc = g->file ? k->file[g->s & (COLLECTOR_PY_FILE_LEN - 1)] :
		       k->name[g->s & (COLLECTOR_PY_NAME_LEN - 1)];
	pc = g->p < plen ? py_glob_char(g->file, g->p) : 0;
	if (g->p < plen && pc == '*') {
		g->star = ++g->p;
		g->mark = g->s;
		return 0;
	}
	if (g->p < plen && (pc == '?' || pc == sc)) {
		g->p++;
		g->s++;
		return 0;
	}
	if (g->star) {
		g->p = g->star;
		g->s = ++g->mark;
		return 0;
	}
	g->result = 0;
	return 1;
}

/* The path's length, and where its base name starts (after the last '/'). */
static long py_scan_file(u32 i, void *unused)
{
	u32 zero = 0;
	struct collector_py_key *k = bpf_map_lookup_elem(&py_scratch, &zero);
	struct py_glob *g = bpf_map_lookup_elem(&py_glob_state, &zero);
	char c;

	if (!k || !g || i >= COLLECTOR_PY_FILE_LEN)
		return 1;
	c = k->file[i & (COLLECTOR_PY_FILE_LEN - 1)];
	if (!c)
		return 1;
	g->len = i + 1;
	if (c == '/')
		g->base = i + 1;
	return 0;
}

static __always_inline bool py_matches(u32 name_len)
{
	u32 zero = 0;
	struct py_glob *g = bpf_map_lookup_elem(&py_glob_state, &zero);

	if (!g)
		return false;
	__builtin_memset(g, 0, sizeof(*g));
	g->slen = name_len;
	bpf_loop(PY_GLOB_STEPS, py_glob_step, NULL, 0);
	if (!g->result || !py_file_glob_len)
		return g->result;
	g->len = g->base = 0;
	bpf_loop(COLLECTOR_PY_FILE_LEN, py_scan_file, NULL, 0);
	g->s = py_file_glob_base ? g->base : 0;
	g->slen = g->len;
	g->p = g->star = g->mark = g->result = 0;
	g->file = 1;
	bpf_loop(PY_GLOB_STEPS, py_glob_step, NULL, 0);
	return g->result;
}

/* The traced-function id of the probe's Python function, or NO_MATCH. */
static __always_inline u32 py_function(struct pt_regs *ctx)
{
	u32 zero = 0, id, k, *known;
	struct collector_py_key *key = bpf_map_lookup_elem(&py_scratch, &zero);
	struct collector_py_key *slot;
	long file = 0, name = 0, nlen, flen;

	if (!key)
		return COLLECTOR_PY_NO_MATCH;
	if (bpf_usdt_arg(ctx, 0, &file) || bpf_usdt_arg(ctx, 1, &name))
		return COLLECTOR_PY_NO_MATCH;
	__builtin_memset(key, 0, sizeof(*key));
	flen = bpf_probe_read_user_str(key->file, sizeof(key->file), (const void *)file);
	nlen = bpf_probe_read_user_str(key->name, sizeof(key->name), (const void *)name);
	if (flen <= 0 || nlen <= 0)
		return COLLECTOR_PY_NO_MATCH;
	known = bpf_map_lookup_elem(&py_ids, key);
	if (known)
		return *known;
	id = COLLECTOR_PY_NO_MATCH;
	if (py_matches((u32)nlen - 1)) {
		k = __sync_fetch_and_add(&py_next, 1);
		if (k >= COLLECTOR_PY_MAX_FUNCS) {
			count(COLLECTOR_TCNT_STATS_FULL);
			return COLLECTOR_PY_NO_MATCH; /* not kept: met again */
		}
		id = py_first_id + k;
		if (bpf_map_update_elem(&py_ids, key, &id, BPF_NOEXIST) != 0) {
			known = bpf_map_lookup_elem(&py_ids, key);
			if (!known) /* py_ids full: this call is lost, and counted */
				count(COLLECTOR_TCNT_STATS_FULL);
			return known ? *known : COLLECTOR_PY_NO_MATCH;
		}
		slot = bpf_map_lookup_elem(&py_by_id, &k);
		if (slot)
			__builtin_memcpy(slot, key, sizeof(*key));
		return id;
	}
	bpf_map_update_elem(&py_ids, key, &id, BPF_NOEXIST);
	return id;
}

/*
 * CPython 3.11 fires function__entry only where its evaluator is entered
 * from C, not for the Python-to-Python calls it runs inline (a loop of
 * 300 000 calls gave 5 entries and 300 000 returns), while function__return
 * fires for every return.  A return with no entry open in this activation
 * is then a call all the same: counted, with no duration, and streamed as
 * an entry and an exit at the return's time.  The shadow stack is left
 * as it is (its entries are callers of this call).
 */
static __always_inline int py_return_unentered(u32 tgid, u32 tid, u32 func,
					       struct collector_shadow_stack *st)
{
	struct collector_trace_event *e;
	u64 now = bpf_ktime_get_ns();

	if (!st)
		st = bpf_task_storage_get(&shadow, bpf_get_current_task_btf(), NULL,
					  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count(COLLECTOR_TCNT_SHADOW_FULL);
		return 0;
	}
	account(st, tgid, tid, func, 0, 0);
	if (!stream_events)
		return 0;
	for (u32 kind = COLLECTOR_TRACE_ENTRY; kind <= COLLECTOR_TRACE_EXIT; kind++) {
		u32 size = kind == COLLECTOR_TRACE_ENTRY ?
			   COLLECTOR_TRACE_EXIT_SIZE + n_args * sizeof(u64) :
			   COLLECTOR_TRACE_EXIT_SIZE;

		e = bpf_ringbuf_reserve(&events, size, 0);
		if (!e) {
			count(kind == COLLECTOR_TRACE_ENTRY ? COLLECTOR_TCNT_RB_FULL_ENTRY :
							      COLLECTOR_TCNT_RB_FULL_EXIT);
			return 0;
		}
		fill_header(&e->hdr, COLLECTOR_EV_TRACE, tgid, tid, now);
		e->func = func;
		e->kind = kind;
		e->n_args = kind == COLLECTOR_TRACE_ENTRY ? n_args : 0;
		e->pad = 0;
		if (kind == COLLECTOR_TRACE_ENTRY)
			for (u32 a = 0; a < n_args && a < COLLECTOR_MAX_ARGS; a++)
				e->args[a] = 0;
		bpf_ringbuf_submit(e, submit_flags());
	}
	return 0;
}

/* Either probe: the function's id, then the native tracer's bookkeeping. */
static __always_inline int py_probe(struct pt_regs *ctx, bool ret)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u32 tgid = pid_tgid >> 32, func;

	if (stopped || !in_targets(tgid))
		return 0;
	func = py_function(ctx);
	if (func == COLLECTOR_PY_NO_MATCH)
		return 0;
	return ret ? leave_call(ctx, tgid, (u32)pid_tgid, func, true)
		   : enter_call(ctx, tgid, (u32)pid_tgid, func, true);
}

SEC("usdt")
int py_entry(struct pt_regs *ctx)
{
	return py_probe(ctx, false);
}

SEC("usdt")
int py_return(struct pt_regs *ctx)
{
	return py_probe(ctx, true);
}

#endif /* COLLECTOR_TRACE_PYTHON_BPF_H */
