// SPDX-License-Identifier: GPL-2.0
/* A HotSpot JVM's layout from its vmStructs tables (runtimes/jvm/hotspot_structs.h). */
#include "runtimes/jvm/hotspot_structs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/procmaps.h"
#include "lib/procmem.h"
#include "symbols/elfinfo.h"

/* Bounds on what a table may hold (real ones: ~3000 entries of 48 bytes). */
#define MAX_ENTRIES 20000
#define MAX_STRIDE 256
#define MAX_NAME 128

/* The exported symbols that locate and shape the tables. */
enum sym_id {
	S_STRUCTS, S_S_STRIDE, S_S_TYPE, S_S_FIELD, S_S_STATIC, S_S_OFFSET, S_S_ADDRESS,
	S_S_TSTRING,
	S_TYPES, S_T_STRIDE, S_T_TYPE, S_T_SIZE,
	S_INTS, S_I_STRIDE, S_I_NAME, S_I_VALUE,
	S_LONGS, S_L_STRIDE, S_L_NAME, S_L_VALUE,
	N_SYMS
};

static const char *const sym_names[N_SYMS] = {
	"gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMStructEntryTypeNameOffset", "gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryIsStaticOffset", "gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset", "gHotSpotVMStructEntryTypeStringOffset",
	"gHotSpotVMTypes", "gHotSpotVMTypeEntryArrayStride", "gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySizeOffset",
	"gHotSpotVMIntConstants", "gHotSpotVMIntConstantEntryArrayStride",
	"gHotSpotVMIntConstantEntryNameOffset", "gHotSpotVMIntConstantEntryValueOffset",
	"gHotSpotVMLongConstants", "gHotSpotVMLongConstantEntryArrayStride",
	"gHotSpotVMLongConstantEntryNameOffset", "gHotSpotVMLongConstantEntryValueOffset",
};

/* One entry of any table: a field (type, field, offset or address), a
 * type (type, size) or a constant (name in type, value). */
struct vm_entry {
	char *type, *field;
	char *ctype;             /* a field's C type ("int", "u2", "address") */
	bool is_static;
	uint64_t value;          /* offset, size or constant; address of a static */
};

enum table { T_STRUCTS, T_TYPES, T_INTS, T_LONGS, N_TABLES };

struct vm_tables {
	pid_t pid;
	uint64_t sym[N_SYMS];    /* runtime addresses */
	struct vm_entry *e[N_TABLES];
	size_t n[N_TABLES];
	char *err;
	size_t err_size;
};

static int fail(struct vm_tables *t, int err, const char *fmt, ...)
{
	va_list ap;

	if (t->err && t->err_size) {
		va_start(ap, fmt);
		vsnprintf(t->err, t->err_size, fmt, ap);
		va_end(ap);
	}
	return err;
}

_Static_assert(N_SYMS == HOTSPOT_VM_SYMBOLS, "one address a symbol");

int hotspot_vm_symbols(const struct elf_file *f, const char *path, struct hotspot_vm_symbols *out,
		       char *why, size_t why_size)
{
	struct vm_tables t = { .err = why, .err_size = why_size };
	Elf_Scn *scn = elf_file_symbols(f, SHT_DYNSYM);
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	GElf_Shdr sh;
	GElf_Sym sym;

	memset(out, 0, sizeof(*out));
	if (!data || !gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return fail(&t, -ENOENT, "%s has no dynamic symbols", path);
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		const char *s;

		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
			continue;
		s = elf_strptr(f->elf, sh.sh_link, sym.st_name);
		if (!s || strncmp(s, "gHotSpotVM", 10))
			continue;
		for (int k = 0; k < N_SYMS; k++)
			if (!strcmp(s, sym_names[k]))
				out->at[k] = sym.st_value;
	}
	for (int k = 0; k < N_SYMS; k++)
		if (!out->at[k])
			return fail(&t, -ENOENT, "%s exports no %s: no vmStructs", path,
				    sym_names[k]);
	return 0;
}

