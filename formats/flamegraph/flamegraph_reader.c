// SPDX-License-Identifier: GPL-2.0
/* Reader of collector's flame graph pages (flamegraph_reader.h). */
#include "formats/flamegraph/flamegraph_reader.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "formats/infile.h"
#include "formats/jsonin.h"

#define DATA_OPEN "<script type=\"application/json\" id=\"" FLAMEGRAPH_DATA_ID "\">"

static bool int_at(json_object *a, size_t i, int64_t *v)
{
	json_object *o = json_object_array_get_idx(a, i);

	if (!json_object_is_type(o, json_type_int))
		return false;
	*v = json_object_get_int64(o);
	return true;
}

struct open_node {
	size_t index;             /* in p->nodes */
	uint64_t children_left;
	uint64_t children_sum;
};

/* The depth-first triples into p->nodes, checked as one tree. */
static int read_nodes(struct flamegraph_page *p, json_object *nodes, size_t at,
		      struct format_error *err)
{
	size_t len = json_object_array_length(nodes), depth = 0;
	struct open_node *stack;
	int rc = 0;

	if (len % 3 || !len)
		return format_fail(err, at, "nodes holds %zu numbers, not [name, total, children] triples",
			    len);
	p->n_nodes = len / 3;
	p->nodes = calloc(p->n_nodes, sizeof(*p->nodes));
	stack = malloc((p->n_nodes + 1) * sizeof(*stack));
	if (!p->nodes || !stack) {
		free(stack);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct flamegraph_node *n = &p->nodes[i];
		int64_t name, total, children;

		while (depth && !stack[depth - 1].children_left) {
			struct open_node *o = &stack[--depth];
			struct flamegraph_node *done = &p->nodes[o->index];

			done->self = done->total - o->children_sum;
		}
		if (i && !depth) {
			rc = format_fail(err, at, "node %zu comes after the root's last child", i);
			break;
		}
		if (!int_at(nodes, 3 * i, &name) || !int_at(nodes, 3 * i + 1, &total) ||
		    !int_at(nodes, 3 * i + 2, &children) || total < 0 || children < 0) {
			rc = format_fail(err, at, "node %zu: name, total and children must be integers, "
				  "total and children >= 0", i);
			break;
		}
		if (i == 0 ? name != -1 : (name < 0 || (uint64_t)name >= p->n_names)) {
			rc = format_fail(err, at, "node %zu: name %lld is not %s", i, (long long)name,
				  i ? "an index of names" : "-1 (the root)");
			break;
		}
		n->name = name;
		n->total = (uint64_t)total;
		n->depth = (uint32_t)depth;
		if (depth > p->max_depth)
			p->max_depth = (uint32_t)depth;
		if (depth) {
			struct open_node *parent = &stack[depth - 1];

			parent->children_left--;
			parent->children_sum += n->total;
			if (parent->children_sum > p->nodes[parent->index].total) {
				rc = format_fail(err, at, "node %zu: its children have more samples (%llu) "
					  "than it (%llu)", parent->index,
					  (unsigned long long)parent->children_sum,
					  (unsigned long long)p->nodes[parent->index].total);
				break;
			}
		}
		stack[depth++] = (struct open_node){ i, (uint64_t)children, 0 };
	}
	while (!rc && depth) {
		struct open_node *o = &stack[--depth];

		if (o->children_left)
			rc = format_fail(err, at, "node %zu: %llu of its children are missing", o->index,
				  (unsigned long long)o->children_left);
		else
			p->nodes[o->index].self = p->nodes[o->index].total - o->children_sum;
	}
	free(stack);
	return rc;
}

/* The optional "runtimes": at most FLAMEGRAPH_MAX_RUNTIMES strings. */
static int read_runtimes(struct flamegraph_page *p, json_object *root, size_t at,
			 struct format_error *err)
{
	json_object *rts;

	if (!json_object_object_get_ex(root, "runtimes", &rts))
		return 0;
	if (!json_object_is_type(rts, json_type_array) ||
	    json_object_array_length(rts) > FLAMEGRAPH_MAX_RUNTIMES)
		return format_fail(err, at, "runtimes is not an array of at most %d strings",
				   FLAMEGRAPH_MAX_RUNTIMES);
	p->n_runtimes = json_object_array_length(rts);
	for (size_t i = 0; i < p->n_runtimes; i++) {
		json_object *s = json_object_array_get_idx(rts, i);

		if (!json_object_is_type(s, json_type_string))
			return format_fail(err, at, "runtimes[%zu] is not a string", i);
		p->runtimes[i] = json_object_get_string(s);
	}
	return 0;
}

static int read_names(struct flamegraph_page *p, json_object *names, json_object *kinds,
		      size_t at, struct format_error *err)
{
	p->n_names = json_object_array_length(names);
	if (json_object_array_length(kinds) != p->n_names)
		return format_fail(err, at, "%zu names but %zu kinds", p->n_names,
			    json_object_array_length(kinds));
	p->names = calloc(p->n_names + 1, sizeof(*p->names));
	p->kinds = calloc(p->n_names + 1, sizeof(*p->kinds));
	if (!p->names || !p->kinds)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_names; i++) {
		json_object *s = json_object_array_get_idx(names, i);
		int64_t k;

		if (!json_object_is_type(s, json_type_string))
			return format_fail(err, at, "names[%zu] is not a string", i);
		if (!int_at(kinds, i, &k) || k < 0 || k > 255)
			return format_fail(err, at, "kinds[%zu] is not an integer from 0 to 255", i);
		if (k >> FLAMEGRAPH_RUNTIME_SHIFT &&
		    (!(k & 16) || (size_t)(k >> FLAMEGRAPH_RUNTIME_SHIFT) > p->n_runtimes))
			return format_fail(err, at, "kinds[%zu] names runtime %lld of %zu, or is "
					   "not a runtime's frame", i,
					   (long long)(k >> FLAMEGRAPH_RUNTIME_SHIFT), p->n_runtimes);
		p->names[i] = json_object_get_string(s);
		p->kinds[i] = (uint8_t)k;
	}
	return 0;
}

