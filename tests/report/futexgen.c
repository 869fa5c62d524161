// SPDX-License-Identifier: GPL-2.0
/*
 * Writes a trace of two threads ping-ponging through futex words never used twice, as
 * tests/record/futexchurn.c does live (red-team D22), with thread churn besides (D31): every
 * CHURN rounds the pair exits and a new pair of new tids takes over. Each round is two waits, each
 * a blocked off-CPU interval woken by the other thread and the futex wait around it, written in
 * the order they end, 10 us a round (100,000 rounds a second of trace: twice what futexchurn
 * does recorded on a 2-CPU machine, so that more waits fall within the analysis's lookback than
 * it holds).
 *
 * usage: futexgen FILE ROUNDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genlib.h"
#include "futex.h"
#include "offcpu.h"
#include "proc.h"

#define TGID	  5000
#define CHURN	  64 /* rounds of one pair of threads */
#define ROUND_NS  10000ull
#define TID_FIRST 5001u
#define TID_LAST  4194000u /* systemd's pid_max: tids are used again after a wrap */

static void hdr(struct gs_hdr *h, __u32 type, __u32 size, __u64 ts, __u32 tid)
{
	gen__hdr(h, type, size, ts, tid, TGID);
	h->cpu = tid & 1;
}

/* tid waits on uaddr over [s, e), asleep over [s + 1 us, e - 1 us) until waker woke it. */
static void wait_on(__u32 tid, __u32 waker, __u64 uaddr, __u64 s, __u64 e)
{
	struct offcpu_event off;
	struct futex_event fx;

	hdr(&off.h, GS_EV_OFFCPU, sizeof(off), s + 1000, tid);
	memset((char *)&off + sizeof(off.h), 0, sizeof(off) - sizeof(off.h));
	off.dur_ns = e - s - 2000;
	off.state = OFFCPU_BLOCKED;
	off.waker_tid = waker;
	off.waker_tgid = TGID;
	off.wake_ts = e - 1500;
	off.on_cpu = tid & 1;
	off.syscall = 202; /* futex */
	off.h.flags = GS_F_IN_FUTEX;
	memcpy(off.waker_comm, "churn", 6);
	gen__put(&off, sizeof(off));
	hdr(&fx.h, GS_EV_FUTEX, sizeof(fx), s, tid);
	memset((char *)&fx + sizeof(fx.h), 0, sizeof(fx) - sizeof(fx.h));
	fx.uaddr = uaddr;
	fx.dur_ns = e - s;
	gen__put(&fx, sizeof(fx));
}

static void fork_rec(__u32 parent, __u32 child, __u64 ts)
{
	struct fork_event f;

	hdr(&f.h, GS_EV_FORK, sizeof(f), ts, parent);
	memset((char *)&f + sizeof(f.h), 0, sizeof(f) - sizeof(f.h));
	f.child_tid = child;
	f.child_tgid = TGID;
	memcpy(f.comm, "churn", 6);
	gen__put(&f, sizeof(f));
}

static void exit_rec(__u32 tid, __u64 ts)
{
	struct exit_event x;

	hdr(&x.h, GS_EV_EXIT, sizeof(x), ts, tid);
	memset((char *)&x + sizeof(x.h), 0, sizeof(x) - sizeof(x.h));
	gen__put(&x, sizeof(x));
}

int main(int argc, char **argv)
{
	unsigned long long rounds;
	__u64 t = 1000000000ull, x = 0x7f0000000000ull;
	__u32 next = TID_FIRST, a = 0, b = 0;

	if (argc != 3 || !(rounds = strtoull(argv[2], NULL, 10))) {
		fprintf(stderr, "usage: futexgen FILE ROUNDS\n");
		return 64;
	}
	gen__open("futexgen", argv[1]);
	for (unsigned long long i = 0; i < rounds; i++, t += ROUND_NS) {
		if (i % CHURN == 0) {
			/* The old pair exits; the process's main thread (TGID) starts a new one. */
			if (a) {
				exit_rec(a, t);
				exit_rec(b, t + 1);
			}
			a = next++;
			b = next++;
			if (next > TID_LAST)
				next = TID_FIRST;
			fork_rec(TGID, a, t + 2);
			fork_rec(TGID, b, t + 3);
			t += 10;
		}
		/* b waits for a's word, then a for b's: each word once. */
		wait_on(b, a, x, t, t + 4500);
		wait_on(a, b, x + 4, t + 5000, t + 9500);
		x += 8;
	}
	if (a) {
		exit_rec(a, t);
		exit_rec(b, t + 1);
	}
	gen__end(t);
	printf("rounds=%llu words=%llu threads=%llu seconds=%.3f\n", rounds, rounds * 2,
	       2 * ((rounds + CHURN - 1) / CHURN), (t - 1000000000ull) / 1e9);
	return 0;
}
