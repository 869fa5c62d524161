// SPDX-License-Identifier: GPL-2.0
/*
 * A bare decode pass over a trace, the baseline of tests/report/bench.sh: every record read
 * through the trace library and its header looked at, nothing else.
 */
#include <stdio.h>

#include "trace.h"

int main(int argc, char **argv)
{
	struct trace_reader *r;
	const struct gs_hdr *h;
	unsigned long long n = 0, sum = 0;
	char err[256];

	if (argc != 2) {
		fprintf(stderr, "usage: decode_pass FILE\n");
		return 2;
	}
	r = trace__open(argv[1], err, sizeof(err));
	if (!r) {
		fprintf(stderr, "decode_pass: %s\n", err);
		return 1;
	}
	while (trace__next(r, &h) > 0) {
		sum += h->ts ^ h->type ^ h->tid;
		n++;
	}
	printf("decode_pass: %llu records (%llx)\n", n, sum);
	trace__close(r);
	return 0;
}
