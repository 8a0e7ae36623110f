// SPDX-License-Identifier: GPL-2.0
/*
 * runtimes/jvm/jvm_ops.c and jvm_procs.c without a JVM: a fake one built
 * in this process's own memory (the namer reads a process through
 * process_vm_readv, and this process is one): Symbols, a class, two
 * Methods with their ConstMethods, constant pool and line number tables
 * (Shares.alpha calling Shares.mix, as tests/workloads/Shares.java), and a
 * code heap holding one nmethod of alpha with mix inlined at one pc, laid
 * out as JDK 17 lays them (offsets of a layout made up here).  Its
 * frames, INTERP and COMPILED as bpf/hotspot.h encodes them, are named
 * through jvm_runtime's table; a compiled frame whose nmethod's compile id
 * is another's is stale; the record goes to the BPF side through
 * struct runtime_bpf; the kernel's counters and the summary lines come
 * from the model's named statistics.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bpf/hotspot.h"
#include "model/model.h"
#include "runtimes/jvm/jvm_ops.h"
#include "runtimes/jvm/jvm_report.h"

/* ---- the fake JVM ------------------------------------------------------------- */

static uint8_t arena[0x4000] __attribute__((aligned(4096)));
static uint8_t code[0x1000] __attribute__((aligned(4096)));
static uint8_t segmap[0x1000 >> 7];

#define AT(off) ((uint64_t)(uintptr_t)(arena + (off)))
/* where each object is in the arena */
#define SYM_CLASS 0x000
#define SYM_ALPHA 0x040
#define SYM_ASIG 0x080
#define SYM_MIX 0x0c0
#define SYM_MSIG 0x100
#define SYM_SRC 0x140
#define SYM_NMETHOD 0x180
#define KLASS 0x200
#define POOL 0x400
#define CM_ALPHA 0x800
#define CM_MIX 0x900
#define M_ALPHA 0xa00
#define M_MIX 0xa40

/* the nmethod at segment 0, and what it keeps */
#define BLOB ((uint64_t)(uintptr_t)(code + 16))
#define CODE_BEGIN (BLOB + 0x40)
#define SCOPES 0x100 /* from the blob */
#define PCS 0x180
#define METADATA 0x1c0

static struct hotspot_layout layout(void)
{
	struct hotspot_layout l = {
		.major = 17, .release = "17.0.15+6-Debian-1deb12u1",
		.symbol_length = 4, .symbol_body = 6, .klass_name = 8,
		.cpool_holder = 8, .cpool_size = 64, .cpool_source_file_index = 16,
		.cmethod_constants = 8, .cmethod_name_index = 16, .cmethod_signature_index = 18,
		.cmethod_code_size = 20, .cmethod_flags = 24, .cmethod_size = 48,
		.cmethod_has_lines = 1, .method_constmethod = 8,
		.blob_name = 8, .blob_frame_size = 16, .blob_frame_complete = 20,
		.blob_frame_complete_width = 4, .blob_code_begin = 24, .blob_code_end = 32,
		.blob_kind = HOTSPOT_ABSENT, .blob_mutable_data = HOTSPOT_ABSENT,
		.blob_relocation_size = HOTSPOT_ABSENT,
		.nm_method = 64, .nm_compile_id = 40, .nm_entry_bci = 72, .nm_orig_pc_offset = 56,
		.nm_deopt_handler = 48, .nm_scopes_pcs = 80, .nm_scopes_end = 84,
		.nm_scopes_data = 88, .nm_metadata = 96, .nm_metadata_width = 4,
		.nm_immutable_data = HOTSPOT_ABSENT, .nm_immutable_size = HOTSPOT_ABSENT,
		.nm_comp_level = HOTSPOT_ABSENT,
		.pcdesc_size = 12, .pcdesc_pc_offset = 0, .pcdesc_scope_offset = 4,
		.stream_exclude = 0,
	};

	return l;
}

static struct collector_hotspot_proc record(void)
{
	uint64_t low = (uint64_t)(uintptr_t)code;
	struct collector_hotspot_proc p = {
		.codecache_low = low, .codecache_high = low + sizeof(code),
		.heaps = { { low, low + sizeof(code), (uint64_t)(uintptr_t)segmap } }, .n_heaps = 1,
		.segment_shift = 7, .heapblock_size = 16, .major = 17,
		.blob_name = 8, .blob_frame_size = 16, .blob_frame_complete = 20,
		.blob_frame_complete_width = 4, .blob_code_begin = 24, .blob_code_end = 32,
		.nm_compile_id = 40, .nm_deopt_handler = 48, .nm_orig_pc_offset = 56,
		.method_constmethod = 8, .cmethod_size = 48,
		.interp_sender_sp = -1, .interp_method = -3, .interp_bcp = -8, .interp_locals = -7,
	};

