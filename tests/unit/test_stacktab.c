// SPDX-License-Identifier: GPL-2.0
/*
 * The stack table (reports/analysis/stacktab.c): a stack seen again gets its first number; one that
 * differs in a frame, in its process, or only in where user frames end and kernel frames begin
 * gets a new one; numbers and frames hold across the table's growth.
 */
#include <string.h>

#include "trace.h"
#include "stacktab.h"
#include "testlib.h"

#include "sample.h"

struct rec {
	struct sample_event e;
	__u64 frames[32];
};

/* A sample of process tgid with nu user frames then nk kernel frames from f. */
static const struct gs_hdr *rec_of(struct rec *r, __u32 tgid, const __u64 *f, __u16 nu, __u16 nk)
{
	memset(r, 0, sizeof(*r));
	r->e.h.type = GS_EV_SAMPLE;
	r->e.h.size = sizeof(r->e) + 8 * (nu + nk);
	r->e.h.tgid = tgid;
	r->e.h.ustack_n = nu;
	r->e.h.kstack_n = nk;
	memcpy(r->frames, f, 8 * (nu + nk));
	CHECK(gs_ustack(&r->e.h) == r->frames, "frames follow the fixed part");
	return &r->e.h;
}

static void check_view(const struct stacktab *t, __u32 id, __u32 tgid, const __u64 *f, __u16 nu,
		       __u16 nk)
{
	struct stack_view v = stacktab__get(t, id);

	CHECK_EQ_U64(v.tgid, tgid);
	CHECK_EQ_U64(v.nu, nu);
	CHECK_EQ_U64(v.nk, nk);
	CHECK(!memcmp(v.user, f, 8 * nu) && !memcmp(v.kern, f + nu, 8 * nk), "stack %u's frames",
	      id);
}

int main(void)
{
	struct stacktab *t = stacktab__new();
	static const __u64 a[] = { 0x401010, 0x401234, 0x7f0000001000, 0xffffffff81000010,
				   0xffffffff81000020 };
	__u64 b[5];
	struct rec r;
	__u32 ids[5000], first, again;

	CHECK(t, "stacktab__new");
	CHECK_EQ_U64(stacktab__add(t, rec_of(&r, 1, a, 0, 0)), STACK_NONE);
	first = stacktab__add(t, rec_of(&r, 1, a, 3, 2));
	CHECK(first != STACK_NONE, "a stack gets a number");
	again = stacktab__add(t, rec_of(&r, 1, a, 3, 2));
	CHECK_EQ_U64(again, first);
	/* Same frames, another split, another process, one frame changed, one frame fewer. */
	CHECK(stacktab__add(t, rec_of(&r, 1, a, 2, 3)) != first, "split between user and kernel");
	CHECK(stacktab__add(t, rec_of(&r, 2, a, 3, 2)) != first, "another process");
	memcpy(b, a, sizeof(b));
	b[4] ^= 1;
	CHECK(stacktab__add(t, rec_of(&r, 1, b, 3, 2)) != first, "the last frame differs");
	b[4] ^= 1;
	b[0] ^= 1ull << 63;
	CHECK(stacktab__add(t, rec_of(&r, 1, b, 3, 2)) != first, "the first frame differs");
	CHECK(stacktab__add(t, rec_of(&r, 1, a, 3, 1)) != first, "one frame fewer");
	/* Swapped frames are another stack. */
	memcpy(b, a, sizeof(b));
	b[0] = a[1];
	b[1] = a[0];
	CHECK(stacktab__add(t, rec_of(&r, 1, b, 3, 2)) != first, "two frames swapped");
	check_view(t, first, 1, a, 3, 2);

	/* Thousands of stacks of 1 to 20 frames: the table grows, numbers and frames hold. */
	for (__u32 i = 0; i < 5000; i++) {
		__u64 f[20];
		__u16 n = 1 + i % 20;

		for (__u16 k = 0; k < n; k++)
			f[k] = 0x400000 + i * 64 + k;
		ids[i] = stacktab__add(t, rec_of(&r, 7, f, n, 0));
		CHECK(ids[i] != STACK_NONE && ids[i] != first, "stack %u", i);
		for (__u32 j = 0; j < i; j += 997)
			CHECK(ids[j] != ids[i], "stacks %u and %u share a number", j, i);
	}
	for (__u32 i = 0; i < 5000; i++) {
		__u64 f[20];
		__u16 n = 1 + i % 20;

		for (__u16 k = 0; k < n; k++)
			f[k] = 0x400000 + i * 64 + k;
		CHECK_EQ_U64(stacktab__add(t, rec_of(&r, 7, f, n, 0)), ids[i]);
		check_view(t, ids[i], 7, f, n, 0);
	}
	CHECK_EQ_U64(stacktab__add(t, rec_of(&r, 1, a, 3, 2)), first);
	check_view(t, first, 1, a, 3, 2);
	stacktab__free(t);
	TEST_PASS();
}
