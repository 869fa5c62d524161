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
 */
#include <stdio.h>

#include "decode.h"
#include "flight.h"
#include "trace.h"

#define FLIGHT_TICK_NS	      (50ull * 1000 * 1000) /* consume.c's poll timeout */
/* A stamp this far past the clock is a corrupt record, not a time: it does not move the clock. */
#define FLIGHT_REPLAY_JUMP_NS (3600ull * 1000 * 1000 * 1000)

/* When the recorder had read this record: at least its end. 0: it says nothing of the time. */
static __u64 record_time(const struct gs_hdr *h)
{
	__u64 t = gs_rec_untimed(h) ? h->ts : gs_rec_end(h);

	return t == ~0ull ? 0 : t;
}

int flight__replay(const struct flight_opts *o, const char *path)
{
	__u64 now = 0, first = 0, next_tick = 0, records = 0;
	struct trace_reader *tr;
	const struct gs_hdr *h;
	struct flight *f;
	char err[256];
	int rc;

	tr = trace__open(path, err, sizeof(err));
	if (!tr) {
		fprintf(stderr, "gapscope: %s\n", err);
		return 1;
	}
	f = flight__new(o, 0); /* no ring buffer */
	if (!f) {
		trace__close(tr);
		return 1;
	}
	flight__set_clock(f, 0);
	while ((rc = trace__next(tr, &h)) > 0) {
		__u64 t = record_time(h);

		if (t > now && (!now || t - now < FLIGHT_REPLAY_JUMP_NS)) {
			now = t;
			flight__set_clock(f, now);
			if (!first) {
				first = now;
				next_tick = now + FLIGHT_TICK_NS;
			}
			for (; next_tick <= now; next_tick += FLIGHT_TICK_NS)
				flight__tick(f);
		}
		flight__append(f, h, h->size);
		/* Copied into the ring: the chunk it was read from goes (a replay of 28 million
		 * records kept 3.5 GB of them otherwise). */
		trace__release(tr, h);
		records++;
	}
	trace__warn(tr, path, stderr);
	fprintf(stderr, "gapscope: flight: replayed %llu record(s) of %s, %.3f s of its clock\n",
		(unsigned long long)records, path, (now - first) / 1e9);
	flight__stop(f);
	trace__close(tr);
	return rc < 0 ? 1 : 0;
}
