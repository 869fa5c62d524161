// SPDX-License-Identifier: GPL-2.0
/*
 * Stack compaction (loader/stack.c): an event with its whole struct gs_stack, as the BPF side
 * writes it, comes out with its fixed part unchanged, exactly ustack_n user frames then kstack_n
 * kernel frames, and h.size to match, for every count from none to full; malformed events
 * (counts past the arrays, a size too small for the stack, no room) are refused.
 */
#include <string.h>

#include "stack.h"
#include "sample.h"
#include "testlib.h"

struct raw_sample {
	struct sample_event ev;
	struct gs_stack st;
};

static void fill(struct raw_sample *r, unsigned int nu, unsigned int nk)
{
	memset(r, 0, sizeof(*r));
	r->ev.h.type = GS_EV_SAMPLE;
	r->ev.h.size = sizeof(*r);
	r->ev.h.flags = GS_F_STACK;
	r->ev.h.ts = 123456789;
	r->ev.h.tgid = 42;
	r->ev.h.tid = 43;
	r->ev.h.ustack_n = nu;
	r->ev.h.kstack_n = nk;
	r->ev.ip = 0xffffffff81234567ull;
	/* Every slot filled, also past the counts: none of those may come out. */
	for (int i = 0; i < GS_USTACK_MAX; i++)
		r->st.user[i] = 0x400000 + i;
	for (int i = 0; i < GS_KSTACK_MAX; i++)
		r->st.kern[i] = 0xffffffff81000000ull + i;
}

static void counts(unsigned int nu, unsigned int nk)
{
	static struct raw_sample r;
	static unsigned char out[STACK_COMPACT_MAX];
	const struct sample_event *ev = (const void *)out;
	size_t want = sizeof(struct sample_event) + (nu + nk) * sizeof(__u64), n;
	const __u64 *u, *k;

	fill(&r, nu, nk);
	memset(out, 0xee, sizeof(out));
	n = stack__compact(&r.ev.h, out, sizeof(out));
	CHECK(n == want, "%u+%u frames: %zu bytes, want %zu", nu, nk, n, want);
	CHECK_EQ_U64(ev->h.size, want);
	CHECK_EQ_U64(ev->h.ts, 123456789);
	CHECK_EQ_U64(ev->h.tid, 43);
	CHECK_EQ_U64(ev->h.ustack_n, nu);
	CHECK_EQ_U64(ev->h.kstack_n, nk);
	CHECK_EQ_U64(ev->ip, 0xffffffff81234567ull);
	u = stack__user_frames(&ev->h);
	k = stack__kernel_frames(&ev->h);
	CHECK((const void *)u == (const void *)(ev + 1), "user frames right after the fixed part");
	for (unsigned int i = 0; i < nu; i++)
		CHECK_EQ_U64(u[i], 0x400000 + i);
	for (unsigned int i = 0; i < nk; i++)
		CHECK_EQ_U64(k[i], 0xffffffff81000000ull + i);
	CHECK(out[n] == 0xee, "nothing written past the compacted event");
	/* Exactly enough room is enough; one byte less is not. */
	CHECK_EQ_U64(stack__compact(&r.ev.h, out, want), want);
	CHECK_EQ_U64(stack__compact(&r.ev.h, out, want - 1), 0);
}

static void malformed(void)
{
	static struct raw_sample r;
	static unsigned char out[STACK_COMPACT_MAX];

	fill(&r, GS_USTACK_MAX + 1, 0);
	CHECK_EQ_U64(stack__compact(&r.ev.h, out, sizeof(out)), 0);
	fill(&r, 0, GS_KSTACK_MAX + 1);
	CHECK_EQ_U64(stack__compact(&r.ev.h, out, sizeof(out)), 0);
	fill(&r, 1, 1);
	r.ev.h.size = sizeof(struct gs_stack) + sizeof(struct gs_hdr) - 1;
	CHECK_EQ_U64(stack__compact(&r.ev.h, out, sizeof(out)), 0);
	/* A header and a stack, no fixed fields: still an event. */
	r.ev.h.size = sizeof(struct gs_stack) + sizeof(struct gs_hdr);
	CHECK_EQ_U64(stack__compact(&r.ev.h, out, sizeof(out)), sizeof(struct gs_hdr) + 16);
}

int main(void)
{
	unsigned int nus[] = { 0, 1, 2, 17, GS_USTACK_MAX }, nks[] = { 0, 1, 5, GS_KSTACK_MAX };

	for (size_t i = 0; i < sizeof(nus) / sizeof(*nus); i++)
		for (size_t j = 0; j < sizeof(nks) / sizeof(*nks); j++)
			counts(nus[i], nks[j]);
	malformed();
	TEST_PASS();
}
