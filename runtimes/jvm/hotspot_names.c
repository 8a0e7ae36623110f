// SPDX-License-Identifier: GPL-2.0
/* HotSpot frames named from the live process (runtimes/jvm/hotspot_names.h). */
#include "runtimes/jvm/hotspot_names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/grow.h"
#include "lib/idmap.h"
#include "lib/procmem.h"

/* ---- pure parts ------------------------------------------------------------ */

bool hotspot_u5_read(const uint8_t *buf, size_t len, size_t *pos, uint8_t exclude, uint32_t *out)
{
	uint32_t sum = 0;

	for (int i = 0; i < 5; i++) {
		uint8_t b;

		if (*pos >= len)
			return false;
		b = buf[(*pos)++];
		if (b < exclude)
			return false;
		sum += (uint32_t)(b - exclude) << (6 * i);
		if (b < 192)
			break;
	}
	*out = sum;
	return true;
}

bool hotspot_u5_read_signed(const uint8_t *buf, size_t len, size_t *pos, uint8_t exclude,
			    int32_t *out)
{
	uint32_t v;

	if (!hotspot_u5_read(buf, len, pos, exclude, &v))
		return false;
	*out = (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
	return true;
}

int32_t hotspot_line_for_bci(const uint8_t *buf, size_t len, uint8_t exclude, uint32_t bci,
			     size_t *table_len)
{
	int64_t cur_bci = 0, cur_line = 0, best_bci = 0;
	int32_t best_line = -1, exact = -1;
	size_t pos = 0;

	if (table_len)
		*table_len = 0;
	while (pos < len) {
		uint8_t b = buf[pos++];

		if (b == 0) {
			if (table_len)
				*table_len = pos;
			break;
		}
		if (b == 0xff) {
			int32_t db, dl;

			if (!hotspot_u5_read_signed(buf, len, &pos, exclude, &db) ||
			    !hotspot_u5_read_signed(buf, len, &pos, exclude, &dl))
				break;
			cur_bci += db;
			cur_line += dl;
		} else {
			cur_bci += b >> 3;
			cur_line += b & 7;
		}
		if (exact < 0 && cur_bci == bci)
			exact = (int32_t)cur_line;
		else if (cur_bci < bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best_line = (int32_t)cur_line;
		}
	}
	return exact >= 0 ? exact : best_line;
}

static int put(char *out, size_t size, size_t *at, const char *s, size_t n)
{
	if (*at + n + 1 > size)
		return -ENAMETOOLONG;
	memcpy(out + *at, s, n);
	*at += n;
	out[*at] = 0;
	return 0;
}

/* One field type at sig[*i]: its external spelling appended to out. */
static int one_type(const char *sig, size_t len, size_t *i, char *out, size_t size, size_t *at)
{
	static const char *const prims[] = {
		['B'] = "byte", ['C'] = "char", ['D'] = "double", ['F'] = "float",
		['I'] = "int", ['J'] = "long", ['S'] = "short", ['Z'] = "boolean", ['V'] = "void",
	};
	unsigned dims = 0;
	int err = 0;

	while (*i < len && sig[*i] == '[') {
		dims++;
		(*i)++;
	}
	if (*i >= len)
		return -EINVAL;
	if (sig[*i] == 'L') {
		const char *end = memchr(sig + *i, ';', len - *i);
		char cls[HOTSPOT_MAX_NAME];
		size_t n;

		if (!end)
			return -EINVAL;
		n = (size_t)(end - (sig + *i + 1));
		hotspot_class_external(sig + *i + 1, n, cls, sizeof(cls));
		err = put(out, size, at, cls, strlen(cls));
		*i += n + 2;
	} else {
		unsigned char c = (unsigned char)sig[*i];

		if (c >= sizeof(prims) / sizeof(prims[0]) || !prims[c])
			return -EINVAL;
		err = put(out, size, at, prims[c], strlen(prims[c]));
		(*i)++;
	}
	while (!err && dims--)
		err = put(out, size, at, "[]", 2);
	return err;
}

int hotspot_signature_external(const char *sig, size_t len, char *params, size_t params_size,
			       char *ret, size_t ret_size)
{
	size_t i = 1, at = 0, rat = 0;
	int err;

	if (!params_size || !ret_size || len < 3 || sig[0] != '(')
		return -EINVAL;
	params[0] = ret[0] = 0;
	while (i < len && sig[i] != ')') {
		if (at && (err = put(params, params_size, &at, ", ", 2)))
			return err;
		if ((err = one_type(sig, len, &i, params, params_size, &at)))
			return err;
	}
	if (i >= len)
		return -EINVAL;
	i++;
	if ((err = one_type(sig, len, &i, ret, ret_size, &rat)))
		return err;
	return i == len ? 0 : -EINVAL;
}

void hotspot_class_external(const char *name, size_t len, char *out, size_t size)
{
	char *plus;
	size_t n = len < size - 1 ? len : size - 1;

	for (size_t i = 0; i < n; i++)
		out[i] = name[i] == '/' ? '.' : name[i];
	out[n] = 0;
	plus = strrchr(out, '+');
	if (plus)
		*plus = '/';
}

bool hotspot_scope_decode(const uint8_t *buf, size_t len, size_t pos, uint8_t exclude,
			  uint32_t *sender, uint32_t *method_index, int32_t *bci)
{
	uint32_t b;

	if (!hotspot_u5_read(buf, len, &pos, exclude, sender) ||
	    !hotspot_u5_read(buf, len, &pos, exclude, method_index) ||
	    !hotspot_u5_read(buf, len, &pos, exclude, &b))
		return false;
	*bci = (int32_t)b - 1; /* read_bci(): + InvocationEntryBci */
	return true;
}

/* ---- the live process ---------------------------------------------------------- */

#define MAX_LINE_TABLE 65536
#define MAX_PCDESCS 65536

struct method_entry {
	int err;
	struct hotspot_method m;
};

struct scopes_entry {
	uint64_t blob, pc;
	uint32_t compile_id;   /* of the nmethod read: another at blob is stale */
	int err;
	uint8_t n;
	struct hotspot_scope s[HOTSPOT_MAX_SCOPES];
};

struct hotspot_names {
	pid_t pid;
	struct hotspot_layout l;
	struct idmap method_index;  /* Method* -> methods index */
	struct method_entry *methods;
	size_t n_methods, cap_methods;
	struct idmap scope_index;   /* hash of (nmethod, pc, top) -> scopes index */
	struct scopes_entry *scopes;
	size_t n_scopes, cap_scopes;
};

struct hotspot_names *hotspot_names_new(pid_t pid, const struct hotspot_layout *l)
{
	struct hotspot_names *n = calloc(1, sizeof(*n));

	if (n) {
		n->pid = pid;
		n->l = *l;
	}
	return n;
}

static void method_free(struct hotspot_method *m)
{
	free(m->name);
	free(m->source);
	free(m->lines);
	memset(m, 0, sizeof(*m));
}

void hotspot_names_free(struct hotspot_names *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n_methods; i++)
		method_free(&n->methods[i].m);
	free(n->methods);
	idmap_free(&n->method_index);
	free(n->scopes);
	idmap_free(&n->scope_index);
	free(n);
}