	return p;
}

static void put(uint8_t *base, uint64_t off, const void *v, size_t n)
{
	memcpy(base + off, v, n);
}

static void put64(uint8_t *base, uint64_t off, uint64_t v)
{
	put(base, off, &v, 8);
}

static void put32(uint8_t *base, uint64_t off, uint32_t v)
{
	put(base, off, &v, 4);
}

static void put16(uint8_t *base, uint64_t off, uint16_t v)
{
	put(base, off, &v, 2);
}

static void symbol(uint64_t off, const char *s)
{
	put16(arena, off + 4, (uint16_t)strlen(s));
	put(arena, off + 6, s, strlen(s));
}

/* A ConstMethod of 12 bytes of code, its name and signature at pool
 * indexes, its line number table (JDK 17's bytes) after the code. */
static void cmethod(uint64_t off, uint16_t name, uint16_t sig, const uint8_t *lines, size_t n)
{
	put64(arena, off + 8, AT(POOL));
	put16(arena, off + 16, name);
	put16(arena, off + 18, sig);
	put16(arena, off + 20, 12);
	put32(arena, off + 24, 1); /* has a line number table */
	put(arena, off + 48 + 12, lines, n);
}

static void build_jvm(uint32_t compile_id)
{
	/* (bci 0, line 33) escaped, (4, 34) short, end */
	const uint8_t alpha_lines[] = { 0xff, 0x00, 66, 0x21, 0x00 };
	const uint8_t mix_lines[] = { 0xff, 0x00, 58, 0x00 }; /* (0, 29) */
	/* scope records (sender, method index, bci + 1): alpha at bci 10
	 * at 1; mix at bci 3, sent from 1, at 4 */
	const uint8_t scopes[] = { 0x00, 0x00, 0x01, 0x0b, 0x01, 0x02, 0x04 };
	const uint64_t pool[] = { SYM_ALPHA, SYM_ASIG, SYM_MIX, SYM_MSIG, SYM_SRC };

	memset(arena, 0, sizeof(arena));
	memset(code, 0, sizeof(code));
	symbol(SYM_CLASS, "Shares");
	symbol(SYM_ALPHA, "alpha");
	symbol(SYM_ASIG, "([JI)J");
	symbol(SYM_MIX, "mix");
	symbol(SYM_MSIG, "(JJ)J");
	symbol(SYM_SRC, "Shares.java");
	memcpy(arena + SYM_NMETHOD, "nmethod", 8);
	put64(arena, KLASS + 8, AT(SYM_CLASS));
	put64(arena, POOL + 8, AT(KLASS));
	put16(arena, POOL + 16, 5);
	for (int i = 1; i <= 5; i++)
		put64(arena, POOL + 64 + 8 * i, AT(pool[i - 1]));
	cmethod(CM_ALPHA, 1, 2, alpha_lines, sizeof(alpha_lines));
	cmethod(CM_MIX, 3, 4, mix_lines, sizeof(mix_lines));
	put64(arena, M_ALPHA + 8, AT(CM_ALPHA));
	put64(arena, M_MIX + 8, AT(CM_MIX));

	/* the nmethod: segments 0-7 of the heap, the rest free */
	memset(segmap, 0xff, sizeof(segmap));
	for (int i = 0; i < 8; i++)
		segmap[i] = (uint8_t)i;
	put64(code, 16 + 8, AT(SYM_NMETHOD));
	put64(code, 16 + 24, CODE_BEGIN);
	put64(code, 16 + 32, CODE_BEGIN + 0x80);
	put32(code, 16 + 40, compile_id);
	put64(code, 16 + 64, AT(M_ALPHA));
	put32(code, 16 + 72, (uint32_t)-1);
	put32(code, 16 + 80, PCS);
	put32(code, 16 + 84, PCS + 2 * 12);
	put64(code, 16 + 88, BLOB + SCOPES);
	put32(code, 16 + 96, METADATA);
	put(code, 16 + SCOPES, scopes, sizeof(scopes));
	/* PcDescs: pc offset 0x20 -> mix in alpha, 0x40 -> alpha */
	put32(code, 16 + PCS, 0x20);
	put32(code, 16 + PCS + 4, 4);
	put32(code, 16 + PCS + 12, 0x40);
	put32(code, 16 + PCS + 16, 1);
	put64(code, 16 + METADATA, AT(M_ALPHA));
	put64(code, 16 + METADATA + 8, AT(M_MIX));
}

