/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON reader for what gapscope reads back of its own outputs (summary.json, for
 * `gapscope diff`): the whole text into a tree, strict (RFC 8259), nested at most 64 deep.
 * Integers that fit in 64 bits are kept exact (ns counts pass 2^53).
 */
#ifndef GAPSCOPE_JSONIN_H
#define GAPSCOPE_JSONIN_H

#include <stdbool.h>
#include <stddef.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
	enum json_type type;
	bool b;
	double num;
	unsigned long long u; /* a non-negative integer's exact value (is_uint) */
	bool is_uint;
	char *s;	   /* JSON_STR, NUL-terminated (a \u0000 inside ends it early) */
	struct json *kids; /* JSON_ARR, JSON_OBJ */
	char **keys;	   /* JSON_OBJ */
	size_t n;
};

/* The tree of TEXT[0..len); NULL with ERR saying where and why. */
struct json *json__parse(const char *text, size_t len, char *err, size_t errlen);
void json__free(struct json *j);
/* An object's member, NULL where absent or J is no object. */
const struct json *json__get(const struct json *j, const char *key);

#endif
