/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A JSON writer that places the commas: objects and arrays opened and closed, each value with
 * its key (NULL inside an array), the separator written before every value but a container's
 * first. Strings go through esc__json (escape.h); numbers are printf's. It checks no nesting
 * beyond JSONW_DEPTH and no key inside an array: the callers are the house's own outputs.
 */
#ifndef GAPSCOPE_JSONW_H
#define GAPSCOPE_JSONW_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#define JSONW_DEPTH 16

struct jsonw {
	FILE *out;
	int depth;		   /* containers open */
	char close[JSONW_DEPTH];   /* each one's closing bracket */
	bool written[JSONW_DEPTH]; /* each one has a value: the next one needs a comma */
	bool newline;		   /* the next value begins a line (after its comma) */
};

void jsonw__init(struct jsonw *w, FILE *out);
/* An object ('{') or an array ('[') as KEY's value; values go into it until jsonw__close. */
void jsonw__open(struct jsonw *w, const char *key, char bracket);
void jsonw__close(struct jsonw *w);
/* The next value starts a line of its own: a file a reader can skim and diff. */
void jsonw__newline(struct jsonw *w);
/* KEY's value as printf writes FMT: a number, or text already JSON (true, null, ...). */
void jsonw__fmt(struct jsonw *w, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void jsonw__u64(struct jsonw *w, const char *key, __u64 v);
void jsonw__bool(struct jsonw *w, const char *key, bool v);
/* A member named by text from outside (escaped as a string, NULL as ""), its value V. */
void jsonw__named_u64(struct jsonw *w, const char *name, __u64 v);
/* S as a JSON string (NULL as "", as esc__json writes it). */
void jsonw__str(struct jsonw *w, const char *key, const char *s);
/* S as a JSON string, null where S is NULL. */
void jsonw__str_or_null(struct jsonw *w, const char *key, const char *s);

#endif
