// SPDX-License-Identifier: GPL-2.0
/* The recorder's record sink (trace_out.h). */
#include <string.h>

#include "clock.h"
#include "trace.h"
#include "trace_out.h"

void trace_out__append(struct trace_out *o, const void *rec, size_t size)
{
	if (o->tw)
		trace__append(o->tw, rec, size); /* a write error is kept, and counts what it cut */
	if (o->tap)
		o->tap(o->tap_ctx, rec, size);
}

void trace_out__flush(struct trace_out *o)
{
	if (o->tw)
		trace__flush(o->tw);
}

bool trace_out__failed(const struct trace_out *o)
{
	__u64 chunk, lost;

	return o->tw && trace__cut(o->tw, &chunk, &lost);
}

void trace_out__hdr(struct gs_hdr *h, __u32 type, __u32 size, __u32 tgid)
{
	memset(h, 0, sizeof(*h));
	h->type = type;
	h->size = size;
	h->ts = clock__mono_ns();
	h->tgid = tgid;
	h->tid = tgid;
}
