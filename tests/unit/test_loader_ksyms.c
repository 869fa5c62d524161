// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel-symbol table (lib/ksyms.c): built from pairs added out of order (as a reader
 * rebuilds it from GS_REC_KSYM records, with lookups between the adds), each address inside a
 * function finds that function,
 * addresses below the first find nothing, names find their symbol and where the next begins;
 * then /proc/kallsyms, where (addresses visible) a function's own address finds it back.
 */
#include <errno.h>
#include <string.h>

#include "ksyms.h"
#include "testlib.h"

static void pairs(void)
{
	struct ksyms *k = ksyms__new();
	char name[32];
	struct ksym *s;
	__u64 end;

	CHECK(k, "new");
	CHECK(!ksyms__find(k, 0x1000), "empty table finds nothing");
	CHECK(!ksyms__add(k, 0xffffffff81003000ull, "third"), "add");
	CHECK(!ksyms__add(k, 0xffffffff81001000ull, "first"), "add");
	/* The name is copied: the caller's buffer changes after. */
	strcpy(name, "second");
	CHECK(!ksyms__add(k, 0xffffffff81002000ull, name), "add");
	strcpy(name, "garbage");
	CHECK(!ksyms__add(k, 0xffffffff81002000ull, "second_alias"), "add");
	CHECK_EQ_U64(ksyms__count(k), 4);

	CHECK(!ksyms__find(k, 0xffffffff81000fffull), "below the first");
	s = ksyms__find(k, 0xffffffff81001000ull);
	CHECK(s && !strcmp(s->name, "first"), "%s", s ? s->name : "none");
	s = ksyms__find(k, 0xffffffff81001fffull);
	CHECK(s && !strcmp(s->name, "first"), "%s", s ? s->name : "none");
	s = ksyms__find(k, 0xffffffff81002010ull);
	CHECK(s && s->addr == 0xffffffff81002000ull, "second or its alias");
	CHECK(!strcmp(s->name, "second") || !strcmp(s->name, "second_alias"), "%s", s->name);
	s = ksyms__find(k, 0xffffffff8100ffffull);
	CHECK(s && !strcmp(s->name, "third"), "past the last: the last");

	s = ksyms__by_name(k, "second", &end);
	CHECK(s && s->addr == 0xffffffff81002000ull, "by name");
	CHECK_EQ_U64(end, 0xffffffff81003000ull); /* past the alias */
	s = ksyms__by_name(k, "third", &end);
	CHECK(s, "by name");
	CHECK_EQ_U64(end, 0xffffffff81003001ull);
	CHECK(!ksyms__by_name(k, "fourth", &end), "unknown name");

	/* Adding after a lookup: sorted again at the next one. */
	CHECK(!ksyms__add(k, 0xffffffff81000000ull, "zeroth"), "add");
	s = ksyms__find(k, 0xffffffff81000fffull);
	CHECK(s && !strcmp(s->name, "zeroth"), "%s", s ? s->name : "none");
	s->emitted = true;
	CHECK(ksyms__find(k, 0xffffffff81000001ull)->emitted, "the mark stays on the symbol");
	ksyms__free(k);
	ksyms__free(NULL);
}

/* Adds in random order, lookups between them: every lookup agrees with a search of all. */
static void random_order(void)
{
	enum { N = 3000 };
	static __u64 addrs[N];
	struct ksyms *k = ksyms__new();
	unsigned int seed = 12345;
	char name[32];

	for (int i = 0; i < N; i++)
		addrs[i] = 0xffffffff80000000ull + (__u64)i * 64; /* distinct, ascending */
	for (int i = N - 1; i > 0; i--) {
		int j = rand_r(&seed) % (i + 1);
		__u64 t = addrs[i];

		addrs[i] = addrs[j];
		addrs[j] = t;
	}
	for (int i = 0; i < N; i++) {
		__u64 probe = addrs[rand_r(&seed) % (i + 1)] + 13, best = 0;
		struct ksym *s;

		snprintf(name, sizeof(name), "f%llx", (unsigned long long)addrs[i]);
		CHECK(!ksyms__add(k, addrs[i], name), "add %d", i);
		for (int j = 0; j <= i; j++)
			if (addrs[j] <= probe && addrs[j] > best)
				best = addrs[j];
		s = ksyms__find(k, probe);
		CHECK(s && s->addr == best, "after %d adds: %llx found %llx, want %llx", i + 1,
		      (unsigned long long)probe, s ? (unsigned long long)s->addr : 0ull,
		      (unsigned long long)best);
		snprintf(name, sizeof(name), "f%llx", (unsigned long long)best);
		CHECK(!strcmp(s->name, name), "%s, want %s", s->name, name);
	}
	ksyms__free(k);
}

static void kallsyms(void)
{
	struct ksyms *k = ksyms__load();
	struct ksym *s, *again;
	__u64 end;

	CHECK(k, "/proc/kallsyms is readable by everyone");
	if (!ksyms__count(k)) {
		/* kptr_restrict hides the addresses from this user: nothing to name with. */
		CHECK(geteuid() != 0, "root sees kernel addresses");
		ksyms__free(k);
		return;
	}
	CHECK(ksyms__count(k) > 1000, "%zu text symbols", ksyms__count(k));
	s = ksyms__by_name(k, "schedule", &end);
	CHECK(s, "schedule() in kallsyms");
	CHECK(end > s->addr, "it ends after it starts");
	again = ksyms__find(k, s->addr + (end - s->addr) / 2);
	CHECK(again && again->addr == s->addr, "an address inside schedule() finds it");
	CHECK(ksyms__add(k, 1, "x") == -EINVAL, "a kallsyms table is complete as read");
	ksyms__free(k);
}

int main(void)
{
	pairs();
	random_order();
	kallsyms();
	TEST_PASS();
}