/* ---- the BPF side, recorded -------------------------------------------------- */

struct fake_bpf {
	unsigned int kind;
	uint32_t tgid, forgot;
	size_t size;
	struct collector_hotspot_proc rec;
	int sets;
};

static int fake_set(void *ctx, unsigned int kind, uint32_t tgid, const void *entry, size_t size)
{
	struct fake_bpf *b = ctx;

	b->kind = kind;
	b->tgid = tgid;
	b->size = size;
	memcpy(&b->rec, entry, size < sizeof(b->rec) ? size : sizeof(b->rec));
	b->sets++;
	return 0;
}

static void fake_forget(void *ctx, unsigned int kind, uint32_t tgid)
{
	struct fake_bpf *b = ctx;

	assert_int_equal(kind, COLLECTOR_FRAME_JAVA);
	b->forgot = tgid;
}

struct fixture {
	struct model m;
	struct fake_bpf b;
	struct runtime_bpf bpf;
	void *rt;
	pid_t pid;
	/* processes pid, pid + 1, pid + 2 as the engine tells of them: the
	 * runtime's word in each one's record */
	uint32_t words[3];
	struct proc_ref procs[3];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct runtime_env env;
	struct hotspot_layout l = layout();
	struct collector_hotspot_proc rec = record();

	if (!f)
		return -1;
	model_init(&f->m);
	f->bpf = (struct runtime_bpf){ .ctx = &f->b, .set = fake_set, .forget = fake_forget };
	env = (struct runtime_env){ .bpf = &f->bpf, .m = &f->m, .no_ask = true };
	f->rt = jvm_runtime.open(&env);
	f->pid = getpid();
	for (int k = 0; k < 3; k++)
		f->procs[k] = (struct proc_ref){ f->pid + k, &f->words[k] };
	build_jvm(77);
	if (!f->rt || jvm_procs_add(jvm_instance_procs(f->rt), &f->procs[0], &l, &rec) != 1)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	jvm_runtime.close(f->rt);
	model_free(&f->m);
	free(f);
	return 0;
}

static void check(const struct runtime_frame *f, const char *function, uint32_t first,
		  uint32_t line)
{
	assert_string_equal(f->function, function);
	assert_string_equal(f->file, "Shares.java");
	assert_int_equal(f->first_line, first);
	assert_int_equal(f->line, line);
}

#define ALPHA "long Shares.alpha(long[], int)"
#define MIX "long Shares.mix(long, long)"

/* ---- tests ---------------------------------------------------------------------- */

/* Another JVM's libjvm.so (no vmStructs: this test program's file under
 * that name), mapped by two processes: read once, for the first, through
 * its record; neither walked. */
static void test_libjvm_read_once(void **state)
{
	struct fixture *f = *state;
	const struct jvm_procs_stats *st = jvm_procs_stats(jvm_instance_procs(f->rt));
	struct elf_file self;
	uint32_t slot = 0;
	struct runtime_image img = { .id = 3, .path = "/opt/other-vm/lib/server/libjvm.so",
				     .file = &self, .slot = &slot };
	uint32_t before = st->images_read;

	assert_int_equal(elf_file_open(&self, "/proc/self/exe"), 0);
	assert_int_equal(jvm_runtime.mapped(f->rt, &f->procs[1], &img), 0);
	assert_int_equal(st->images_read, before + 1);
	assert_int_not_equal(slot, 0);
	assert_int_equal(jvm_runtime.mapped(f->rt, &f->procs[2], &img), 0);
	assert_int_equal(st->images_read, before + 1);
	assert_false(jvm_runtime.has(f->rt, &f->procs[1]));
	assert_false(jvm_runtime.has(f->rt, &f->procs[2]));
	elf_file_close(&self);
}