static int read_u64(struct vm_tables *t, uint64_t addr, uint64_t *v)
{
	int err = proc_mem_read(t->pid, addr, v, sizeof(*v));

	return err ? fail(t, err, "cannot read the JVM's memory at 0x%llx", (unsigned long long)addr)
		   : 0;
}

/* A NUL-terminated string of the process, read 32 bytes at a time (a read
 * may not cross into an unmapped page: the last chunk is shortened). */
static int read_cstr(pid_t pid, uint64_t addr, char *out, size_t size)
{
	size_t at = 0;

	while (at + 1 < size) {
		size_t n = 32 - (addr + at) % 32;

		if (n > size - 1 - at)
			n = size - 1 - at;
		if (proc_mem_read(pid, addr + at, out + at, n))
			return -EFAULT;
		for (size_t i = 0; i < n; i++)
			if (!out[at + i])
				return 0;
		at += n;
	}
	out[at] = 0;
	return 0;
}

static char *dup_str(pid_t pid, uint64_t addr)
{
	char buf[MAX_NAME];

	if (!addr || read_cstr(pid, addr, buf, sizeof(buf)))
		return NULL;
	return strdup(buf);
}

/* Reads one table: base (the pointer's address), stride, the offsets of
 * the type name, field name (0: none), is-static (0: none) and value
 * (the address for statics when addr_off != 0). */
static int read_table(struct vm_tables *t, enum table which, int s_base, int s_stride, int s_type,
		      int s_field, int s_static, int s_value, int s_addr, int s_ts)
{
	uint64_t base, stride, off[6] = { 0 };
	int syms[6] = { s_type, s_field, s_static, s_value, s_addr, s_ts };
	uint8_t e[MAX_STRIDE];
	struct vm_entry *items = NULL;
	size_t n = 0, cap = 0;
	int err;

	if ((err = read_u64(t, t->sym[s_base], &base)) || (err = read_u64(t, t->sym[s_stride], &stride)))
		return err;
	for (int k = 0; k < 6; k++)
		if (syms[k] >= 0 && (err = read_u64(t, t->sym[syms[k]], &off[k])))
			return err;
	if (!base || !stride || stride > MAX_STRIDE)
		return fail(t, -EPROTO, "%s: bad table (base 0x%llx, stride %llu)",
			    sym_names[s_base], (unsigned long long)base, (unsigned long long)stride);
	for (int k = 0; k < 6; k++)
		if (off[k] + 8 > stride)
			return fail(t, -EPROTO, "%s: entry offset %llu past stride %llu",
				    sym_names[s_base], (unsigned long long)off[k],
				    (unsigned long long)stride);
	for (size_t i = 0; i < MAX_ENTRIES; i++) {
		uint64_t type, field = 0, value, addr = 0, ts = 0;
		uint32_t is_static = 0;
		struct vm_entry *it;

		if ((err = proc_mem_read(t->pid, base + i * stride, e, stride)))
			return fail(t, err, "%s: entry %zu does not read", sym_names[s_base], i);
		memcpy(&type, e + off[0], 8);
		if (!type)
			break;
		if (s_field >= 0)
			memcpy(&field, e + off[1], 8);
		if (s_static >= 0)
			memcpy(&is_static, e + off[2], 4);
		memcpy(&value, e + off[3], 8);
		if (which == T_INTS)
			value = (uint64_t)(int64_t)(int32_t)value;
		if (s_addr >= 0)
			memcpy(&addr, e + off[4], 8);
		if (s_ts >= 0)
			memcpy(&ts, e + off[5], 8);
		if (n == cap) {
			struct vm_entry *p = realloc(items, (cap = cap ? 2 * cap : 1024) * sizeof(*p));

			if (!p)
				goto nomem;
			items = p;
		}
		it = &items[n];
		*it = (struct vm_entry){ .is_static = is_static != 0, .value = is_static ? addr : value };
		it->type = dup_str(t->pid, type);
		it->field = field ? dup_str(t->pid, field) : NULL;
		it->ctype = ts ? dup_str(t->pid, ts) : NULL;
		if (!it->type || (field && !it->field)) {
			free(it->type);
			free(it->field);
			free(it->ctype);
			continue; /* unreadable name: skipped */
		}
		n++;
	}
	t->e[which] = items;
	t->n[which] = n;
	return 0;
nomem:
	for (size_t i = 0; i < n; i++) {
		free(items[i].type);
		free(items[i].field);
		free(items[i].ctype);
	}
	free(items);
	return fail(t, -ENOMEM, "out of memory");
}

