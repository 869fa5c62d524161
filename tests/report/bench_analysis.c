// SPDX-License-Identifier: GPL-2.0
/*
 * The report's analysis alone (analysis__run: timelines, GPU timeline, gaps, blame chains), no
 * output written, for tests/report/bench.sh: its rate is the analysis's, not the renderers'.
 */
#include <stdio.h>

#include "analysis.h"

int main(int argc, char **argv)
{
	struct analysis_opts o = { .min_gap_ns = 1000000, .max_hops = 8 };
	struct analysis *a;
	char err[512];

	if (argc != 2) {
		fprintf(stderr, "usage: bench_analysis FILE\n");
		return 2;
	}
	a = analysis__run(argv[1], &o, err, sizeof(err));
	if (!a) {
		fprintf(stderr, "bench_analysis: %s\n", err);
		return 1;
	}
	printf("bench_analysis: %llu events, %zu gaps\n", (unsigned long long)a->events, a->ngaps);
	analysis__free(a);
	return 0;
}
