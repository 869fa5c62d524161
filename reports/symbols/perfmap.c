// SPDX-License-Identifier: GPL-2.0
/* Perf maps of generated code (perfmap.h): one array sorted by process and start. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "perfmap.h"
#include "vec.h"

#define PERFMAP_BACK 64 /* overlapping ranges looked at behind the last start below addr */

struct pm_sym {
	__u32 tgid;
	__u64 start, end;
	__u64 seq; /* line order: the later wins */
	char *name;
};

struct perfmaps {
	struct pm_sym *v;
	size_t n, cap;
	__u64 seq;
	bool sorted;
};

struct perfmaps *perfmaps__new(void)
{
	struct perfmaps *p = calloc(1, sizeof(*p));

	if (p)
		p->sorted = true;
	return p;
}

void perfmaps__free(struct perfmaps *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].name);
	free(p->v);
	free(p);
}

/* One line "START SIZE NAME" (hex, "0x" allowed); false when it is not one. */
static bool parse_line(const char *s, const char *end, __u64 *start, __u64 *size, const char **name)
{
	__u64 v[2] = { 0, 0 };

	for (int k = 0; k < 2; k++) {
		int digits = 0;

		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
			s += 2;
		for (; s < end; s++, digits++) {
			int d = *s >= '0' && *s <= '9' ? *s - '0' :
				*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
				*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 :
							 -1;

			if (d < 0)
				break;
			if (digits == 16)
				return false;
			v[k] = v[k] << 4 | d;
		}
		if (!digits || s == end || (*s != ' ' && *s != '\t'))
			return false;
	}
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*start = v[0];
	*size = v[1];
	*name = s;
	return s < end && v[1] && v[0] + v[1] > v[0];
}

int perfmaps__add_text(struct perfmaps *p, __u32 tgid, const char *text, size_t len)
{
	const char *s = text, *end = text + len;

	while (s < end) {
		const char *nl = memchr(s, '\n', end - s), *eol = nl ? nl : end, *name;
		__u64 start, size;
		size_t nlen;

		if (parse_line(s, eol, &start, &size, &name)) {
			nlen = eol - name;
			while (nlen && (name[nlen - 1] == '\r' || name[nlen - 1] == ' '))
				nlen--;
			if (array__grow((void **)&p->v, &p->cap, sizeof(*p->v), p->n + 1, 256))
				return -ENOMEM;
			p->v[p->n] = (struct pm_sym){ tgid, start, start + size, p->seq++,
						      strndup(name, nlen) };
			if (!p->v[p->n].name)
				return -ENOMEM;
			p->n++;
			p->sorted = false;
		}
		s = eol + 1;
	}
	return 0;
}

int perfmaps__add(struct perfmaps *p, const struct gs_hdr *h)
{
	const struct gs_rec_perf_map *r = gs_perf_map(h);
	size_t room = r ? gs_fixed_size(h) - sizeof(*r) : 0;

	if (!r)
		return 0;
	return perfmaps__add_text(p, h->tgid, r->text, r->len < room ? r->len : room);
}

int perfmaps__take(void *p, const struct gs_hdr *h)
{
	return perfmaps__add(p, h);
}

static int sym_cmp(const void *a, const void *b)
{
	const struct pm_sym *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

const char *perfmaps__find(struct perfmaps *p, __u32 tgid, __u64 addr, __u64 *offset)
{
	const struct pm_sym *best = NULL;
	size_t lo = 0, hi;

	if (!p || !p->n)
		return NULL;
	if (!p->sorted) {
		qsort(p->v, p->n, sizeof(*p->v), sym_cmp);
		p->sorted = true;
	}
	/* Past the last symbol of tgid starting at or below addr. */
	hi = p->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct pm_sym *y = &p->v[mid];

		if (y->tgid < tgid || (y->tgid == tgid && y->start <= addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && lo - i <= PERFMAP_BACK && p->v[i].tgid == tgid;)
		if (addr < p->v[i].end && (!best || p->v[i].seq > best->seq))
			best = &p->v[i];
	if (best && offset)
		*offset = addr - best->start;
	return best ? best->name : NULL;
}

size_t perfmaps__count(const struct perfmaps *p)
{
	return p ? p->n : 0;
}