static void free_tables(struct vm_tables *t)
{
	for (int w = 0; w < N_TABLES; w++) {
		for (size_t i = 0; i < t->n[w]; i++) {
			free(t->e[w][i].type);
			free(t->e[w][i].field);
			free(t->e[w][i].ctype);
		}
		free(t->e[w]);
		t->e[w] = NULL;
		t->n[w] = 0;
	}
}

static int read_tables(struct vm_tables *t, pid_t pid, const struct hotspot_vm_symbols *syms,
		       uint64_t bias)
{
	int err;

	t->pid = pid;
	for (int k = 0; k < N_SYMS; k++)
		t->sym[k] = syms->at[k] + bias;
	err = read_table(t, T_STRUCTS, S_STRUCTS, S_S_STRIDE, S_S_TYPE, S_S_FIELD, S_S_STATIC,
			 S_S_OFFSET, S_S_ADDRESS, S_S_TSTRING);
	if (!err)
		err = read_table(t, T_TYPES, S_TYPES, S_T_STRIDE, S_T_TYPE, -1, -1, S_T_SIZE, -1, -1);
	if (!err)
		err = read_table(t, T_INTS, S_INTS, S_I_STRIDE, S_I_NAME, -1, -1, S_I_VALUE, -1, -1);
	if (!err)
		err = read_table(t, T_LONGS, S_LONGS, S_L_STRIDE, S_L_NAME, -1, -1, S_L_VALUE, -1, -1);
	if (err)
		free_tables(t);
	return err;
}

/* ---- look-ups ------------------------------------------------------------- */

/* The entry of field `field` of `type` (or of the first of the types
 * listed "A|B" that has it), or NULL. */
static const struct vm_entry *find_field(const struct vm_tables *t, const char *types,
					 const char *field)
{
	char buf[MAX_NAME];
	char *save = NULL, *type;

	snprintf(buf, sizeof(buf), "%s", types);
	for (type = strtok_r(buf, "|", &save); type; type = strtok_r(NULL, "|", &save))
		for (size_t i = 0; i < t->n[T_STRUCTS]; i++) {
			const struct vm_entry *e = &t->e[T_STRUCTS][i];

			if (!strcmp(e->type, type) && !strcmp(e->field, field))
				return e;
		}
	return NULL;
}

/* Offset of a field: the first of the "|"-separated names fields of the
 * types found; HOTSPOT_ABSENT when none. */
static uint32_t opt_offset(const struct vm_tables *t, const char *types, const char *fields)
{
	char buf[MAX_NAME];
	char *save = NULL, *field;

	snprintf(buf, sizeof(buf), "%s", fields);
	for (field = strtok_r(buf, "|", &save); field; field = strtok_r(NULL, "|", &save)) {
		const struct vm_entry *e = find_field(t, types, field);

		if (e && !e->is_static && e->value < UINT32_MAX)
			return (uint32_t)e->value;
	}
	return HOTSPOT_ABSENT;
}

static uint64_t opt_static(const struct vm_tables *t, const char *types, const char *field)
{
	const struct vm_entry *e = find_field(t, types, field);

	return e && e->is_static ? e->value : 0;
}

static uint32_t opt_size(const struct vm_tables *t, const char *type)
{
	for (size_t i = 0; i < t->n[T_TYPES]; i++)
		if (!strcmp(t->e[T_TYPES][i].type, type))
			return (uint32_t)t->e[T_TYPES][i].value;
	return HOTSPOT_ABSENT;
}