static void test_record_and_table(void **state)
{
	struct fixture *f = *state;
	const struct runtime_image libc = { .id = 1, .path = "/usr/lib/libc.so.6" };
	const struct runtime_image unreadable = { .id = 2,
						  .path = "/nonexistent/lib/server/libjvm.so" };

	assert_int_equal(f->b.sets, 1);
	assert_int_equal(f->b.kind, COLLECTOR_FRAME_JAVA);
	assert_int_equal(f->b.tgid, (uint32_t)f->pid);
	assert_int_equal(f->b.size, sizeof(struct collector_hotspot_proc));
	assert_int_equal(f->b.rec.n_heaps, 1);
	assert_true(jvm_runtime.has(f->rt, &f->procs[0]));
	assert_true(jvm_runtime.known(f->rt, &f->procs[0]));
	assert_int_equal(jvm_runtime.live(f->rt), 1);
	assert_false(jvm_runtime.owns_jit(f->rt, &f->procs[0])); /* walked: no attach */
	assert_string_equal(jvm_runtime.image, "[java]");
	assert_int_equal(jvm_runtime.frame_kind, COLLECTOR_FRAME_JAVA);
	assert_false(jvm_runtime.splices);
	/* images that are no HotSpot */
	assert_int_equal(jvm_runtime.mapped(f->rt, &f->procs[1], &libc), 0);
	/* a libjvm.so whose file did not read: not walked (for now: it
	 * waits, then is counted unsupported) */
	assert_int_equal(jvm_runtime.mapped(f->rt, &f->procs[1], &unreadable), 0);
	assert_false(jvm_runtime.has(f->rt, &f->procs[1]));
	/* launchers */
	assert_true(jvm_runtime.maps_later(f->rt, "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"));
	assert_true(jvm_runtime.maps_later(f->rt, "/lib64/ld-linux-x86-64.so.2"));
	assert_false(jvm_runtime.maps_later(f->rt, "/usr/bin/python3.11"));
	assert_true(jvm_runtime.may_be(f->rt, "/usr/bin/java"));
	assert_false(jvm_runtime.may_be(f->rt, "/usr/bin/javac"));
}

static void test_interpreted(void **state)
{
	struct fixture *f = *state;
	struct runtime_frame out[RUNTIME_FRAME_MAX_INLINED];

	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], COLLECTOR_HS_INTERP(AT(M_ALPHA), 10),
						out, RUNTIME_FRAME_MAX_INLINED), 1);
	check(&out[0], ALPHA, 33, 34);
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], COLLECTOR_HS_INTERP(AT(M_ALPHA), 2),
						out, 1), 1);
	check(&out[0], ALPHA, 33, 33);
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], COLLECTOR_HS_INTERP(AT(M_MIX), 0),
						out, 1), 1);
	check(&out[0], MIX, 29, 29);
	/* bci unknown (saturated): line unknown */
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0],
						COLLECTOR_HS_INTERP(AT(M_ALPHA), 0x7fff), out, 1), 1);
	check(&out[0], ALPHA, 33, 0);
	/* not a Method: no name, a key of its own */
	assert_true(jvm_runtime.frame_name(f->rt, &f->procs[0], COLLECTOR_HS_INTERP(AT(SYM_ALPHA), 0),
					   out, 1) < 0);
	assert_int_equal(jvm_runtime.unnamed_key(COLLECTOR_HS_INTERP(AT(M_MIX), 7)), AT(M_MIX));
	/* a process never walked */
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[1],
						COLLECTOR_HS_INTERP(AT(M_MIX), 0), out, 1), -ESRCH);
}

static void test_compiled(void **state)
{
	struct fixture *f = *state;
	struct runtime_frame out[RUNTIME_FRAME_MAX_INLINED];
	uint64_t inl = COLLECTOR_HS_COMPILED(CODE_BEGIN + 0x10, 77, true);
	uint64_t outer = COLLECTOR_HS_COMPILED(CODE_BEGIN + 0x40, 77, false);
	const char *name;

	/* mix inlined into alpha: innermost first */
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], inl, out, RUNTIME_FRAME_MAX_INLINED),
			 2);
	check(&out[0], MIX, 29, 29);
	check(&out[1], ALPHA, 33, 34);
	name = out[0].function;
	/* room for one: the method compiled */
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], inl, out, 1), 1);
	check(&out[0], ALPHA, 33, 34);
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], outer, out, 4), 1);
	check(&out[0], ALPHA, 33, 34);
	assert_int_equal(jvm_runtime.unnamed_key(outer), CODE_BEGIN + 0x40);
	/* another compile id at that pc: the code was reused */
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0],
						COLLECTOR_HS_COMPILED(CODE_BEGIN + 0x40, 78, false),
						out, 4), -ESTALE);
	/* a free segment: the code was freed */
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0],
						COLLECTOR_HS_COMPILED((uint64_t)(uintptr_t)code +
								      0x800, 77, false),
						out, 4), -ESTALE);
	/* named once: the memory changed since does not matter */
	symbol(SYM_MIX, "xim");
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], inl, out, 4), 2);
	assert_ptr_equal(out[0].function, name);
	/* the nmethod freed, another (id 78) there whose pc 0x10 is alpha's:
	 * its scopes are read anew, not those of the old one */
	build_jvm(78);
	put32(code, 16 + PCS + 4, 1);
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0],
						COLLECTOR_HS_COMPILED(CODE_BEGIN + 0x10, 78, true),
						out, 4), 1);
	check(&out[0], ALPHA, 33, 34);
}

