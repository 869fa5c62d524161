// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "convert.h"

struct gs_name_slot {
	char *name; /* NULL: free */
	uint64_t hash;
	uint32_t id;
};

static struct gs_name_slot *find(struct gs_names *t, const char *name, uint64_t h)
{
	uint32_t i = h & (t->cap - 1);

	while (t->slots[i].name && (t->slots[i].hash != h || strcmp(t->slots[i].name, name)))
		i = (i + 1) & (t->cap - 1);
	return &t->slots[i];
}

static int grow(struct gs_names *t)
{
	struct gs_names n = { .cap = t->cap ? t->cap * 2 : 256, .n = t->n };

	n.slots = calloc(n.cap, sizeof(*n.slots));
	if (!n.slots)
		return -1;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->slots[i].name)
			*find(&n, t->slots[i].name, t->slots[i].hash) = t->slots[i];
	free(t->slots);
	*t = n;
	return 0;
}

/* A name's id (from 1), *fresh set when it was not seen before; 0 when out of memory. */
static uint32_t intern(struct gs_names *t, const char *name, int *fresh)
{
	uint64_t h = hash__str(name);
	struct gs_name_slot *s;

	*fresh = 0;
	if ((t->n + 1) * 4 > t->cap * 3 && grow(t))
		return 0;
	s = find(t, name, h);
	if (s->name)
		return s->id;
	s->name = strdup(name);
	if (!s->name)
		return 0;
	s->hash = h;
	s->id = ++t->n;
	*fresh = 1;
	return s->id;
}

void gs_names__free(struct gs_names *t)
{
	for (uint32_t i = 0; i < t->cap; i++)
		free(t->slots[i].name);
	free(t->slots);
	*t = (struct gs_names){};
}

static int text_rec(void *out, uint16_t kind, uint32_t pid, uint32_t aux, const char *text)
{
	struct gs_gpu_act *a = out;
	size_t len = strnlen(text, GS_GPU_ACT_TEXT - 1);
	size_t size = (sizeof(*a) + len + 1 + 7) & ~(size_t)7;

	memset(a, 0, size);
	a->kind = kind;
	a->size = size;
	a->pid = pid;
	a->aux = aux;
	memcpy(a->text, text, len);
	return size;
}

int gs_conv__status(void *out, uint32_t pid, uint32_t status, const char *text)
{
	return text_rec(out, GS_ACT_STATUS, pid, status, text ? text : "");
}

int gs_conv__dropped(void *out, uint32_t pid, uint64_t n)
{
	struct gs_gpu_act *a = out;

	*a = (struct gs_gpu_act){
		.kind = GS_ACT_DROPPED, .size = sizeof(*a), .pid = pid, .bytes = n
	};
	return sizeof(*a);
}

static struct gs_gpu_act *rec(void *out, uint16_t kind, uint32_t pid)
{
	struct gs_gpu_act *a = out;

	*a = (struct gs_gpu_act){ .kind = kind, .size = sizeof(*a), .pid = pid };
	return a;
}

int gs_conv__record(struct gs_names *names, uint32_t pid, const CUpti_Activity *r, void *out,
		    size_t room)
{
	struct gs_gpu_act *a;
	int fresh, n = 0;

	if (room < GS_CONV_MAX)
		return -1;
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)r;
		uint32_t id = k->name ? intern(names, k->name, &fresh) : 0;

		if (id && fresh)
			n = text_rec(out, GS_ACT_NAME, pid, id, k->name);
		a = rec((char *)out + n, GS_ACT_KERNEL, pid);
		a->device = k->deviceId;
		a->context = k->contextId;
		a->stream = k->streamId;
		a->correlation = k->correlationId;
		a->aux = id;
		a->start = k->start;
		a->end = k->end;
		return n + sizeof(*a);
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)r;

		a = rec(out, GS_ACT_MEMCPY, pid);
		a->device = m->deviceId;
		a->context = m->contextId;
		a->stream = m->streamId;
		a->correlation = m->correlationId;
		a->aux = m->copyKind;
		a->start = m->start;
		a->end = m->end;
		a->bytes = m->bytes;
		return sizeof(*a);
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)r;

		a = rec(out, GS_ACT_MEMSET, pid);
		a->device = m->deviceId;
		a->context = m->contextId;
		a->stream = m->streamId;
		a->correlation = m->correlationId;
		a->start = m->start;
		a->end = m->end;
		a->bytes = m->bytes;
		return sizeof(*a);
	}
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *c = (const void *)r;

		a = rec(out, GS_ACT_LAUNCH, c->processId ? c->processId : pid);
		a->aux = c->cbid;
		a->tid = c->threadId;
		a->correlation = c->correlationId;
		a->start = c->start;
		a->end = c->end;
		return sizeof(*a);
	}
	default:
		return 0;
	}
}
