// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: `gapscope script` (cmd/script.c) as the command runs it, on the input with
 * its chunks' CRCs made right (fuzz_trace checks the CRCs themselves). Its output goes to
 * /dev/null.
 */
#include "fuzz.h"
#include "gapscope_cmd.h"

static struct fuzz_file file;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* script prints to stdout; libFuzzer reports on stderr. */
	devnull = fopen("/dev/null", "we");
	if (!devnull || !freopen("/dev/null", "w", stdout))
		return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed = fuzz_fix_crcs(data, size);
	char name[] = "gapscope script";

	if (fixed && !fuzz_file__set(&file, fixed, size)) {
		char *argv[] = { name, file.path, NULL };
		FILE *err = stderr;

		/* Its warnings too, through the stdio stream alone: the sanitizers' reports and
		 * libFuzzer's still reach file descriptor 2. */
		stderr = devnull;
		cmd_script(2, argv);
		fflush(stdout);
		stderr = err;
	}
	free(fixed);
	return 0;
}