static uint64_t word(const uint8_t *buf, uint32_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, 8);
	return v;
}

static uint32_t u32_at(const uint8_t *buf, uint32_t off, uint32_t width)
{
	uint32_t v = 0;

	memcpy(&v, buf + off, width > 4 ? 4 : width);
	return v;
}

/* Symbol sym's bytes into out[size] (cut), *len set. */
static int read_symbol(struct hotspot_names *n, uint64_t sym, char *out, size_t size, size_t *len)
{
	uint16_t length;
	int err;

	if (!sym)
		return -EINVAL;
	err = proc_mem_read(n->pid, sym + n->l.symbol_length, &length, sizeof(length));
	if (err)
		return err;
	*len = length < size - 1 ? length : size - 1;
	err = proc_mem_read(n->pid, sym + n->l.symbol_body, out, *len);
	if (err)
		return err;
	out[*len] = 0;
	return 0;
}

/* The Symbol* in slot index of constant pool cp. */
static int pool_symbol(struct hotspot_names *n, uint64_t cp, uint32_t index, char *out,
		       size_t size, size_t *len)
{
	uint64_t sym;
	int err;

	if (!index)
		return -EINVAL;
	err = proc_mem_read(n->pid, cp + n->l.cpool_size + 8 * (uint64_t)index, &sym, sizeof(sym));
	return err ? err : read_symbol(n, sym, out, size, len);
}

/* The compressed line number table at addr: read in growing pieces until
 * its end marker is in what was read. */
