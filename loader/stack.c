// SPDX-License-Identifier: GPL-2.0
#include <string.h>

#include "stack.h"

size_t stack__compact(const struct gs_hdr *ev, void *out, size_t cap)
{
	unsigned int nu = ev->ustack_n, nk = ev->kstack_n;
	const struct gs_stack *st;
	struct gs_hdr *h = out;
	size_t fixed, size;

	if (ev->size < sizeof(struct gs_stack) + sizeof(*ev) || nu > GS_USTACK_MAX ||
	    nk > GS_KSTACK_MAX)
		return 0;
	fixed = ev->size - sizeof(struct gs_stack);
	size = fixed + (nu + nk) * sizeof(__u64);
	if (size > cap)
		return 0;
	st = (const void *)((const char *)ev + fixed);
	memcpy(out, ev, fixed);
	memcpy((char *)out + fixed, st->user, nu * sizeof(__u64));
	memcpy((char *)out + fixed + nu * sizeof(__u64), st->kern, nk * sizeof(__u64));
	h->size = size;
	return size;
}
