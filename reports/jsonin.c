// SPDX-License-Identifier: GPL-2.0
/* A small JSON reader (jsonin.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonin.h"

#define JSON_DEPTH_MAX 64

struct parser {
	const char *p, *end, *start;
	char *err;
	size_t errlen;
};

static bool fail(struct parser *ps, const char *why)
{
	if (!*ps->err)
		snprintf(ps->err, ps->errlen, "%s at byte %zu", why, (size_t)(ps->p - ps->start));
	return false;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static bool lit(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n))
		return fail(ps, "not JSON");
	ps->p += n;
	return true;
}

static int hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string at ps->p (its opening quote), into a new buffer: never longer than its escaped form. */
static char *string(struct parser *ps)
{
	const char *q = ++ps->p;
	char *out, *o;

	while (q < ps->end && *q != '"')
		q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
	if (q >= ps->end) {
		fail(ps, "unterminated string");
		return NULL;
	}
	out = o = malloc((size_t)(q - ps->p) + 1);
	if (!out) {
		fail(ps, "out of memory");
		return NULL;
	}
	while (ps->p < q) {
		unsigned char c = (unsigned char)*ps->p;

		if (c < 0x20) {
			fail(ps, "control character in a string");
			goto bad;
		}
		if (c != '\\') {
			*o++ = (char)c;
			ps->p++;
			continue;
		}
		c = (unsigned char)ps->p[1];
		ps->p += 2;
		switch (c) {
		case '"':
		case '\\':
		case '/':
			*o++ = (char)c;
			break;
		case 'b':
			*o++ = '\b';
			break;
		case 'f':
			*o++ = '\f';
			break;
		case 'n':
			*o++ = '\n';
			break;
		case 'r':
			*o++ = '\r';
			break;
		case 't':
			*o++ = '\t';
			break;
		case 'u': {
			int cp = q - ps->p >= 4 ? hex4(ps->p) : -1, lo;

			if (cp < 0) {
				fail(ps, "bad \\u escape");
				goto bad;
			}
			ps->p += 4;
			/* a surrogate pair is one code point; a lone surrogate becomes U+FFFD */
			if (cp >= 0xd800 && cp < 0xdc00 && q - ps->p >= 6 && ps->p[0] == '\\' &&
			    ps->p[1] == 'u' && (lo = hex4(ps->p + 2)) >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				ps->p += 6;
			} else if (cp >= 0xd800 && cp < 0xe000) {
				cp = 0xfffd;
			}
			/* 6 escaped bytes give at most 4 (a pair: 12 give 4) */
			o += utf8(o, (unsigned)cp);
			break;
		}
		default:
			fail(ps, "bad escape in a string");
			goto bad;
		}
	}
	*o = 0;
	ps->p = q + 1;
	return out;
bad:
	free(out);
	return NULL;
}

static bool number(struct parser *ps, struct json *j)
{
	const char *s = ps->p;
	char buf[64], *e;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
		return fail(ps, "not JSON");
	while (ps->p < ps->end && strchr("0123456789+-.eE", *ps->p))
		ps->p++;
	if ((size_t)(ps->p - s) >= sizeof(buf))
		return fail(ps, "number too long");
	memcpy(buf, s, (size_t)(ps->p - s));
	buf[ps->p - s] = 0;
	errno = 0;
	j->num = strtod(buf, &e);
	if (*e || errno == ERANGE)
		return fail(ps, "bad number");
	j->type = JSON_NUM;
	if (strspn(buf, "0123456789") == strlen(buf)) {
		errno = 0;
		j->u = strtoull(buf, &e, 10);
		j->is_uint = !errno && !*e;
	}
	return true;
}

static bool value(struct parser *ps, struct json *j, int depth);

static bool push(struct parser *ps, struct json *j, size_t *cap)
{
	if (j->n < *cap)
		return true;
	*cap = *cap ? 2 * *cap : 8;
	struct json *k = realloc(j->kids, *cap * sizeof(*k));
	if (!k)
		return fail(ps, "out of memory");
	j->kids = k;
	if (j->type == JSON_OBJ) {
		char **keys = realloc(j->keys, *cap * sizeof(*keys));
		if (!keys)
			return fail(ps, "out of memory");
		j->keys = keys;
	}
	return true;
}

static bool container(struct parser *ps, struct json *j, int depth)
{
	bool obj = *ps->p == '{';
	char close = obj ? '}' : ']';
	size_t cap = 0;

	if (depth >= JSON_DEPTH_MAX)
		return fail(ps, "nested too deep");
	j->type = obj ? JSON_OBJ : JSON_ARR;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return true;
	}
	for (;;) {
		char *key = NULL;

		skip_ws(ps);
		if (obj) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, "expected a key");
			key = string(ps);
			if (!key)
				return false;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				return fail(ps, "expected ':'");
			}
			ps->p++;
		}
		if (!push(ps, j, &cap)) {
			free(key);
			return false;
		}
		memset(&j->kids[j->n], 0, sizeof(j->kids[j->n]));
		if (obj)
			j->keys[j->n] = key;
		j->n++;
		if (!value(ps, &j->kids[j->n - 1], depth + 1))
			return false;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return true;
		}
		return fail(ps, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static bool value(struct parser *ps, struct json *j, int depth)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, "unexpected end");
	switch (*ps->p) {
	case '{':
	case '[':
		return container(ps, j, depth);
	case '"':
		j->type = JSON_STR;
		j->s = string(ps);
		return j->s != NULL;
	case 't':
		j->type = JSON_BOOL;
		j->b = true;
		return lit(ps, "true");
	case 'f':
		j->type = JSON_BOOL;
		return lit(ps, "false");
	case 'n':
		j->type = JSON_NULL;
		return lit(ps, "null");
	default:
		return number(ps, j);
	}
}

static void json_free_parts(struct json *j)
{
	for (size_t i = 0; i < j->n; i++) {
		json_free_parts(&j->kids[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->kids);
	free(j->keys);
	free(j->s);
}

void json__free(struct json *j)
{
	if (!j)
		return;
	json_free_parts(j);
	free(j);
}

struct json *json__parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct parser ps = { text, text + len, text, err, errlen };
	struct json *j = calloc(1, sizeof(*j));

	*err = 0;
	if (!j) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (value(&ps, j, 0)) {
		skip_ws(&ps);
		if (ps.p == ps.end)
			return j;
		fail(&ps, "text after the JSON value");
	}
	json__free(j);
	return NULL;
}

const struct json *json__get(const struct json *j, const char *key)
{
	if (!j || j->type != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < j->n; i++)
		if (!strcmp(j->keys[i], key))
			return &j->kids[i];
	return NULL;
}