static int read_lines(struct hotspot_names *n, uint64_t addr, struct hotspot_method *m)
{
	for (size_t want = 256; want <= MAX_LINE_TABLE; want *= 4) {
		uint8_t *buf = malloc(want);
		size_t got = want, used;

		if (!buf)
			return -ENOMEM;
		/* near the end of a mapping: fewer bytes */
		while (got >= 64 && proc_mem_read(n->pid, addr, buf, got))
			got /= 2;
		if (got < 64) {
			free(buf);
			return -EFAULT;
		}
		hotspot_line_for_bci(buf, got, n->l.stream_exclude, 0, &used);
		if (used) {
			m->lines = buf;
			m->lines_len = used;
			return 0;
		}
		free(buf);
		if (got < want)
			return -EFAULT;
	}
	return -E2BIG;
}

static int read_method(struct hotspot_names *n, uint64_t addr, struct hotspot_method *m)
{
	const struct hotspot_layout *l = &n->l;
	uint8_t cm[256], cp[256];
	char klass[HOTSPOT_MAX_NAME], name[HOTSPOT_MAX_NAME], sig[HOTSPOT_MAX_NAME];
	char cls[HOTSPOT_MAX_NAME], params[HOTSPOT_MAX_NAME], ret[256], full[3 * HOTSPOT_MAX_NAME + 300];
	uint64_t cmethod, holder, kname;
	uint16_t name_index, sig_index, code_size;
	size_t klen, nlen, slen;
	int err;

	if (l->cmethod_size > sizeof(cm) || l->cpool_size > sizeof(cp))
		return -E2BIG;
	if ((err = proc_mem_read(n->pid, addr + l->method_constmethod, &cmethod, 8)) ||
	    (err = proc_mem_read(n->pid, cmethod, cm, l->cmethod_size)))
		return err;
	if ((err = proc_mem_read(n->pid, word(cm, l->cmethod_constants), cp, l->cpool_size)))
		return err;
	holder = word(cp, l->cpool_holder);
	if ((err = proc_mem_read(n->pid, holder + l->klass_name, &kname, 8)) ||
	    (err = read_symbol(n, kname, klass, sizeof(klass), &klen)))
		return err;
	memcpy(&name_index, cm + l->cmethod_name_index, 2);
	memcpy(&sig_index, cm + l->cmethod_signature_index, 2);
	memcpy(&code_size, cm + l->cmethod_code_size, 2);
	if ((err = pool_symbol(n, word(cm, l->cmethod_constants), name_index, name, sizeof(name),
			       &nlen)) ||
	    (err = pool_symbol(n, word(cm, l->cmethod_constants), sig_index, sig, sizeof(sig),
			       &slen)))
		return err;
	if (hotspot_signature_external(sig, slen, params, sizeof(params), ret, sizeof(ret)))
		return -EINVAL;
	hotspot_class_external(klass, klen, cls, sizeof(cls));
	snprintf(full, sizeof(full), "%s %s.%s(%s)", ret, cls, name, params);
	m->name = strdup(full);
	m->code_size = code_size;
	m->stream_exclude = l->stream_exclude;
	if (l->cpool_source_file_index != HOTSPOT_ABSENT) {
		uint16_t si;

		memcpy(&si, cp + l->cpool_source_file_index, 2);
		if (si && !pool_symbol(n, word(cm, l->cmethod_constants), si, name, sizeof(name),
				       &nlen))
			m->source = strdup(name);
	}
	if (u32_at(cm, l->cmethod_flags, 1) & l->cmethod_has_lines)
		read_lines(n, cmethod + l->cmethod_size + code_size, m); /* lines: best effort */
	return m->name ? 0 : -ENOMEM;
}

int hotspot_method_get(struct hotspot_names *n, uint64_t m, const struct hotspot_method **out)
{
	uint32_t i = idmap_get(&n->method_index, m);
	struct method_entry *e;

	if (i == UINT32_MAX) {
		if (array_grow((void **)&n->methods, &n->cap_methods, n->n_methods,
			       sizeof(*n->methods), 64))
			return -ENOMEM;
		e = &n->methods[n->n_methods];
		memset(e, 0, sizeof(*e));
		e->err = m ? read_method(n, m, &e->m) : -EINVAL;
		if (e->err)
			method_free(&e->m);
		if (idmap_put(&n->method_index, m, (uint32_t)n->n_methods))
			return -ENOMEM;
		i = (uint32_t)n->n_methods++;
	}
	e = &n->methods[i];
	*out = &e->m;
	return e->err;
}

uint32_t hotspot_method_line(const struct hotspot_method *m, int32_t bci)
{
	int32_t line;

	if (!m->lines)
		return 0;
	if (bci < 0)
		bci = 0;
	line = hotspot_line_for_bci(m->lines, m->lines_len, m->stream_exclude, (uint32_t)bci, NULL);
	return line > 0 ? (uint32_t)line : 0;
}

