// SPDX-License-Identifier: GPL-2.0
/* The named counters of a run (model/counters.h). */
#include "model/counters.h"
#include "model/model.h"

#include <string.h>

#define COUNTER_NAME(id, name) name,
static const char *const lost_names[MODEL_LOST_COUNT] = { MODEL_LOST_LIST(COUNTER_NAME) };
static const char *const stat_names[MODEL_STAT_COUNT] = { MODEL_STAT_LIST(COUNTER_NAME) };
#undef COUNTER_NAME

const char *model_lost_name(enum model_lost cause)
{
	return (unsigned int)cause < MODEL_LOST_COUNT ? lost_names[cause] : "?";
}

const char *model_stat_name(enum model_stat stat)
{
	return (unsigned int)stat < MODEL_STAT_COUNT ? stat_names[stat] : "?";
}

/* The index of the counter named name in c[0..n), or n. */
static size_t find_named(const struct model_counter *c, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n && strcmp(c[i].name, name) != 0; i++)
		;
	return i;
}

/* Adds value to the counter named name of a vector, appending it first if
 * absent.  Returns its index. */
static size_t count(void *vec_items, size_t *len, size_t *cap, const char *name, uint64_t value)
{
	struct model_counter **items = vec_items, *c;
	size_t i = find_named(*items, *len, name);

	if (i < *len) {
		(*items)[i].value += value;
		return i;
	}
	c = model_vec_grow(items, len, cap, sizeof(*c));
	c->name = model_strdup(name);
	c->value = value;
	return i;
}

/* slot[id] remembers where a typed counter is (plus 1), so that counting
 * one (once per truncated stack, say) compares no strings. */
static void count_typed(void *vec_items, size_t *len, size_t *cap, uint32_t *slot,
			const char *name, uint64_t value)
{
	struct model_counter **items = vec_items;

	if (*slot)
		(*items)[*slot - 1].value += value;
	else
		*slot = count(vec_items, len, cap, name, value) + 1;
}

void model_lost_add(struct model *m, enum model_lost cause, uint64_t n)
{
	count_typed(&m->lost.items, &m->lost.len, &m->lost.cap, &m->lost_slot[cause],
		    lost_names[cause], n);
}

void model_stat_add(struct model *m, enum model_stat stat, uint64_t n)
{
	count_typed(&m->stats.items, &m->stats.len, &m->stats.cap, &m->stat_slot[stat],
		    stat_names[stat], n);
}

static uint64_t value_of(const struct model_counter *c, size_t n, uint32_t slot,
			 const char *name)
{
	size_t i = slot ? slot - 1 : find_named(c, n, name);

	return i < n ? c[i].value : 0;
}

uint64_t model_lost_value(const struct model *m, enum model_lost cause)
{
	return value_of(m->lost.items, m->lost.len, m->lost_slot[cause], lost_names[cause]);
}

uint64_t model_stat_value(const struct model *m, enum model_stat stat)
{
	return value_of(m->stats.items, m->stats.len, m->stat_slot[stat], stat_names[stat]);
}

uint64_t model_total_lost(const struct model *m)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < m->lost.len; i++)
		sum += m->lost.items[i].value;
	return sum;
}

void model_count_lost(struct model *m, const char *cause, uint64_t value)
{
	count(&m->lost.items, &m->lost.len, &m->lost.cap, cause, value);
}

void model_named_stat_add(struct model *m, const char *name, uint64_t n)
{
	count(&m->stats.items, &m->stats.len, &m->stats.cap, name, n);
}

uint64_t model_named_stat_value(const struct model *m, const char *name)
{
	return value_of(m->stats.items, m->stats.len, 0, name);
}