static bool opt_const(const struct vm_tables *t, const char *name, int64_t *v)
{
	for (int w = T_INTS; w <= T_LONGS; w++)
		for (size_t i = 0; i < t->n[w]; i++)
			if (!strcmp(t->e[w][i].type, name)) {
				*v = (int64_t)t->e[w][i].value;
				return true;
			}
	return false;
}

/* A needed field: its offset, or the error naming it. */
struct need {
	const struct vm_tables *t;
	int err;
	char what[96];
};

static uint32_t need_offset(struct need *n, const char *types, const char *fields)
{
	uint32_t v = opt_offset(n->t, types, fields);

	if (v == HOTSPOT_ABSENT && !n->err) {
		n->err = -EPROTO;
		snprintf(n->what, sizeof(n->what), "field %s::%s", types, fields);
	}
	return v;
}

static uint32_t need_size(struct need *n, const char *type)
{
	uint32_t v = opt_size(n->t, type);

	if (v == HOTSPOT_ABSENT && !n->err) {
		n->err = -EPROTO;
		snprintf(n->what, sizeof(n->what), "type %s", type);
	}
	return v;
}

static uint64_t need_static(struct need *n, const char *types, const char *field)
{
	uint64_t v = opt_static(n->t, types, field);

	if (!v && !n->err) {
		n->err = -EPROTO;
		snprintf(n->what, sizeof(n->what), "static %s::%s", types, field);
	}
	return v;
}

/* ---- dump ------------------------------------------------------------------ */

int hotspot_tables_dump(pid_t pid, const struct hotspot_vm_symbols *syms, uint64_t bias,
			void *file)
{
	struct vm_tables t = { 0 };
	FILE *out = file;
	char err[160];
	int rc;

	t.err = err;
	t.err_size = sizeof(err);
	rc = read_tables(&t, pid, syms, bias);
	if (rc) {
		fprintf(stderr, "%s\n", err);
		return rc;
	}
	for (size_t i = 0; i < t.n[T_STRUCTS]; i++) {
		const struct vm_entry *e = &t.e[T_STRUCTS][i];

		if (e->is_static)
			fprintf(out, "struct %s %s @0x%llx\n", e->type, e->field,
				(unsigned long long)(e->value - bias));
		else
			fprintf(out, "struct %s %s %llu %s\n", e->type, e->field,
				(unsigned long long)e->value, e->ctype ? e->ctype : "?");
	}
	for (size_t i = 0; i < t.n[T_TYPES]; i++)
		fprintf(out, "type %s %llu\n", t.e[T_TYPES][i].type,
			(unsigned long long)t.e[T_TYPES][i].value);
	for (size_t i = 0; i < t.n[T_INTS]; i++)
		fprintf(out, "int %s %lld\n", t.e[T_INTS][i].type, (long long)t.e[T_INTS][i].value);
	for (size_t i = 0; i < t.n[T_LONGS]; i++)
		fprintf(out, "long %s %lld\n", t.e[T_LONGS][i].type,
			(long long)t.e[T_LONGS][i].value);
	free_tables(&t);
	return 0;
}

/* ---- libjvm.so among the mappings ------------------------------------------ */

static bool is_libjvm(const char *path)
{
	size_t n = strlen(path);

	return n >= 10 && !strcmp(path + n - 10, "/libjvm.so");
}

int hotspot_find_libjvm(pid_t pid, char *path, size_t size, uint64_t *bias,
			struct hotspot_vm_symbols *syms)
{
	struct procmaps maps = { 0 };
	struct elf_file f;
	int err = procmaps_read(pid, &maps);

	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < maps.n; i++) {
		const struct procmap_entry *e = &maps.entries[i];

		if (!procmap_is_file(e) || !is_libjvm(e->path))
			continue;
		err = procmaps_open_path(pid, e, path, size, NULL);
		if (err)
			break;
		err = elf_file_open(&f, path);
		if (err)
			break;
		err = elf_file_bias(&f, e->start, e->pgoff, 4096, bias) ? 0 : -ENOEXEC;
		if (!err)
			err = hotspot_vm_symbols(&f, e->path, syms, NULL, 0);
		elf_file_close(&f);
		break;
	}
	procmaps_free(&maps);
	return err;
}

