// SPDX-License-Identifier: GPL-2.0
/* The reader alone (gapscope script) for sanitizer builds: tests/cases/record_corrupt.sh. */
#include "gapscope_cmd.h"

int cmd_record(int argc, char **argv)
{
	return 1;
}

int main(int argc, char **argv)
{
	return cmd_script(argc, argv);
}
