// SPDX-License-Identifier: GPL-2.0
/* The model's processes, threads and mappings, and who they are to a
 * backend: the processes' identities and the run's attributes
 * (model/model.h). */
#include "model/model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t model_add_process(struct model *m, pid_t pid, pid_t ppid, uint32_t generation,
			   const char *comm, const char *cmdline, const char *exe)
{
	struct model_process *p = MODEL_VEC_PUSH(m->processes);

	p->pid = pid;
	p->ppid = ppid;
	p->generation = generation;
	if (comm)
		snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->cmdline = model_strdup(cmdline);
	p->exe = model_strdup(exe);
	p->exe_image = MODEL_NONE;
	return m->processes.len - 1;
}

uint32_t model_add_mapping(struct model *m, uint32_t process, const struct model_mapping *map)
{
	struct model_process *p = &m->processes.items[process];

	*MODEL_VEC_PUSH(p->maps) = *map;
	return p->maps.len - 1;
}

uint32_t model_add_thread(struct model *m, uint32_t process, pid_t tid, const char *comm)
{
	struct model_thread *t = MODEL_VEC_PUSH(m->threads);

	t->tid = tid;
	t->process = process;
	if (comm)
		snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return m->threads.len - 1;
}

const struct model_mapping *model_find_mapping(const struct model *m, uint32_t process,
					       uint64_t addr)
{
	const struct model_process *p = &m->processes.items[process];

	/* newest first: a later mapping replaces an earlier one at the address */
	for (size_t i = p->maps.len; i-- > 0;) {
		const struct model_mapping *mp = &p->maps.items[i];

		if (addr >= mp->start && addr < mp->end)
			return mp;
	}
	return NULL;
}

void model_process_clear(struct model_process *p)
{
	free(p->cmdline);
	free(p->exe);
	free(p->maps.items);
	free(p->service_name);
	free(p->container_id);
}

void model_forget_ended_tasks(struct model *m, uint32_t *process_map, uint32_t *thread_map)
{
	size_t np = 0, nt = 0;

	for (size_t i = 0; i < m->processes.len; i++) {
		struct model_process *p = &m->processes.items[i];

		if (p->end_ns) {
			model_process_clear(p);
			process_map[i] = MODEL_NONE;
			continue;
		}
		process_map[i] = np;
		m->processes.items[np++] = *p;
	}
	m->processes.len = np;
	for (size_t i = 0; i < m->threads.len; i++) {
		struct model_thread *th = &m->threads.items[i];
		uint32_t process = process_map[th->process];

		if (th->end_ns || process == MODEL_NONE) {
			thread_map[i] = MODEL_NONE;
			continue;
		}
		thread_map[i] = nt;
		th->process = process;
		m->threads.items[nt++] = *th;
	}
	m->threads.len = nt;
}

void model_set_process_identity(struct model *m, uint32_t process, const char *service_name,
				const char *container_id)
{
	struct model_process *p = &m->processes.items[process];

	free(p->service_name);
	free(p->container_id);
	p->service_name = model_strdup(service_name);
	p->container_id = model_strdup(container_id);
	p->identified = true;
}

const char *model_service_name(const struct model_process *p, char *buf, size_t size)
{
	const char *base = p->exe ? strrchr(p->exe, '/') : NULL;

	if (p->service_name)
		return p->service_name;
	snprintf(buf, size, "unknown_service:%s", base ? base + 1 : p->exe ? p->exe : p->comm);
	return buf;
}

int model_add_run_attribute(struct model *m, const char *key, const char *value)
{
	struct model_run *r = &m->run;
	struct model_attribute *a;
	char *v = strdup(value), *k;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_attributes; i++) {
		if (!strcmp(r->attributes[i].key, key)) {
			free(r->attributes[i].value);
			r->attributes[i].value = v;
			return 0;
		}
	}
	k = strdup(key);
	a = k ? realloc(r->attributes, (r->n_attributes + 1) * sizeof(*a)) : NULL;
	if (!a) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	r->attributes = a;
	a[r->n_attributes++] = (struct model_attribute){ k, v };
	return 0;
}

const char *model_run_attribute(const struct model *m, const char *key)
{
	for (size_t i = 0; i < m->run.n_attributes; i++)
		if (!strcmp(m->run.attributes[i].key, key))
			return m->run.attributes[i].value;
	return NULL;
}