/* The members the page needs, of their types. */
static int read_data(struct flamegraph_page *p, json_object *root, size_t at,
		     struct format_error *err)
{
	json_object *version, *title, *subtitle, *samples, *names, *kinds, *nodes;
	int rc;

	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "version", &version) ||
	    !json_object_object_get_ex(root, "title", &title) ||
	    !json_object_object_get_ex(root, "subtitle", &subtitle) ||
	    !json_object_object_get_ex(root, "samples", &samples) ||
	    !json_object_object_get_ex(root, "names", &names) ||
	    !json_object_object_get_ex(root, "kinds", &kinds) ||
	    !json_object_object_get_ex(root, "nodes", &nodes))
		return format_fail(err, at, "the data is not an object with version, title, subtitle, "
			    "samples, names, kinds and nodes");
	if (!json_object_is_type(version, json_type_int) || json_object_get_int64(version) != 1)
		return format_fail(err, at, "version is not 1");
	if (!json_object_is_type(title, json_type_string) ||
	    !json_object_is_type(subtitle, json_type_string) ||
	    !json_object_is_type(samples, json_type_int) || json_object_get_int64(samples) < 0 ||
	    !json_object_is_type(names, json_type_array) ||
	    !json_object_is_type(kinds, json_type_array) ||
	    !json_object_is_type(nodes, json_type_array))
		return format_fail(err, at, "title and subtitle must be strings, samples an integer >= 0, "
			    "names, kinds and nodes arrays");
	p->title = json_object_get_string(title);
	p->subtitle = json_object_get_string(subtitle);
	p->samples = (uint64_t)json_object_get_int64(samples);
	rc = read_runtimes(p, root, at, err);
	if (!rc)
		rc = read_names(p, names, kinds, at, err);
	if (!rc)
		rc = read_nodes(p, nodes, at, err);
	if (!rc && p->nodes[0].total != p->samples)
		rc = format_fail(err, at, "the root has %llu samples, the page says %llu",
			  (unsigned long long)p->nodes[0].total, (unsigned long long)p->samples);
	return rc;
}

/* The page ends as collector ends it, with "</html>\n": nothing was cut off. */
static bool page_complete(const char *data, size_t n)
{
	return n >= 8 && !memcmp(data + n - 8, "</html>\n", 8);
}

int flamegraph_parse(const char *data, size_t n, struct flamegraph_page *p,
		     struct format_error *err)
{
	const char *open, *close;
	json_object *root;
	size_t at;
	int rc;

	memset(p, 0, sizeof(*p));
	open = memmem(data, n, DATA_OPEN, strlen(DATA_OPEN));
	if (!open)
		return format_fail(err, 0, "no %s element: not a collector flame graph page", DATA_OPEN);
	at = (size_t)(open - data) + strlen(DATA_OPEN);
	close = memmem(data + at, n - at, "</script>", 9);
	if (!close)
		return format_fail(err, at, "the data element does not end (cut short?)");
	rc = json_parse_strict(data + at, (size_t)(close - (data + at)), &root, err);
	if (rc) {
		if (err->offset != FORMAT_NO_OFFSET)
			err->offset += at;
		return rc;
	}
	p->root = root;
	rc = read_data(p, root, at, err);
	if (!rc && !page_complete(data, n))
		rc = format_fail(err, n, "the page does not end with </html> and a newline (cut short?)");
	if (rc)
		flamegraph_page_free(p);
	return rc;
}

static int parse_cb(const unsigned char *data, size_t n, void *obj, struct format_error *err)
{
	return flamegraph_parse((const char *)data, n, obj, err);
}

int flamegraph_read_file(const char *path, struct flamegraph_page *p,
			 struct format_error *err)
{
	return format_parse_file(path, err, parse_cb, p);
}

void flamegraph_page_free(struct flamegraph_page *p)
{
	if (p->root)
		json_object_put(p->root);
	free(p->names);
	free(p->kinds);
	free(p->nodes);
	memset(p, 0, sizeof(*p));
}

void flamegraph_print(const struct flamegraph_page *p, FILE *out)
{
	fprintf(out, "title %s\nsubtitle %s\nsamples %llu\nnames %zu\nnodes %zu\nmax_depth %u\n",
		p->title, p->subtitle, (unsigned long long)p->samples, p->n_names, p->n_nodes,
		p->max_depth);
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct flamegraph_node *n = &p->nodes[i];
		uint8_t kind = n->name >= 0 ? p->kinds[n->name] : 0;
		unsigned int rt = kind >> FLAMEGRAPH_RUNTIME_SHIFT;

		/* a runtime's before JIT's, as the page labels them */
		const char *label = kind & 8 ? "process" : kind & 4 ? "unknown" : kind & 1 ? "kernel" :
				    kind & 16 ? (rt && rt <= p->n_runtimes ? p->runtimes[rt - 1] : "runtime") :
				    kind & 2 ? "jit" : NULL;

		fprintf(out, "%*s%llu %llu %s%s%s%s\n", (int)(n->depth > 60 ? 60 : n->depth), "",
			(unsigned long long)n->total, (unsigned long long)n->self,
			n->name >= 0 ? p->names[n->name] : "all", label ? " [" : "",
			label ? label : "", label ? "]" : "");
	}
}
