// SPDX-License-Identifier: GPL-2.0
/* Growable arrays (vec.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

size_t array__cap(size_t cap, size_t elem, size_t need, size_t first)
{
	size_t max = elem ? SIZE_MAX / elem : SIZE_MAX;

	if (need <= cap)
		return cap;
	if (!cap)
		cap = first ? first : 1;
	while (cap < need) {
		if (cap > max / 2)
			return 0;
		cap *= 2;
	}
	return cap <= max ? cap : 0;
}

int array__grow(void **p, size_t *cap, size_t elem, size_t need, size_t first)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = array__cap(*cap, elem, need, first);
	if (!ncap)
		return -ENOMEM;
	n = realloc(*p, ncap * elem);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = ncap;
	return 0;
}

void *vec__grow_push(struct vec *v, size_t elem)
{
	char *p;

	if (array__grow(&v->data, &v->cap, elem, v->n + 1, 16))
		return NULL;
	v->elem = elem;
	p = (char *)v->data + v->n++ * elem;
	memset(p, 0, elem);
	return p;
}

void vec__free(struct vec *v)
{
	free(v->data);
	*v = (struct vec){};
}

size_t vec__drop_below(struct vec *v, size_t off, unsigned long long horizon)
{
	size_t k = 0;
	unsigned long long x;

	for (; k < v->n; k++) {
		memcpy(&x, (const char *)v->data + k * v->elem + off, sizeof(x));
		if (x >= horizon)
			break;
	}
	if (k) {
		memmove(v->data, (char *)v->data + k * v->elem, (v->n - k) * v->elem);
		v->n -= k;
	}
	return k;
}
