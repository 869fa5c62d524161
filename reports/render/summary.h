/* SPDX-License-Identifier: GPL-2.0 */
/* summary.txt and summary.json, from the analysis' result (reports/analysis/gap.h). */
#ifndef GAPSCOPE_SUMMARY_H
#define GAPSCOPE_SUMMARY_H

#include <stdio.h>

#include "gap.h"

struct report_out_opts {
	unsigned int top; /* gaps listed in summary.txt */
};
int summary_txt__write(const struct analysis *a, const struct report_out_opts *o, FILE *out);
int summary_json__write(const struct analysis *a, FILE *out);
/* summary_json__write with the recorded program's name (reports/program.h) as "program"; NULL or
 * "" leaves the key out. */
int summary_json__write_program(const struct analysis *a, const char *program, FILE *out);

#endif