/* notice() names a frame now: it is named after its code is gone. */
static void test_notice_and_forget(void **state)
{
	struct fixture *f = *state;
	struct runtime_frame out[4];
	uint64_t fr = COLLECTOR_HS_COMPILED(CODE_BEGIN + 0x10, 77, true);

	jvm_runtime.notice(f->rt, &f->procs[0], fr);
	memset(code, 0, sizeof(code));
	memset(segmap, 0xff, sizeof(segmap));
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], fr, out, 4), 2);
	jvm_runtime.forget(f->rt, &f->procs[0]);
	assert_int_equal(f->b.forgot, (uint32_t)f->pid);
	assert_false(jvm_runtime.has(f->rt, &f->procs[0]));
	assert_true(jvm_runtime.known(f->rt, &f->procs[0]));
	assert_int_equal(jvm_runtime.live(f->rt), 0);
	/* the names stay for the sums decoded at the end */
	assert_int_equal(jvm_runtime.frame_name(f->rt, &f->procs[0], fr, out, 4), 2);
	check(&out[1], ALPHA, 33, 34);
	/* the record dropped (a continuous run forgets the process): its
	 * names go, its entry taken by the next process met */
	jvm_runtime.drop(f->rt, f->words[0]);
	assert_false(jvm_runtime.known(f->rt, &f->procs[0]));
	assert_true(jvm_runtime.frame_name(f->rt, &f->procs[0], fr, out, 4) < 0);
	assert_int_equal(jvm_procs_add(jvm_instance_procs(f->rt), &f->procs[1],
				       &(struct hotspot_layout){ 0 },
				       &(struct collector_hotspot_proc){ 0 }), 1);
	assert_int_equal(f->words[1], f->words[0]);
	assert_true(jvm_runtime.known(f->rt, &f->procs[1]));
}

static void test_counters(void **state)
{
	uint64_t c[COLLECTOR_CNT_MAX] = { 0 };
	struct model m;

	(void)state;
	model_init(&m);
	jvm_runtime.counters(&m, c);
	assert_int_equal(model_named_stat_value(&m, JVM_STAT_WALKS), 0);
	c[COLLECTOR_CNT_HS_WALKS] = 100;
	c[COLLECTOR_CNT_HS_FRAMES] = 450;
	c[COLLECTOR_CNT_HS_NO_BLOB] = 1;
	c[COLLECTOR_CNT_HS_BAD_FRAME] = 2;
	c[COLLECTOR_CNT_HS_LIMIT] = 3;
	c[COLLECTOR_CNT_HS_FACTS_HIT] = 300;
	c[COLLECTOR_CNT_HS_FACTS_STALE] = 4;
	jvm_runtime.counters(&m, c);
	assert_int_equal(model_named_stat_value(&m, "jvm_walks"), 100);
	assert_int_equal(model_named_stat_value(&m, "jvm_frames"), 450);
	assert_int_equal(model_named_stat_value(&m, "jvm_walks_stopped_no_blob"), 1);
	assert_int_equal(model_named_stat_value(&m, "jvm_walks_stopped_bad_frame"), 2);
	assert_int_equal(model_named_stat_value(&m, "jvm_walks_stopped_limit"), 3);
	assert_int_equal(model_named_stat_value(&m, "jvm_blob_facts_cached"), 300);
	assert_int_equal(model_named_stat_value(&m, "jvm_blob_facts_stale"), 4);
	model_free(&m);
}

/* Stacks innermost first: [mix inlined in alpha] <- main (3 samples),
 * native <- alpha (interpreted) <- main (1), native only (1). */
