// SPDX-License-Identifier: GPL-2.0
/*
 * record --flight SECONDS --replay TRACE: a recorded trace fed through the flight recorder
 * (flight.h) as the recorder fed it, record by record in file order, with the records' own
 * timestamps as the clock: the ring, its let-go rules, the live analysis, the triggers, the dumps
 * and the metrics see the recording as they would have live, as fast as the file can be read.
 * The clock is the latest time a record carries (an interval's end, an instant's time, when the
 * recorder wrote its own records): the recorder reads a record after it ended, and its clock is
 * at least that. flight__tick runs every FLIGHT_TICK_NS of that clock, as the consumer's poll
 * does. Dumps are written by their thread in real time meanwhile, their reports too.
 *
 * The file is anyone's: its clock may leap. A recording has records every second (the
 * recorder's own), so a stretch with none is a file's doing, and ticking through it (70,000
 * ticks for an hour) made a small file replay for hours. Across a leap past the flight window
 * (or FLIGHT_REPLAY_QUIET_NS) the ticks go on only while something is due (the live analysis
 * reaching the last record, the dumps asked for starting), then restart at the leap's end: the
 * ticks between would have done nothing that one tick there does not (the ring lets go by the
 * clock, and nothing in it outlives such a leap). SIGINT and SIGTERM end a replay where it is,
 * with the usual lines, the dumps' reports cut.
 */
#include <signal.h>
#include <stdio.h>

#include "decode.h"
#include "flight.h"
#include "trace.h"

#define FLIGHT_TICK_NS	       (50ull * 1000 * 1000) /* consume.c's poll timeout */
/* A stamp this far past the clock is a corrupt record, not a time: it does not move the clock. */
#define FLIGHT_REPLAY_JUMP_NS  (3600ull * 1000 * 1000 * 1000)
/*
 * A leap of the clock longer than this (or the flight window, if shorter) is leapt, not ticked
 * through: twice the longest a recording goes without a record of the recorder's own.
 */
#define FLIGHT_REPLAY_QUIET_NS (2ull * 1000 * 1000 * 1000)
/* Records read between two looks for SIGINT and SIGTERM (and every tick looks). */
#define FLIGHT_REPLAY_LOOK     1024

struct replay {
	struct flight *f;
	__u64 quiet; /* FLIGHT_REPLAY_QUIET_NS or the flight window */
	__u64 now, first, next_tick;
	__u64 records, ticks, leaps, far;
};

/* When the recorder had read this record: at least its end. 0: it says nothing of the time. */
static __u64 record_time(const struct gs_hdr *h)
{
	__u64 t = gs_rec_untimed(h) ? h->ts : gs_rec_end(h);

	return t == ~0ull ? 0 : t;
}

/* The tick due at next_tick, the clock there. False: SIGINT or SIGTERM, the replay ends. */
static bool tick(struct replay *r)
{
	flight__set_clock(r->f, r->next_tick);
	flight__tick(r->f);
	r->ticks++;
	r->next_tick += FLIGHT_TICK_NS;
	return !flight__interrupted(r->f);
}

/*
 * Before the clock leaps from r->now to t: the ticks of the stretch that still do something,
 * on their grid. The live analysis reads FLIGHT_LAG_NS behind the clock: it reaches the last
 * record within that. A dump asked for starts at its window's end and FLIGHT_DUE_NS, while the
 * ring holds its window; one whose report slots are all taken waits for a report to end, in
 * real time, as the recorder's clock would have gone on meanwhile. False: SIGINT or SIGTERM.
 */
static bool settle(struct replay *r, __u64 t)
{
	__u64 lag = r->now + FLIGHT_LAG_NS + FLIGHT_TICK_NS;

	while (r->next_tick <= t) {
		bool blocked;
		__u64 due;

		if (r->next_tick <= lag) {
			if (!tick(r))
				return false;
			continue;
		}
		due = flight__due(r->f, &blocked);
		if (!due || due > t)
			break;
		if (due > r->next_tick)
			r->next_tick += (due - r->next_tick + FLIGHT_TICK_NS - 1) / FLIGHT_TICK_NS *
					FLIGHT_TICK_NS;
		else if (blocked)
			flight__wait_report(r->f);
		if (r->next_tick <= t && !tick(r))
			return false;
	}
	return true;
}

/* The clock reaches t (a record's time). False: SIGINT or SIGTERM. */
static bool advance(struct replay *r, __u64 t)
{
	if (!r->first) {
		r->now = r->first = t;
		r->next_tick = t + FLIGHT_TICK_NS;
		flight__set_clock(r->f, t);
		return true;
	}
	if (t - r->now > r->quiet) {
		if (!settle(r, t))
			return false;
		if (r->next_tick <= t) {
			r->next_tick = t; /* the schedule starts over here */
			r->leaps++;
		}
	}
	r->now = t;
	flight__set_clock(r->f, t);
	while (r->next_tick <= t)
		if (!tick(r))
			return false;
	return true;
}

int flight__replay(const struct flight_opts *o, const char *path)
{
	struct replay r = {};
	struct trace_reader *tr;
	const struct gs_hdr *h;
	sigset_t stop, old, pending;
	struct timespec none = {};
	char err[256];
	int rc, sig = 0;

	tr = trace__open(path, err, sizeof(err));
	if (!tr) {
		fprintf(stderr, "gapscope: %s\n", err);
		return 1;
	}
	/* Read, not acted on at once: the replay ends with its lines (before the flight recorder's
	 * dump threads start: they keep them blocked). */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	r.f = flight__new(o, 0); /* no ring buffer */
	if (!r.f) {
		trace__close(tr);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return 1;
	}
	flight__set_clock(r.f, 0);
	r.quiet = o->seconds * 1e9 < FLIGHT_REPLAY_QUIET_NS ? o->seconds * 1e9 :
							      FLIGHT_REPLAY_QUIET_NS;
	while ((rc = trace__next(tr, &h)) > 0) {
		__u64 t = record_time(h);

		if (t > r.now && r.now && t - r.now >= FLIGHT_REPLAY_JUMP_NS)
			r.far++;
		else if (t > r.now && !advance(&r, t))
			break;
		flight__append(r.f, h, h->size);
		/* Copied into the ring: the chunk it was read from goes (a replay of 28 million
		 * records kept 3.5 GB of them otherwise). */
		trace__release(tr, h);
		if (++r.records % FLIGHT_REPLAY_LOOK == 0 && flight__interrupted(r.f))
			break;
	}
	if (flight__interrupted(r.f)) {
		sigpending(&pending);
		sig = sigismember(&pending, SIGTERM) ? SIGTERM : SIGINT;
		fprintf(stderr, "gapscope: flight: replay of %s cut by %s after %llu record(s)\n",
			path, sig == SIGTERM ? "SIGTERM" : "SIGINT", (unsigned long long)r.records);
		rc = 0;
	}
	trace__warn(tr, path, stderr);
	fprintf(stderr,
		"gapscope: flight: replayed %llu record(s) of %s, %.3f s of its clock in %llu "
		"tick(s); %llu leap(s) of it over %g s restarted the ticks there, %llu stamp(s) an "
		"hour or more ahead not taken as time\n",
		(unsigned long long)r.records, path, (r.now - r.first) / 1e9,
		(unsigned long long)r.ticks, (unsigned long long)r.leaps, r.quiet / 1e9,
		(unsigned long long)r.far);
	flight__stop(r.f);
	trace__close(tr);
	/* What ended it is taken, not left to end the process once unblocked. */
	while (sig && sigtimedwait(&stop, NULL, &none) > 0)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return sig ? 128 + sig : rc < 0 ? 1 : 0;
}
