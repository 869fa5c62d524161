// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: `gapscope report` (cmd/report.c's steps: analysis, folded stacks, summaries,
 * SVGs, speedscope, index.html, timeline.json) on the input with its chunks' CRCs made right.
 * Frames are not named from the files the trace names (no_file_symbols): a fuzzed path must not
 * open the host's files, and libdwfl would spend the run loading them. Outputs go to a temporary
 * directory made once, written over by every input.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "analysis.h"
#include "folded_out.h"
#include "summary.h"
#include "fuzz.h"
#include "render_out.h"

static struct fuzz_file file;
static char dir[PATH_MAX], gaps[PATH_MAX];
static FILE *devnull;
static int dfd = -1, gfd = -1;

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "fuzz_report: could not remove %s\n", dir);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR") ?: "/tmp";

	snprintf(dir, sizeof(dir), "%s/gapscope-fuzz-report.XXXXXX", tmp);
	if (!mkdtemp(dir))
		return 1;
	snprintf(gaps, sizeof(gaps), "%s/gaps", dir);
	if (mkdir(gaps, 0755))
		return 1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	gfd = open(gaps, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || gfd < 0)
		return 1;
	devnull = fopen("/dev/null", "we");
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct analysis_opts ao = { .min_gap_ns = 1000000, .max_hops = 8, .no_file_symbols = true };
	struct render_out_opts ro = { .timeline = { .no_file_symbols = true } };
	struct report_out_opts oo = { .top = 10 };
	uint8_t *fixed = fuzz_fix_crcs(data, size);
	struct folded_out *fo = NULL;
	struct analysis *a = NULL;
	char err[512];

	if (!fixed || fuzz_file__set(&file, fixed, size))
		goto out;
	fo = folded_out__new(gfd);
	if (!fo)
		goto out;
	ao.on_gap = folded_out__gap;
	ao.ctx = fo;
	a = analysis__run(file.path, &ao, err, sizeof(err));
	if (!a)
		goto out;
	if (folded_out__finish(fo, a))
		goto out;
	summary_json__write(a, devnull);
	summary_txt__write(a, &oo, devnull);
	render_out__write(dfd, dir, file.path, a, &ro, NULL);
out:
	folded_out__free(fo);
	analysis__free(a);
	free(fixed);
	return 0;
}