/* ---- the layout --------------------------------------------------------------- */

static void fill_names(struct need *n, struct hotspot_layout *l)
{
	const struct vm_tables *t = n->t;
	int64_t v;

	l->symbol_length = need_offset(n, "Symbol", "_length");
	l->symbol_body = need_offset(n, "Symbol", "_body");
	l->klass_name = need_offset(n, "Klass", "_name");
	l->cpool_holder = need_offset(n, "ConstantPool", "_pool_holder");
	l->cpool_size = need_size(n, "ConstantPool");
	l->cpool_source_file_index = opt_offset(t, "ConstantPool", "_source_file_name_index");
	l->cmethod_constants = need_offset(n, "ConstMethod", "_constants");
	l->cmethod_name_index = need_offset(n, "ConstMethod", "_name_index");
	l->cmethod_signature_index = need_offset(n, "ConstMethod", "_signature_index");
	l->cmethod_code_size = need_offset(n, "ConstMethod", "_code_size");
	/* 21+: a ConstMethodFlags whose word is _flags._flags */
	l->cmethod_flags = need_offset(n, "ConstMethod", "_flags._flags|_flags");
	l->cmethod_size = need_size(n, "ConstMethod");
	l->cmethod_has_lines = 1;
	if (opt_const(t, "ConstMethodFlags::_misc_has_linenumber_table", &v) ||
	    opt_const(t, "ConstMethod::_has_linenumber_table", &v))
		l->cmethod_has_lines = (uint32_t)v;
	l->method_constmethod = need_offset(n, "Method", "_constMethod");
}

/* The byte width of a field by its C type: 4 unless it says otherwise. */
static uint32_t field_width(const struct vm_tables *t, const char *type, const char *field)
{
	const struct vm_entry *e = find_field(t, type, field);
	const char *c = e && e->ctype ? e->ctype : "int";

	if (strchr(c, '*') || !strcmp(c, "address") || !strcmp(c, "long"))
		return 8;
	if (!strcmp(c, "u2") || !strcmp(c, "int16_t") || !strcmp(c, "uint16_t") ||
	    !strcmp(c, "jushort") || !strcmp(c, "short"))
		return 2;
	if (!strcmp(c, "u1") || !strcmp(c, "bool") || !strcmp(c, "uint8_t") ||
	    !strcmp(c, "CodeBlobKind"))
		return 1;
	return 4;
}