/* ---- blobs and nmethods ---------------------------------------------------------- */

static int read_head(struct hotspot_names *n, uint64_t blob, uint8_t *head)
{
	size_t got = COLLECTOR_HOTSPOT_BLOB_READ;

	memset(head, 0, COLLECTOR_HOTSPOT_BLOB_READ);
	while (got >= 64 && proc_mem_read(n->pid, blob, head, got))
		got /= 2;
	return got >= 64 ? 0 : -EFAULT;
}

/* A pointer field, or an int offset from the blob (23+). */
static uint64_t blob_addr(const struct hotspot_layout *l, uint64_t blob, const uint8_t *head,
			  uint32_t off)
{
	return l->blob_offsets ? blob + (uint64_t)(int64_t)(int32_t)u32_at(head, off, 4)
			       : word(head, off);
}

int hotspot_blob_read(struct hotspot_names *n, uint64_t blob, char *name, size_t size,
		      struct hotspot_nmethod *nm)
{
	const struct hotspot_layout *l = &n->l;
	uint8_t head[COLLECTOR_HOTSPOT_BLOB_READ];
	uint64_t at;
	size_t i = 0;
	int err = read_head(n, blob, head);

	if (err)
		return err;
	at = word(head, l->blob_name);
	name[0] = 0;
	/* the name is a string of libjvm.so's: read a byte at a time's worth */
	while (at && i + 1 < size && !proc_mem_read(n->pid, at + i, name + i, 1) && name[i])
		i++;
	name[i] = 0;
	if (strcmp(name, "nmethod") && strcmp(name, "native nmethod"))
		return 0;
	memset(nm, 0, sizeof(*nm));
	nm->blob = blob;
	nm->method = word(head, l->nm_method);
	nm->compile_id = u32_at(head, l->nm_compile_id, 4);
	nm->entry_bci = (int32_t)u32_at(head, l->nm_entry_bci, 4);
	nm->comp_level = l->nm_comp_level != HOTSPOT_ABSENT ? u32_at(head, l->nm_comp_level, 4) : 0;
	nm->code_begin = blob_addr(l, blob, head, l->blob_code_begin);
	nm->code_end = blob_addr(l, blob, head, l->blob_code_end);
	return 1;
}

/* Where an nmethod keeps its PcDescs, scope records and metadata. */
struct nm_regions {
	uint64_t code_begin, pcs, pcs_end, data, data_end, metadata;
	uint64_t method;
	uint32_t compile_id;
};

static int nm_regions(struct hotspot_names *n, uint64_t blob, struct nm_regions *r)
{
	const struct hotspot_layout *l = &n->l;
	uint8_t head[COLLECTOR_HOTSPOT_BLOB_READ];
	int err = read_head(n, blob, head);

	if (err)
		return err;
	r->code_begin = blob_addr(l, blob, head, l->blob_code_begin);
	r->method = word(head, l->nm_method);
	r->compile_id = u32_at(head, l->nm_compile_id, 4);
	if (l->nm_immutable_data == HOTSPOT_ABSENT) {
		r->pcs = blob + u32_at(head, l->nm_scopes_pcs, 4);
		r->pcs_end = blob + u32_at(head, l->nm_scopes_end, 4);
		r->data = word(head, l->nm_scopes_data);
		r->data_end = r->pcs;
		r->metadata = blob + u32_at(head, l->nm_metadata, l->nm_metadata_width);
	} else {
		uint64_t imm = word(head, l->nm_immutable_data);

		r->pcs = imm + u32_at(head, l->nm_scopes_pcs, 4);
		r->data = imm + u32_at(head, l->nm_scopes_data, 4);
		r->pcs_end = r->data;
		r->data_end = imm + u32_at(head, l->nm_immutable_size, 4);
		if (l->nm_metadata != HOTSPOT_ABSENT) /* 23, 24 */
			r->metadata = blob + u32_at(head, l->blob_code_end, 4) +
				      u32_at(head, l->nm_metadata, l->nm_metadata_width);
		else /* 25: after the relocations in the mutable data */
			r->metadata = word(head, l->blob_mutable_data) +
				      u32_at(head, l->blob_relocation_size, 4);
	}
	if (r->pcs_end < r->pcs || r->data_end < r->data ||
	    (r->pcs_end - r->pcs) / n->l.pcdesc_size > MAX_PCDESCS)
		return -EINVAL;
	return 0;
}

/* The scope decode offset of the PcDesc for pc: the exact one, else the
 * first after it (pc_desc_near()). */
