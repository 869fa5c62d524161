// SPDX-License-Identifier: GPL-2.0
/* Which program a trace recorded (program.h). */
#include <stdio.h>
#include <string.h>

#include "gapscope.h"
#include "proc.h"
#include "program.h"
#include "trace.h"

static int on_target(void *ctx, const struct gs_hdr *h)
{
	const struct gs_rec_target *t = (const void *)h;
	struct program_scan *s = ctx;
	size_t n = h->size > sizeof(*t) ? h->size - sizeof(*t) : 0;

	s->tgid = h->tgid;
	if (t->mode == GS_TARGET_LAUNCH && t->argc && n && memchr(t->argv, 0, n)) {
		const char *slash = strrchr(t->argv, '/');

		snprintf(s->buf, s->len, "%s", slash ? slash + 1 : t->argv);
	}
	s->named = s->len && *s->buf;
	return 1; /* the first target names the program */
}

/*
 * An attached process: the last name the trace gave its main thread. The recorder writes the
 * target before any thread's name, so none is missed for coming first.
 */
static int on_comm(void *ctx, const struct gs_hdr *h)
{
	const struct comm_event *c = (const void *)h;
	struct program_scan *s = ctx;

	if (s->named)
		return 1; /* named by its command line */
	if (s->tgid && h->size >= sizeof(*c) && h->tid == s->tgid && h->tid == h->tgid)
		snprintf(s->buf, s->len, "%.*s", (int)sizeof(c->comm), c->comm);
	return 0;
}

void program__consumers(struct program_scan *s, char *buf, size_t len, struct trace_consumer *c)
{
	*s = (struct program_scan){ .buf = buf, .len = len };
	if (len)
		*buf = 0;
	c[0] = (struct trace_consumer){ .type = GS_REC_TARGET, .fn = on_target, .ctx = s };
	c[1] = (struct trace_consumer){ .type = GS_EV_COMM, .fn = on_comm, .ctx = s };
}

int program__scanned(const struct trace_consumer *c)
{
	for (int i = 0; i < PROGRAM_CONSUMERS; i++)
		if (c[i].err < 0)
			return c[i].err;
	return 0;
}
