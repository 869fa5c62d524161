// SPDX-License-Identifier: GPL-2.0
/* Distinct stacks, stored once: see stacktab.h. */
#include <stdlib.h>
#include <string.h>

#include "stacktab.h"
#include "trace.h"
#include "vec.h"

struct stack_ent {
	__u64 hash;
	size_t off; /* into frames */
	__u32 tgid;
	__u16 nu, nk;
};

struct stacktab {
	__u64 *frames;
	size_t nframes, capframes;
	struct stack_ent *ents; /* [0] unused: STACK_NONE */
	size_t nents, capents;
	__u32 *slots; /* open addressing: entry numbers, 0 empty */
	size_t capslots;
};

struct stacktab *stacktab__new(void)
{
	struct stacktab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->capslots = 1024;
	t->slots = calloc(t->capslots, sizeof(*t->slots));
	t->capents = 256;
	t->ents = calloc(t->capents, sizeof(*t->ents));
	t->nents = 1;
	if (!t->slots || !t->ents) {
		stacktab__free(t);
		return NULL;
	}
	return t;
}

void stacktab__free(struct stacktab *t)
{
	if (!t)
		return;
	free(t->frames);
	free(t->ents);
	free(t->slots);
	free(t);
}

static bool same(const struct stacktab *t, const struct stack_ent *e, __u32 tgid, const __u64 *f,
		 __u16 nu, __u16 nk, __u64 hash)
{
	const __u64 *g = t->frames + e->off;
	__u64 diff = 0;

	if (e->hash != hash || e->tgid != tgid || e->nu != nu || e->nk != nk)
		return false;
	/* A few dozen bytes, equal but for a hash collision: no call, no early exit. */
	for (__u32 i = 0; i < (__u32)nu + nk; i++)
		diff |= g[i] ^ f[i];
	return !diff;
}

/*
 * The stack's hash: frames taken in pairs, each pair folded through a 64x64->128 bit multiply
 * with constants that depend on its place, the products summed. The pairs do not wait on each
 * other, so a stack of ten frames costs about one multiply's latency, not ten.
 */
static inline __u64 fold(__u64 a, __u64 b)
{
	unsigned __int128 m = (unsigned __int128)a * b;

	return (__u64)m ^ (__u64)(m >> 64);
}

static __u64 hash_of(__u32 tgid, const __u64 *f, __u32 n)
{
	__u64 h = 0x9e3779b97f4a7c15ull * (tgid + ((__u64)n << 32) + 1);
	__u32 i;

	for (i = 0; i + 1 < n; i += 2) {
		__u64 k = 0x2d358dccaa6c78a5ull + i * 0x8bb84b93962eacc9ull;

		h += fold(f[i] ^ k, f[i + 1] ^ (k * 0x4b33a62ed433d4a3ull + 1));
	}
	if (i < n)
		h += fold(f[i] ^ 0xa0761d6478bd642full, 0xe7037ed1a0b428dbull);
	return h ^ h >> 29;
}

static int grow_slots(struct stacktab *t)
{
	size_t cap = array__cap(t->capslots, sizeof(*t->slots), t->capslots + 1, 1);
	__u32 *s = cap ? calloc(cap, sizeof(*s)) : NULL;

	if (!s)
		return -1;
	for (size_t i = 1; i < t->nents; i++) {
		size_t k = t->ents[i].hash & (cap - 1);

		while (s[k])
			k = (k + 1) & (cap - 1);
		s[k] = i;
	}
	free(t->slots);
	t->slots = s;
	t->capslots = cap;
	return 0;
}

__u32 stacktab__add(struct stacktab *t, const struct gs_hdr *h)
{
	__u16 nu = h->ustack_n, nk = h->kstack_n;
	const __u64 *f = gs_ustack(h); /* user frames, then kernel frames */
	__u64 hash;
	size_t k;

	if (!nu && !nk)
		return STACK_NONE;
	hash = hash_of(h->tgid, f, (__u32)nu + nk);
	for (k = hash & (t->capslots - 1); t->slots[k]; k = (k + 1) & (t->capslots - 1))
		if (same(t, &t->ents[t->slots[k]], h->tgid, f, nu, nk, hash))
			return t->slots[k];
	if ((t->nents + 1) * 2 > t->capslots) {
		if (grow_slots(t))
			return STACK_NONE;
		for (k = hash & (t->capslots - 1); t->slots[k]; k = (k + 1) & (t->capslots - 1))
			;
	}
	if (array__grow((void **)&t->ents, &t->capents, sizeof(*t->ents), t->nents + 1, 256) ||
	    array__grow((void **)&t->frames, &t->capframes, sizeof(*t->frames),
			t->nframes + nu + nk, 4096))
		return STACK_NONE;
	memcpy(t->frames + t->nframes, f, (nu + nk) * sizeof(*f));
	t->ents[t->nents] = (struct stack_ent){
		.hash = hash, .off = t->nframes, .tgid = h->tgid, .nu = nu, .nk = nk
	};
	t->nframes += nu + nk;
	t->slots[k] = t->nents;
	return t->nents++;
}

struct stack_view stacktab__get(const struct stacktab *t, __u32 id)
{
	struct stack_view v = {};
	const struct stack_ent *e;

	if (id == STACK_NONE || id >= t->nents)
		return v;
	e = &t->ents[id];
	v.tgid = e->tgid;
	v.nu = e->nu;
	v.nk = e->nk;
	v.user = t->frames + e->off;
	v.kern = v.user + e->nu;
	return v;
}
