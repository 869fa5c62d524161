// SPDX-License-Identifier: GPL-2.0
/* gapscope report alone, for sanitizer builds: tests/cases/report_errors.sh. */
#include "gapscope_cmd.h"

int cmd_record(int argc, char **argv)
{
	return 1;
}

int cmd_script(int argc, char **argv)
{
	return 1;
}

int main(int argc, char **argv)
{
	return cmd_report(argc, argv);
}
