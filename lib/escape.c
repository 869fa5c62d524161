// SPDX-License-Identifier: GPL-2.0
/* Names into JSON, XML/HTML and text: see escape.h. */
#include <stdlib.h>
#include <string.h>

#include "escape.h"

int utf8__decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	unsigned char c = n ? p[0] : 0;
	uint32_t v, min;
	int len;

	if (!n)
		return 0;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0)
		len = 2, v = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		len = 3, v = c & 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		len = 4, v = c & 0x07, min = 0x10000;
	else
		return 0;
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff) || v == 0xfffe || v == 0xffff)
		return 0;
	*cp = v;
	return len;
}

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

void esc__json(FILE *out, const char *s, bool html)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	uint32_t cp;

	fputc('"', out);
	while (n) {
		int len = utf8__decode(p, n, &cp);

		if (!len) {
			fputs(replacement, out);
			len = 1;
		} else if (cp == '"' || cp == '\\') {
			fputc('\\', out);
			fputc(cp, out);
		} else if (cp < 0x20 || cp == 0x7f || (html && cp == '<')) {
			fprintf(out, "\\u%04x", cp);
		} else {
			fwrite(p, 1, len, out);
		}
		p += len;
		n -= len;
	}
	fputc('"', out);
}

void esc__xml(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	uint32_t cp;

	for (size_t chars = 0; n && chars < max; chars++) {
		int len = utf8__decode(p, n, &cp);

		if (!len || (cp < 0x20 && cp != '\t') || (cp >= 0x7f && cp <= 0x9f))
			fputs(replacement, out); /* C1 too: XML 1.0 discourages them */
		else if (cp == '&')
			fputs("&amp;", out);
		else if (cp == '<')
			fputs("&lt;", out);
		else if (cp == '>')
			fputs("&gt;", out);
		else if (cp == '"')
			fputs("&quot;", out);
		else if (cp == '\'')
			fputs("&#39;", out);
		else
			fwrite(p, 1, len, out);
		len = len ? len : 1;
		p += len;
		n -= len;
	}
}

/* Whether code point CP stands in a line of text as it is: no control of any kind. */
static bool text_safe(uint32_t cp)
{
	return cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f);
}

void esc__put_text(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "?");
	uint32_t cp;

	n = strnlen((const char *)p, n);
	while (n) {
		int len = utf8__decode(p, n, &cp);

		if (len && text_safe(cp))
			fwrite(p, 1, len, out);
		else
			fprintf(out, "\\x%02x", len > 1 ? (unsigned)cp : p[0]);
		len = len ? len : 1;
		p += len;
		n -= len;
	}
}

const char *esc__text(char *buf, size_t size, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t at = 0;
	uint32_t cp;

	if (n == SIZE_MAX)
		n = strlen((const char *)p);
	else
		n = strnlen((const char *)p, n);
	while (n && size) {
		int len = utf8__decode(p, n, &cp);
		bool raw = len && text_safe(cp);
		size_t need = raw ? (size_t)len : 4;

		if (at + need >= size)
			break;
		if (raw)
			memcpy(buf + at, p, len);
		else
			snprintf(buf + at, 5, "\\x%02x", len > 1 ? (unsigned)cp : p[0]);
		at += need;
		len = len ? len : 1;
		p += len;
		n -= len;
	}
	if (size)
		buf[at] = 0;
	return buf;
}

char *esc__utf8(const char *s, bool *failed)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), len = 0, i = 0;
	bool valid = true;
	uint32_t cp;
	char *out;

	*failed = false;
	for (size_t k = 0; k < n;) {
		int l = utf8__decode(p + k, n - k, &cp);

		valid &= l > 0;
		k += l ? l : 1;
	}
	if (valid)
		return NULL;
	out = malloc(3 * n + 1); /* a byte becomes 3 at most */
	if (!out) {
		*failed = true;
		return NULL;
	}
	while (i < n) {
		int l = utf8__decode(p + i, n - i, &cp);

		if (l) {
			memcpy(out + len, p + i, l);
			len += l;
			i += l;
		} else {
			memcpy(out + len, "\xef\xbf\xbd", 3);
			len += 3;
			i++;
		}
	}
	out[len] = 0;
	return out;
}
