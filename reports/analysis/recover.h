/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recoverable time: the GPU idle time that would not have happened without a cause or a hop.
 * Derived from each gap's timeline, not from the shares: the closer's pieces of the gap
 * (gap.h's struct gap_seg) are replayed with the cause's time taken out.
 *   - Its own work (on CPU, in calls, a sleep, a file's I/O) takes what it took less the
 *     cause's time in it; its waits for a CPU amid that work shrink in the same proportion.
 *   - A wait for another thread (a lock, a condition, a pipe) ends when what it waited for
 *     would have been ready, no sooner than the closer got to it: its end less the cause's
 *     time under it, less what was taken out of the same thread's earlier time in the gap (a
 *     producer that signals, then lets go of the mutex the waiter takes back), and of the
 *     earlier waits on the same futex word in a row (a lock handed on, whose next holder got
 *     it when the first let go). The threads it waited for were preempted amid their work:
 *     as much less of that as of the work.
 * So a removed wait still leaves the closer waiting for the next link of its chain and for any
 * other wait after it, and the gap ends no earlier than it began. Each gap is replayed alone:
 * a cause that stalls several closers (devices) at once gives back on each.
 *
 * The range [lo, hi]: lo is the replay's figure, hi all the time taken out of the closers'
 * timelines (the cause's own, and the waits for a CPU that go with it), as if each wait were a
 * duration that nothing else bounds: about what the cause's share of the gap time says. The replay cannot see a wait that overlapped unseen (a lock taken
 * uncontended after a removed wait), nor CPU the removed work no longer takes from the rest.
 */
#ifndef GAPSCOPE_RECOVER_H
#define GAPSCOPE_RECOVER_H

#include "gap.h"
#include "vec.h"

struct recover {
	struct vec rows; /* this file's own: a cause or a hop, what removing it gives back */
};

/*
 * G's chain links get the time removing each would give back (the paths through it), and
 * every cause and hop of G adds its replay to RC. Needs G's roots and pieces (before on_gap
 * lets them go); 0 or -ENOMEM.
 */
int recover__gap(struct recover *rc, struct gap *g);
/* The causes' recoverable time from RC: each row by its kind and function. */
void recover__causes(const struct recover *rc, struct cause *c, size_t n);
/* The hops, most recoverable first (allocated, *n of them): 0 or -ENOMEM. */
int recover__hops(const struct recover *rc, struct hop **out, size_t *n);
void recover__free(struct recover *rc);

#endif