static void fill_blobs(struct need *n, struct hotspot_layout *l)
{
	const struct vm_tables *t = n->t;
	const char *nm = "nmethod|CompiledMethod";

	l->blob_name = need_offset(n, "CodeBlob", "_name");
	l->blob_size = need_offset(n, "CodeBlob", "_size");
	l->blob_header_size = need_offset(n, "CodeBlob", "_header_size");
	l->blob_frame_complete = need_offset(n, "CodeBlob", "_frame_complete_offset");
	l->blob_frame_complete_width = field_width(t, "CodeBlob", "_frame_complete_offset");
	l->blob_frame_size = need_offset(n, "CodeBlob", "_frame_size");
	l->blob_offsets = opt_offset(t, "CodeBlob", "_code_begin") == HOTSPOT_ABSENT;
	l->blob_code_begin = need_offset(n, "CodeBlob", "_code_begin|_code_offset");
	l->blob_code_end = need_offset(n, "CodeBlob", l->blob_offsets ? "_data_offset" : "_code_end");
	l->blob_kind = opt_offset(t, "CodeBlob", "_kind");
	l->blob_mutable_data = opt_offset(t, "CodeBlob", "_mutable_data");
	l->blob_relocation_size = opt_offset(t, "CodeBlob", "_relocation_size");
	l->nm_method = need_offset(n, nm, "_method");
	l->nm_compile_id = need_offset(n, nm, "_compile_id");
	l->nm_entry_bci = need_offset(n, nm, "_entry_bci");
	l->nm_orig_pc_offset = need_offset(n, nm, "_orig_pc_offset");
	l->nm_deopt_handler = need_offset(n, nm, "_deopt_handler_begin|_deopt_handler_offset");
	l->nm_scopes_pcs = need_offset(n, nm, "_scopes_pcs_offset");
	l->nm_scopes_data = need_offset(n, nm, "_scopes_data_begin|_scopes_data_offset");
	l->nm_comp_level = opt_offset(t, nm, "_comp_level");
	l->nm_immutable_data = opt_offset(t, nm, "_immutable_data");
	l->nm_immutable_size = opt_offset(t, nm, "_immutable_data_size");
	if (l->nm_immutable_data == HOTSPOT_ABSENT) {
		/* 17-22: pcs end where the dependencies start */
		l->nm_scopes_end = need_offset(n, nm, "_dependencies_offset");
		l->nm_metadata = need_offset(n, nm, "_metadata_offset");
	} else {
		l->nm_scopes_end = HOTSPOT_ABSENT;
		need_offset(n, nm, "_immutable_data_size");
		/* 23, 24: metadata at the data offset + this; 25: in mutable data */
		l->nm_metadata = opt_offset(t, nm, "_metadata_offset");
		if (l->nm_metadata == HOTSPOT_ABSENT)
			need_offset(n, "CodeBlob", "_mutable_data");
	}
	l->nm_metadata_width = field_width(t, nm, "_metadata_offset");
	l->pcdesc_size = need_size(n, "PcDesc");
	l->pcdesc_pc_offset = need_offset(n, "PcDesc", "_pc_offset");
	l->pcdesc_scope_offset = need_offset(n, "PcDesc", "_scope_decode_offset");
}

static void fill_code_cache(struct need *n, struct hotspot_layout *l)
{
	l->codecache_heaps = need_static(n, "CodeCache", "_heaps");
	l->codecache_low = need_static(n, "CodeCache", "_low_bound");
	l->codecache_high = need_static(n, "CodeCache", "_high_bound");
	l->garray_len = need_offset(n, "GrowableArrayBase|GenericGrowableArray", "_len");
	l->garray_data = need_offset(n, "GrowableArray<int>", "_data");
	l->codeheap_memory = need_offset(n, "CodeHeap", "_memory");
	l->codeheap_segmap = need_offset(n, "CodeHeap", "_segmap");
	l->codeheap_log2_segment = need_offset(n, "CodeHeap", "_log2_segment_size");
	l->vspace_low_boundary = need_offset(n, "VirtualSpace", "_low_boundary");
	l->vspace_high_boundary = need_offset(n, "VirtualSpace", "_high_boundary");
	l->heapblock_size = need_size(n, "HeapBlock");
	l->heapblock_length = need_offset(n, "HeapBlock::Header", "_length");
	l->heapblock_length_width = field_width(n->t, "HeapBlock::Header", "_length");
	l->heapblock_used = need_offset(n, "HeapBlock::Header", "_used");
	l->interpreter_code = need_static(n, "AbstractInterpreter", "_code");
	l->stubqueue_buffer = need_offset(n, "StubQueue", "_stub_buffer");
	l->stubqueue_limit = need_offset(n, "StubQueue", "_buffer_limit");
}

/* Threads are optional: the probe uses them to find a thread's last Java
 * frame when it is stopped in native code. */
static void fill_threads(const struct vm_tables *t, struct hotspot_layout *l)
{
	l->java_thread_list = opt_static(t, "ThreadsSMRSupport", "_java_thread_list");
	l->tlist_length = opt_offset(t, "ThreadsList", "_length");
	l->tlist_threads = opt_offset(t, "ThreadsList", "_threads");
	l->jthread_osthread = opt_offset(t, "JavaThread|Thread", "_osthread");
	l->osthread_tid = opt_offset(t, "OSThread", "_thread_id");
	l->jthread_anchor = opt_offset(t, "JavaThread", "_anchor");
	l->jthread_state = opt_offset(t, "JavaThread", "_thread_state");
	l->anchor_sp = opt_offset(t, "JavaFrameAnchor", "_last_Java_sp");
	l->anchor_pc = opt_offset(t, "JavaFrameAnchor", "_last_Java_pc");
	l->anchor_fp = opt_offset(t, "JavaFrameAnchor", "_last_Java_fp");
}

