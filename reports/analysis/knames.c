// SPDX-License-Identifier: GPL-2.0
/* Kernel names by handle, in doubt after an unload that may have freed the handle: knames.h. */
#include <stddef.h>

#include "knames.h"

struct kname {
	const char *name;
	__u64 owner; /* CUmodule / CUlibrary, 0: unknown (read from the handle) */
	__u64 gen;   /* k->unloads when learned */
};

static const void *kn_find(const struct idmap *ids, const struct vec *v, __u64 key)
{
	long i = idmap__get(ids, key);

	return i < 0 ? NULL : (char *)v->data + i * v->elem;
}

void knames__set(struct knames *k, bool by_handle, __u64 handle, const char *name, __u64 owner)
{
	struct kname *n = idmap__elem(by_handle ? &k->handle_ids : &k->lookup_ids, &k->names,
				      sizeof(*n), handle);

	if (n)
		*n = (struct kname){ name, by_handle ? 0 : owner, k->unloads };
}

void knames__alias(struct knames *k, __u64 func, __u64 kernel)
{
	const struct kname *n = kn_find(&k->lookup_ids, &k->names, kernel);
	struct kname c;

	if (func == kernel)
		return;
	if (n) {
		c = *n; /* copied: knames__set may move the table */
		knames__set(k, false, func, c.name, c.owner);
	} else if ((n = kn_find(&k->handle_ids, &k->names, kernel))) {
		c = *n;
		knames__set(k, true, func, c.name, 0);
	}
}

void knames__unload(struct knames *k, __u64 owner)
{
	__u64 *last;

	k->unloads++;
	last = idmap__elem(&k->unload_ids, &k->unload_gens, sizeof(*last), owner);
	if (last)
		*last = k->unloads;
	else
		k->unloads = ~0ull >> 1; /* out of memory: doubt every name from here on */
}

/* Whether no unload since n was learned can have freed its handle. */
static bool confirmed(const struct knames *k, const struct kname *n)
{
	const __u64 *last;

	if (!n->owner)
		return n->gen == k->unloads;
	last = kn_find(&k->unload_ids, &k->unload_gens, n->owner);
	return !last || *last <= n->gen;
}

const char *knames__get(const struct knames *k, __u64 handle, bool *by_handle, bool *unconfirmed)
{
	const struct kname *l = kn_find(&k->lookup_ids, &k->names, handle);
	const struct kname *h = kn_find(&k->handle_ids, &k->names, handle);
	const struct kname *n;

	/* A lookup's name, unless an unload may have freed the handle since; then one read from
	 * the handle since; failing both, the later learned of the two, in doubt. */
	if (l && confirmed(k, l))
		n = l;
	else if (h && confirmed(k, h))
		n = h;
	else
		n = l && (!h || l->gen >= h->gen) ? l : h;
	if (by_handle)
		*by_handle = n && n == h;
	if (unconfirmed)
		*unconfirmed = n && !confirmed(k, n);
	return n ? n->name : NULL;
}

void knames__free(struct knames *k)
{
	idmap__free(&k->lookup_ids);
	idmap__free(&k->handle_ids);
	idmap__free(&k->unload_ids);
	vec__free(&k->names);
	vec__free(&k->unload_gens);
}
