/* SPDX-License-Identifier: GPL-2.0 */
/* gapscope record's command line: the recording's options and the flight recorder's. */
#ifndef GAPSCOPE_OPTIONS_H
#define GAPSCOPE_OPTIONS_H

#include "flight.h"
#include "record_opts.h"

struct record_cmd_opts {
	struct record_opts o;	   /* what the recorder's stages read (record_opts.h) */
	struct flight_opts flight; /* --flight and the dumps' options (flight.h) */
};

/* Parses argv into *c (the defaults first); argp exits on --help and on errors. 0 or -EINVAL. */
int record_opts__parse(int argc, char **argv, struct record_cmd_opts *c);
/*
 * The checks of the options that need neither privileges nor the target: --archive with
 * --flight, the dumps' folder, the output (there already without -f; -f replaces only a regular
 * file or a link). 0, or -errno after one line on stderr saying why.
 */
int record_opts__check(const struct record_cmd_opts *c);

#endif
