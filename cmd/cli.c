// SPDX-License-Identifier: GPL-2.0
/* -h, --usage and -V for every command: see cli.h. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

enum { CLI_USAGE = 0x1000 }; /* argp keys fit in 24 bits; each group has its own */

static const struct argp_option options[] = {
	{ "help", 'h', NULL, 0, "Give this help list", -1 },
	{ "usage", CLI_USAGE, NULL, 0, "Give a short usage message", -1 },
	{ "version", 'V', NULL, 0, "Print the version and the commit built", -1 },
	{},
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	switch (key) {
	case 'h':
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case CLI_USAGE:
		argp_state_help(state, stdout, ARGP_HELP_USAGE | ARGP_HELP_EXIT_OK);
		break;
	case 'V':
		printf("%s\n", argp_program_version);
		exit(0);
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp cli__argp = { .options = options, .parser = parse };
