// SPDX-License-Identifier: GPL-2.0
/* Which program a trace recorded (program.h). */
#include <stdio.h>
#include <string.h>

#include "gapscope.h"
#include "proc.h"
#include "program.h"
#include "trace.h"

struct scan {
	__u32 tgid; /* the first target's; 0 until its record is seen */
	char *buf;
	size_t len;
	const char *path; /* "" none */
};

static int on_target(void *ctx, const struct gs_hdr *h)
{
	const struct gs_rec_target *t = (const void *)h;
	struct scan *s = ctx;
	size_t n = h->size > sizeof(*t) ? h->size - sizeof(*t) : 0;

	s->tgid = h->tgid;
	if (t->mode == GS_TARGET_LAUNCH && t->argc && n && memchr(t->argv, 0, n)) {
		const char *slash = strrchr(t->argv, '/');

		snprintf(s->buf, s->len, "%s", slash ? slash + 1 : t->argv);
	}
	return 1; /* the first target names the program */
}

/* An attached process: the last name the trace gave its main thread. */
static int on_comm(void *ctx, const struct gs_hdr *h)
{
	const struct comm_event *c = (const void *)h;
	struct scan *s = ctx;

	if (h->size >= sizeof(*c) && h->tid == s->tgid && h->tid == h->tgid)
		snprintf(s->buf, s->len, "%.*s", (int)sizeof(c->comm), c->comm);
	return 0;
}

int program__of_trace(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	struct scan s = { .buf = buf, .len = len };
	int ret;

	if (!len)
		return 0;
	*buf = 0;
	ret = trace__scan(path, GS_REC_TARGET, on_target, &s, err, errlen);
	if (ret < 0)
		return ret;
	if (!*buf && s.tgid) {
		ret = trace__scan(path, GS_EV_COMM, on_comm, &s, err, errlen);
		if (ret < 0)
			return ret;
	}
	return 0;
}
