/* SPDX-License-Identifier: GPL-2.0 */
/* The subcommands of the one gapscope binary. Each returns the process exit status. */
#ifndef GAPSCOPE_CMD_H
#define GAPSCOPE_CMD_H

int cmd_record(int argc, char **argv); /* record.c */
int cmd_script(int argc, char **argv); /* script.c */
int cmd_report(int argc, char **argv); /* report.c */
int cmd_diff(int argc, char **argv);   /* diff.c */

#endif