static int read_version(struct vm_tables *t, struct need *n, struct hotspot_layout *l)
{
	uint64_t major = need_static(n, "Abstract_VM_Version", "_vm_major_version");
	uint64_t release = opt_static(t, "Abstract_VM_Version", "_s_vm_release");
	uint64_t s = 0;
	int32_t v;
	int err;

	if (n->err)
		return n->err;
	err = proc_mem_read(t->pid, major, &v, sizeof(v));
	if (err)
		return fail(t, err, "cannot read the JVM's major version");
	l->major = v > 0 ? (uint32_t)v : 0;
	if (release && !proc_mem_read(t->pid, release, &s, sizeof(s)) && s)
		read_cstr(t->pid, s, l->release, sizeof(l->release));
	/* UNSIGNED5 excludes the byte 0 from JDK 20 on (JDK-8298073) */
	l->stream_exclude = l->major >= 20 ? 1 : 0;
	return 0;
}

int hotspot_layout_read(pid_t pid, const struct hotspot_vm_symbols *syms, uint64_t bias,
			struct hotspot_layout *out, char *err, size_t err_size)
{
	struct vm_tables t = { .err = err, .err_size = err_size };
	struct need n = { .t = &t };
	int rc;

	memset(out, 0, sizeof(*out));
	if (err && err_size)
		err[0] = 0;
	rc = read_tables(&t, pid, syms, bias);
	if (rc)
		return rc;
	out->bias = bias;
	rc = read_version(&t, &n, out);
	if (rc)
		goto cleanup;
	fill_names(&n, out);
	fill_blobs(&n, out);
	fill_code_cache(&n, out);
	fill_threads(&t, out);
	if (n.err) {
		rc = fail(&t, n.err, "JDK %u (%s): libjvm.so's vmStructs lack %s", out->major,
			  out->release, n.what);
		goto cleanup;
	}
	if (out->major < 17)
		rc = fail(&t, -ENOTSUP, "JDK %u (%s): 17 and later only", out->major, out->release);
cleanup:
	free_tables(&t);
	return rc;
}

/* ---- the walker's record ------------------------------------------------- */

/* 8 bytes into *v (a uint64_t or a __u64), 0 when unreadable */
static int read_word(pid_t pid, uint64_t addr, void *v)
{
	memset(v, 0, 8);
	return proc_mem_read(pid, addr, v, 8);
}

static int fill_heaps(pid_t pid, const struct hotspot_layout *l, struct collector_hotspot_proc *p)
{
	uint64_t arr, data, heap;
	int32_t len, shift = 0;
	int err;

	if ((err = read_word(pid, l->codecache_heaps, &arr)))
		return err;
	if (!arr)
		return -EAGAIN;
	if ((err = proc_mem_read(pid, arr + l->garray_len, &len, sizeof(len))) ||
	    (err = read_word(pid, arr + l->garray_data, &data)))
		return err;
	if (len <= 0 || !data)
		return -EAGAIN;
	if (len > COLLECTOR_HOTSPOT_MAX_HEAPS)
		return -E2BIG;
	for (int32_t i = 0; i < len; i++) {
		struct collector_hotspot_heap *h = &p->heaps[i];

		if ((err = read_word(pid, data + 8 * (uint64_t)i, &heap)))
			return err;
		if (!heap)
			return -EAGAIN;
		err = read_word(pid, heap + l->codeheap_memory + l->vspace_low_boundary, &h->low);
		if (!err)
			err = read_word(pid, heap + l->codeheap_memory + l->vspace_high_boundary,
					&h->high);
		if (!err)
			err = read_word(pid, heap + l->codeheap_segmap + l->vspace_low_boundary,
					&h->segmap);
		if (!err)
			err = proc_mem_read(pid, heap + l->codeheap_log2_segment, &shift,
					    sizeof(shift));
		if (err)
			return err;
		if (!h->low || h->high <= h->low || !h->segmap || shift < 4 || shift > 16)
			return -EAGAIN;
	}
	p->n_heaps = (uint32_t)len;
	p->segment_shift = (uint8_t)shift;
	return 0;
}

