/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every command's argp has, as perf, bpftool and bpftrace have it: -h/--help (in place of
 * argp's -?, so parse with ARGP_NO_HELP), --usage and -V/--version (argp_program_version, set
 * by the command table). A command adds cli__argp as a child of its argp.
 */
#ifndef GAPSCOPE_CLI_H
#define GAPSCOPE_CLI_H

#include <argp.h>

extern const struct argp cli__argp;

#endif
