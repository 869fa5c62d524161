// SPDX-License-Identifier: GPL-2.0
/* Short names for text outputs (shortname.h). */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "shortname.h"

static bool ident(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.';
}

/* Past the bracket at s that open closes (by close), counting nested ones; "->" is no bracket. */
static const char *skip(const char *s, char open, char close)
{
	int depth = 0;

	for (; *s; s++) {
		if (*s == '-' && s[1] == '>') {
			s++;
			continue;
		}
		if (*s == open)
			depth++;
		else if (*s == close && !--depth)
			return s + 1;
	}
	return s; /* unbalanced: the rest goes */
}

const char *shortname(const char *name, char *buf, size_t size)
{
	const char *s = name;
	size_t n = 0;
	bool after_op = false; /* just past "operator<<": a '(', or '<' after a space, opens */

	if (!name || !size)
		return name;
#define PUT(str, len)                       \
	do {                                \
		size_t l_ = (len);          \
		if (n + l_ >= size)         \
			l_ = size - 1 - n;  \
		memcpy(buf + n, (str), l_); \
		n += l_;                    \
	} while (0)
	while (*s && n + 1 < size) {
		char prev = s > name ? s[-1] : '\0';

		/* An operator's own characters are not brackets: "operator<", "operator()". */
		if (!strncmp(s, "operator", 8) && !ident(prev) && !ident(s[8])) {
			size_t k = 8;

			if (s[8] == '(' && s[9] == ')')
				k = 10;
			else
				k += strspn(s + 8, "<>=!+-*/%^&|~,[]");
			PUT(s, k);
			s += k;
			after_op = k > 8;
			if (after_op && *s == ' ' && s[1] == '<') {
				PUT(s, 1);
				s++;
			}
			continue;
		}
		if (*s == '<' && (ident(prev) || prev == ':' || after_op)) {
			PUT("<...>", 5);
			s = skip(s, '<', '>');
		} else if (*s == '(' && (ident(prev) || prev == '>' || after_op)) {
			bool empty = s[1] == ')';

			PUT(empty ? "()" : "(...)", empty ? 2 : 5);
			s = skip(s, '(', ')');
		} else {
			PUT(s, 1);
			s++;
		}
		after_op = false;
	}
#undef PUT
	buf[n] = '\0';
	return buf;
}
