// SPDX-License-Identifier: GPL-2.0
/* A JSON writer that places the commas: see jsonw.h. */
#include <inttypes.h>
#include <stdarg.h>

#include "escape.h"
#include "jsonw.h"

void jsonw__init(struct jsonw *w, FILE *out)
{
	*w = (struct jsonw){ .out = out };
}

/* What goes before a value: its comma, a line break asked for, its key. */
static void begin(struct jsonw *w, const char *key)
{
	bool inside = w->depth && w->depth <= JSONW_DEPTH;

	if (inside && w->written[w->depth - 1])
		fputc(',', w->out);
	if (w->newline)
		fputc('\n', w->out);
	w->newline = false;
	if (inside)
		w->written[w->depth - 1] = true;
	if (key)
		fprintf(w->out, "\"%s\":", key);
}

void jsonw__open(struct jsonw *w, const char *key, char bracket)
{
	begin(w, key);
	fputc(bracket, w->out);
	if (w->depth < JSONW_DEPTH) {
		w->close[w->depth] = bracket == '{' ? '}' : ']';
		w->written[w->depth] = false;
	}
	w->depth++;
}

void jsonw__close(struct jsonw *w)
{
	if (!w->depth)
		return;
	w->depth--;
	fputc(w->depth < JSONW_DEPTH ? w->close[w->depth] : '}', w->out);
}

void jsonw__newline(struct jsonw *w)
{
	w->newline = true;
}

void jsonw__fmt(struct jsonw *w, const char *key, const char *fmt, ...)
{
	va_list ap;

	begin(w, key);
	va_start(ap, fmt);
	vfprintf(w->out, fmt, ap);
	va_end(ap);
}

void jsonw__u64(struct jsonw *w, const char *key, __u64 v)
{
	jsonw__fmt(w, key, "%" PRIu64, (uint64_t)v);
}

void jsonw__bool(struct jsonw *w, const char *key, bool v)
{
	jsonw__fmt(w, key, "%s", v ? "true" : "false");
}

void jsonw__named_u64(struct jsonw *w, const char *name, __u64 v)
{
	begin(w, NULL);
	esc__json(w->out, name, false);
	fprintf(w->out, ":%" PRIu64, (uint64_t)v);
}

void jsonw__str(struct jsonw *w, const char *key, const char *s)
{
	begin(w, key);
	esc__json(w->out, s, false);
}

void jsonw__str_or_null(struct jsonw *w, const char *key, const char *s)
{
	if (s)
		jsonw__str(w, key, s);
	else
		jsonw__fmt(w, key, "null");
}
