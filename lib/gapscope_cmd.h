/* SPDX-License-Identifier: GPL-2.0 */
/* The subcommands of the one gapscope binary. Each returns the process exit status. */
#ifndef GAPSCOPE_CMD_H
#define GAPSCOPE_CMD_H

int cmd_record(int argc, char **argv); /* loader/record.c */
int cmd_script(int argc, char **argv); /* reports/script.c */
int cmd_report(int argc, char **argv); /* reports/report.c */
int cmd_diff(int argc, char **argv);   /* reports/diff.c */

#endif
