// SPDX-License-Identifier: GPL-2.0
/* Launch counts: see launches.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "launches.h"

struct launch_counter {
	struct gs_rec_launches *last;
	__u64 records;		 /* launch records */
	__u64 by_id[CU_MAX_FNS]; /* launch records by probe id */
};

struct launch_counter *launch_counter__new(void)
{
	return calloc(1, sizeof(struct launch_counter));
}

static bool is_launch(__u32 kind)
{
	return kind == CU_K_LAUNCH || kind == CU_K_GRAPH_LAUNCH;
}

int launch_counter__add(struct launch_counter *c, const struct gs_hdr *h)
{
	const struct cu_event *e = gs_cuda(h);

	if (e && is_launch(e->kind)) {
		c->records++;
		if (e->fn < CU_MAX_FNS)
			c->by_id[e->fn]++;
		return 0;
	}
	if (gs_launches(h)) {
		const struct gs_rec_launches *r = gs_launches(h);
		size_t room = (h->size - sizeof(*r)) / sizeof(r->e[0]);
		size_t n = r->n < room ? r->n : room;
		struct gs_rec_launches *copy = malloc(sizeof(*r) + n * sizeof(r->e[0]));

		if (!copy)
			return -ENOMEM;
		memcpy(copy, r, sizeof(*r) + n * sizeof(r->e[0]));
		copy->n = n;
		free(c->last);
		c->last = copy;
	}
	return 0;
}

const struct gs_rec_launches *launch_counter__record(const struct launch_counter *c)
{
	return c->last;
}

static int cmp_count(const void *a, const void *b)
{
	const struct launch_fn_count *x = a, *y = b;

	return x->count != y->count ? (x->count < y->count ? 1 : -1) : strcmp(x->fn, y->fn);
}

/* count more launches of fn, one entry per name (a symbol probed in two libcudas is one). */
static int add_fn(struct launch_totals *t, const char *fn, __u64 count)
{
	struct launch_fn_count *n;

	for (size_t i = 0; i < t->nfn; i++)
		if (!strcmp(t->by_fn[i].fn, fn)) {
			t->by_fn[i].count += count;
			return 0;
		}
	n = realloc(t->by_fn, (t->nfn + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->by_fn = n;
	t->by_fn[t->nfn++] = (struct launch_fn_count){ fn, count };
	return 0;
}

int launch_counter__totals(const struct launch_counter *c,
			   const char *(*fn_name)(void *arg, __u32 id), void *arg,
			   struct launch_totals *t)
{
	*t = (struct launch_totals){ .in_trace = c->records };
	if (c->last) {
		t->counted = true;
		t->all = c->last->flags & GS_LAUNCHES_F_ALL;
		for (__u32 i = 0; i < c->last->n; i++) {
			const struct gs_launch_count *e = &c->last->e[i];

			if (e->k.kind == CU_K_MEMSET) {
				t->async_memsets += e->count;
				continue;
			}
			t->total += e->count;
			if (add_fn(t, fn_name(arg, e->k.fn), e->count))
				return -ENOMEM;
		}
	} else {
		t->total = c->records;
		for (__u32 id = 0; id < CU_MAX_FNS; id++)
			if (c->by_id[id] && add_fn(t, fn_name(arg, id), c->by_id[id]))
				return -ENOMEM;
	}
	if (t->nfn > 1)
		qsort(t->by_fn, t->nfn, sizeof(*t->by_fn), cmp_count);
	return 0;
}

void launch_counter__free(struct launch_counter *c)
{
	if (c)
		free(c->last);
	free(c);
}

void launch_totals__free(struct launch_totals *t)
{
	free(t->by_fn);
	t->by_fn = NULL;
	t->nfn = 0;
}
