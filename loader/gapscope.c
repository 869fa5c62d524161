// SPDX-License-Identifier: GPL-2.0
/* gapscope: one binary, subcommands like perf and bpftool. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gapscope_cmd.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "record", cmd_record, "record a program or a running process into a trace file" },
	{ "script", cmd_script, "print a trace, one event per line" },
	{ "report", cmd_report, "find GPU idle gaps and the chains of waits behind them" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: gapscope COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(out, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(out, "\n'gapscope COMMAND --help' describes a command.\n");
}

/*
 * What went to standard output must have got there (a full disk, /dev/full), whichever way the
 * command ends (argp exits after --help): else exit 1.
 */
static void stdout_written(void)
{
	errno = 0;
	if (!fflush(stdout) && !ferror(stdout))
		return;
	fprintf(stderr, "gapscope: cannot write standard output: %s\n",
		errno ? strerror(errno) : "write error");
	_exit(1);
}

int main(int argc, char **argv)
{
	atexit(stdout_written);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			char name[64];

			/* argp names the program after argv[0] in usage and errors. */
			snprintf(name, sizeof(name), "gapscope %s", cmds[i].name);
			argv[1] = name;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "gapscope: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
