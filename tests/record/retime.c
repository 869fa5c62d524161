// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/cases/record_flight_replay.sh: a copy of a trace's first MAX records (all where MAX
 * is not given) whose clock jumps STEP_S seconds at every record: record k is moved k * STEP_S
 * seconds later (its interval, if any, keeps its length). Where IN holds fewer than MAX records
 * it is read again from its start, until MAX. A trace whose clock leaps past any flight window at
 * each record, as a damaged or hostile file can have it.
 *
 *   retime IN.gsc OUT.gsc STEP_S [MAX]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 20] __attribute__((aligned(8)));
	unsigned long long k = 0, max = argc > 4 ? strtoull(argv[4], NULL, 0) : ~0ull;
	struct trace_reader *r;
	struct trace_writer *w;
	const struct gs_hdr *h;
	double step;
	char err[256];
	int rc = 0;

	if (argc < 4 || (step = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: retime IN.gsc OUT.gsc STEP_S [MAX]\n");
		return 64;
	}
	r = trace__open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "retime: %s\n", err);
		return 1;
	}
	w = trace__create(argv[2], true);
	if (!w) {
		perror(argv[2]);
		return 1;
	}
	while (k < max) {
		struct gs_hdr *o = (struct gs_hdr *)buf;

		rc = trace__next(r, &h);
		if (rc < 0) {
			fprintf(stderr, "retime: %s: cannot read\n", argv[1]);
			return 1;
		}
		if (rc == 0) {
			/* Once more from the start, for MAX; none read at all: the end. */
			trace__close(r);
			r = NULL;
			if (!k || max == ~0ull)
				break;
			r = trace__open(argv[1], err, sizeof(err));
			if (!r) {
				fprintf(stderr, "retime: %s\n", err);
				return 1;
			}
			continue;
		}

		if (h->size > sizeof(buf))
			continue;
		memcpy(buf, h, h->size);
		/* An untimed record (0) and the end's "no time" (~0) are no clock to move. */
		if (o->type != GS_REC_END && o->ts && o->ts != ~0ull)
			o->ts += (unsigned long long)(k * step * 1e9);
		if (trace__append(w, o, o->size)) {
			perror(argv[2]);
			return 1;
		}
		k++;
	}
	if (r)
		trace__close(r);
	if (trace__finish(w)) {
		perror(argv[2]);
		return 1;
	}
	printf("%llu record(s), each %g s after the one before\n", k, step);
	return 0;
}