static uint16_t u16_of(uint32_t v)
{
	return v < COLLECTOR_HOTSPOT_BLOB_READ ? (uint16_t)v : 0;
}

/* The bytes of a blob's head that hold every field the walker reads
 * (the BPF side reads them at once: fewer bytes, less copied a frame). */
static uint16_t blob_read_len(const struct collector_hotspot_proc *p)
{
	const uint16_t ends[] = {
		p->blob_name + 8, p->blob_frame_size + 4, p->blob_frame_complete + 4,
		p->blob_code_begin + 8, p->blob_code_end + 8, p->nm_compile_id + 4,
		p->nm_deopt_handler + 8, p->nm_orig_pc_offset + 4,
	};
	uint16_t len = 0;

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (ends[i] > len)
			len = ends[i];
	len = (uint16_t)((len + 63) & ~63u);
	return len > COLLECTOR_HOTSPOT_BLOB_READ ? COLLECTOR_HOTSPOT_BLOB_READ : len;
}

int hotspot_proc_fill(pid_t pid, const struct hotspot_layout *l, struct collector_hotspot_proc *p)
{
	uint64_t queue;
	int32_t limit;
	int err;

	memset(p, 0, sizeof(*p));
	if ((err = read_word(pid, l->codecache_low, &p->codecache_low)) ||
	    (err = read_word(pid, l->codecache_high, &p->codecache_high)))
		return err;
	if (!p->codecache_low || p->codecache_high <= p->codecache_low)
		return -EAGAIN;
	if ((err = fill_heaps(pid, l, p)))
		return err;
	if ((err = read_word(pid, l->interpreter_code, &queue)))
		return err;
	if (queue && !read_word(pid, queue + l->stubqueue_buffer, &p->interp_begin) &&
	    !proc_mem_read(pid, queue + l->stubqueue_limit, &limit, sizeof(limit)) && limit > 0)
		p->interp_end = p->interp_begin + (uint64_t)limit;
	else
		p->interp_begin = 0;
	p->major = (uint8_t)l->major;
	p->flags = l->blob_offsets ? COLLECTOR_HS_BLOB_OFFSETS : 0;
	p->heapblock_size = (uint16_t)l->heapblock_size;
	p->blob_name = u16_of(l->blob_name);
	p->blob_frame_size = u16_of(l->blob_frame_size);
	p->blob_frame_complete = u16_of(l->blob_frame_complete);
	p->blob_frame_complete_width = (uint8_t)l->blob_frame_complete_width;
	p->blob_code_begin = u16_of(l->blob_code_begin);
	p->blob_code_end = u16_of(l->blob_code_end);
	p->nm_compile_id = u16_of(l->nm_compile_id);
	p->nm_deopt_handler = u16_of(l->nm_deopt_handler);
	p->nm_orig_pc_offset = u16_of(l->nm_orig_pc_offset);
	p->method_constmethod = (uint16_t)l->method_constmethod;
	p->cmethod_size = (uint16_t)l->cmethod_size;
	p->interp_sender_sp = HOTSPOT_X86_SENDER_SP;
	p->interp_method = HOTSPOT_X86_METHOD;
	p->interp_bcp = HOTSPOT_X86_BCP;
	p->interp_locals = HOTSPOT_X86_LOCALS;
	if (!p->blob_name || !p->blob_frame_size || !p->nm_compile_id || !p->nm_orig_pc_offset)
		return -E2BIG; /* a field past what the walker reads of a blob */
	p->blob_read_len = blob_read_len(p);
	return 0;
}