static void test_summary(void **state)
{
	struct fixture *f = *state;
	struct model_image native = { .path = "/usr/lib/jvm/lib/server/libjvm.so" };
	struct model_image java = { .path = "[java]", .kind = MODEL_IMAGE_RUNTIME };
	struct model *m = &f->m;
	uint32_t ni, ji, file, f_alpha, f_mix, f_main, f_native, l[4], st[3];
	struct model_inline inl;
	char buf[8192];
	FILE *out = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(out);
	ni = model_add_image(m, &native);
	ji = model_add_image(m, &java);
	file = model_intern_file(m, "Shares.java");
	f_alpha = model_intern_function(m, ji, ALPHA, 33, 0, file, 33);
	f_mix = model_intern_function(m, ji, MIX, 29, 0, file, 29);
	f_main = model_intern_function(m, ji, "void JavaShares.main(java.lang.String[])", 1, 0,
				       MODEL_NONE, 0);
	f_native = model_intern_function(m, ni, "SharedRuntime::foo", 0x1000, 16, MODEL_NONE, 0);
	inl = (struct model_inline){ .function = f_mix, .call_file = file, .call_line = 34 };
	l[0] = model_intern_location(m, ji, 1, f_alpha, file, 29, &inl, 1);
	l[1] = model_intern_location(m, ji, 2, f_main, MODEL_NONE, 0, NULL, 0);
	l[2] = model_intern_location(m, ji, 3, f_alpha, file, 34, NULL, 0);
	l[3] = model_intern_location(m, ni, 0x1004, f_native, MODEL_NONE, 0, NULL, 0);
	st[0] = model_intern_stack(m, (uint32_t[]){ l[0], l[1] }, 2, 0, false);
	st[1] = model_intern_stack(m, (uint32_t[]){ l[3], l[2], l[1] }, 3, 0, false);
	st[2] = model_intern_stack(m, (uint32_t[]){ l[3] }, 1, 0, false);
	for (int i = 0; i < 5; i++)
		model_add_sample(m)->stack = st[i < 3 ? 0 : i - 2];
	jvm_runtime.counters(m, (uint64_t[COLLECTOR_CNT_MAX]){ [COLLECTOR_CNT_HS_WALKS] = 5,
							      [COLLECTOR_CNT_HS_NO_BLOB] = 1 });
	model_named_stat_add(m, JVM_STAT_FRAMES_UNNAMED, 2);
	model_named_stat_add(m, JVM_STAT_UNSUPPORTED, 1);
	jvm_runtime.summary(out, m, RUNTIME_SUMMARY_WALKS, f->rt);
	jvm_runtime.summary(out, m, RUNTIME_SUMMARY_TABLES, f->rt);
	fclose(out);
	/* setup()'s JVM was counted through jvm_procs_add, not mapped(): */
	assert_int_equal(model_named_stat_value(m, JVM_STAT_WALKED), 0);
	assert_null(strstr(buf, "JVM walked"));
	out = fmemopen(buf, sizeof(buf), "w");
	model_named_stat_add(m, JVM_STAT_WALKED, 1);
	jvm_runtime.summary(out, m, RUNTIME_SUMMARY_WALKS, f->rt);
	jvm_runtime.summary(out, m, RUNTIME_SUMMARY_TABLES, f->rt);
	/* a saved run's summary: no instance */
	jvm_runtime.summary(out, m, RUNTIME_SUMMARY_WALKS, NULL);
	fclose(out);
	assert_non_null(strstr(buf, "  java            1 JVM walked (JDK 17.0.15); 4 of 5 samples "
				    "(80.0%) with Java frames; 5 walks, 1 stopped early (1 no code "
				    "blob at the pc, 0 a bad frame or a read failed, 0 at the frame "
				    "limit); 2 frames unnamed"));
	assert_non_null(strstr(buf, "  java            1 JVM walked; 4 of 5"));
	assert_non_null(strstr(buf, "1 JVM the walk does not know: its JIT code is named by perf"));
	assert_non_null(strstr(buf, "Top Java methods"));
	/* mix: self 3 (inlined, innermost), alpha: self 1, total 4 */
	assert_non_null(strstr(buf, " 60.0%          3   60.0%  " MIX));
	assert_non_null(strstr(buf, " 20.0%          1   80.0%  " ALPHA));
	assert_non_null(strstr(buf, "Shares.java:33"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_and_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_libjvm_read_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interpreted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compiled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_notice_and_forget, setup, teardown),
		cmocka_unit_test(test_counters),
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
