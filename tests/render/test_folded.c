// SPDX-License-Identifier: GPL-2.0
/* Folded stack sets (reports/analysis/folded.h): parsing, adding, merging, walking, writing back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "../unit/testlib.h"

struct seen {
	char text[4096];
	size_t len;
};

static int stack__print(const char *const *frames, size_t n, __u64 weight, void *ctx)
{
	struct seen *s = ctx;

	for (size_t i = 0; i < n; i++)
		s->len += snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s%s", i ? ";" : "",
				   frames[i]);
	s->len += snprintf(s->text + s->len, sizeof(s->text) - s->len, " %llu\n",
			   (unsigned long long)weight);
	return 0;
}

static const char *stacks(const struct folded *f)
{
	static struct seen s;

	s.len = 0;
	s.text[0] = '\0';
	CHECK(!folded__for_each_stack(f, stack__print, &s), "walk failed");
	return s.text;
}

static int node__print(const struct folded_node *n, void *ctx)
{
	struct seen *s = ctx;

	s->len += snprintf(s->text + s->len, sizeof(s->text) - s->len, "%u:%s=%llu/%llu ", n->depth,
			   n->name, (unsigned long long)n->weight, (unsigned long long)n->self);
	/* Skipping "b"'s children checks that 1 prunes. */
	return !strcmp(n->name, "b") ? 1 : 0;
}

static void test_parse(void)
{
	static const char text[] = "# comment\n"
				   "main;[lock tracker lock];wait_[k] 30\r\n"
				   "\n"
				   "main;a b c 5\n"
				   "main 7\n"
				   "main;[lock tracker lock];wait_[k] 12\n"
				   "main;b;x 1\n"
				   "main;a b c;zz 2";
	struct folded *f = folded__parse(text, strlen(text));
	struct seen s = {};

	CHECK(f, "parse failed: %s", strerror(errno));
	CHECK_EQ_U64(folded__total(f), 57);
	CHECK_EQ_U64(folded__stacks(f), 5);
	CHECK_EQ_U64(folded__nodes(f), 7);
	CHECK_EQ_U64(folded__max_depth(f), 3);
	/* Children in byte order, equal stacks merged, names with spaces whole. */
	CHECK(!strcmp(stacks(f), "main 7\n"
				 "main;[lock tracker lock];wait_[k] 42\n"
				 "main;a b c 5\n"
				 "main;a b c;zz 2\n"
				 "main;b;x 1\n"),
	      "stacks:\n%s", stacks(f));
	CHECK(!folded__walk(f, node__print, &s), "walk");
	CHECK(!strcmp(s.text, "0:main=57/7 1:[lock tracker lock]=42/0 2:wait_[k]=42/42 "
			      "1:a b c=7/5 2:zz=2/2 1:b=1/0 "),
	      "walk: %s", s.text);
	folded__free(f);
}

static void test_parse_errors(void)
{
	static const char *const bad[] = {
		"main;a\n", "main;a x\n",  "main;a 12a\n", "main;a 99999999999999999999999\n",
		" 5\n",	    "main;a -3\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(!folded__parse(bad[i], strlen(bad[i])), "parsed \"%s\"", bad[i]);
		CHECK(errno == EINVAL, "\"%s\": errno %d", bad[i], errno);
	}
	/* Only comments and blank lines: an empty set, not an error. */
	struct folded *f = folded__parse("# x\n\n", 5);

	CHECK(f && !folded__total(f) && !folded__nodes(f), "empty set");
	folded__free(f);
}

/*
 * Text in a large heap buffer, as folded__read_file() reads a file: an address above 4 GiB. The
 * weight's space was found by a memrchr() that a build without _GNU_SOURCE declared as returning
 * int, the pointer cut to 32 bits: a segfault on every line.
 */
static void test_parse_heap(void)
{
	static const char line[] =
		"gpu-worker-0;run;[lock tracker];--;[held by fin];malloc_trim 3\n";
	size_t n = 65536, len = n * (sizeof(line) - 1);
	char *buf = malloc(len);
	struct folded *f;

	CHECK(buf, "malloc");
	for (size_t i = 0; i < n; i++)
		memcpy(buf + i * (sizeof(line) - 1), line, sizeof(line) - 1);
	f = folded__parse(buf, len);
	CHECK(f, "parse failed: %s", strerror(errno));
	CHECK_EQ_U64(folded__total(f), 3 * n);
	CHECK_EQ_U64(folded__stacks(f), 1);
	CHECK_EQ_U64(folded__max_depth(f), 6);
	folded__free(f);
	free(buf);
}

static void test_add_merge_write(void)
{
	const char *s1[] = { "main", "ns::f(a;b)", "line\nbreak" };
	const char *s2[] = { "main", "ns::f(a:b)" };
	struct folded *a = folded__new(), *b = folded__new(), *back;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	CHECK(a && b, "new");
	CHECK(!folded__add(a, s1, 3, 10), "add");
	CHECK(!folded__add(b, s2, 2, 4), "add");
	CHECK(!folded__add(b, s1, 3, 1), "add");
	CHECK(folded__add(b, s1, 0, 1) == -EINVAL, "an empty stack is refused");
	/* A ';' in a name becomes ':' (it would split the frame when read back): one frame. */
	CHECK(!strcmp(stacks(a), "main;ns::f(a:b);line break 10\n"), "sanitized: %s", stacks(a));
	CHECK(!folded__merge(a, b), "merge");
	CHECK_EQ_U64(folded__total(a), 15);
	CHECK(!strcmp(stacks(a), "main;ns::f(a:b) 4\nmain;ns::f(a:b);line break 11\n"),
	      "merged: %s", stacks(a));
	out = open_memstream(&buf, &len);
	CHECK(out && !folded__write(out, a) && !fclose(out), "write");
	back = folded__parse(buf, len);
	CHECK(back, "read back");
	CHECK(!strcmp(stacks(back), "main;ns::f(a:b) 4\nmain;ns::f(a:b);line break 11\n"),
	      "round trip: %s", stacks(back));
	folded__free(back);
	folded__free(a);
	folded__free(b);
	free(buf);
}

static void test_kind(void)
{
	CHECK(folded__kind("do_syscall_64_[k]") == FOLDED_KERNEL, "kernel");
	CHECK(folded__kind("[lock tracker_lock]") == FOLDED_SYNTHETIC, "lock");
	CHECK(folded__kind("[woken by finalizer-2]") == FOLDED_SYNTHETIC, "woken");
	CHECK(folded__kind("--") == FOLDED_SYNTHETIC, "separator");
	CHECK(folded__kind("operator[]") == FOLDED_USER, "user with brackets");
	CHECK(folded__kind("a[k]") == FOLDED_USER, "no underscore");
	CHECK(folded__kind("") == FOLDED_USER, "empty");
}

int main(void)
{
	test_parse();
	test_parse_errors();
	test_parse_heap();
	test_add_merge_write();
	test_kind();
	TEST_PASS();
}