static int find_pcdesc(struct hotspot_names *n, const struct nm_regions *r, uint64_t pc,
		       uint32_t *decode)
{
	const struct hotspot_layout *l = &n->l;
	size_t count = (r->pcs_end - r->pcs) / l->pcdesc_size;
	size_t bytes = count * l->pcdesc_size;
	int64_t want = (int64_t)(pc - r->code_begin);
	uint8_t *buf = malloc(bytes ? bytes : 1);
	int err = -ENOENT;

	if (!buf)
		return -ENOMEM;
	if (proc_mem_read(n->pid, r->pcs, buf, bytes)) {
		free(buf);
		return -EFAULT;
	}
	for (size_t i = 0; i < count; i++) {
		const uint8_t *p = buf + i * l->pcdesc_size;
		int32_t off = (int32_t)u32_at(p, l->pcdesc_pc_offset, 4);

		if (off >= want) {
			*decode = u32_at(p, l->pcdesc_scope_offset, 4);
			err = 0;
			break;
		}
	}
	free(buf);
	return err;
}

static int decode_scopes(struct hotspot_names *n, const struct nm_regions *r, uint32_t off,
			 struct scopes_entry *e)
{
	if (!off) { /* serialized_null: the method itself, at its entry */
		e->s[e->n++] = (struct hotspot_scope){ r->method, -1 };
		return 0;
	}
	while (off && e->n < HOTSPOT_MAX_SCOPES) {
		uint8_t buf[32];
		uint64_t at = r->data + off, method = 0;
		size_t len = sizeof(buf);
		uint32_t sender, index;
		int32_t bci;

		if (at >= r->data_end)
			return -EINVAL;
		if (r->data_end - at < len)
			len = r->data_end - at;
		if (proc_mem_read(n->pid, at, buf, len))
			return -EFAULT;
		if (!hotspot_scope_decode(buf, len, 0, n->l.stream_exclude, &sender, &index, &bci))
			return -EINVAL;
		if (index &&
		    proc_mem_read(n->pid, r->metadata + 8 * (uint64_t)(index - 1), &method, 8))
			return -EFAULT;
		e->s[e->n++] = (struct hotspot_scope){ method, bci };
		if (sender >= off)
			break; /* senders are written before: a loop otherwise */
		off = sender;
	}
	return 0;
}

/* The scopes' entry of (blob, pc, top) at key: a new slot, or the slot of
 * an entry of the same blob and pc whose nmethod was freed since and its
 * space taken by another (another compile id there). */
static struct scopes_entry *scopes_slot(struct hotspot_names *n, uint64_t key, uint64_t blob,
					uint64_t pc, bool *fresh)
{
	uint32_t i = idmap_get(&n->scope_index, key), id = 0;
	struct scopes_entry *e;

	*fresh = false;
	if (i != UINT32_MAX && n->scopes[i].blob == blob && n->scopes[i].pc == pc) {
		e = &n->scopes[i];
		if (!proc_mem_read(n->pid, blob + n->l.nm_compile_id, &id, sizeof(id)) &&
		    id == e->compile_id)
			return e;
		*fresh = true;
		return e;
	}
	if (array_grow((void **)&n->scopes, &n->cap_scopes, n->n_scopes, sizeof(*n->scopes), 64) ||
	    idmap_put(&n->scope_index, key, (uint32_t)n->n_scopes))
		return NULL;
	*fresh = true;
	return &n->scopes[n->n_scopes++];
}

int hotspot_nmethod_scopes(struct hotspot_names *n, uint64_t blob, uint64_t pc, bool top,
			   struct hotspot_scope *out, size_t max, size_t *count)
{
	uint64_t key = hash_mix64(blob ^ hash_mix64(pc * 2 + top));
	struct scopes_entry *e;
	bool fresh;

	e = scopes_slot(n, key, blob, pc, &fresh);
	if (!e)
		return -ENOMEM;
	if (fresh) {
		struct nm_regions r = { 0 };
		uint32_t decode;

		memset(e, 0, sizeof(*e));
		e->blob = blob;
		e->pc = pc;
		e->err = nm_regions(n, blob, &r);
		e->compile_id = r.compile_id;
		if (!e->err)
			e->err = find_pcdesc(n, &r, pc, &decode);
		if (e->err == -ENOENT) { /* a native method's wrapper: no scopes */
			e->err = 0;
			decode = 0;
		}
		if (!e->err)
			e->err = decode_scopes(n, &r, decode, e);
	}
	*count = 0;
	for (size_t k = 0; k < e->n && k < max; k++)
		out[(*count)++] = e->s[k];
	return e->err;
}
