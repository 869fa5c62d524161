// SPDX-License-Identifier: GPL-2.0
/*
 * Folded stack sets (reports/analysis/folded.h): parse, walk, write back, merge, and a stack a
 * million frames deep handled on a 256 KiB thread stack (a depth the input chooses must not
 * decide how deep the C stack goes).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "testlib.h"

static int count_node(const struct folded_node *n, void *ctx)
{
	unsigned long long *c = ctx;

	c[0]++;
	if (n->depth + 1 > c[1])
		c[1] = n->depth + 1;
	return 0;
}

static int skip_b(const struct folded_node *n, void *ctx)
{
	char *s = ctx;

	strcat(s, n->name);
	strcat(s, ",");
	return strcmp(n->name, "b") ? 0 : 1;
}

static int stop_at(const char *const *frames, size_t n, __u64 w, void *ctx)
{
	return ++*(int *)ctx == 2 ? 42 : 0;
}

static char *written(const struct folded *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	CHECK(m && !folded__write(m, f), "write");
	fclose(m);
	return buf;
}

static void small(void)
{
	static const char text[] = "a;b;c 5\na;b 2\na;d 1\n# comment\n\nx 7\na;b;c 1\n";
	struct folded *f = folded__parse(text, sizeof(text) - 1), *g = folded__new();
	unsigned long long c[2] = { 0, 0 };
	char order[64] = "", *out;
	int calls = 0;

	CHECK(f, "parse");
	CHECK_EQ_U64(folded__total(f), 16);
	CHECK_EQ_U64(folded__stacks(f), 4);
	CHECK_EQ_U64(folded__nodes(f), 5);
	CHECK_EQ_U64(folded__max_depth(f), 3);
	CHECK(!folded__walk(f, count_node, c), "walk");
	CHECK_EQ_U64(c[0], 5);
	CHECK_EQ_U64(c[1], 3);
	/* parents before children, names in order; 1 skips b's children (c) */
	CHECK(!folded__walk(f, skip_b, order), "walk");
	CHECK(!strcmp(order, "a,b,d,x,"), "order %s", order);
	CHECK(folded__for_each_stack(f, stop_at, &calls) == 42 && calls == 2, "stop: %d", calls);
	out = written(f);
	CHECK(!strcmp(out, "a;b 2\na;b;c 6\na;d 1\nx 7\n"), "written:\n%s", out);
	free(out);
	CHECK(!folded__merge(g, f) && !folded__merge(g, f), "merge");
	CHECK_EQ_U64(folded__total(g), 32);
	out = written(g);
	CHECK(!strcmp(out, "a;b 4\na;b;c 12\na;d 2\nx 14\n"), "merged:\n%s", out);
	free(out);
	folded__free(g);
	folded__free(f);
	errno = 0;
	CHECK(!folded__parse("a;b\n", 4) && errno == EINVAL, "a line without a weight");
}

#define DEEP 1000000

/* A million frames: parsed, walked, written, merged and freed within a 256 KiB stack. */
static void *deep(void *unused)
{
	size_t len = 2 * (size_t)DEEP + 16, n = 0;
	char *text = malloc(len), *out;
	unsigned long long c[2] = { 0, 0 };
	struct folded *f, *g;

	CHECK(text, "malloc");
	for (int i = 0; i < DEEP; i++) {
		text[n++] = i % 2 ? 'y' : 'x';
		text[n++] = i + 1 < DEEP ? ';' : ' ';
	}
	n += snprintf(text + n, len - n, "3\nx 1\n");
	CHECK((f = folded__parse(text, n)), "parse");
	CHECK_EQ_U64(folded__max_depth(f), DEEP);
	CHECK_EQ_U64(folded__nodes(f), DEEP);
	CHECK_EQ_U64(folded__total(f), 4);
	CHECK(!folded__walk(f, count_node, c), "walk");
	CHECK_EQ_U64(c[0], DEEP);
	CHECK_EQ_U64(c[1], DEEP);
	out = written(f);
	/* "x 1", then the deep stack: DEEP one-letter frames, DEEP - 1 ';', " 3\n" */
	CHECK(strlen(out) == 4 + 2 * (size_t)DEEP + 2, "written: %zu bytes", strlen(out));
	CHECK(!strncmp(out, "x 1\nx;y;x;", 10), "written: %.12s", out);
	CHECK(!strcmp(out + strlen(out) - 7, ";x;y 3\n"), "written: ...%s", out + strlen(out) - 7);
	free(out);
	CHECK((g = folded__new()) && !folded__merge(g, f), "merge");
	CHECK_EQ_U64(folded__nodes(g), DEEP);
	folded__free(g);
	folded__free(f);
	free(text);
	return NULL;
}

int main(void)
{
	pthread_attr_t attr;
	pthread_t t;

	small();
	CHECK(!pthread_attr_init(&attr) && !pthread_attr_setstacksize(&attr, 256 << 10), "attr");
	CHECK(!pthread_create(&t, &attr, deep, NULL), "thread");
	CHECK(!pthread_join(t, NULL), "join");
	printf("folded: 5 small checks, a %d-frame stack on a 256 KiB stack\n", DEEP);
	TEST_PASS();
}
